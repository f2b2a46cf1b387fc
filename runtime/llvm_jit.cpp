#include "runtime/llvm_jit.h"

#include "runtime/disk_cache.h"

#include <fmt/format.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/DiagnosticPrinter.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/TargetParser/Host.h>

#include <mutex>

namespace gj {

namespace {

// A context's LLJIT (Context::state), made on first use.
struct Session {
  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::unique_ptr<llvm::TargetMachine> tm;
  std::string cpu;
  std::string features;  // the host CPU's, as the target machine uses them (part of cache keys)
  std::string error;
  std::mutex optimizeMu;  // the pass pipeline shares the TargetMachine

  Session() {
    // LLVM's target registry is the process's: registered once, whichever context's session comes first
    // (two contexts may make theirs on two threads at once).
    static std::once_flag registered;
    std::call_once(registered, [] {
      llvm::InitializeNativeTarget();
      llvm::InitializeNativeTargetAsmPrinter();
    });
    auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
    if (!jtmb) {
      error = llvm::toString(jtmb.takeError());
      return;
    }
    jtmb->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
    cpu = jtmb->getCPU();
    features = jtmb->getFeatures().getString();
    auto machine = jtmb->createTargetMachine();
    if (!machine) {
      error = llvm::toString(machine.takeError());
      return;
    }
    tm = std::move(*machine);
    auto built = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(*jtmb)).create();
    if (!built) {
      error = llvm::toString(built.takeError());
      return;
    }
    jit = std::move(*built);
    auto gen = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
        jit->getDataLayout().getGlobalPrefix());
    if (!gen) {
      error = llvm::toString(gen.takeError());
      return;
    }
    jit->getMainJITDylib().addGenerator(std::move(*gen));
  }
};

// Shared with every JitModule, so that the JIT outlives the last module it holds (a kernel may be held
// after its context is gone).
std::shared_ptr<Session> sessionPtr(Context& c) { return c.statePtr<Session>(); }

Session& session(Context& c) { return c.state<Session>(); }

void dump(const llvm::Module& m, const std::string& path) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_Text);
  if (!ec) m.print(os, nullptr);
}

}  // namespace

class JitModule {
 public:
  JitModule(std::shared_ptr<Session> s, llvm::orc::ResourceTrackerSP rt) : session_(std::move(s)), rt_(std::move(rt)) {}
  ~JitModule() {
    if (rt_) llvm::consumeError(rt_->remove());  // the module's code and symbols go
  }

 private:
  std::shared_ptr<Session> session_;
  llvm::orc::ResourceTrackerSP rt_;
};

void prepareModuleForHost(llvm::Module& m, Context& context) {
  Session& s = session(context);
  if (!s.tm) return;
  m.setTargetTriple(s.tm->getTargetTriple().str());
  m.setDataLayout(s.tm->createDataLayout());
}

namespace {

// LLVM's diagnostics for a module we compile: errors are collected into the string `p` points to (when
// set); warnings and remarks, such as the vectorizer's notes on a loop it left scalar, are dropped, so
// a user's terminal shows graphjit's messages only. GJ_DUMP_KERNELS keeps the IR to investigate them.
void onDiagnostic(const llvm::DiagnosticInfo* d, void* p) {
  if (d->getSeverity() != llvm::DS_Error || !p) return;
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::DiagnosticPrinterRawOStream printer(os);
  d->print(printer);
  static_cast<std::string*>(p)->append(os.str()).append("\n");
}

}  // namespace

Result<JitCode> jitCompile(std::unique_ptr<llvm::LLVMContext> ctx, std::unique_ptr<llvm::Module> m,
                           const std::string& symbol, const JitOptions& opts) {
  Context& context = opts.contextOrCurrent();
  Session& s = session(context);
  if (!s.jit) return Error("LLVM JIT unavailable: " + s.error);
  std::string errors;
  ctx->setDiagnosticHandlerCallBack(onDiagnostic, &errors);
  prepareModuleForHost(*m, context);
  std::string verifyLog;
  llvm::raw_string_ostream vos(verifyLog);
  if (llvm::verifyModule(*m, &vos)) return Error("generated LLVM IR does not verify: " + verifyLog);
  if (!opts.dumpDir.empty()) dump(*m, opts.dumpDir + "/" + opts.dumpName + ".ll");
  // The persistent cache's key: the module before optimization (its functions' names included) and what
  // turns it into machine code.
  std::string key = fmt::format("graphjit {} | LLVM {} | {} | cpu {} | {} | O3, object code v1\n", GJ_VERSION,
                                LLVM_VERSION_STRING, s.tm->getTargetTriple().str(), s.cpu, s.features);
  {
    llvm::raw_string_ostream os(key);
    m->print(os, nullptr);
  }
  // Optimized and compiled here, not in the JIT, so that what runs is what the cache keeps.
  auto compile = [&]() -> Result<std::string> {
    std::lock_guard<std::mutex> lock(s.optimizeMu);
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    llvm::PipelineTuningOptions pto;
    pto.LoopVectorization = true;
    pto.SLPVectorization = true;
    llvm::PassBuilder pb(s.tm.get(), pto);
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
    llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
    mpm.run(*m, mam);
    if (!opts.dumpDir.empty()) dump(*m, opts.dumpDir + "/" + opts.dumpName + ".opt.ll");
    if (!errors.empty()) return Error("LLVM failed to optimize " + symbol + ": " + errors);
    llvm::SmallVector<char, 0> buffer;
    llvm::raw_svector_ostream os(buffer);
    llvm::legacy::PassManager codegen;
    if (s.tm->addPassesToEmitFile(codegen, os, nullptr, llvm::CodeGenFileType::ObjectFile))
      return Error("LLVM cannot emit object code for " + s.tm->getTargetTriple().str());
    codegen.run(*m);
    if (!errors.empty()) return Error("LLVM failed to compile " + symbol + ": " + errors);
    return std::string(buffer.data(), buffer.size());
  };
  // A tracker of its own, so that the module can be removed alone when its kernel is no longer held.
  auto add = [&](const std::string& object) -> Result<std::shared_ptr<const JitModule>> {
    llvm::orc::ResourceTrackerSP rt = s.jit->getMainJITDylib().createResourceTracker();
    auto module = std::make_shared<const JitModule>(sessionPtr(context), rt);
    if (auto err = s.jit->addObjectFile(rt, llvm::MemoryBuffer::getMemBufferCopy(object, symbol)))
      return Error("adding a module to the LLVM JIT failed: " + llvm::toString(std::move(err)));
    return module;
  };
  // A kernel dump compiles afresh, so that it holds the optimized IR too.
  std::optional<std::string> cached = opts.dumpDir.empty() ? diskCacheLoad("llvm-object", key) : std::nullopt;
  Result<std::shared_ptr<const JitModule>> module = cached ? add(*cached) : Result<std::shared_ptr<const JitModule>>(Error(""));
  if (!module) {  // not cached, or the JIT refused what was (compiled again, and the entry replaced)
    Result<std::string> object = compile();
    if (!object) return object.error();
    module = add(object.value());
    if (!module) return module.error();
    diskCacheStore("llvm-object", key, object.value());
  }
  m.reset();  // before its context
  auto addr = s.jit->lookup(symbol);
  if (!addr) return Error(fmt::format("LLVM JIT: symbol {} not found: {}", symbol, llvm::toString(addr.takeError())));
  return JitCode{addr->toPtr<void*>(), std::move(module).value()};
}

Result<void*> jitLookup(const std::string& symbol, Context& context) {
  Session& s = session(context);
  if (!s.jit) return Error("LLVM JIT unavailable: " + s.error);
  auto addr = s.jit->lookup(symbol);
  if (!addr) return Error(fmt::format("LLVM JIT: symbol {} not found: {}", symbol, llvm::toString(addr.takeError())));
  return addr->toPtr<void*>();
}

std::string llvmDescription(Context& context) {
  Session& s = session(context);
  return fmt::format("LLVM {} (cpu: {})", LLVM_VERSION_STRING, s.cpu.empty() ? "unknown" : s.cpu);
}

}  // namespace gj
