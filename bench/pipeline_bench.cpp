// How compile time grows with graph size (issue #27): the legacy executor's whole pipeline (passes,
// autodiff, fusion, kernel compilation) on stacked LSTMs (fastrnns' jit_multilayer) of growing depth at a
// fixed sequence length, then of growing sequence length at a fixed depth. Every pass is named with its
// total time; the last column of each table is the growth exponent k of time ~ nodes^k between
// neighbouring sizes (1: linear).
//
//   build/bin/pipeline_bench                         depths 1,2,5,10,20,50 at seq 100; seqs 100..2000 at depth 1
//   build/bin/pipeline_bench --depths 5,20 --seqs 100,1000 --fuser old
//   build/bin/pipeline_bench --depths 5,20,50 --seqs 100,500,2000 --max-full-unroll 2000 --repeat 3
//
// Not a timed test: figures go to bench/results/ with the machine described.
#include "bench/machine.h"
#include "executors/pipeline.h"
#include "models/lstm.h"
#include "tools/cli.h"
#include "support/environment.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace {

using namespace gj;

struct Measure {
  std::string label;
  int64_t nodes = 0;     // top-level nodes after unrolling, every forward and backward graph included
  double totalMs = 0;    // optimizeSpecialized, start to end
  double passMs = 0;     // the passes and differentiation
  double jitMs = 0;      // kernel compilation
  int64_t kernels = 0;   // kernels compiled (the process's kernel cache is emptied before each size)
  std::map<std::string, double> byPass;  // pass name (parameters dropped) -> total ms
};

std::string baseName(const std::string& pass) { return pass.substr(0, pass.find('<')); }

int64_t countNodes(const Graph& g) {
  int64_t n = 0;
  for ([[maybe_unused]] const Node* node : *g.block()) ++n;
  return n;
}

Measure measure(int64_t depth, int64_t seq, int64_t size, int64_t batch, FuserKind fuser, int64_t maxFullUnroll) {
  Model m = buildLstm(LstmVariantKind::JitMultilayer, {seq, batch, size, size, depth});
  auto g = std::shared_ptr<Graph>(m.graph->clone());
  std::vector<bool> requiresGrad;
  for (size_t i = 0; i < m.inputs.size(); ++i) {
    const InputSpec& in = m.inputs[i];
    const bool grad = isFloating(in.dtype) && in.requiresGrad;
    Type t = Type::tensor(in.dtype, in.sizes);
    t.requiresGrad = grad;
    g->inputs()[i]->setType(t);
    requiresGrad.push_back(grad);
  }
  // Cold: nothing compiled for an earlier size is found again.
  setKernelCacheCapacity(0);
  setKernelCacheCapacity(kDefaultKernelCacheCapacity);
  PipelineOptions o;
  o.fuser = fuser;
  o.maxFullUnroll = maxFullUnroll;
  o.passes.verifyEach = false;
  if (const auto dump = environment().dumpKernels) o.fuserOptions.dumpDir = *dump;
  auto t0 = std::chrono::steady_clock::now();

  Plan p = optimizeSpecialized(g, requiresGrad, o);
  Measure r;
  r.label = fmt::format("d{} s{}", depth, seq);
  r.totalMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  r.passMs = p.passMs();
  r.jitMs = p.fusion.compileMs;
  r.kernels = p.fusion.kernelsCompiled;
  for (const PassRecord& rec : p.passes) r.byPass[baseName(rec.name)] += rec.ms;
  r.nodes = countNodes(*p.graph);
  for (const auto& [node, grad] : p.gradients) r.nodes += countNodes(*grad->forward) + countNodes(*grad->backward);
  return r;
}

double median(std::vector<double> xs) {
  std::sort(xs.begin(), xs.end());
  const size_t n = xs.size();
  return n % 2 ? xs[n / 2] : (xs[n / 2 - 1] + xs[n / 2]) / 2;
}

// The median of `repeat` runs at one size: of the totals, and of each pass on its own.
Measure measureMedian(int repeat, int64_t depth, int64_t seq, int64_t size, int64_t batch, FuserKind fuser,
                      int64_t maxFullUnroll) {
  std::vector<Measure> runs;
  for (int i = 0; i < repeat; ++i) runs.push_back(measure(depth, seq, size, batch, fuser, maxFullUnroll));
  Measure m = runs.front();
  auto of = [&](auto field) {
    std::vector<double> xs;
    for (const Measure& r : runs) xs.push_back(field(r));
    return median(xs);
  };
  m.totalMs = of([](const Measure& r) { return r.totalMs; });
  m.passMs = of([](const Measure& r) { return r.passMs; });
  m.jitMs = of([](const Measure& r) { return r.jitMs; });
  for (auto& [name, ms] : m.byPass)
    ms = of([&](const Measure& r) { return r.byPass.count(name) ? r.byPass.at(name) : 0.0; });
  return m;
}

double growth(double t0, double t1, int64_t n0, int64_t n1) {
  if (t0 <= 0 || t1 <= 0 || n0 == n1) return NAN;
  return std::log(t1 / t0) / std::log(static_cast<double>(n1) / static_cast<double>(n0));
}

void printTable(const std::string& title, const std::vector<Measure>& ms, size_t topPasses) {
  fmt::print("\n## {}\n\n", title);
  fmt::print("| size | nodes | total ms | passes ms | jit ms | kernels | ms / 1k nodes | growth k |\n");
  fmt::print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  for (size_t i = 0; i < ms.size(); ++i) {
    const Measure& m = ms[i];
    std::string k = i == 0 ? "" : fmt::format("{:.2f}", growth(ms[i - 1].totalMs, m.totalMs, ms[i - 1].nodes, m.nodes));
    fmt::print("| {} | {} | {:.1f} | {:.1f} | {:.1f} | {} | {:.2f} | {} |\n", m.label, m.nodes, m.totalMs, m.passMs, m.jitMs, m.kernels,
               1000.0 * m.totalMs / static_cast<double>(std::max<int64_t>(m.nodes, 1)), k);
  }
  // The passes that cost most at the largest size, each across every size, and its growth from the
  // first size to the last.
  const Measure& last = ms.back();
  std::vector<std::pair<double, std::string>> order;
  for (const auto& [name, t] : last.byPass) order.emplace_back(t, name);
  std::sort(order.rbegin(), order.rend());
  if (order.size() > topPasses) order.resize(topPasses);
  fmt::print("\nms per pass (the {} costliest at {}), growth k from {} to {}:\n\n| pass |", order.size(), last.label,
             ms.front().label, last.label);
  for (const Measure& m : ms) fmt::print(" {} |", m.label);
  fmt::print(" k |\n| --- |");
  for (size_t i = 0; i <= ms.size(); ++i) fmt::print(" ---: |");
  fmt::print("\n");
  for (const auto& [t, name] : order) {
    fmt::print("| {} |", name);
    for (const Measure& m : ms) fmt::print(" {:.1f} |", m.byPass.count(name) ? m.byPass.at(name) : 0.0);
    const double first = ms.front().byPass.count(name) ? ms.front().byPass.at(name) : 0.0;
    fmt::print(" {:.2f} |\n", growth(first, t, ms.front().nodes, last.nodes));
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int64_t> depths = {1, 2, 5, 10, 20, 50}, seqs = {100, 250, 500, 1000, 2000};
  int64_t size = 64, batch = 64, seqForDepths = 100, depthForSeqs = 1;
  size_t top = 10;
  int repeat = 1;
  int64_t maxFullUnroll = PipelineOptions{}.maxFullUnroll;
  FuserKind fuser = FuserKind::Te;
  CLI::App app{"pipeline_bench: the compile pipeline's time on stacked LSTMs of growing size", "pipeline_bench"};
  app.set_version_flag("--version", cli::versionString());
  app.add_option("--depths", depths, "stack depths at --seq-for-depths steps")->delimiter(',')->check(cli::positive());
  app.add_option("--seqs", seqs, "sequence lengths at depth --depth-for-seqs")->delimiter(',')->check(cli::positive());
  app.add_option("--seq-for-depths", seqForDepths, "sequence length of the depth sweep")->check(cli::positive());
  app.add_option("--depth-for-seqs", depthForSeqs, "depth of the sequence sweep")->check(cli::positive());
  app.add_option("--size", size, "input = hidden features (cells group: 64)")->check(cli::positive());
  app.add_option("--batch", batch, "batch size (cells group: 64)")->check(cli::positive());
  cli::addFuserOption(&app, fuser, "the fuser (default te)");
  app.add_option("--top", top, "passes listed per table")->check(cli::positive());
  app.add_option("--repeat", repeat, "runs per size; the tables give their medians (the total's and each pass's)")
      ->check(cli::positive());
  app.add_option("--max-full-unroll", maxFullUnroll,
                 fmt::format("loops of at most this many steps unroll fully, longer ones by 8 (the executors': {})",
                             maxFullUnroll))
      ->check(cli::positive());
  if (auto status = cli::parse(app, argc, argv)) return *status;
  // Cold means cold: no kernel from the persistent cache either (runtime/disk_cache.h).
  setenv("GJ_CACHE_DIR", "off", 1);
  refreshEnvironment();
  try {
    fmt::print("# pipeline_bench: {}, fuser {}, size {}, batch {}, backward included, loops of up to {} steps "
               "unrolled, median of {} run{}\n\n{}\n",
               cli::versionString(), fuserName(fuser), size, batch, maxFullUnroll, repeat, repeat == 1 ? "" : "s",
               bench::describeMachine());
    std::vector<Measure> byDepth, bySeq;
    for (int64_t d : depths) byDepth.push_back(measureMedian(repeat, d, seqForDepths, size, batch, fuser, maxFullUnroll));
    printTable(fmt::format("depth sweep at seq {}", seqForDepths), byDepth, top);
    if (!seqs.empty()) {
      for (int64_t s : seqs) bySeq.push_back(measureMedian(repeat, depthForSeqs, s, size, batch, fuser, maxFullUnroll));
      printTable(fmt::format("sequence sweep at depth {}", depthForSeqs), bySeq, top);
    }
  } catch (const Error& e) {
    fmt::print(stderr, "pipeline_bench: error: {}\n", e.what());
    return 1;
  }
  return 0;
}
