#pragma once
// The legacy fuser's two code generators over one KernelSpec.
#include "fusers/legacy/kernel_spec.h"
#include "runtime/llvm_jit.h"
#include "support/result.h"

#include <string>

namespace gj::legacy {

/// The CPU kernel: void NAME(void** args, int64_t rowBegin, int64_t rowEnd), where args holds the
/// inputs' then the outputs' data pointers (all contiguous) and rows are the iteration shape without
/// its last dimension. One loop per row over the last dimension, which LLVM vectorizes.
using CpuKernelFn = void (*)(void** args, int64_t rowBegin, int64_t rowEnd);

/// A compiled CPU kernel: its entry, valid while `module` is held.
struct CpuKernelCode {
  CpuKernelFn fn = nullptr;
  std::shared_ptr<const JitModule> module;
};

/// Emits LLVM IR for `spec` and JIT-compiles it (O3, host CPU). Errors carry LLVM's message.
Result<CpuKernelCode> compileCpuKernel(const KernelSpec& spec, const std::string& name, const JitOptions& opts);

/// The LLVM IR (before optimization) that compileCpuKernel would compile, as text.
Result<std::string> emitCpuKernelIR(const KernelSpec& spec, const std::string& name);

/// The CUDA C source of `spec`: extern "C" __global__ void NAME(const T* in0, ..., T* out0, ..., long long n),
/// a grid-stride loop over the n = spec.numel() output elements.
std::string emitCudaKernel(const KernelSpec& spec, const std::string& name);

/// Element i of `spec` as a CUDA C function: __device__ void NAME(long long i, const T* in0, ..., T* out0, ...),
/// after the helpers it calls (Fuser::emitElementFunction). Throws gj::Error for rows known only at run time.
std::string emitCudaElementFunction(const KernelSpec& spec, const std::string& name);

}  // namespace gj::legacy
