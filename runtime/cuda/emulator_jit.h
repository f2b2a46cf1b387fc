#pragma once
// Internal to runtime/cuda: the fusers' CUDA C compiled for the host, so that the emulated driver
// (GJ_CUDA_DRIVER=emulated) runs the kernels that NVRTC compiled, not only kernels.cuh's. A test-only
// path: the host's C++ compiler (`c++`, or $GJ_EMULATOR_CXX) builds each module's source as a shared
// library, with a prelude that gives CUDA C's names (threadIdx, __global__, __syncthreads, __shared__,
// __shfl_sync, ...) host meanings (emulator_device.h), and one entry per kernel that runs one thread of
// its grid, as the scheduler (emulator_scheduler.h) asks, with the device pointers among its parameters
// turned into host addresses.
#include "support/result.h"

#include <memory>
#include <string>
#include <vector>

namespace gj::cuda::detail {

/// One kernel of a host-compiled module.
struct HostKernel {
  std::string name;
  /// Runs the scheduler's current thread: params as cuLaunchKernel takes them (one pointer per parameter).
  void (*thread)(void* const* params, void* (*untag)(const void*));
  std::vector<size_t> paramSizes;  ///< the bytes of each parameter, for a launch recorded by a capture
  bool fibers;  ///< its module uses barriers or warp operations: it runs with block semantics
};

/// A module's source, compiled for the host: its kernels by name.
class HostModule {
 public:
  virtual ~HostModule() = default;
  /// The kernel `name`, or null when the source has none by that name.
  virtual const HostKernel* find(const std::string& name) const = 0;
};

/// The host build of `source` (once per source in the current context; the libraries are kept on disk, in
/// $GJ_EMULATOR_CACHE or $TMPDIR/graphjit-emulator-UID, so that the next process reuses them), or why
/// it could not be built (no compiler, a compile error: its log).
Result<std::shared_ptr<const HostModule>> hostModule(const std::string& source);

/// The source of the module that this thread loads next (compileKernel sets it around
/// cuModuleLoadData; null otherwise): what the emulated driver compiles for the host.
void setPendingModuleSource(const std::string* source);
const std::string* pendingModuleSource();

}  // namespace gj::cuda::detail
