#pragma once
// The pass registry (passes.def) and a runner that verifies, logs and times each pass.
#include "ir/graph.h"
#include "passes/unroll_loops.h"  // the parameters of passes.def's PASS_WITH_PARAMS rows
#include "support/build.h"

#include <functional>
#include <iosfwd>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gj {

/// A registered pass (passes.def). One that takes parameters (PASS_WITH_PARAMS) is named with them as
/// `name<params>` (`unroll-loops<full=512;by=1>`), or alone for its defaults, where a person names it
/// (--passes, GJ_LOG); code gives it typed parameters (runPass below).
struct PassInfo {
  std::string_view name;
  bool (*run)(Graph&);                          ///< PASS
  /// PASS_WITH_PARAMS: the parameters parsed from their text ("" for the defaults), then the pass.
  bool (*runWithParams)(Graph&, std::string_view params);
  std::string_view params;                      ///< how its parameters are written ("full=N;by=K")
  std::string_view description;
  bool frontend;                                ///< FRONTEND_PASS: takes TorchScript's forms (passes/frontend.h)
};

std::span<const PassInfo> allPasses();
/// The pass a name (with or without `<params>`) names; a gj::Error names the closest pass for an unknown
/// one, and refuses parameters for a pass that takes none.
const PassInfo& lookupPass(std::string_view name);
/// "dce,cse" -> {"dce", "cse"}; checks every name (parameters kept: "unroll-loops<by=4>").
std::vector<std::string> parsePassList(std::string_view list);
/// The steps the pipelines run through runPass that are not registered passes (GJ_LOG takes them too).
std::span<const std::string_view> pipelineSteps();

struct PassOptions {
  bool verifyEach = kDebugBuild;      ///< verify the graph after every pass
  std::vector<std::string> logAfter;  ///< print the graph after these passes ("all" for every one)
  std::ostream* log = nullptr;        ///< where to print (std::cerr when null)
  /// The caller ran requireLowered on every graph it passes: the passes skip that walk (no pass but a
  /// frontend pass makes a frontend form, so a pipeline checks once, where its graph comes in).
  bool checkedLowered = false;
  /// Options with logAfter from the GJ_LOG environment variable ("dce,cse" or "all").
  static PassOptions fromEnvironment();
};

struct PassRecord {
  std::string name;
  bool changed = false;
  double ms = 0;
};

/// Runs the named passes in order (names as parsePassList takes them). After each: verifies when asked (a
/// failure is a gj::Error naming the pass), prints the graph when the pass is in logAfter, and records
/// whether it changed and its time.
std::vector<PassRecord> runPasses(Graph& g, std::span<const std::string> names, const PassOptions& opts = {});

/// Runs one step as runPasses runs a pass: `step` changes g (and maybe graphs of its own, which it
/// verifies itself when opts.verifyEach), then g is verified, logged under `name` and timed.
PassRecord runPass(Graph& g, std::string_view name, const std::function<bool(Graph&)>& step,
                   const PassOptions& opts = {});

/// The pass of passes.def whose parameters are of type Params (its PASS_WITH_PARAMS row).
template <typename Params>
struct PassWithParams;
#define PASS(NAME, FN, DESC)
#define FRONTEND_PASS(NAME, FN, DESC)
#define PASS_WITH_PARAMS(NAME, FN, PARAMS, SYNTAX, DESC)                          \
  template <>                                                                     \
  struct PassWithParams<PARAMS> {                                                 \
    static constexpr std::string_view name = NAME;                                \
    static bool run(Graph& g, const PARAMS& params) { return FN(g, params); }     \
  };
#include "passes/passes.def"
#undef PASS_WITH_PARAMS
#undef FRONTEND_PASS
#undef PASS

/// Runs the pass that takes `params` (runPass(g, UnrollOptions{.factor = 1})) as runPasses runs a pass,
/// recorded and logged as `name<params>`; no text is parsed.
template <typename Params>
PassRecord runPass(Graph& g, const Params& params, const PassOptions& opts = {}) {
  using Pass = PassWithParams<Params>;
  return runPass(g, std::string(Pass::name) + "<" + params.str() + ">",
                 [&](Graph& graph) { return Pass::run(graph, params); }, opts);
}

}  // namespace gj
