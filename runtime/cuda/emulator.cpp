// The emulated CUDA driver (GJ_CUDA_DRIVER=emulated): the driver entry points runtime/cuda uses,
// answered on the host, so that tests run the whole CUDA path of the executors on a machine with no GPU.
// Device memory is host memory, streams run in order as they are called, and a launch runs the grid one
// thread at a time. A device pointer is its host address with bit 62 set: not an address the processor
// accepts, so host code that reads device memory directly (which would crash on a GPU machine) crashes
// here too, while views may still offset device pointers as they do on a GPU. kernels.cuh's kernels are
// compiled in below, as host C++; the fusers' kernels, which compileKernel() loads with their source at
// hand, are built for the host by the host's compiler (emulator_jit.h) and run the same way, one thread
// at a time. A module that cannot be built fails to load, so its group runs unfused with a warning, as
// on a GPU when NVRTC fails. Threads running one after another cannot show a race between them; tests
// on a GPU can.
//
// Stream capture records a stream's work instead of running it, and a graph launch runs the record. What
// would wait for a capturing stream fails while a capture lasts, as on a GPU: a synchronize of that stream
// or of the context (which also invalidates the capture), and a cuMemFree.
#include "runtime/cuda/driver_api.h"
#include "runtime/cuda/emulator_jit.h"

#include <math.h>

#include <array>
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

namespace {
// What a kernel reads of its launch, as CUDA C names it.
struct GjDim3 {
  unsigned x = 0, y = 0, z = 0;
};
thread_local GjDim3 threadIdx, blockIdx, blockDim, gridDim;

// One thread at a time: an atomic add is a plain one.
template <typename T>
T atomicAdd(T* at, T v) {
  T old = *at;
  *at = old + v;
  return old;
}
}  // namespace

#define GJ_KERNEL static
#define GJ_DEVICE static inline
#include "runtime/cuda/kernels.cuh"

namespace gj::cuda::detail {
namespace {

struct EmulatedKernel {
  std::string_view name;
  void (*run)(const void* params);  ///< the kernel on its one parameter, a struct
  size_t paramBytes;
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
  p.partial = untag(p.partial);
  p.out = untag(p.out);
}

template <typename Args, void (*K)(Args)>
void call(const void* params) {
  Args args;
  std::memcpy(&args, params, sizeof args);  // a captured launch keeps its parameter as bytes
  untagPointers(args);
  K(args);
}

template <typename Args, void (*K)(Args)>
constexpr EmulatedKernel kernel(std::string_view name) {
  return {name, call<Args, K>, sizeof(Args)};
}

const EmulatedKernel kKernels[] = {
    kernel<GjMapArgs, gj_map_f32>("gj_map_f32"),     kernel<GjMapArgs, gj_map_f64>("gj_map_f64"),
    kernel<GjCopyArgs, gj_copy>("gj_copy"),          kernel<GjFillArgs, gj_fill>("gj_fill"),
    kernel<GjSumArgs, gj_sum_parts>("gj_sum_parts"), kernel<GjSumArgs, gj_sum_finish>("gj_sum_finish"),
    kernel<GjIndexArgs, gj_gather>("gj_gather"),     kernel<GjIndexArgs, gj_scatter_add>("gj_scatter_add"),
    kernel<GjRowsArgs, gj_extreme_rows>("gj_extreme_rows"),
    kernel<GjConvArgs, gj_im2col>("gj_im2col"),      kernel<GjConvArgs, gj_col2im>("gj_col2im"),
    kernel<GjConvArgs, gj_max_pool2d>("gj_max_pool2d"),
    kernel<GjConvArgs, gj_max_pool2d_backward>("gj_max_pool2d_backward"),
    kernel<GjConvArgs, gj_adaptive_avg_pool2d>("gj_adaptive_avg_pool2d"),
    kernel<GjConvArgs, gj_adaptive_avg_pool2d_backward>("gj_adaptive_avg_pool2d_backward"),
    kernel<GjDropoutArgs, gj_dropout_f32>("gj_dropout_f32"),
    kernel<GjDropoutArgs, gj_dropout_f64>("gj_dropout_f64"),
};

// What a CUfunction points at: a kernel of kernels.cuh, or one of a module built for the host.
struct FunctionHandle {
  const EmulatedKernel* builtin = nullptr;
  const HostKernel* host = nullptr;
};

// One handle per kernel for the process (the kernels themselves live as long).
CUfunction functionHandle(FunctionHandle f) {
  static std::mutex mutex;
  static std::deque<FunctionHandle> handles;
  std::lock_guard lock(mutex);
  for (FunctionHandle& h : handles)
    if (h.builtin == f.builtin && h.host == f.host) return reinterpret_cast<CUfunction>(&h);
  return reinterpret_cast<CUfunction>(&handles.emplace_back(f));
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
};
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
      case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = 2; break;
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
      *f = functionHandle({.host = k});
      return CUDA_SUCCESS;
    }
    for (const EmulatedKernel& k : kKernels) {
      if (k.name != name) continue;
      *f = functionHandle({.builtin = &k});
      return CUDA_SUCCESS;
    }
    return CUDA_ERROR_NOT_FOUND;
  };
  api.cuFuncGetAttribute = [](int* v, CUfunction_attribute a, CUfunction) {
    *v = a == CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK ? 1024 : 0;
    return CUDA_SUCCESS;
  };
  api.cuLaunchKernel = [](CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                          unsigned, CUstream s, void** params, void**) {
    const auto* fn = reinterpret_cast<const FunctionHandle*>(f);
    if (gx * gy * gz == 0 || bx * by * bz == 0) return CUDA_ERROR_INVALID_VALUE;
    if (const HostKernel* k = fn->host) {
      // Each parameter's bytes, kept for a launch that a capture records.
      auto bytes = std::make_shared<std::vector<std::vector<unsigned char>>>();
      for (size_t i = 0; i < k->paramSizes.size(); ++i) {
        const auto* p = static_cast<const unsigned char*>(params[i]);
        bytes->emplace_back(p, p + k->paramSizes[i]);
      }
      emulatedEnqueue(s, [k, bytes, grid = std::array{gx, gy, gz}, block = std::array{bx, by, bz}] {
        std::vector<void*> p;
        for (auto& b : *bytes) p.push_back(b.data());
        k->run(p.data(), grid.data(), block.data(), &emulatedHostPointer);
      });
      return CUDA_SUCCESS;
    }
    const EmulatedKernel* k = fn->builtin;
    auto bytes = std::make_shared<std::vector<unsigned char>>(static_cast<unsigned char*>(params[0]),
                                                              static_cast<unsigned char*>(params[0]) + k->paramBytes);
    emulatedEnqueue(s, [k, bytes, grid = GjDim3{gx, gy, gz}, block = GjDim3{bx, by, bz}] {
      gridDim = grid;
      blockDim = block;
      for (blockIdx.z = 0; blockIdx.z < grid.z; ++blockIdx.z)
        for (blockIdx.y = 0; blockIdx.y < grid.y; ++blockIdx.y)
          for (blockIdx.x = 0; blockIdx.x < grid.x; ++blockIdx.x)
            for (threadIdx.z = 0; threadIdx.z < block.z; ++threadIdx.z)
              for (threadIdx.y = 0; threadIdx.y < block.y; ++threadIdx.y)
                for (threadIdx.x = 0; threadIdx.x < block.x; ++threadIdx.x) k->run(bytes->data());
    });
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
    emulatedEnqueue(s, [ops = &handle(exec)->graph] {
      for (const Op& op : *ops) op();
    });
    return CUDA_SUCCESS;
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
