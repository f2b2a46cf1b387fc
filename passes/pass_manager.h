#pragma once
// The pass registry (passes.def) and a runner that verifies, logs and times each pass.
#include "ir/graph.h"
#include "support/build.h"

#include <iosfwd>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gj {

struct PassInfo {
  std::string_view name;
  bool (*run)(Graph&);
  std::string_view description;
};

std::span<const PassInfo> allPasses();
/// Throws gj::Error naming the closest pass for an unknown name.
const PassInfo& lookupPass(std::string_view name);
/// "dce,cse" -> {"dce", "cse"}; checks every name.
std::vector<std::string> parsePassList(std::string_view list);

struct PassOptions {
  bool verifyEach = kDebugBuild;      ///< verify the graph after every pass
  std::vector<std::string> logAfter;  ///< print the graph after these passes ("all" for every one)
  std::ostream* log = nullptr;        ///< where to print (std::cerr when null)
  /// Options with logAfter from the GJ_LOG environment variable ("dce,cse" or "all").
  static PassOptions fromEnvironment();
};

struct PassRecord {
  std::string name;
  bool changed = false;
  double ms = 0;
};

/// Runs the named passes in order. After each: verifies when asked (a failure is a gj::Error naming the
/// pass), prints the graph when the pass is in logAfter, and records whether it changed and its time.
std::vector<PassRecord> runPasses(Graph& g, std::span<const std::string> names, const PassOptions& opts = {});

}  // namespace gj
