// graphbench: the fastrnns benchmark table for graphjit's models.
//
//   build/bin/graphbench --fuser=none --executor=profiling --device=cpu --group=rnns
//
// Each row builds a model and warms it up (compilation happens there), then times `nloops` forward runs
// (gradients on) and, separately, the backward run after each; the table reports the median and the
// standard deviation in milliseconds (on every device). See docs/graphbench.md.
#include "bench/timing.h"
#include "executors/function.h"
#include "executors/interpreter.h"
#include "models/lstm.h"
#include "runtime/cpu/onednn_lstm.h"
#include "runtime/threading.h"
#include "runtime/version.h"
#include "support/error.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <functional>
#include <iostream>
#include <unistd.h>

namespace gj::bench {
namespace {

struct Options {
  std::string fuser = "none", executor = "profiling", device = "cpu";
  std::vector<std::string> groups = {"rnns"};
  std::vector<std::string> rnns;
  int64_t seqLength = 100, numLayers = 1, inputSize = 512, hiddenSize = 512, miniBatch = 64;
  int nloops = 20, warmup = 3, threads = 0, profilingRuns = 1;
  uint64_t seed = 0;
  std::string sep = " ", jsonPath;
};

// A row: forward and (optionally) backward closures. backward() runs after forward() with gradients on.
struct Row {
  std::string name;
  std::function<void()> forward;
  std::function<void()> backward;  // empty: no backward for this row
  std::function<std::string()> info;
};

const std::vector<std::string> kRnnRows = {"cudnn", "aten", "py", "jit", "jit_premul", "jit_premul_bias", "jit_simple",
                                           "jit_multilayer"};

// Forward with gradients on every float input, backward with gradients of ones.
struct GradRunner {
  std::function<std::vector<IValue>(const std::vector<IValue>&, const std::vector<bool>&)> forward;
  std::function<std::vector<Tensor>(const std::vector<Tensor>&)> backward;
  std::vector<IValue> inputs;
  std::vector<bool> requiresGrad;
  std::vector<Tensor> gradOutputs;
  void runForward() {
    auto outs = forward(inputs, requiresGrad);
    if (gradOutputs.empty())
      for (const IValue& o : outs) gradOutputs.push_back(Tensor::full(o.toTensor().sizes(), DType::Float32, 1.0));
  }
  void runBackward() { backward(gradOutputs); }
};

Row functionRow(const std::string& name, const Model& m, const Options& o) {
  FunctionOptions fo;
  fo.fuser = fuserFromName(o.fuser);
  fo.executor = executorFromName(o.executor);
  fo.profilingRuns = o.profilingRuns;
  fo.verifyEach = false;
  auto f = std::make_shared<Function>(*m.graph, fo);
  auto r = std::make_shared<GradRunner>();
  for (const Tensor& t : randomInputs(m, o.seed)) {
    r->inputs.push_back(t);
    r->requiresGrad.push_back(isFloating(t.dtype()));
  }
  r->forward = [f](const std::vector<IValue>& in, const std::vector<bool>& rg) { return f->forward(in, rg); };
  r->backward = [f](const std::vector<Tensor>& g) { return f->backward(g); };
  return {name, [r] { r->runForward(); }, [r] { r->runBackward(); }, [f] {
            FunctionStats s = f->stats();
            return fmt::format("passes {:.0f}ms", s.passMs);
          }};
}

// The graph interpreted as written (loops kept, no optimization), with the autodiff tape: the overhead
// baseline.
Row interpretedRow(const std::string& name, const Model& m, const Options& o) {
  auto r = std::make_shared<GradRunner>();
  for (const Tensor& t : randomInputs(m, o.seed)) {
    r->inputs.push_back(t);
    r->requiresGrad.push_back(isFloating(t.dtype()));
  }
  auto ag = std::make_shared<AutodiffGraph>(prepareAutodiff(std::shared_ptr<Graph>(m.graph->clone()), r->requiresGrad));
  auto tape = std::make_shared<std::shared_ptr<Tape>>();
  auto outs = std::make_shared<std::vector<IValue>>();
  r->forward = [ag, tape, outs](const std::vector<IValue>& in, const std::vector<bool>& rg) {
    *tape = std::make_shared<Tape>(in.size());
    *outs = Interpreter(*ag->graph, &ag->gradients).runWithTape(in, rg, **tape);
    return *outs;
  };
  r->backward = [tape, outs](const std::vector<Tensor>& g) { return (*tape)->backward(*outs, g); };
  return {name, [r] { r->runForward(); }, [r] { r->runBackward(); }, [] { return std::string("interpreted"); }};
}

std::vector<Row> rnnRows(const Options& o) {
  LstmParams p{o.seqLength, o.miniBatch, o.inputSize, o.hiddenSize, o.numLayers};
  std::vector<std::string> names = o.rnns.empty() ? kRnnRows : o.rnns;
  std::vector<Row> rows;
  for (const std::string& name : names) {
    if (name == "cudnn") {
      // On the CPU: oneDNN's fused LSTM, forward (training) and backward.
      auto m = std::make_shared<Model>(buildLstm(LstmVariantKind::Jit, p));
      auto in = std::make_shared<std::vector<Tensor>>(randomInputs(*m, o.seed));
      auto lstm = std::make_shared<cpu::OnednnLstm>(p.seqLength, p.miniBatch, p.inputSize, p.hiddenSize, p.numLayers);
      auto outs = std::make_shared<std::vector<Tensor>>();
      rows.push_back({name,
                      [in, lstm, outs] {
                        std::vector<Tensor> w(in->begin() + 3, in->end());
                        *outs = lstm->forward((*in)[0], (*in)[1], (*in)[2], w);
                      },
                      [lstm, outs] {
                        auto ones = [](const Tensor& t) { return Tensor::full(t.sizes(), DType::Float32, 1.0); };
                        lstm->backward(ones((*outs)[0]), ones((*outs)[1]), ones((*outs)[2]));
                      },
                      [] { return std::string("oneDNN LSTM"); }});
      continue;
    }
    if (name == "aten") {
      auto m = std::make_shared<Model>(buildLstm(LstmVariantKind::Jit, p));
      auto in = std::make_shared<std::vector<Tensor>>(randomInputs(*m, o.seed));
      rows.push_back({name, [m, in] { m->eager(*in); }, {}, [] { return std::string("eager kernels"); }});
      continue;
    }
    if (name == "py") {
      rows.push_back(interpretedRow(name, buildLstm(LstmVariantKind::Jit, p), o));
      continue;
    }
    rows.push_back(functionRow(name, buildLstm(lstmVariantFromName(name), p), o));
  }
  return rows;
}

void validate(const Options& o) {

  USER_CHECK(o.device == "cpu", "--device=cuda: no CUDA device: this build has no CUDA runtime yet");
  for (const auto& g : o.groups)
    USER_CHECK(g == "rnns", "--group={}: only the rnns group exists in this build", g);
  for (const auto& r : o.rnns)
    USER_CHECK(std::find(kRnnRows.begin(), kRnnRows.end(), r) != kRnnRows.end(), "--rnns {}: unknown row; rows: {}",
               r, fmt::join(kRnnRows, ", "));
  USER_CHECK(o.nloops >= 1 && o.warmup >= 0, "--nloops must be >= 1 and --warmup >= 0");
}

std::string settingsLine(const Options& o) {
  return fmt::format(
      "Namespace(fuser='{}', executor='{}', device='{}', group={}, rnns={}, seqLength={}, numLayers={}, "
      "inputSize={}, hiddenSize={}, miniBatch={}, nloops={}, warmup={}, profiling_runs={}, threads={}, seed={}) | {}",
      o.fuser, o.executor, o.device, fmt::join(o.groups, ","), o.rnns.empty() ? "all" : fmt::format("{}", fmt::join(o.rnns, ",")),
      o.seqLength, o.numLayers, o.inputSize, o.hiddenSize, o.miniBatch, o.nloops, o.warmup, o.profilingRuns,
      numThreads(), o.seed, runtimeVersions());
}

int run(const Options& o) {
  validate(o);
  if (o.threads > 0) setNumThreads(o.threads);
  std::cout << settingsLine(o) << "\n";
  nlohmann::json json = {{"settings", settingsLine(o)}, {"rows", nlohmann::json::array()}};
  const bool tty = isatty(STDERR_FILENO);
  for (const auto& group : o.groups) {
    std::cout << "Benchmarking " << group << " (milliseconds)...\n";
    std::vector<std::string> header = {"name", "avg_fwd", "std_fwd", "info_fwd", "avg_bwd", "std_bwd", "info_bwd"};
    std::cout << formatRow(header, o.sep) << "\n";
    auto rows = rnnRows(o);
    for (size_t i = 0; i < rows.size(); ++i) {
      const Row& r = rows[i];
      if (tty) std::cerr << fmt::format("\r[{}/{}] {}...", i + 1, rows.size(), r.name) << std::flush;
      auto [fwd, bwd] = timeRow(r.forward, r.backward, o.warmup, o.nloops);
      if (tty) std::cerr << "\r\033[K" << std::flush;
      std::string info = r.info();
      bool hasBwd = static_cast<bool>(r.backward);
      std::cout << formatRow({r.name, fmt::format("{:.3f}", fwd.medianMs), fmt::format("{:.3f}", fwd.stdMs), info,
                              hasBwd ? fmt::format("{:.3f}", bwd.medianMs) : "n/a",
                              hasBwd ? fmt::format("{:.3f}", bwd.stdMs) : "n/a", hasBwd ? info : "no autograd"},
                             o.sep)
                << "\n";
      nlohmann::json row = {{"group", group},
                            {"name", r.name},
                            {"fwd", {{"median_ms", fwd.medianMs}, {"std_ms", fwd.stdMs}, {"samples_ms", fwd.samplesMs}}},
                            {"info", info}};
      if (hasBwd)
        row["bwd"] = {{"median_ms", bwd.medianMs}, {"std_ms", bwd.stdMs}, {"samples_ms", bwd.samplesMs}};
      json["rows"].push_back(row);
    }
  }
  if (!o.jsonPath.empty()) {
    std::ofstream out(o.jsonPath);
    USER_CHECK(out.good(), "--print-json: cannot write '{}'", o.jsonPath);
    out << json.dump(2) << "\n";
  }
  return 0;
}

}  // namespace
}  // namespace gj::bench

int main(int argc, char** argv) {
  gj::bench::Options o;
  CLI::App app{"graphbench: forward and backward time of graphjit's models (the fastrnns table)"};
  app.add_option("--fuser", o.fuser, "fuser: none, old (legacy) or te (tensor expressions)")
      ->check(CLI::IsMember({"none", "old", "te"}));
  app.add_option("--executor", o.executor, "executor of the jit rows: legacy or profiling")
      ->check(CLI::IsMember({"legacy", "profiling"}));
  app.add_option("--profiling-runs", o.profilingRuns, "profiling executor: profiled runs before optimizing")
      ->check(CLI::PositiveNumber);
  app.add_option("--device", o.device, "cpu or cuda")->check(CLI::IsMember({"cpu", "cuda"}));
  app.add_option("--group", o.groups, "benchmark groups (rnns)")->delimiter(',');
  app.add_option("--rnns", o.rnns, "rows of the rnns group to run (default: all)")->delimiter(',');
  app.add_option("--seqLength", o.seqLength, "time steps")->check(CLI::PositiveNumber);
  app.add_option("--numLayers", o.numLayers, "LSTM layers")->check(CLI::PositiveNumber);
  app.add_option("--inputSize", o.inputSize, "input features")->check(CLI::PositiveNumber);
  app.add_option("--hiddenSize", o.hiddenSize, "hidden features")->check(CLI::PositiveNumber);
  app.add_option("--miniBatch", o.miniBatch, "batch size")->check(CLI::PositiveNumber);
  app.add_option("--nloops", o.nloops, "timed runs per row")->check(CLI::PositiveNumber);
  app.add_option("--warmup", o.warmup, "untimed runs before timing")->check(CLI::NonNegativeNumber);
  app.add_option("--threads", o.threads, "CPU threads (default: OpenMP's)")->check(CLI::NonNegativeNumber);
  app.add_option("--seed", o.seed, "seed of the random inputs");
  app.add_option("--sep", o.sep, "column separator");
  app.add_option("--print-json", o.jsonPath, "also write every figure and the settings as JSON to FILE");
  CLI11_PARSE(app, argc, argv);
  try {
    return gj::bench::run(o);
  } catch (const gj::Error& e) {
    std::cerr << "graphbench: error: " << e.what() << "\n";
    return 2;
  }
}
