// graphbench: the fastrnns benchmark table for graphjit's models.
//
//   build/bin/graphbench --fuser=none --executor=none --device=cpu --group=rnns
//
// Each row builds a model, warms it up, then times `nloops` forward runs; the table reports the median
// and the standard deviation in milliseconds (on every device). See docs/graphbench.md.
#include "bench/timing.h"
#include "executors/interpreter.h"
#include "models/lstm.h"
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
  std::string fuser = "none", executor = "none", device = "cpu";
  std::vector<std::string> groups = {"rnns"};
  std::vector<std::string> rnns;
  int64_t seqLength = 100, numLayers = 1, inputSize = 512, hiddenSize = 512, miniBatch = 64;
  int nloops = 20, warmup = 3, threads = 0;
  uint64_t seed = 0;
  std::string sep = " ", jsonPath;
};

// A row: a name and a forward closure that returns when its outputs are ready.
struct Row {
  std::string name;
  std::function<void()> forward;
  std::string info;
};

const std::vector<std::string> kRnnRows = {"aten", "py", "jit", "jit_premul", "jit_premul_bias", "jit_simple",
                                           "jit_multilayer"};

std::vector<Row> rnnRows(const Options& o) {
  LstmParams p{o.seqLength, o.miniBatch, o.inputSize, o.hiddenSize, o.numLayers};
  std::vector<std::string> names = o.rnns.empty() ? kRnnRows : o.rnns;
  std::vector<Row> rows;
  for (const std::string& name : names) {
    if (name == "aten") {
      auto m = std::make_shared<Model>(buildLstm(LstmVariantKind::Jit, p));
      auto in = std::make_shared<std::vector<Tensor>>(randomInputs(*m, o.seed));
      rows.push_back({name, [m, in] { m->eager(*in); }, "eager kernels"});
      continue;
    }
    // py: the jit graph interpreted with no optimization (the overhead baseline). Until the executors
    // exist, the jit rows run the same way, so they differ only in graph structure.
    LstmVariantKind v = lstmVariantFromName(name == "py" ? "jit" : name);
    auto m = std::make_shared<Model>(buildLstm(v, p));
    auto in = std::make_shared<std::vector<IValue>>();
    for (const Tensor& t : randomInputs(*m, o.seed)) in->push_back(t);
    auto interp = std::make_shared<Interpreter>(*m->graph);
    rows.push_back({name, [m, interp, in] { interp->run(*in); }, "interpreted"});
  }
  return rows;
}

void validate(const Options& o) {
  USER_CHECK(o.fuser == "none", "--fuser={}: this build has no fuser yet; use --fuser=none", o.fuser);
  USER_CHECK(o.executor == "none", "--executor={}: this build has no executor yet; use --executor=none", o.executor);
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
      "inputSize={}, hiddenSize={}, miniBatch={}, nloops={}, warmup={}, threads={}, seed={}) | {}",
      o.fuser, o.executor, o.device, fmt::join(o.groups, ","), o.rnns.empty() ? "all" : fmt::format("{}", fmt::join(o.rnns, ",")),
      o.seqLength, o.numLayers, o.inputSize, o.hiddenSize, o.miniBatch, o.nloops, o.warmup, numThreads(), o.seed,
      runtimeVersions());
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
      Stats fwd = timeIt(r.forward, o.warmup, o.nloops);
      if (tty) std::cerr << "\r\033[K" << std::flush;
      std::cout << formatRow({r.name, fmt::format("{:.3f}", fwd.medianMs), fmt::format("{:.3f}", fwd.stdMs), r.info,
                              "n/a", "n/a", "no autodiff yet"},
                             o.sep)
                << "\n";
      json["rows"].push_back({{"group", group},
                              {"name", r.name},
                              {"fwd", {{"median_ms", fwd.medianMs}, {"std_ms", fwd.stdMs}, {"samples_ms", fwd.samplesMs}}},
                              {"info_fwd", r.info}});
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
  app.add_option("--fuser", o.fuser, "fuser: none (old and te come with the fusers)")
      ->check(CLI::IsMember({"none", "old", "te"}));
  app.add_option("--executor", o.executor, "executor: none = the plain interpreter (legacy and profiling come later)")
      ->check(CLI::IsMember({"none", "legacy", "profiling"}));
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
