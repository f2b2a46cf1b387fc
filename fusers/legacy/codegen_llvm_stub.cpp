// Builds without LLVM: CPU kernels cannot be compiled, so fusion groups run unfused.
#include "fusers/legacy/codegen.h"

namespace gj::legacy {
Result<CpuKernelCode> compileCpuKernel(const KernelSpec&, const std::string& name, const JitOptions&) {
  return Error("LLVM is not in this build (configured with GJ_WITH_LLVM=OFF); cannot compile " + name);
}
Result<std::string> emitCpuKernelIR(const KernelSpec&, const std::string& name) {
  return Error("LLVM is not in this build (configured with GJ_WITH_LLVM=OFF); cannot emit " + name);
}
}  // namespace gj::legacy
