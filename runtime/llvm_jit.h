#pragma once
// An LLVM ORC JIT session per Context (runtime/context.h), shared by both fusers' CPU backends. LLVM
// types appear only as forward declarations here; only backend .cpp files include LLVM headers.
#include "runtime/context.h"
#include "support/result.h"

#include <memory>
#include <string>

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace gj {

struct JitOptions {
  std::string dumpDir;   ///< when set, write NAME.ll (before optimization) and NAME.opt.ll (after; not for a kernel the persistent cache held)
  std::string dumpName;  ///< file name stem for dumps
  Context* context = nullptr;  ///< whose JIT session compiles and holds the code; null: Context::current()
  Context& contextOrCurrent() const { return context ? *context : Context::current(); }
};

/// Sets the host's target triple and data layout on `m` (call before emitting code that depends on them).
void prepareModuleForHost(llvm::Module& m, Context& context = Context::current());

/// One compiled module's code in the JIT; freed when the last shared_ptr to it goes (so a kernel the cache
/// dropped and no plan uses takes its machine code with it).
class JitModule;

/// A symbol's address and the module that holds it: the address is valid while `module` is held.
struct JitCode {
  void* address = nullptr;
  std::shared_ptr<const JitModule> module;
};

/// Verifies `m`, optimizes it at O3 for the host CPU (AVX-512 where present) and compiles it to object
/// code, or finds that object code in the persistent cache (runtime/disk_cache.h; keyed by the module's
/// text, LLVM's version and the CPU and its features, and stored there on a miss), adds it to the shared
/// LLJIT of opts.context and returns the address of `symbol`. Calls to libm resolve against the process.
Result<JitCode> jitCompile(std::unique_ptr<llvm::LLVMContext> ctx, std::unique_ptr<llvm::Module> m,
                           const std::string& symbol, const JitOptions& opts = {});

/// The address of `symbol` from a module added earlier to `context`'s JIT (valid while that module is held).
Result<void*> jitLookup(const std::string& symbol, Context& context = Context::current());

/// "LLVM 19.1.7 (cpu: sapphirerapids)"
std::string llvmDescription(Context& context = Context::current());

}  // namespace gj
