// The emulated CUDA driver (GJ_CUDA_DRIVER=emulated): the driver entry points runtime/cuda uses,
// answered on the host, so that tests run the whole CUDA path of the executors on a machine with no GPU.
// Device memory is host memory, streams run in order as they are called, and a launch runs its grid on
// the launching thread through the scheduler (emulator_scheduler.h): one thread after another for a
// kernel whose threads never wait for one another, and each block's threads as fibers, with barriers,
// warp operations, shared memory and a race checker, for one that does. A device pointer is its host
// address with bit 62 set: not an address the processor accepts, so host code that reads device memory
// directly (which would crash on a GPU machine) crashes here too, while views may still offset device
// pointers as they do on a GPU. kernels.cuh's kernels are compiled in below, as host C++; the fusers'
// kernels, which compileKernel() loads with their source at hand, are built for the host by the host's
// compiler (emulator_jit.h) and run the same way. A module that cannot be built fails to load, so its
// group runs unfused with a warning, as on a GPU when NVRTC fails. A launch that the scheduler stops (a
// race, a skipped barrier, an index out of bounds) fails with CUDA_ERROR_LAUNCH_FAILED, whose description
// (cuGetErrorString) is the scheduler's message.
//
// Stream capture records a stream's work instead of running it, and a graph launch runs the record. What
// would wait for a capturing stream fails while a capture lasts, as on a GPU: a synchronize of that stream
// or of the context (which also invalidates the capture), and a cuMemFree.
#include "runtime/cuda/driver_api.h"
#include "runtime/cuda/emulator_device.h"
#include "runtime/cuda/emulator_jit.h"

#include <math.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <set>
#include <string_view>
#include <vector>

#include "runtime/cuda/emulator_scheduler.h"

#define GJ_KERNEL static
#define GJ_DEVICE static inline
#define GJ_SHARED(T, name, count) GJ_EMU_SHARED(T, name, count)
#include "runtime/cuda/kernels.cuh"

namespace gj::cuda::detail {
namespace {

struct EmulatedKernel {
  std::string_view name;
  /// Runs `launch` with the kernel's one parameter, a struct, read from `params`; "" or the error.
  std::string (*run)(const void* params, EmulatedLaunch launch);
  size_t paramBytes;
  bool fibers;  ///< it uses barriers or warp operations (block semantics)
};

template <typename P>
P* untag(P* p) {
  return p ? static_cast<P*>(emulatedHostPointer(p)) : p;
}

// The device pointers among a kernel's arguments, as the host addresses the kernel reads and writes.
void untagPointers(GjMapArgs& p) {
  p.out = untag(p.out);
  p.a = untag(p.a);
  p.b = untag(p.b);
  p.c = untag(p.c);
}
void untagPointers(GjMapIntArgs& p) {
  p.out = untag(p.out);
  p.a = untag(p.a);
  p.b = untag(p.b);
  p.c = untag(p.c);
}
void untagPointers(gj_i64&) {}  // gj_hold's cycles
void untagPointers(GjCopyArgs& p) {
  p.out = untag(p.out);
  p.in = untag(p.in);
}
void untagPointers(GjFillArgs& p) { p.out = untag(p.out); }
void untagPointers(GjRowsArgs& p) {
  p.in = untag(p.in);
  p.values = untag(p.values);
  p.indices = untag(p.indices);
}
void untagPointers(GjDropoutArgs& p) {
  p.rng = untag(p.rng);
  p.in = untag(p.in);
  p.out = untag(p.out);
}
void untagPointers(GjIndexArgs& p) {
  p.idx = untag(p.idx);
  p.in = untag(p.in);
  p.out = untag(p.out);
  p.bad = untag(p.bad);
}
void untagPointers(GjConvArgs& p) {
  p.in = untag(p.in);
  p.out = untag(p.out);
  p.indices = untag(p.indices);
}
void untagPointers(GjSumArgs& p) {
  p.in = untag(p.in);
  p.in2 = untag(p.in2);
  p.out = untag(p.out);
}
void untagPointers(GjSoftmaxArgs& p) {
  p.in = untag(p.in);
  p.y = untag(p.y);
  p.out = untag(p.out);
}

template <typename Args, void (*K)(Args)>
std::string call(const void* params, EmulatedLaunch launch) {
  Args args;
  std::memcpy(&args, params, sizeof args);  // a captured launch keeps its parameter as bytes
  untagPointers(args);
  launch.thread = [](void* a) { K(*static_cast<const Args*>(a)); };
  launch.context = &args;
  return runEmulatedLaunch(launch);
}

template <typename Args, void (*K)(Args)>
constexpr EmulatedKernel kernel(std::string_view name, bool fibers = false) {
  return {name, call<Args, K>, sizeof(Args), fibers};
}

const EmulatedKernel kKernels[] = {
    kernel<GjMapArgs, gj_map_f32>("gj_map_f32"),     kernel<GjMapArgs, gj_map_f64>("gj_map_f64"),
    kernel<GjMapIntArgs, gj_map_i64>("gj_map_i64"),  kernel<gj_i64, gj_hold>("gj_hold"),
    kernel<GjCopyArgs, gj_copy>("gj_copy"),          kernel<GjFillArgs, gj_fill>("gj_fill"),
    kernel<GjIndexArgs, gj_gather>("gj_gather"),     kernel<GjIndexArgs, gj_scatter_add>("gj_scatter_add"),
    // the reductions' threads cooperate: block semantics
    kernel<GjSumArgs, gj_reduce>("gj_reduce", true), kernel<GjRowsArgs, gj_extreme_rows>("gj_extreme_rows", true),
    kernel<GjSoftmaxArgs, gj_softmax>("gj_softmax", true),
    kernel<GjSoftmaxArgs, gj_softmax_rows4_f32>("gj_softmax_rows4_f32", true),
    kernel<GjSoftmaxArgs, gj_softmax_rows32_f32>("gj_softmax_rows32_f32", true),
    kernel<GjSoftmaxArgs, gj_softmax_rows4_f64>("gj_softmax_rows4_f64", true),
    kernel<GjSoftmaxArgs, gj_softmax_rows32_f64>("gj_softmax_rows32_f64", true),
    kernel<GjConvArgs, gj_im2col>("gj_im2col"),      kernel<GjConvArgs, gj_col2im>("gj_col2im"),
    kernel<GjConvArgs, gj_max_pool2d>("gj_max_pool2d"),
    kernel<GjConvArgs, gj_max_pool2d_backward>("gj_max_pool2d_backward"),
    kernel<GjConvArgs, gj_adaptive_avg_pool2d>("gj_adaptive_avg_pool2d"),
    kernel<GjConvArgs, gj_adaptive_avg_pool2d_backward>("gj_adaptive_avg_pool2d_backward"),
    kernel<GjDropoutArgs, gj_dropout_f32>("gj_dropout_f32"),
    kernel<GjDropoutArgs, gj_dropout_f64>("gj_dropout_f64"),
    kernel<GjDropoutArgs, gj_uniform_f32>("gj_uniform_f32"),
    kernel<GjDropoutArgs, gj_uniform_f64>("gj_uniform_f64"),
};

// What a CUfunction points at: a kernel of kernels.cuh, or one of a module built for the host.
// Dynamic shared memory a launch may ask for without opting in, as on a GPU.
constexpr unsigned kDefaultDynamicShared = 48 * 1024;

struct FunctionHandle {
  const EmulatedKernel* builtin = nullptr;
  const HostKernel* host = nullptr;
  /// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: more than 48 KB needs cuFuncSetAttribute first.
  std::atomic<unsigned> maxDynamicShared{kDefaultDynamicShared};
};

// One handle per kernel for the process (the kernels themselves live as long).
CUfunction functionHandle(const EmulatedKernel* builtin, const HostKernel* host) {
  static std::mutex mutex;
  static std::deque<FunctionHandle> handles;
  std::lock_guard lock(mutex);
  for (FunctionHandle& h : handles)
    if (h.builtin == builtin && h.host == host) return reinterpret_cast<CUfunction>(&h);
  FunctionHandle& h = handles.emplace_back();
  h.builtin = builtin;
  h.host = host;
  return reinterpret_cast<CUfunction>(&h);
}

using Clock = std::chrono::steady_clock;
using Op = std::function<void()>;

// A live object behind each opaque handle the driver hands out.
struct Handle {
  Clock::time_point when;  ///< an event's record time
  // A stream's capture: the work queued since cuStreamBeginCapture, and whether a call that waited for
  // it spoiled it.
  bool capturing = false, invalidated = false;
  std::vector<Op> captured;
  std::vector<Op> graph;  ///< a graph's or an executable graph's work
  std::shared_ptr<const HostModule> module;  ///< a module's kernels, when built for the host
};

Handle* handle(const void* h) { return static_cast<Handle*>(const_cast<void*>(h)); }

struct Captures {
  std::mutex mutex;
  std::set<Handle*> streams;  ///< the streams under capture
};
Captures& captures() {
  static Captures c;
  return c;
}

// A synchronize while a capture lasts: of the capturing `stream` (every stream when null), it invalidates
// the capture and fails.
CUresult forbiddenWhileCapturing(Handle* stream) {
  Captures& c = captures();
  std::lock_guard lock(c.mutex);
  if (c.streams.empty()) return CUDA_SUCCESS;
  if (stream && !c.streams.count(stream)) return CUDA_SUCCESS;
  for (Handle* s : c.streams)
    if (!stream || s == stream) s->invalidated = true;
  return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
}

// The driver's error names and descriptions for the results this driver gives.
struct ResultText {
  CUresult result;
  const char* name;
  const char* text;
};
constexpr ResultText kResults[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "the emulated driver has no host version of this kernel"},
    {CUDA_ERROR_ILLEGAL_STATE, "CUDA_ERROR_ILLEGAL_STATE", "the stream is not in the capture state this needs"},
    {CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED",
     "operation not permitted when stream is capturing"},
    {CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED",
     "operation failed due to a previous error during capture"},
    {CUDA_ERROR_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
    {CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE",
     "the emulated driver could not build the module for the host (its compiler's log is above)"},
    {CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE",
     "too many blocks in cooperative launch"},
};

// The scheduler's message for this thread's last failed launch: cuGetErrorString's text for
// CUDA_ERROR_LAUNCH_FAILED, so that the error a launch raises says what went wrong and where.
thread_local std::string tLaunchError;
const ResultText* resultText(CUresult r) {
  for (const ResultText& t : kResults)
    if (t.result == r) return &t;
  return nullptr;
}

template <typename H>
H newHandle() {
  return reinterpret_cast<H>(new Handle);
}
template <typename H>
void deleteHandle(H h) {
  delete reinterpret_cast<Handle*>(h);
}

constexpr uintptr_t kDeviceTag = uintptr_t{1} << 62;
constexpr size_t kAlignment = 256;  // as cuMemAlloc aligns

void* host(CUdeviceptr p) { return emulatedHostPointer(reinterpret_cast<const void*>(p)); }

constexpr unsigned kMaxDynamicShared = 227 * 1024;  // sm_90's opt-in limit per block

// A host-built kernel's launch: its parameters' bytes, read by every thread.
struct HostLaunch {
  const HostKernel* kernel;
  std::vector<void*> params;
};

// cuLaunchKernel and cuLaunchCooperativeKernel: checks the shape as a GPU would, then queues the grid's run
// (or records it in a capture). A run that fails sets tLaunchError; so does this launch when it runs now.
CUresult launch(CUfunction f, GjEmuDim3 grid, GjEmuDim3 block, unsigned shared, CUstream s, void** params,
                bool cooperative) {
  const auto* fn = reinterpret_cast<const FunctionHandle*>(f);
  const unsigned threads = block.x * block.y * block.z, blocks = grid.x * grid.y * grid.z;
  if (blocks == 0 || threads == 0 || threads > 1024 || shared > fn->maxDynamicShared.load()) return CUDA_ERROR_INVALID_VALUE;
  if (cooperative && static_cast<long long>(blocks) > static_cast<long long>(emulatedBlocksPerMultiprocessor(threads, shared)) *
                                                          kEmulatedMultiprocessors)
    return CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE;
  EmulatedLaunch l;
  l.grid = grid;
  l.block = block;
  l.sharedBytes = shared;
  l.cooperative = cooperative;
  std::function<std::string()> run;
  if (const HostKernel* k = fn->host) {
    // Each parameter's bytes, kept for a launch that a capture records.
    auto bytes = std::make_shared<std::vector<std::vector<unsigned char>>>();
    for (size_t i = 0; i < k->paramSizes.size(); ++i) {
      const auto* p = static_cast<const unsigned char*>(params[i]);
      bytes->emplace_back(p, p + k->paramSizes[i]);
    }
    l.kernel = k->name;
    l.fibers = k->fibers;
    run = [k, bytes, l]() mutable {
      HostLaunch h{k, {}};
      for (auto& b : *bytes) h.params.push_back(b.data());
      l.thread = [](void* c) {
        const auto* x = static_cast<const HostLaunch*>(c);
        x->kernel->thread(x->params.data(), &emulatedHostPointer);
      };
      l.context = &h;
      return runEmulatedLaunch(l);
    };
  } else {
    const EmulatedKernel* b = fn->builtin;
    auto bytes = std::make_shared<std::vector<unsigned char>>(static_cast<unsigned char*>(params[0]),
                                                              static_cast<unsigned char*>(params[0]) + b->paramBytes);
    l.kernel = b->name;
    l.fibers = b->fibers;
    run = [b, bytes, l] { return b->run(bytes->data(), l); };
  }
  tLaunchError.clear();
  emulatedEnqueue(s, [run = std::move(run)] {
    if (std::string e = run(); !e.empty()) tLaunchError = std::move(e);
  });
  return tLaunchError.empty() ? CUDA_SUCCESS : CUDA_ERROR_LAUNCH_FAILED;
}

}  // namespace

void emulatedEnqueue(CUstream stream, std::function<void()> op) {
  if (stream) {
    Captures& c = captures();
    std::unique_lock lock(c.mutex);
    if (Handle* h = handle(stream); h->capturing) {
      h->captured.push_back(std::move(op));
      return;
    }
  }
  op();
}

void* emulatedHostPointer(const void* device) {
  return reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(device) ^ kDeviceTag);
}

void installEmulatedDriver(DriverApi& api) {
  gjEmuApi = emulatorApi();  // the scheduler, for kernels.cuh's kernels compiled in above
  api.cuInit = [](unsigned) { return CUDA_SUCCESS; };
  api.cuDriverGetVersion = [](int* v) {
    *v = CUDA_VERSION;
    return CUDA_SUCCESS;
  };
  api.cuGetErrorName = [](CUresult r, const char** s) {
    const ResultText* t = resultText(r);
    *s = t ? t->name : "CUDA_ERROR_UNKNOWN";
    return t ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
  };
  api.cuGetErrorString = [](CUresult r, const char** s) {
    const ResultText* t = resultText(r);
    *s = t ? t->text : "an error of the emulated driver";
    if (r == CUDA_ERROR_LAUNCH_FAILED && !tLaunchError.empty()) *s = tLaunchError.c_str();
    return t ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
  };
  api.cuDeviceGetCount = [](int* n) {
    *n = 1;
    return CUDA_SUCCESS;
  };
  api.cuDeviceGet = [](CUdevice* d, int) {
    *d = 0;
    return CUDA_SUCCESS;
  };
  api.cuDeviceGetName = [](char* name, int len, CUdevice) {
    std::strncpy(name, "emulated CUDA device (host)", static_cast<size_t>(len) - 1);
    return CUDA_SUCCESS;
  };
  api.cuDeviceGetAttribute = [](int* v, CUdevice_attribute a, CUdevice) {
    switch (a) {
      case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = 9; break;  // NVRTC compiles for sm_90
      case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = 0; break;
      case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = kEmulatedMultiprocessors; break;
      case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH: *v = 1; break;
      case CU_DEVICE_ATTRIBUTE_WARP_SIZE: *v = 32; break;
      case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *v = 1024; break;
      case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: *v = 2048; break;
      case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: *v = 48 * 1024; break;
      case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *v = kMaxDynamicShared; break;
      default: *v = 0; break;
    }
    return CUDA_SUCCESS;
  };
  api.cuDeviceTotalMem = [](size_t* bytes, CUdevice) {
    *bytes = size_t{1} << 32;
    return CUDA_SUCCESS;
  };
  api.cuDevicePrimaryCtxRetain = [](CUcontext* c, CUdevice) {
    static Handle context;
    *c = reinterpret_cast<CUcontext>(&context);
    return CUDA_SUCCESS;
  };
  api.cuCtxSetCurrent = [](CUcontext) { return CUDA_SUCCESS; };
  api.cuCtxSynchronize = [] { return forbiddenWhileCapturing(nullptr); };
  api.cuMemAlloc = [](CUdeviceptr* p, size_t n) {
    void* m = std::aligned_alloc(kAlignment, (n + kAlignment - 1) / kAlignment * kAlignment);
    if (!m) return CUDA_ERROR_OUT_OF_MEMORY;
    *p = reinterpret_cast<CUdeviceptr>(m) ^ kDeviceTag;
    return CUDA_SUCCESS;
  };
  api.cuMemFree = [](CUdeviceptr p) {
    {
      Captures& c = captures();
      std::lock_guard lock(c.mutex);
      if (!c.streams.empty()) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    }
    std::free(host(p));
    return CUDA_SUCCESS;
  };
  api.cuMemcpyHtoDAsync = [](CUdeviceptr dst, const void* src, size_t n, CUstream s) {
    emulatedEnqueue(s, [d = host(dst), src, n] { std::memcpy(d, src, n); });
    return CUDA_SUCCESS;
  };
  api.cuMemcpyDtoHAsync = [](void* dst, CUdeviceptr src, size_t n, CUstream s) {
    emulatedEnqueue(s, [dst, h = host(src), n] { std::memcpy(dst, h, n); });
    return CUDA_SUCCESS;
  };
  api.cuMemcpyDtoDAsync = [](CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s) {
    emulatedEnqueue(s, [d = host(dst), h = host(src), n] { std::memmove(d, h, n); });
    return CUDA_SUCCESS;
  };
  api.cuMemsetD8Async = [](CUdeviceptr dst, unsigned char v, size_t n, CUstream s) {
    emulatedEnqueue(s, [d = host(dst), v, n] { std::memset(d, v, n); });
    return CUDA_SUCCESS;
  };
  api.cuStreamCreate = [](CUstream* s, unsigned) {
    *s = newHandle<CUstream>();
    return CUDA_SUCCESS;
  };
  api.cuStreamDestroy = [](CUstream s) {
    deleteHandle(s);
    return CUDA_SUCCESS;
  };
  api.cuStreamSynchronize = [](CUstream s) { return s ? forbiddenWhileCapturing(handle(s)) : CUDA_SUCCESS; };
  api.cuEventCreate = [](CUevent* e, unsigned) {
    *e = newHandle<CUevent>();
    return CUDA_SUCCESS;
  };
  api.cuEventDestroy = [](CUevent e) {
    deleteHandle(e);
    return CUDA_SUCCESS;
  };
  api.cuEventRecord = [](CUevent e, CUstream s) {
    emulatedEnqueue(s, [e] { handle(e)->when = Clock::now(); });
    return CUDA_SUCCESS;
  };
  api.cuEventSynchronize = [](CUevent) { return CUDA_SUCCESS; };
  api.cuEventElapsedTime = [](float* ms, CUevent start, CUevent end) {
    *ms = std::chrono::duration<float, std::milli>(reinterpret_cast<Handle*>(end)->when -
                                                   reinterpret_cast<Handle*>(start)->when)
              .count();
    return CUDA_SUCCESS;
  };
  api.cuModuleLoadData = [](CUmodule* m, const void*) {
    std::shared_ptr<const HostModule> module;
    if (const std::string* source = pendingModuleSource()) {
      auto built = hostModule(*source);
      if (!built) {
        std::fprintf(stderr, "graphjit: %s\n", built.error().what());
        return CUDA_ERROR_INVALID_IMAGE;
      }
      module = built.value();
    }
    *m = newHandle<CUmodule>();
    handle(*m)->module = std::move(module);
    return CUDA_SUCCESS;
  };
  api.cuModuleUnload = [](CUmodule m) {
    deleteHandle(m);
    return CUDA_SUCCESS;
  };
  api.cuModuleGetFunction = [](CUfunction* f, CUmodule m, const char* name) {
    if (const auto& module = handle(m)->module) {
      const HostKernel* k = module->find(name);
      if (!k) return CUDA_ERROR_NOT_FOUND;
      *f = functionHandle(nullptr, k);
      return CUDA_SUCCESS;
    }
    for (const EmulatedKernel& k : kKernels) {
      if (k.name != name) continue;
      *f = functionHandle(&k, nullptr);
      return CUDA_SUCCESS;
    }
    return CUDA_ERROR_NOT_FOUND;
  };
  api.cuFuncGetAttribute = [](int* v, CUfunction_attribute a, CUfunction f) {
    *v = a == CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK                ? 1024
         : a == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES ? static_cast<int>(
                                                                      reinterpret_cast<FunctionHandle*>(f)->maxDynamicShared.load())
                                                                : 0;
    return CUDA_SUCCESS;
  };
  api.cuFuncSetAttribute = [](CUfunction f, CUfunction_attribute a, int v) {
    if (a != CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) return CUDA_ERROR_NOT_SUPPORTED;
    if (v < 0 || static_cast<unsigned>(v) > kMaxDynamicShared) return CUDA_ERROR_INVALID_VALUE;
    reinterpret_cast<FunctionHandle*>(f)->maxDynamicShared = static_cast<unsigned>(v);
    return CUDA_SUCCESS;
  };
  api.cuLaunchKernel = [](CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                          unsigned shared, CUstream s, void** params, void**) {
    return launch(f, {gx, gy, gz}, {bx, by, bz}, shared, s, params, false);
  };
  api.cuLaunchCooperativeKernel = [](CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                     unsigned bz, unsigned shared, CUstream s, void** params) {
    return launch(f, {gx, gy, gz}, {bx, by, bz}, shared, s, params, true);
  };
  api.cuOccupancyMaxActiveBlocksPerMultiprocessor = [](int* n, CUfunction, int blockSize, size_t dynamicShared) {
    *n = emulatedBlocksPerMultiprocessor(static_cast<unsigned>(blockSize), dynamicShared);
    return CUDA_SUCCESS;
  };
  api.cuStreamBeginCapture = [](CUstream s, CUstreamCaptureMode) {
    if (!s) return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;  // the legacy default stream cannot be captured
    Captures& c = captures();
    std::lock_guard lock(c.mutex);
    Handle* h = handle(s);
    if (h->capturing) return CUDA_ERROR_ILLEGAL_STATE;
    *h = Handle{};
    h->capturing = true;
    c.streams.insert(h);
    return CUDA_SUCCESS;
  };
  api.cuStreamEndCapture = [](CUstream s, CUgraph* g) {
    Captures& c = captures();
    std::lock_guard lock(c.mutex);
    Handle* h = handle(s);
    *g = nullptr;
    if (!s || !h->capturing) return CUDA_ERROR_ILLEGAL_STATE;
    c.streams.erase(h);
    h->capturing = false;
    if (h->invalidated) return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    auto* graph = new Handle;
    graph->graph = std::move(h->captured);
    *g = reinterpret_cast<CUgraph>(graph);
    return CUDA_SUCCESS;
  };
  api.cuGraphGetNodes = [](CUgraph g, CUgraphNode* nodes, size_t* n) {
    if (nodes) return CUDA_ERROR_INVALID_VALUE;  // only the count is emulated
    *n = handle(g)->graph.size();
    return CUDA_SUCCESS;
  };
  api.cuGraphInstantiateWithFlags = [](CUgraphExec* exec, CUgraph g, unsigned long long) {
    auto* e = new Handle;
    e->graph = handle(g)->graph;
    *exec = reinterpret_cast<CUgraphExec>(e);
    return CUDA_SUCCESS;
  };
  api.cuGraphLaunch = [](CUgraphExec exec, CUstream s) {
    tLaunchError.clear();
    emulatedEnqueue(s, [ops = &handle(exec)->graph] {
      for (const Op& op : *ops)
        if (tLaunchError.empty()) op();
    });
    return tLaunchError.empty() ? CUDA_SUCCESS : CUDA_ERROR_LAUNCH_FAILED;
  };
  api.cuGraphDestroy = [](CUgraph g) {
    deleteHandle(g);
    return CUDA_SUCCESS;
  };
  api.cuGraphExecDestroy = [](CUgraphExec e) {
    deleteHandle(e);
    return CUDA_SUCCESS;
  };
}

}  // namespace gj::cuda::detail
