// Builds without LLVM: TE groups cannot be compiled for the CPU and run unfused.
#include "fusers/te/llvm_codegen.h"

namespace gj::te {
Result<std::string> emitLlvmIR(const LoopNest&, const std::string& name) {
  return Error("LLVM is not in this build (configured with GJ_WITH_LLVM=OFF); cannot emit " + name);
}
Result<std::vector<CompiledNest>> compileLlvm(const LoopNest&, const std::string& name, const JitOptions&) {
  return Error("LLVM is not in this build (configured with GJ_WITH_LLVM=OFF); cannot compile " + name);
}
}  // namespace gj::te
