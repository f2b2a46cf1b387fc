#pragma once
// The fusers and executors the tests run, from their tables (fusers/fusers.def, executors/executors.def):
// a row added there is run here without another edit.
#include "executors/function.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace gj::test {

using FuserExecutor = std::pair<FuserKind, ExecutorKind>;

/// Every fuser, None first, then the table's rows.
inline std::vector<FuserKind> everyFuser() { return {allFusers().begin(), allFusers().end()}; }
inline std::vector<ExecutorKind> everyExecutor() { return {allExecutors().begin(), allExecutors().end()}; }

/// Whether `f` compiles kernels (fusers.def's use Product; not None): a test may expect groups of it.
inline bool compilesKernels(FuserKind f) {
  const std::vector<FuserKind> k = kernelFusers();
  return std::find(k.begin(), k.end(), f) != k.end();
}

/// Every fuser x executor pair; with `kernelsOnly`, of the fusers that compile kernels (fuserUse Product).
inline std::vector<FuserExecutor> everyPair(bool kernelsOnly = false) {
  std::vector<FuserExecutor> out;
  for (FuserKind f : kernelsOnly ? kernelFusers() : everyFuser())
    for (ExecutorKind e : allExecutors()) out.emplace_back(f, e);
  return out;
}

/// "te_profiling": a parameterized test's name for a pair.
inline std::string pairTestName(const FuserExecutor& p) {
  return std::string(fuserName(p.first)) + "_" + std::string(executorName(p.second));
}

}  // namespace gj::test
