#include "passes/pass_manager.h"
#include "support/environment.h"

#include "ir/printer.h"
#include "ir/verifier.h"
#include "passes/batch_mm.h"
#include "passes/canonicalize.h"
#include "passes/constant_propagation.h"
#include "passes/contiguous_operands.h"
#include "passes/create_autodiff_subgraphs.h"
#include "passes/cse.h"
#include "passes/dce.h"
#include "passes/frontend.h"
#include "passes/inline.h"
#include "passes/licm.h"
#include "passes/peephole.h"
#include "passes/requires_grad.h"
#include "passes/shape_propagation.h"
#include "passes/unroll_loops.h"
#include "support/error.h"
#include "support/text.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>

namespace gj {

static constexpr PassInfo kPasses[] = {
#define PASS(NAME, FN, DESC) {NAME, FN, nullptr, "", DESC, false},
#define FRONTEND_PASS(NAME, FN, DESC) {NAME, FN, nullptr, "", DESC, true},
#define PASS_WITH_PARAMS(NAME, FN, PARAMS, SYNTAX, DESC) \
  {NAME, nullptr, [](Graph& g, std::string_view text) { return FN(g, PARAMS::parse(text)); }, SYNTAX, DESC, false},
#include "passes/passes.def"
#undef PASS_WITH_PARAMS
#undef FRONTEND_PASS
#undef PASS
};

static constexpr std::string_view kPipelineSteps[] = {"differentiate", "leave-products-to-tape", "fuse"};

std::span<const std::string_view> pipelineSteps() { return kPipelineSteps; }

// A pass name split into its base and its parameters: "unroll-loops<by=4>" -> {"unroll-loops", "by=4"}.
static std::pair<std::string_view, std::string_view> splitParams(std::string_view name) {
  size_t open = name.find('<');
  if (open == std::string_view::npos || name.back() != '>') return {name, {}};
  return {name.substr(0, open), name.substr(open + 1, name.size() - open - 2)};
}

std::span<const PassInfo> allPasses() { return kPasses; }

static const std::vector<std::string>& passNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const PassInfo& p : kPasses) v.emplace_back(p.name);
    return v;
  }();
  return names;
}

const PassInfo& lookupPass(std::string_view name) {
  auto [base, params] = splitParams(name);
  for (const PassInfo& p : kPasses) {
    if (p.name != base) continue;
    if (!params.empty() && !p.runWithParams)
      throw Error(fmt::format("pass '{}' takes no parameters, but '{}' gives some", base, name), "",
                  fmt::format("write {}", base));
    return p;
  }
  throw Error(fmt::format("unknown pass '{}'{}", base, didYouMean(base, passNames())), "",
              fmt::format("passes: {}", fmt::join(passNames(), ", ")));
}

std::vector<std::string> parsePassList(std::string_view list) {
  std::vector<std::string> names;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    std::string_view item = list.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (!item.empty()) {
      lookupPass(item);  // a gj::Error for an unknown name or unwanted parameters
      names.emplace_back(item);
    }
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return names;
}

PassOptions PassOptions::fromEnvironment() {
  PassOptions o;
  if (const std::optional<std::string> env = environment().log) {
    std::string_view s(*env);
    size_t start = 0;
    while (start <= s.size()) {
      size_t comma = s.find(',', start);
      std::string item(s.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
      if (!item.empty() && item != "all") {
        const bool known = std::find(passNames().begin(), passNames().end(), item) != passNames().end() ||
                           std::find(kPipelineSteps, std::end(kPipelineSteps), item) != std::end(kPipelineSteps);
        if (!known)
          throw Error(fmt::format("GJ_LOG names an unknown pass '{}'{}", item, didYouMean(item, passNames())), "",
                      fmt::format("GJ_LOG takes pass names separated by commas, or all; passes: {}",
                                  fmt::join(passNames(), ", ")));
      }
      if (!item.empty()) o.logAfter.push_back(item);
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
  }
  return o;
}

PassRecord runPass(Graph& g, std::string_view name, const std::function<bool(Graph&)>& step, const PassOptions& opts) {
  const std::string_view base = splitParams(name).first;
  const bool frontend = std::any_of(std::begin(kPasses), std::end(kPasses),
                                    [&](const PassInfo& p) { return p.name == base && p.frontend; });
  if (!frontend && !opts.checkedLowered) requireLowered(g, fmt::format("pass {}", name));
  auto t0 = std::chrono::steady_clock::now();
  bool changed = step(g);
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (opts.verifyEach) verifyOrThrow(g, name);
  auto logged = [&](std::string_view n) { return std::find(opts.logAfter.begin(), opts.logAfter.end(), n) != opts.logAfter.end(); };
  if (logged("all") || logged(base)) {
    std::ostream& log = opts.log ? *opts.log : std::cerr;
    log << fmt::format("IR after {} ({}, {:.3f} ms):\n", name, changed ? "changed" : "unchanged", ms) << printIR(g);
  }
  return {std::string(name), changed, ms};
}

std::vector<PassRecord> runPasses(Graph& g, std::span<const std::string> names, const PassOptions& opts) {
  std::vector<PassRecord> records;
  for (const std::string& name : names) {
    const PassInfo& p = lookupPass(name);
    const std::string_view params = splitParams(name).second;
    records.push_back(runPass(g, name, [&](Graph& graph) {
      return p.runWithParams ? p.runWithParams(graph, params) : p.run(graph);
    }, opts));
  }
  return records;
}

}  // namespace gj
