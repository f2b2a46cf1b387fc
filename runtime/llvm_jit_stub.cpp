// The LLVM JIT entry points for builds without LLVM (GJ_WITH_LLVM=OFF): CPU kernels then fail to
// compile, and fusion groups run unfused.
#include "runtime/llvm_jit.h"

namespace gj {

void prepareModuleForHost(llvm::Module&, Context&) {}

class JitModule {};

Result<JitCode> jitCompile(std::unique_ptr<llvm::LLVMContext>, std::unique_ptr<llvm::Module>, const std::string& symbol,
                           const JitOptions&) {
  return Error("LLVM is not in this build (configured with GJ_WITH_LLVM=OFF); cannot compile " + symbol);
}

Result<void*> jitLookup(const std::string& symbol, Context&) {
  return Error("LLVM is not in this build (configured with GJ_WITH_LLVM=OFF); no symbol " + symbol);
}

std::string llvmDescription(Context&) { return "LLVM: not in this build"; }

}  // namespace gj
