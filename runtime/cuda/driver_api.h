#pragma once
// Internal to runtime/cuda: the CUDA driver API as a table of entry points found at run time. Only
// runtime/cuda's sources include this (it needs the toolkit's cuda.h); nothing links libcuda.
#include "runtime/cuda/device.h"

#include <cuda.h>
#include <dlfcn.h>

#include <functional>
#include <initializer_list>
#include <optional>
#include <string>

namespace gj::cuda {

/// Where the allocations of captured work come from (device.h): only captures into it reuse its blocks.
class GraphMemory {
 public:
  GraphMemory() = default;
  ~GraphMemory();  ///< gives the blocks to `stream` (memory.cpp)
  GraphMemory(const GraphMemory&) = delete;
  GraphMemory& operator=(const GraphMemory&) = delete;
  /// The stream of the captures into it; null until the first.
  StreamHandle stream = nullptr;
};

}  // namespace gj::cuda

namespace gj::cuda::detail {

/// While `memory` is set, this thread's allocations come from it, and what it frees goes to it.
void setCaptureMemory(GraphMemory* memory);

struct DriverApi {
#define GJ_CUDA_DRIVER_ENTRY(name) decltype(&::name) name = nullptr;
#include "runtime/cuda/driver_entries.def"
#undef GJ_CUDA_DRIVER_ENTRY
};

/// Sets `entry` to `symbol` of a dlopen'ed library (the driver, cuBLAS); a symbol the library lacks
/// leaves it null and is added to `missing`, a list separated by ", ".
template <typename F>
void findEntry(void* lib, const char* symbol, F& entry, std::string& missing) {
  void* fn = dlsym(lib, symbol);
  if (!fn) missing += missing.empty() ? std::string(symbol) : ", " + std::string(symbol);
  entry = reinterpret_cast<F>(fn);
}

/// A library opened at run time (cuBLAS, cuDNN): `given` (the environment variable `env`'s path) when set,
/// else the first of `names` that loads. Null when none does, with `failure` saying which were tried and
/// how to point at the library.
void* openLibrary(const char* what, const char* env, const std::optional<std::string>& given,
                  std::initializer_list<const char*> names, std::string& failure);

/// Fills `api` with the emulated driver (emulator.cpp): GJ_CUDA_DRIVER=emulated.
void installEmulatedDriver(DriverApi& api);
/// Runs `op` now, or records it when `stream` is under capture (the emulated driver's stream order);
/// host work that stands in for a device library's call (the emulated cuBLAS) goes through it.
void emulatedEnqueue(CUstream stream, std::function<void()> op);
/// The host address behind a device pointer of the emulated driver.
void* emulatedHostPointer(const void* device);

/// The loaded driver with device 0's primary context current on the calling thread; throws
/// gj::Error("no CUDA device: ...") when there is none.
const DriverApi& driver();

/// Throws gj::Error "`what` failed: CUDA_ERROR_... (the driver's description)" unless r is CUDA_SUCCESS.
void check(CUresult r, const char* what);
/// "CUDA_ERROR_OUT_OF_MEMORY (out of memory)"
std::string errorText(CUresult r);

}  // namespace gj::cuda::detail
