// graphbench: the fastrnns benchmark table for graphjit's models.
//
//   build/bin/graphbench --fuser=none --executor=profiling --device=cpu --group=rnns
//
// Each group (bench/groups.cpp) builds its rows; each row is warmed up (compilation happens there), then
// `nloops` forward runs (gradients on) are timed and, separately, the backward run after each; the table
// reports the median and the standard deviation in milliseconds (on every device). See docs/graphbench.md.
#include "bench/check.h"
#include "bench/floor.h"
#include "bench/groups.h"
#include "bench/machine.h"
#include "bench/plot.h"
#include "bench/timing.h"
#include "runtime/cuda/device.h"
#include "runtime/threading.h"
#include "runtime/version.h"
#include "support/error.h"
#include "tools/cli.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <tuple>
#include <fstream>
#include <iostream>
#include <map>
#include <new>
#include <optional>
#include <set>
#include <unistd.h>

namespace gj::bench {
namespace {

// The options that only a CUDA run can honour that were given.
struct CudaOptions {
  std::vector<std::string> given;
};

// The fusers and executors to compare: the compiled rows run once per pair.
struct Combinations {
  std::vector<FuserKind> fusers = {FuserKind::None};
  std::vector<ExecutorKind> executors = {ExecutorKind::Profiling};
  bool interleave = false;
  bool check = false;  ///< --check: compare the rows with their twins instead of timing them

  size_t size() const { return fusers.size() * executors.size(); }
  std::vector<FuserExecutor> pairs() const {
    std::vector<FuserExecutor> out;
    for (FuserKind f : fusers)
      for (ExecutorKind e : executors) out.emplace_back(f, e);
    return out;
  }
  std::vector<std::string_view> fuserNames() const {
    std::vector<std::string_view> out;
    for (FuserKind f : fusers) out.push_back(fuserName(f));
    return out;
  }
  std::vector<std::string_view> executorNames() const {
    std::vector<std::string_view> out;
    for (ExecutorKind e : executors) out.push_back(executorName(e));
    return out;
  }
};

void checkDistinct(const std::vector<std::string_view>& values, const char* option) {
  for (size_t i = 0; i < values.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      USER_CHECK(values[i] != values[j], "{} names '{}' twice; give each value once", option, values[i]);
}

void validate(const Options& o, const CudaOptions& cuda, const Combinations& combos) {
  checkDistinct(combos.fuserNames(), "--fuser");
  checkDistinct(combos.executorNames(), "--executor");
  if (o.device == "cpu")
    USER_CHECK(cuda.given.empty(), "{} applies to --device=cuda only; drop it or run on CUDA",
               fmt::join(cuda.given, ", "));
  if (o.device == "cuda") {
    if (auto d = cuda::device(); !d) throw Error(fmt::format("--device=cuda: {}", d.error().what()));
    USER_CHECK(!(o.kernelBandwidth && o.cudaGraphs),
               "--kernel-bandwidth waits for each kernel launch, which a CUDA graph capture cannot; drop one of "
               "--kernel-bandwidth and --cuda-graphs");
    USER_CHECK(o.cudaBlockCount == 0 || o.cudaLoopLevel == 3,
               "--cuda-pointwise-block-count applies to --cuda-pointwise-loop-level 3 only; give that too");
  }
  for (const auto& g : o.groups)
    USER_CHECK(std::find(groupNames().begin(), groupNames().end(), g) != groupNames().end(),
               "--group={}: unknown group; groups: {}", g, fmt::join(groupNames(), ", "));
  for (const auto& r : o.rnns)
    USER_CHECK(std::find(rnnRowNames().begin(), rnnRowNames().end(), r) != rnnRowNames().end(),
               "--rnns {}: unknown row; rows: {}", r, fmt::join(rnnRowNames(), ", "));
  if (!o.rnns.empty())
    USER_CHECK(std::find(o.groups.begin(), o.groups.end(), "rnns") != o.groups.end(),
               "--rnns selects rows of the rnns group, which --group does not include");
  USER_CHECK(o.nloops.value_or(1) >= 1 && o.warmup.value_or(0) >= 0, "--nloops must be >= 1 and --warmup >= 0");
  USER_CHECK(o.plotPath.empty() || o.plotPath.ends_with(".svg"), "--plot writes SVG: give a FILE.svg, not '{}'",
             o.plotPath);
}

// The --cuda-pointwise-* knobs given, for the settings line.
std::string cudaLaunchSettings(const Options& o) {
  std::string s;
  for (auto [name, v] : {std::pair{"block_size", o.cudaBlockSize}, {"block_count", o.cudaBlockCount},
                         {"loop_level", int64_t{o.cudaLoopLevel}}})
    if (v) s += fmt::format(", cuda_pointwise_{}={}", name, v);
  return s;
}

// The fewest warm-up runs that keep plan building out of the timed runs: the profiling executor profiles
// --profiling-runs calls and then optimizes; under --cuda-graphs the run after those is captured.
int minimumWarmup(const Options& o, const Combinations& c) {
  const bool profiling =
      std::find(c.executors.begin(), c.executors.end(), ExecutorKind::Profiling) != c.executors.end();
  return (profiling || o.cudaGraphs ? o.profilingRuns + 1 : 1) + (o.cudaGraphs ? 1 : 0);
}

// The warm-up a run uses, as the settings line says it: given (raised to the minimum), or each group's own.
std::string warmupSetting(const Options& o, const Combinations& c) {
  const int least = minimumWarmup(o, c);
  if (!o.warmup) return fmt::format("each group's (at least {})", least);
  if (*o.warmup >= least) return fmt::format("{}", *o.warmup);
  return fmt::format("{} (asked {}: the executor needs {} before timing)", least, *o.warmup, least);
}

std::string settingsLine(const Options& o, const Combinations& c) {
  auto opt = [](const auto& v) { return v ? fmt::format("{}", *v) : std::string("default"); };
  return fmt::format(
      "Namespace(fuser='{}', executor='{}', device='{}', group={}, rnns={}, seqLength={}, numLayers={}, "
      "inputSize={}, hiddenSize={}, miniBatch={}, vocab={}, imageSize={}, nloops={}, warmup={}, profiling_runs={}, threads={}, "
      "seed={}{}{}{}) | {}",
      fmt::join(c.fuserNames(), ","), fmt::join(c.executorNames(), ","), o.device, fmt::join(o.groups, ","),
      o.rnns.empty() ? "all" : fmt::format("{}", fmt::join(o.rnns, ",")), opt(o.seqLength), opt(o.numLayers),
      opt(o.inputSize), opt(o.hiddenSize), opt(o.miniBatch), opt(o.vocab), opt(o.imageSize), o.nloops ? opt(o.nloops) : "each group's",
      warmupSetting(o, c), o.profilingRuns, numThreads(), o.seed, c.interleave ? ", interleave" : "",
      o.cudaGraphs ? ", cuda_graphs" : "", cudaLaunchSettings(o), runtimeVersions());
}

// Every setting as JSON, for scripts: what was given (null: the group's default) and what was used.
nlohmann::json settingsJson(const Options& o, const Combinations& c) {
  auto opt = [](const auto& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  return {{"fuser", c.fuserNames()},
          {"executor", c.executorNames()},
          {"device", o.device},
          {"group", o.groups},
          {"rnns", o.rnns},
          {"seqLength", opt(o.seqLength)},
          {"numLayers", opt(o.numLayers)},
          {"inputSize", opt(o.inputSize)},
          {"hiddenSize", opt(o.hiddenSize)},
          {"miniBatch", opt(o.miniBatch)},
          {"vocab", opt(o.vocab)},
          {"imageSize", opt(o.imageSize)},
          {"nloops", opt(o.nloops)},
          {"warmup", opt(o.warmup)},
          {"min_warmup", minimumWarmup(o, c)},
          {"profiling_runs", o.profilingRuns},
          {"threads", numThreads()},
          {"seed", o.seed},
          {"lr", o.learningRate},
          {"interleave", c.interleave},
          {"cuda_graphs", o.cudaGraphs},
          {"cuda_pointwise_block_size", o.cudaBlockSize},
          {"cuda_pointwise_block_count", o.cudaBlockCount},
          {"cuda_pointwise_loop_level", o.cudaLoopLevel},
          {"runtime", runtimeVersions()}};
}

// A row's median is unreliable when over a quarter of its runs were starved of CPU (other processes held
// the cores: enough to move the median), or when its 95% interval is wider than kMaxUncertainty of it.
constexpr double kMaxUncertainty = 0.5;

// Why a row's figures cannot be trusted, in words ("" when they can).
std::string unreliability(const RowTiming& t, bool hasBwd) {
  std::vector<std::string> why;
  if (t.starvedRuns && *t.starvedRuns * 4 > t.runs)
    why.push_back(fmt::format("its threads waited for a CPU in {} of {} runs", *t.starvedRuns, t.runs));
  auto uncertain = [&](const Stats& st, const char* what) {
    if (st.medianUncertainty > kMaxUncertainty)
      why.push_back(fmt::format("the {} median is known to +-{:.0f}% only", what, st.medianUncertainty * 50));
  };
  uncertain(t.fwd, "forward");
  if (hasBwd) uncertain(t.bwd, "backward");
  return fmt::format("{}", fmt::join(why, ", "));
}

// Before timing: other processes' load. A machine whose cores others keep busy starves OpenMP's threads
// at every barrier (a row can run a thousand times slower); the warning says so, and unless --threads
// was given graphbench uses only the cores left free.
void checkLoad(Options& o) {
  const int cores = availableCores();
  if (o.threads > cores)
    std::cerr << fmt::format("graphbench: warning: --threads {} is more than the {} cores this process may use; "
                             "threads will wait for each other and the times will not mean much\n",
                             o.threads, cores);
  const std::optional<double> busy = otherProcessesBusyCores();
  if (!busy || *busy < 0.5) return;
  std::string threads;
  if (o.threads == 0) {
    o.threads = std::max(1, cores - static_cast<int>(*busy + 0.5));
    threads = fmt::format("; using {} thread{} (--threads N to choose)", o.threads, o.threads == 1 ? "" : "s");
  }
  std::cerr << fmt::format("graphbench: warning: other processes keep about {:.1f} of the {} cores busy{}; rows "
                           "whose threads wait for a CPU are marked unreliable\n",
                           *busy, cores, threads);
}

// "peak 12MB", or in KB below a megabyte, where a small row's memory would round to 0MB.
std::string peakMemory(size_t bytes) {
  if (bytes < (size_t{1} << 20)) return fmt::format("peak {}KB", (bytes + 1023) / 1024);
  return fmt::format("peak {:.0f}MB", static_cast<double>(bytes) / (1 << 20));
}

// Progress on standard error when it is a terminal: a bar, the row and its place.
void progress(bool tty, const std::string& group, size_t done, size_t total, const std::string& row) {
  if (!tty) return;
  constexpr size_t kWidth = 24;
  size_t filled = total ? done * kWidth / total : kWidth;
  std::cerr << fmt::format("\r\033[K[{}{}] {}/{} {} {}", std::string(filled, '#'), std::string(kWidth - filled, '.'),
                           done, total, group, row)
            << std::flush;
}

std::string ms(double v) { return fmt::format("{:.3f}", v); }

// Group `name`'s rows: every row as built for the first fuser x executor pair, and each compiled row once
// more for every other pair, next to it. With more than one pair, a compiled row's name says its pair
// (`jit_premul/te/profiling`).
std::vector<Row> buildRows(const std::string& name, Options o, const Combinations& combos, Group& first) {
  std::vector<Group> built;
  for (const FuserExecutor& p : combos.pairs()) {
    std::tie(o.fuser, o.executor) = p;
    built.push_back(buildGroup(name, o));
  }
  first = built.front();
  std::vector<Row> rows;
  for (size_t i = 0; i < first.rows.size(); ++i) {
    if (!first.rows[i].compiled()) {
      rows.push_back(first.rows[i]);
      continue;
    }
    for (const Group& g : built) {
      Row r = g.rows.at(i);
      if (combos.size() > 1) r.name += "/" + pairName(*r.pair);
      rows.push_back(std::move(r));
    }
  }
  return rows;
}

// For a group with a `cudnn` row: each pair's fastest compiled row, forward and backward, as a ratio to it
// (below 1: faster than the library's fused LSTM).
std::string cudnnSummary(const std::vector<Row>& rows, const std::vector<RowTiming>& t, const Combinations& combos,
                         const std::set<std::string>& unreliable) {
  size_t base = rows.size();
  for (size_t i = 0; i < rows.size(); ++i)
    if (rows[i].name == "cudnn") base = i;
  if (base == rows.size()) return "";
  std::string out;
  for (const FuserExecutor& p : combos.pairs()) {
    std::optional<size_t> bestFwd, bestBwd;
    for (size_t i = 0; i < rows.size(); ++i) {
      if (rows[i].pair != p) continue;  // another pair, or not compiled
      if (!bestFwd || t[i].fwd.medianMs < t[*bestFwd].fwd.medianMs) bestFwd = i;
      if (rows[i].backward && !t[base].bwd.samplesMs.empty() &&
          (!bestBwd || t[i].bwd.medianMs < t[*bestBwd].bwd.medianMs))
        bestBwd = i;
    }
    if (!bestFwd) continue;
    out += fmt::format("# fuser {}, executor {}: fastest forward {} ({:.2f}x cudnn)", fuserName(p.first),
                       executorName(p.second),
                       rows[*bestFwd].name, t[*bestFwd].fwd.medianMs / t[base].fwd.medianMs);
    if (bestBwd)
      out += fmt::format(", fastest backward {} ({:.2f}x cudnn)", rows[*bestBwd].name,
                         t[*bestBwd].bwd.medianMs / t[base].bwd.medianMs);
    std::vector<std::string> doubtful;
    for (size_t i : {base, *bestFwd, bestBwd.value_or(base)})
      if (unreliable.count(rows[i].name) && std::find(doubtful.begin(), doubtful.end(), rows[i].name) == doubtful.end())
        doubtful.push_back(rows[i].name);
    if (!doubtful.empty())
      out += fmt::format("; UNRELIABLE ratios: {} marked unreliable above", fmt::join(doubtful, ", "));
    out += "\n";
  }
  return out;
}

// fastrnns' group names where it has the group (its JSON keys), ours elsewhere.
std::string fastrnnsGroupName(const std::string& group) { return group == "rnns" ? "LSTM" : group; }

// A group's figures in fastrnns' --print-json forms: oss, {group: {row: forward}, group-backward: {row:
// backward}}, with the table's medians; pep, a Caffe2Observer line per timed run of each row and pass.
void addFastrnnsJson(const std::string& group, const std::vector<Row>& rows, const std::vector<RowTiming>& timings,
                     nlohmann::json& oss, std::vector<std::string>& pep) {
  const std::string fwdName = fastrnnsGroupName(group), bwdName = fwdName + "-backward";
  for (size_t i = 0; i < rows.size(); ++i) {
    const RowTiming& t = timings[i];
    oss[fwdName][rows[i].name] = t.fwd.medianMs;
    if (rows[i].backward) oss[bwdName][rows[i].name] = t.bwd.medianMs;
    for (const auto& [metricGroup, samples] : {std::pair{fwdName, &t.fwd.samplesMs}, std::pair{bwdName, &t.bwd.samplesMs}}) {
      if (metricGroup == bwdName && !rows[i].backward) continue;
      for (double v : *samples)
        pep.push_back("Caffe2Observer " + nlohmann::ordered_json({{"type", "NET"},
                                                          {"metric", metricGroup + "-" + rows[i].name},
                                                          {"unit", "ms"},
                                                          {"value", fmt::format("{}", v)}})
                                              .dump());
    }
  }
}

int run(const Options& options, const CudaOptions& cuda, const Combinations& combos) {
  validate(options, cuda, combos);
  Options o = options;
  checkLoad(o);
  if (o.threads > 0) setNumThreads(o.threads);
  // With --print-json standard output holds fastrnns' JSON only; the tables go to standard error.
  std::ostream& human = o.printJson.empty() ? std::cout : std::cerr;
  nlohmann::json oss = nlohmann::json::object();
  std::vector<std::string> pep;
  human << settingsLine(o, combos) << "\n";
  if (combos.check) {
    USER_CHECK(std::ranges::all_of(o.groups,
                                   [](const std::string& g) { return g == "rnns" || g == "vl_lstm" || g == "cnns"; }),
               "--check checks the rows of the rnns, vl_lstm and cnns groups; drop the other --group");
    return runCheck(o, combos.pairs());
  }
  nlohmann::json json = {{"version", cli::versionString()},
                         {"settings", settingsJson(o, combos)},
                         {"settings_line", settingsLine(o, combos)},
                         {"groups", nlohmann::json::array()},
                         {"rows", nlohmann::json::array()}};
  std::vector<PlotGroup> plot;
  const bool tty = isatty(STDERR_FILENO);
  for (const auto& name : o.groups) {
    Group group;
    std::vector<Row> rows = buildRows(name, o, combos, group);
    const int nloops = o.nloops.value_or(group.nloops);
    const int warmup = std::max(o.warmup.value_or(group.warmup), minimumWarmup(o, combos));
    nlohmann::json sizes = nlohmann::json::object();
    for (const GroupSize& size : group.sizes)
      sizes[size.name] = size.sweep ? nlohmann::json(size.values) : nlohmann::json(size.values.front());
    json["groups"].push_back(
        {{"name", name}, {"title", group.title}, {"nloops", nloops}, {"warmup", warmup}, {"sizes", sizes}});
    human << fmt::format("Benchmarking {} (milliseconds; median of {} runs after {} warm-up{})...\n# {}\n", name,
                             nloops, warmup, combos.interleave ? ", rows interleaved" : "", group.title)
              << std::flush;
    // The floors of the CPU rows (CUDA rows' products are cuBLAS's, not recorded): their products and
    // convolutions recorded once they are warm, and each shape timed a call a round beside them when the
    // rows are interleaved; else after them.
    const bool floors = o.device == "cpu";
    GemmFloor gemmFloor;
    std::vector<RowGemms> gemms;
    auto record = [&] {
      for (const Row& r : rows) {
        gemms.push_back(recordGemms(r));
        gemmFloor.add(gemms.back().fwd);
        gemmFloor.add(gemms.back().bwd);
      }
    };
    const bool floorsInRounds = floors && combos.interleave;
    std::vector<RowTiming> timings = timeRows(
        rows, warmup, nloops, combos.interleave,
        [&](size_t done, size_t total) {
          progress(tty, name, done, total, done < rows.size() ? rows[done].name : "timed rounds");
        },
        floorsInRounds ? std::function<void()>(record) : std::function<void()>(),
        floorsInRounds ? std::function<void()>([&] { gemmFloor.round(); }) : std::function<void()>());
    if (floors && !floorsInRounds) record();
    std::vector<std::vector<std::string>> table = {
        {"name", "avg_fwd", "std_fwd", "info_fwd", "avg_bwd", "std_bwd", "info_bwd"}};
    std::map<std::string, double> fwdOf;
    std::set<std::string> unreliableRows;
    PlotGroup pg{name, {}};
    for (size_t i = 0; i < rows.size(); ++i) {
      const Row& r = rows[i];
      const auto& [fwd, bwd, peakBytes, starvedRuns, runs] = timings[i];
      const double peakMb = static_cast<double>(peakBytes) / (1 << 20);
      fwdOf[r.name] = fwd.medianMs;
      const std::string info = r.info();
      std::string infoFwd = info;
      if (!r.baseline.empty() && fwdOf.count(r.baseline))
        infoFwd += fmt::format(" {:.2f}x {}{}", fwd.medianMs / fwdOf[r.baseline], r.baseline,
                               unreliableRows.count(r.baseline) ? " (the baseline is unreliable)" : "");
      const bool hasBwd = static_cast<bool>(r.backward);
      const Floor floorFwd = floors ? gemmFloor.ms(gemms[i].fwd) : Floor{};
      const Floor floorBwd = floors ? gemmFloor.ms(gemms[i].bwd) : Floor{};
      auto floorNote = [](double rowMs, const Floor& f) {
        if (f.ms() <= 0) return std::string();
        return fmt::format(", {} floor {} ({:.2f}x)", f.convolutionMs > 0 ? "GEMM and convolution" : "GEMM", ms(f.ms()),
                           rowMs / f.ms());
      };
      // The floor and its shares; gemm_floor_ms alone is the products'.
      auto floorJson = [](nlohmann::json& j, const Floor& f) {
        if (f.gemmMs > 0) j["gemm_floor_ms"] = f.gemmMs;
        if (f.convolutionMs > 0) j["convolution_floor_ms"] = f.convolutionMs;
        if (f.ms() > 0) j["floor_ms"] = f.ms();
      };
      infoFwd += floorNote(fwd.medianMs, floorFwd);
      const std::string memory = peakMemory(peakBytes);
      const std::string unreliable = unreliability(timings[i], hasBwd);
      if (!unreliable.empty()) {
        infoFwd += "; UNRELIABLE: " + unreliable;
        unreliableRows.insert(r.name);
      }
      table.push_back({r.name, ms(fwd.medianMs), ms(fwd.stdMs), infoFwd, hasBwd ? ms(bwd.medianMs) : "n/a",
                       hasBwd ? ms(bwd.stdMs) : "n/a",
                       hasBwd ? info + ", " + memory + floorNote(bwd.medianMs, floorBwd) : "forward only, " + memory});
      nlohmann::json row = {{"group", name},
                            {"name", r.name},
                            {"fwd", {{"median_ms", fwd.medianMs}, {"std_ms", fwd.stdMs}, {"samples_ms", fwd.samplesMs}}},
                            {"info", infoFwd},
                            {"peak_mb", peakMb},
                            {"peak_bytes", peakBytes},
                            {"starved_runs", starvedRuns ? nlohmann::json(*starvedRuns) : nlohmann::json()},
                            {"unreliable", unreliable.empty() ? nlohmann::json() : nlohmann::json(unreliable)}};
      row["fwd"]["median_uncertainty"] = fwd.medianUncertainty;
      floorJson(row["fwd"], floorFwd);
      if (r.compiled()) {
        row["fuser"] = fuserName(r.pair->first);
        row["executor"] = executorName(r.pair->second);
      }
      if (hasBwd)
        row["bwd"] = {{"median_ms", bwd.medianMs}, {"std_ms", bwd.stdMs}, {"median_uncertainty", bwd.medianUncertainty},
                      {"samples_ms", bwd.samplesMs}};
      if (hasBwd) floorJson(row["bwd"], floorBwd);
      json["rows"].push_back(row);
      pg.rows.push_back({r.name, fwd.medianMs, hasBwd ? std::optional<double>(bwd.medianMs) : std::nullopt});
    }
    if (tty) std::cerr << "\r\033[K" << std::flush;
    human << formatTable(table, o.sep) << cudnnSummary(rows, timings, combos, unreliableRows);
    addFastrnnsJson(name, rows, timings, oss, pep);
    plot.push_back(std::move(pg));
  }
  if (o.printJson == "oss") std::cout << oss.dump() << "\n";
  if (o.printJson == "pep")
    for (const std::string& line : pep) std::cout << line << "\n";
  if (!o.jsonPath.empty()) {
    std::ofstream out(o.jsonPath);
    USER_CHECK(out.good(), "--json: cannot write '{}'", o.jsonPath);
    out << json.dump(2) << "\n";
  }
  if (!o.plotPath.empty()) {
    std::ofstream out(o.plotPath);
    USER_CHECK(out.good(), "--plot: cannot write '{}'", o.plotPath);
    out << plotSvg(fmt::format("graphbench --fuser={} --executor={} --device={} ({} threads)",
                               fmt::join(combos.fuserNames(), ","), fmt::join(combos.executorNames(), ","), o.device,
                               numThreads()),
                   plot);
  }
  return 0;
}

}  // namespace
}  // namespace gj::bench

int main(int argc, char** argv) {
  gj::bench::Options o;
  gj::bench::CudaOptions cuda;
  gj::bench::Combinations combos;
  CLI::App app{"graphbench: forward and backward time of graphjit's models (the fastrnns table)", "graphbench"};
  app.set_version_flag("--version", gj::cli::versionString());
  gj::cli::addFusersOption(&app, combos.fusers, "fuser of the compiled rows; several compare them");
  gj::cli::addExecutorsOption(&app, combos.executors, "executor of the compiled rows; several compare them");
  app.add_flag("--check", combos.check,
               "fastrnns' test.py: run each rnns row once on the inputs of its twin (cudnn; aten for cudnn and the "
               "layer-norm rows; vl_cudnn for vl_*; resnet* for resnet*_jit) and compare outputs and gradients (max "
               "|diff| <= 1e-3); exit 1 on a mismatch");
  app.add_flag("--interleave", combos.interleave,
               "time the rows of a group in rounds (each round runs every row once) instead of one after another");
  app.add_option("--profiling-runs", o.profilingRuns, "profiling executor: profiled runs before optimizing")
      ->check(gj::cli::positive());
  app.add_option("--device", o.device, "cpu or cuda")->check(gj::cli::oneOf({"cpu", "cuda"}));
  app.add_option("--group", o.groups,
                 "benchmark groups: rnns, vl_lstm, cnns, lm, classifier, cells, ops (several allowed)")
      ->delimiter(',')
      ->check(gj::cli::oneOf(gj::bench::groupNames()));
  app.add_option("--rnns", o.rnns, "rows of the rnns group to run (default: all)")
      ->delimiter(',')
      ->check(gj::cli::oneOf(gj::bench::rnnRowNames()));
  const char* sizeNote = " (default: each group's own)";
  app.add_option("--seqLength", o.seqLength, std::string("time steps") + sizeNote)->check(gj::cli::positive());
  app.add_option("--numLayers", o.numLayers, std::string("LSTM layers") + sizeNote)->check(gj::cli::positive());
  app.add_option("--inputSize", o.inputSize, std::string("input features (lm: embedding)") + sizeNote)
      ->check(gj::cli::positive());
  app.add_option("--hiddenSize", o.hiddenSize, std::string("hidden features") + sizeNote)->check(gj::cli::positive());
  app.add_option("--miniBatch", o.miniBatch, std::string("batch size") + sizeNote)->check(gj::cli::positive());
  app.add_option("--vocab", o.vocab, std::string("vocabulary of lm and classifier") + sizeNote)
      ->check(gj::cli::positive());
  app.add_option("--imageSize", o.imageSize, "cnns: image height and width (default: 224)")->check(gj::cli::positive());
  app.add_option("--nloops", o.nloops, "timed runs per row (default: 20; lm: 60)")->check(gj::cli::positive());
  app.add_option("--warmup", o.warmup, "untimed runs before timing (default: 3; lm: 10)")
      ->check(gj::cli::nonNegative());
  app.add_option("--lr", o.learningRate, "SGD learning rate of the training rows");
  app.add_option("--threads", o.threads, "CPU threads (default: OpenMP's)")->check(gj::cli::nonNegative());
  app.add_option("--seed", o.seed, "seed of the random inputs");
  app.add_option("--sep", o.sep, "column separator");
  app.add_option("--json", o.jsonPath, "also write every figure and the settings as JSON to FILE (docs/graphbench.md)");
  app.add_option("--print-json", o.printJson,
                 "print fastrnns' JSON to standard output instead of the tables: oss (the default: {group: {row: "
                 "forward median}} and a <group>-backward group) or pep (one Caffe2Observer line per timed run)")
      ->expected(0, 1)
      ->default_str("oss")
      ->check(gj::cli::oneOf({"oss", "pep"}));
  app.add_option("--plot", o.plotPath, "also draw the tables as grouped bars into FILE.svg");
  auto note = [&](CLI::Option* opt) { return opt->each([&, opt](const std::string&) { cuda.given.push_back(opt->get_name()); }); };
  note(app.add_option("--cuda-pointwise-block-size", o.cudaBlockSize,
                      "CUDA: threads per block of fused kernels (default: legacy 256, te 512)")
           ->check(gj::cli::between(1, 1024)));
  note(app.add_option("--cuda-pointwise-block-count", o.cudaBlockCount,
                      "CUDA: blocks of fused kernels, with loop level 3 (default: legacy 8 per SM, te 1280)")
           ->check(gj::cli::positive()));
  note(app.add_option("--cuda-pointwise-loop-level", o.cudaLoopLevel,
                      "CUDA: 2 (an element per thread) or 3 (blocks that loop), as in fastrnns")
           ->check(gj::cli::between(2, 3)));
  note(app.add_flag("--cuda-graphs", o.cudaGraphs, "CUDA: capture each forward and backward as a CUDA graph"));
  note(app.add_flag("--kernel-bandwidth", o.kernelBandwidth,
                    "CUDA: time every fused kernel launch and say in the info column what fraction of the "
                    "device's DRAM bandwidth they reached (the rows' own times then include the waits)"));
  bool variableLstms = false;
  app.add_flag("--variable-lstms", variableLstms,
               "fastrnns' variable-length rows too: the vl_lstm group (vl_cudnn, vl_jit, vl_py, vl_packed)");
  if (auto status = gj::cli::parse(app, argc, argv)) return *status;
  if (variableLstms && std::ranges::find(o.groups, "vl_lstm") == o.groups.end()) o.groups.push_back("vl_lstm");
  try {
    return gj::bench::run(o, cuda, combos);
  } catch (const gj::Error& e) {
    std::cerr << "graphbench: error: " << e.what() << "\n";
    return 1;
  } catch (const std::bad_alloc&) {
    std::cerr << "graphbench: error: out of memory; try smaller sizes\n";
    return 1;
  }
}
