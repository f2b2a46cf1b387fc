// The emulated CUDA driver (GJ_CUDA_DRIVER=emulated): the driver entry points runtime/cuda uses,
// answered on the host, so that tests run the whole CUDA path of the executors on a machine with no GPU.
// Device memory is host memory, streams run in order as they are called, and a launch runs the grid one
// thread at a time. A device pointer is its host address with bit 62 set: not an address the processor
// accepts, so host code that reads device memory directly (which would crash on a GPU machine) crashes
// here too, while views may still offset device pointers as they do on a GPU. Only the kernels of
// kernels.cuh exist here (compiled below as host C++); a module that NVRTC made for any other kernel
// loads, but has no function by that name, so the fusers' CUDA kernels are refused as they would be if
// they failed to compile, and their groups run unfused.
#include "runtime/cuda/driver_api.h"

#include <math.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string_view>

namespace {
// What a kernel reads of its launch, as CUDA C names it.
struct GjDim3 {
  unsigned x = 0, y = 0, z = 0;
};
thread_local GjDim3 threadIdx, blockIdx, blockDim, gridDim;
}  // namespace

#define GJ_KERNEL static
#define GJ_DEVICE static inline
#include "runtime/cuda/kernels.cuh"

namespace gj::cuda::detail {
namespace {

struct EmulatedKernel {
  std::string_view name;
  void (*run)(void* params);  ///< the kernel on its one parameter, a struct
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
}
void untagPointers(GjCopyArgs& p) {
  p.out = untag(p.out);
  p.in = untag(p.in);
}
void untagPointers(GjFillArgs& p) { p.out = untag(p.out); }
void untagPointers(GjSumArgs& p) {
  p.in = untag(p.in);
  p.partial = untag(p.partial);
  p.out = untag(p.out);
}

template <typename Args, void (*K)(Args)>
void call(void* params) {
  Args args = *static_cast<Args*>(params);
  untagPointers(args);
  K(args);
}

const EmulatedKernel kKernels[] = {
    {"gj_map_f32", call<GjMapArgs, gj_map_f32>},
    {"gj_map_f64", call<GjMapArgs, gj_map_f64>},
    {"gj_copy", call<GjCopyArgs, gj_copy>},
    {"gj_fill", call<GjFillArgs, gj_fill>},
    {"gj_sum_parts", call<GjSumArgs, gj_sum_parts>},
    {"gj_sum_finish", call<GjSumArgs, gj_sum_finish>},
};

using Clock = std::chrono::steady_clock;
// A live object behind each opaque handle the driver hands out.
struct Handle {
  Clock::time_point when;  ///< an event's record time
};

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
    *s = r == CUDA_SUCCESS ? "CUDA_SUCCESS" : r == CUDA_ERROR_NOT_FOUND ? "CUDA_ERROR_NOT_FOUND"
       : r == CUDA_ERROR_OUT_OF_MEMORY ? "CUDA_ERROR_OUT_OF_MEMORY" : "CUDA_ERROR_UNKNOWN";
    return CUDA_SUCCESS;
  };
  api.cuGetErrorString = [](CUresult r, const char** s) {
    *s = r == CUDA_ERROR_NOT_FOUND ? "the emulated driver has no host version of this kernel"
                                   : "an error of the emulated driver";
    return CUDA_SUCCESS;
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
  api.cuCtxSynchronize = [] { return CUDA_SUCCESS; };
  api.cuMemAlloc = [](CUdeviceptr* p, size_t n) {
    void* m = std::aligned_alloc(kAlignment, (n + kAlignment - 1) / kAlignment * kAlignment);
    if (!m) return CUDA_ERROR_OUT_OF_MEMORY;
    *p = reinterpret_cast<CUdeviceptr>(m) ^ kDeviceTag;
    return CUDA_SUCCESS;
  };
  api.cuMemFree = [](CUdeviceptr p) {
    std::free(host(p));
    return CUDA_SUCCESS;
  };
  api.cuMemcpyHtoDAsync = [](CUdeviceptr dst, const void* src, size_t n, CUstream) {
    std::memcpy(host(dst), src, n);
    return CUDA_SUCCESS;
  };
  api.cuMemcpyDtoHAsync = [](void* dst, CUdeviceptr src, size_t n, CUstream) {
    std::memcpy(dst, host(src), n);
    return CUDA_SUCCESS;
  };
  api.cuMemcpyDtoDAsync = [](CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream) {
    std::memmove(host(dst), host(src), n);
    return CUDA_SUCCESS;
  };
  api.cuMemsetD8Async = [](CUdeviceptr dst, unsigned char v, size_t n, CUstream) {
    std::memset(host(dst), v, n);
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
  api.cuStreamSynchronize = [](CUstream) { return CUDA_SUCCESS; };
  api.cuEventCreate = [](CUevent* e, unsigned) {
    *e = newHandle<CUevent>();
    return CUDA_SUCCESS;
  };
  api.cuEventDestroy = [](CUevent e) {
    deleteHandle(e);
    return CUDA_SUCCESS;
  };
  api.cuEventRecord = [](CUevent e, CUstream) {
    reinterpret_cast<Handle*>(e)->when = Clock::now();
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
    *m = newHandle<CUmodule>();
    return CUDA_SUCCESS;
  };
  api.cuModuleUnload = [](CUmodule m) {
    deleteHandle(m);
    return CUDA_SUCCESS;
  };
  api.cuModuleGetFunction = [](CUfunction* f, CUmodule, const char* name) {
    for (const EmulatedKernel& k : kKernels) {
      if (k.name != name) continue;
      *f = reinterpret_cast<CUfunction>(const_cast<EmulatedKernel*>(&k));
      return CUDA_SUCCESS;
    }
    return CUDA_ERROR_NOT_FOUND;
  };
  api.cuFuncGetAttribute = [](int* v, CUfunction_attribute a, CUfunction) {
    *v = a == CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK ? 1024 : 0;
    return CUDA_SUCCESS;
  };
  api.cuLaunchKernel = [](CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                          unsigned, CUstream, void** params, void**) {
    const auto* k = reinterpret_cast<const EmulatedKernel*>(f);
    if (gx * gy * gz == 0 || bx * by * bz == 0) return CUDA_ERROR_INVALID_VALUE;
    gridDim = {gx, gy, gz};
    blockDim = {bx, by, bz};
    for (blockIdx.z = 0; blockIdx.z < gz; ++blockIdx.z)
      for (blockIdx.y = 0; blockIdx.y < gy; ++blockIdx.y)
        for (blockIdx.x = 0; blockIdx.x < gx; ++blockIdx.x)
          for (threadIdx.z = 0; threadIdx.z < bz; ++threadIdx.z)
            for (threadIdx.y = 0; threadIdx.y < by; ++threadIdx.y)
              for (threadIdx.x = 0; threadIdx.x < bx; ++threadIdx.x) k->run(params[0]);
    return CUDA_SUCCESS;
  };
}

}  // namespace gj::cuda::detail
