#pragma once
// The CUDA device, streams, events, device memory and copies. The driver is loaded at run time
// (dlopen of libcuda.so.1; nothing links it), so every binary starts on a machine without one: there
// device() says why ("no CUDA device: ..."), and everything else throws that as a gj::Error.
//
// One device (ordinal 0) and its primary context, made current on each thread that calls in. Work is
// queued on the calling thread's current stream (StreamGuard), the legacy default stream when none is
// set; copies to the host wait for their stream.
#include "runtime/context.h"
#include "support/result.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

struct CUstream_st;
struct CUevent_st;

namespace gj::cuda {

using StreamHandle = CUstream_st*;

struct DeviceInfo {
  std::string name;
  int major = 0;  ///< compute capability, e.g. 9.0 on Hopper
  int minor = 0;
  int multiprocessors = 0;
  size_t totalMemory = 0;
  /// Peak DRAM bandwidth in GB/s (10^9 bytes), from the memory clock and bus width (double data rate);
  /// 0 where the driver does not say (the emulated driver).
  double dramGBs = 0;
  size_t l2Bytes = 0;  ///< the L2 cache's size; 0 on the emulated driver
  int clockKHz = 0;    ///< the multiprocessors' typical clock; 0 on the emulated driver
  /// The most dynamic shared memory a block may have once its kernel opts in (Kernel::allowSharedBytes).
  size_t sharedPerBlockOptIn = 48 * 1024;
  int driverVersion = 0;  ///< e.g. 13000 for CUDA 13.0
  std::string driverPath;  ///< the libcuda that was loaded, or "emulated"
  /// GJ_CUDA_DRIVER=emulated: the host stands in for the GPU (runtime/cuda/emulator.cpp), for tests of the
  /// CUDA path on machines without one: every kernel, with block semantics and a race checker.
  bool emulated = false;
};

/// Device 0, set up on the first call (thread-safe). The error says why there is none, starting with
/// "no CUDA device:". GJ_CUDA_DRIVER=PATH loads that driver library instead of libcuda.so.1;
/// GJ_CUDA_DRIVER=emulated runs on the host (DeviceInfo::emulated).
Result<const DeviceInfo*> device();
/// device()'s value, or throws its error.
const DeviceInfo& requireDevice();
/// True when device() succeeds.
bool available();
/// The architecture NVRTC compiles for on this device: "sm_XY" for its compute capability when NVRTC
/// knows it, else "compute_XY" of the newest NVRTC knows (PTX that the driver compiles on load).
std::string nvrtcArch();

/// A stream of its own (non-blocking with respect to the default stream).
class Stream {
 public:
  Stream();
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  StreamHandle handle() const { return stream_; }
  /// Waits for everything queued on it.
  void synchronize() const;

 private:
  StreamHandle stream_ = nullptr;
};

/// The calling thread's current stream (null: the legacy default stream).
StreamHandle currentStream();
/// Waits for the current stream.
void synchronize();

/// Makes `stream` current on this thread for its lifetime.
class StreamGuard {
 public:
  explicit StreamGuard(const Stream& stream);
  ~StreamGuard();
  StreamGuard(const StreamGuard&) = delete;
  StreamGuard& operator=(const StreamGuard&) = delete;

 private:
  StreamHandle previous_;
};

/// A timing event: record() on the current stream; elapsedMs between two recorded events.
class Event {
 public:
  Event();
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  void record();
  /// Milliseconds from `start` to this event; waits until this one has happened.
  float elapsedMsSince(const Event& start) const;

 private:
  CUevent_st* event_ = nullptr;
};

// ---- device memory: a caching allocator ----
//
// Freed blocks are kept by the stream they were allocated on and their size (rounded up to 512 bytes)
// and handed out again to an allocation of that size on that stream, whose queued work is ordered after
// any earlier use. A block used on another stream must not be freed before that stream is done with it.
// When the driver runs out of memory, the cached blocks are given back and the allocation is tried again.

/// Device memory for `nbytes` on the current stream; throws gj::Error with the size when there is none.
void* deviceAllocate(size_t nbytes);
/// Frees what deviceAllocate returned: into the cache.
void deviceFree(void* p);
/// Gives every cached block back to the driver (waits for the device first).
void releaseDeviceCache();

struct DeviceMemoryStats {
  size_t currentBytes = 0;  ///< held by tensors now (rounded sizes)
  size_t peakBytes = 0;     ///< the most held since resetDevicePeak()
  size_t cachedBytes = 0;   ///< freed and kept for reuse
  size_t driverAllocations = 0;  ///< cuMemAlloc calls so far (a cache hit makes none)
};
DeviceMemoryStats deviceMemoryStats();
void resetDevicePeak();

// ---- CUDA graphs ----
//
// A Graph is the work one callable queues on a stream, captured once and then replayed with one launch:
// the same kernels with the same arguments, so the same device addresses. Whatever the captured work
// allocates comes from the graph's GraphMemory and stays there after the capture, tensors freed or not,
// for the replays to write; it goes back to the ordinary cache when the last graph on it is gone. Work
// that waits for the device (a synchronize, a copy to the host, a host copy that must wait for its
// source) cannot be captured: capture() says so and returns no graph. Warm the work up before capturing it
// (compiles, profiling runs, first allocations), so that what is captured is what will repeat.

class GraphMemory;

class Graph {
 public:
  /// Runs `work` with `stream` current and under capture (nothing is executed), and makes the graph.
  /// Allocations during the capture come from `memory` (shared by the graphs given the same one, which
  /// must then replay in the order they were captured), or from one of the graph's own when null.
  static Result<Graph> capture(const Stream& stream, const std::function<void()>& work,
                               std::shared_ptr<GraphMemory> memory = nullptr);
  /// A GraphMemory for several graphs (a forward and the backward that reads what it saved).
  static std::shared_ptr<GraphMemory> newMemory();

  Graph(Graph&& other) noexcept;
  Graph& operator=(Graph&& other) noexcept;
  ~Graph();
  /// Queues the graph's work on the stream it was captured on.
  void replay() const;
  /// Once a replay has finished (its stream synchronized): runs the checks the captured work deferred
  /// (deferWhileCapturing), which throw what they found (an index out of range).
  void verify() const;
  /// Kernel launches, copies and fills captured.
  size_t nodes() const { return nodes_; }

 private:
  Graph() = default;
  void* exec_ = nullptr;  ///< CUgraphExec
  StreamHandle stream_ = nullptr;
  size_t nodes_ = 0;
  std::vector<std::function<void()>> checks_;
  std::shared_ptr<GraphMemory> memory_;
};

/// A check that reads device memory (and so waits for the device) after queued work: run now, or, while
/// this thread captures a graph, kept for the graph's verify() after each replay. Returns false when it
/// was kept.
bool checkNowOrAfterReplay(const std::function<void()>& check);

// ---- copies, queued on the current stream ----
/// Host to device; returns once `src` may be reused.
void copyHostToDevice(void* dst, const void* src, size_t nbytes);
/// Device to host; returns once the bytes are in `dst`.
void copyDeviceToHost(void* dst, const void* src, size_t nbytes);
void copyDeviceToDevice(void* dst, const void* src, size_t nbytes);
void fillBytes(void* dst, unsigned char value, size_t nbytes);

// ---- kernels compiled by NVRTC ----

class Module;

/// Blocks per grid and threads per block along x, y, z; dynamic shared memory; a cooperative launch
/// (cuLaunchCooperativeKernel: every block resident at once, so that the kernel may sync the whole grid,
/// cooperative_groups::this_grid().sync(); at most blocksPerMultiprocessor() x the multiprocessors).
struct LaunchShape {
  std::array<unsigned, 3> grid{1, 1, 1};
  std::array<unsigned, 3> block{1, 1, 1};
  unsigned sharedBytes = 0;
  bool cooperative = false;
};

/// A kernel in a loaded module (the module stays loaded while a Kernel refers to it).
class Kernel {
 public:
  Kernel() = default;
  bool loaded() const { return function_ != nullptr; }
  /// Queues the kernel on the current stream. `args` holds a pointer to each parameter's value, in order.
  void launch(const LaunchShape& shape, void** args) const;
  /// The most threads per block this kernel can be launched with.
  int maxThreadsPerBlock() const;
  /// Lets launches of this kernel ask for up to `bytes` of dynamic shared memory (beyond 48 KB a kernel
  /// must opt in, up to DeviceInfo::sharedPerBlockOptIn; a launch over it fails).
  void allowSharedBytes(size_t bytes) const;
  /// How many blocks of `threadsPerBlock` threads with `sharedBytes` of dynamic shared memory one
  /// multiprocessor holds at once (a cooperative launch's bound, times DeviceInfo::multiprocessors).
  int blocksPerMultiprocessor(int threadsPerBlock, size_t sharedBytes) const;

 private:
  friend Result<Kernel> loadKernel(const std::string&, const std::string&, const std::string&);
  std::shared_ptr<Module> module_;
  void* function_ = nullptr;  ///< CUfunction
};

/// Loads `image` (PTX text or a CUBIN from nvrtcCompile) and finds `entry` in it. `name` is for messages.
Result<Kernel> loadKernel(const std::string& image, const std::string& entry, const std::string& name);

/// NVRTC's image (cubin, else PTX) of `source` for this device (nvrtcArch()), named `name` (NVRTC's file
/// name, and part of the key), from the persistent kernel cache (runtime/disk_cache.h) when it holds one,
/// else compiled and stored. Then `load` takes the image; when it refuses a cached one, the source is
/// compiled afresh and the entry replaced. What `load` returns, or the NVRTC or driver error.
Result<Kernel> loadCompiled(const std::string& source, const std::string& name,
                            const std::function<Result<Kernel>(const std::string& image)>& load);

/// Compiles `source` with NVRTC for this device (nvrtcArch()), loads it and finds the extern "C" kernel
/// `entry`. Cached by source text in `context`: the second request for the same source there compiles
/// nothing. The error carries NVRTC's or the driver's message.
Result<Kernel> compileKernel(const std::string& source, const std::string& entry,
                             Context& context = Context::current());

struct KernelCacheStats {
  size_t compiles = 0;
  size_t hits = 0;
  double compileMs = 0;  ///< NVRTC and module load, summed over compiles
};
/// What compileKernel did in `context`.
KernelCacheStats kernelCacheStats(Context& context = Context::current());

}  // namespace gj::cuda
