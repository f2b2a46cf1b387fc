#pragma once
// The TE fuser's CPU backend: each top-level loop nest of a LoopNest becomes a function
// void NAME_k(void** args, int64_t begin, int64_t end) running its outermost loop over [begin, end)
// (args: the input then the output buffers' data), JIT-compiled by the shared ORC session.
#include "fusers/te/loopnest.h"
#include "runtime/llvm_jit.h"
#include "support/result.h"

#include <string>
#include <vector>

namespace gj::te {

using NestFn = void (*)(void** args, int64_t begin, int64_t end);

struct CompiledNest {
  NestFn fn;
  int64_t trips;   ///< iterations of the outermost loop (1 for a nest without a loop)
  bool parallel;   ///< the schedule marked the outermost loop parallel
  std::shared_ptr<const JitModule> module;  ///< holds fn's code
};

/// The LLVM IR of `nest` (before optimization), as text.
Result<std::string> emitLlvmIR(const LoopNest& nest, const std::string& name);
/// Compiles every top-level nest of `nest` (reductions lowered first).
Result<std::vector<CompiledNest>> compileLlvm(const LoopNest& nest, const std::string& name, const JitOptions& opts);

}  // namespace gj::te
