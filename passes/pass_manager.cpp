#include "passes/pass_manager.h"

#include "ir/printer.h"
#include "ir/verifier.h"
#include "passes/batch_mm.h"
#include "passes/canonicalize.h"
#include "passes/constant_propagation.h"
#include "passes/contiguous_operands.h"
#include "passes/create_autodiff_subgraphs.h"
#include "passes/cse.h"
#include "passes/dce.h"
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
#define PASS(NAME, FN, DESC) {NAME, FN, DESC},
#include "passes/passes.def"
#undef PASS
};

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
  for (const PassInfo& p : kPasses)
    if (p.name == name) return p;
  throw Error(fmt::format("unknown pass '{}'{}", name, didYouMean(name, passNames())), "",
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
    if (!item.empty()) names.push_back(std::string(lookupPass(item).name));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return names;
}

PassOptions PassOptions::fromEnvironment() {
  PassOptions o;
  if (const char* env = std::getenv("GJ_LOG")) {
    std::string_view s(env);
    size_t start = 0;
    while (start <= s.size()) {
      size_t comma = s.find(',', start);
      std::string item(s.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
      if (!item.empty() && item != "all") {
        const bool known = std::find(passNames().begin(), passNames().end(), item) != passNames().end();
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

std::vector<PassRecord> runPasses(Graph& g, std::span<const std::string> names, const PassOptions& opts) {
  std::vector<PassRecord> records;
  std::ostream& log = opts.log ? *opts.log : std::cerr;
  const bool logAll = std::find(opts.logAfter.begin(), opts.logAfter.end(), "all") != opts.logAfter.end();
  for (const std::string& name : names) {
    const PassInfo& p = lookupPass(name);
    auto t0 = std::chrono::steady_clock::now();
    bool changed = p.run(g);
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    records.push_back({name, changed, ms});
    if (opts.verifyEach) verifyOrThrow(g, name);
    if (logAll || std::find(opts.logAfter.begin(), opts.logAfter.end(), name) != opts.logAfter.end())
      log << fmt::format("IR after {} ({}, {:.3f} ms):\n", name, changed ? "changed" : "unchanged", ms) << printIR(g);
  }
  return records;
}

}  // namespace gj
