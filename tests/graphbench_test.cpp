// graphbench end to end at small sizes: every group under each fuser x executor prints its table and
// writes JSON and SVG whose rows are the expected ones, with positive, finite times.
#include "tests/support/build_config.h"
#include "tests/support/command.h"
#include "tests/support/registry.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <vector>

namespace {

namespace fs = std::filesystem;

using Outcome = gj::test::CommandResult;

// `env`: variable assignments for graphbench's environment ("NAME=value ...").
Outcome runGraphbench(const std::string& args, const std::string& env = "") {
  return gj::test::runCommand(fmt::format("{} {} {}", env, GJ_GRAPHBENCH, args));
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

const char* kSmall = "--seqLength 3 --miniBatch 2 --inputSize 8 --hiddenSize 8 --numLayers 2 --vocab 40 --nloops 2 "
                     "--warmup 1";

// Rows each group must have at the small sizes above.
const std::map<std::string, std::set<std::string>> kRows = {
    {"rnns", {"cudnn", "aten", "py", "jit", "jit_premul", "jit_premul_bias", "jit_simple", "jit_multilayer"}},
    {"lm", {"static", "static.infer", "whileop", "whileop.infer", "cudnn", "cudnn.infer"}},
    {"classifier", {"h8"}},
    {"cells", {"cell.cudnn", "cell", "layer_b2_s3_h8.cudnn", "layer_b2_s3_h8", "stack_d1", "stack_d2"}},
    {"ops", {"linear.eager", "linear", "conv2d.eager", "conv2d", "multihead_attention.eager", "multihead_attention",
             "softmax.eager", "softmax"}}};

class EveryGroup : public testing::TestWithParam<gj::test::FuserExecutor> {};

TEST_P(EveryGroup, TablesJsonAndPlotHoldEveryRowWithPositiveTimes) {
  const std::string fuser(gj::fuserName(GetParam().first)), executor(gj::executorName(GetParam().second));
  fs::path dir = fs::temp_directory_path() / fmt::format("graphbench_test_{}_{}_{}", fuser, executor, getpid());
  fs::create_directories(dir);
  Outcome r = runGraphbench(fmt::format("--group rnns,lm,classifier,cells,ops --fuser {} --executor {} {} --json {} "
                                    "--plot {}",
                                    fuser, executor, kSmall, (dir / "b.json").string(), (dir / "b.svg").string()));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find(fmt::format("Namespace(fuser='{}', executor='{}'", fuser, executor)), std::string::npos);
  auto json = nlohmann::json::parse(slurp(dir / "b.json"));
  std::map<std::string, std::set<std::string>> seen;
  for (const auto& row : json["rows"]) {
    std::string group = row["group"], name = row["name"];
    seen[group].insert(name);
    for (const char* pass : {"fwd", "bwd"}) {
      if (!row.contains(pass)) continue;
      double median = row[pass]["median_ms"];
      EXPECT_TRUE(std::isfinite(median) && median > 0) << group << "/" << name << " " << pass << " " << median;
      EXPECT_EQ(row[pass]["samples_ms"].size(), 2u) << group << "/" << name;
    }
    EXPECT_TRUE(row.contains("peak_mb") && row["peak_mb"].get<double>() >= 0) << group << "/" << name;
    // The GEMM floor beside a CPU row that multiplies (the cell's two products forward, its gradients'
    // backward); oneDNN's LSTM runs no sgemm of graphjit's, so its row has none.
    if (group == "cells" && name == "cell")
      for (const char* pass : {"fwd", "bwd"})
        EXPECT_GT(row[pass].value("gemm_floor_ms", 0.0), 0.0) << group << "/" << name << " " << pass;
    if (name == "cell.cudnn") EXPECT_FALSE(row["fwd"].contains("gemm_floor_ms")) << group << "/" << name;
    // A convolution's row: its floor times oneDNN's convolutions too (forward, and the backward's data and
    // weight gradients), and the floor is the products' share and theirs.
    if (gj::test::kHaveOnednn && group == "ops" && name == "conv2d")
      for (const char* pass : {"fwd", "bwd"}) {
        const auto& p = row[pass];
        EXPECT_GT(p.value("convolution_floor_ms", 0.0), 0.0) << name << " " << pass;
        EXPECT_DOUBLE_EQ(p.value("floor_ms", 0.0), p.value("gemm_floor_ms", 0.0) + p.value("convolution_floor_ms", 0.0))
            << name << " " << pass;
      }
    EXPECT_TRUE(row["peak_bytes"].is_number_unsigned()) << group << "/" << name;
    // Training and graph rows have a backward (aten: its eager autograd); eager, inference and forward-only
    // rows do not.
    bool forwardOnly = name.ends_with(".eager") || name.ends_with(".infer");
    EXPECT_EQ(row.contains("bwd"), !forwardOnly) << group << "/" << name;
  }
  EXPECT_EQ(seen, kRows);
  // Settings for scripts: every option as given (null: the group's default) and the values used.
  const auto& settings = json["settings"];
  EXPECT_EQ(settings["fuser"], nlohmann::json::array({fuser})) << settings;
  EXPECT_EQ(settings["executor"], nlohmann::json::array({executor})) << settings;
  EXPECT_EQ(settings["seqLength"], 3) << settings;
  EXPECT_TRUE(settings["vocab"] == 40 && settings["nloops"] == 2 && settings["warmup"] == 1) << settings;
  EXPECT_GE(settings["threads"].get<int>(), 1) << settings;
  EXPECT_GE(settings["min_warmup"].get<int>(), 1) << settings;
  EXPECT_TRUE(json["version"].get<std::string>().starts_with("graphjit ")) << json["version"];
  std::set<std::string> groups;
  for (const auto& g : json["groups"]) {
    groups.insert(g["name"].get<std::string>());
    EXPECT_GE(g["warmup"].get<int>(), settings["min_warmup"].get<int>()) << g;
    EXPECT_FALSE(g["sizes"].empty()) << g;
  }
  EXPECT_EQ(groups, (std::set<std::string>{"rnns", "lm", "classifier", "cells", "ops"}));
  EXPECT_EQ(json["groups"][0]["sizes"]["seqLength"], 3) << json["groups"][0];
  EXPECT_NE(r.out.find("GEMM floor"), std::string::npos) << r.out;
  if (gj::test::kHaveOnednn) EXPECT_NE(r.out.find("GEMM and convolution floor"), std::string::npos) << r.out;
  // Peak memory below a megabyte is shown in KB, not as 0MB.
  EXPECT_EQ(r.out.find("peak 0MB"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("KB"), std::string::npos) << r.out;
  // The printed table: a header per group, then one line per row starting with its name.
  for (const auto& [group, rows] : kRows) {
    size_t at = r.out.find(fmt::format("Benchmarking {} (milliseconds", group));
    ASSERT_NE(at, std::string::npos) << r.out;
    size_t header = r.out.find("avg_fwd", at);
    ASSERT_NE(header, std::string::npos);
    std::set<std::string> firstCells;  // each table line's name, its first cell
    std::istringstream lines(r.out.substr(header));
    for (std::string line; std::getline(lines, line) && !line.starts_with("Benchmarking");) {
      std::istringstream cells(line);
      std::string first;
      cells >> first;
      firstCells.insert(first);
    }
    for (const std::string& name : rows) EXPECT_TRUE(firstCells.count(name)) << group << "/" << name << "\n" << r.out;
  }
  std::string svg = slurp(dir / "b.svg");
  EXPECT_TRUE(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\"")) << svg.substr(0, 80);
  EXPECT_TRUE(svg.ends_with("</svg>\n"));
  for (const auto& [group, rows] : kRows)
    for (const std::string& name : rows) EXPECT_NE(svg.find(">" + name + "<"), std::string::npos) << name;
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(FuserExecutor, EveryGroup, testing::ValuesIn(gj::test::everyPair()),
                         [](const auto& i) { return gj::test::pairTestName(i.param); });

// Several fusers and executors in one run: the baseline rows once, each compiled row once per pair (named
// by it), timed in interleaved rounds; a summary line per pair compares its fastest rows with cudnn.
TEST(GraphbenchCompare, EveryPairOfFuserAndExecutorInOneTable) {
  fs::path dir = fs::temp_directory_path() / fmt::format("graphbench_compare_{}", getpid());
  fs::create_directories(dir);
  std::vector<std::string> fusers, executors;
  for (gj::FuserKind f : gj::kernelFusers()) fusers.emplace_back(gj::fuserName(f));
  for (gj::ExecutorKind e : gj::allExecutors()) executors.emplace_back(gj::executorName(e));
  Outcome r = runGraphbench(fmt::format("--group rnns,cells --rnns cudnn,py,jit,jit_premul --fuser {} --executor {} "
                                        "--interleave {} --json {}",
                                        fmt::join(fusers, ","), fmt::join(executors, ","), kSmall,
                                        (dir / "b.json").string()));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find(fmt::format("Namespace(fuser='{}', executor='{}'", fmt::join(fusers, ","),
                                   fmt::join(executors, ","))),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("rows interleaved"), std::string::npos) << r.out;
  std::vector<std::pair<std::string, std::string>> pairs;
  for (const auto& [f, e] : gj::test::everyPair(true)) pairs.emplace_back(gj::fuserName(f), gj::executorName(e));
  std::set<std::string> expected = {"rnns:cudnn", "rnns:py", "cells:cell.cudnn", "cells:layer_b2_s3_h8.cudnn"};
  for (const auto& [fuser, executor] : pairs) {
    for (const char* row : {"jit", "jit_premul"}) expected.insert(fmt::format("rnns:{}/{}/{}", row, fuser, executor));
    for (const char* row : {"cell", "layer_b2_s3_h8", "stack_d1", "stack_d2"})
      expected.insert(fmt::format("cells:{}/{}/{}", row, fuser, executor));
    EXPECT_NE(r.out.find(fmt::format("# fuser {}, executor {}: fastest forward ", fuser, executor)), std::string::npos)
        << r.out;
  }
  auto json = nlohmann::json::parse(slurp(dir / "b.json"));
  std::set<std::string> seen;
  for (const auto& row : json["rows"]) {
    std::string name = row["name"];
    seen.insert(std::string(row["group"]) + ":" + name);
    EXPECT_GT(row["fwd"]["median_ms"].get<double>(), 0) << name;
    EXPECT_EQ(row["fwd"]["samples_ms"].size(), 2u) << name;
    // The GEMM floors, timed a round at a time beside the rows.
    if (name.starts_with("cell/") || name.starts_with("jit/"))
      for (const char* pass : {"fwd", "bwd"}) EXPECT_GT(row[pass].value("gemm_floor_ms", 0.0), 0.0) << name << " " << pass;
    // A compiled row says its pair, and its name ends with it.
    if (row.contains("fuser"))
      EXPECT_TRUE(name.ends_with(fmt::format("/{}/{}", std::string(row["fuser"]), std::string(row["executor"]))))
          << name;
    else
      EXPECT_EQ(name.find('/'), std::string::npos) << name;
  }
  EXPECT_EQ(seen, expected);
  fs::remove_all(dir);
}

// --cuda-graphs on the emulated driver, which refuses a wait for the host inside a capture as a GPU does:
// every row of every group is captured (a scalar operand or a gradient copied from the host would keep
// its row uncaptured, and the row's info would say so).
TEST(GraphbenchCuda, EveryRowOfEveryGroupIsCapturedUnderCudaGraphs) {
  Outcome r = runGraphbench(
      fmt::format("--device cuda --cuda-graphs --fuser none,te --group rnns,lm,classifier,cells,ops {}", kSmall),
      "GJ_CUDA_DRIVER=emulated");
  if (r.out.find("no CUDA device") != std::string::npos) GTEST_SKIP() << "a build without CUDA: " << r.out;
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out.find("uncaptured"), std::string::npos) << r.out;
  for (const char* group : {"rnns", "lm", "classifier", "cells", "ops"})
    EXPECT_NE(r.out.find(fmt::format("Benchmarking {} ", group)), std::string::npos) << group << "\n" << r.out;
  EXPECT_NE(r.out.find("CUDA graphs of"), std::string::npos) << r.out;
}

// The cells of a CSV line (RFC 4180 quoting).
std::vector<std::string> csvCells(const std::string& line) {
  std::vector<std::string> cells(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      cells.back() += '"';
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      cells.emplace_back();
    } else {
      cells.back() += c;
    }
  }
  return cells;
}

// --sep ',' prints each table as CSV: seven cells a line, the info cells (which hold commas) quoted whole.
TEST(GraphbenchCsv, ACommaSeparatorGivesValidCsv) {
  Outcome r = runGraphbench(fmt::format("--sep , --fuser old,te {}", kSmall));
  ASSERT_EQ(r.status, 0) << r.out;
  std::istringstream lines(r.out);
  std::string line;
  bool inTable = false;
  int rows = 0;
  while (std::getline(lines, line)) {
    if (line == "name,avg_fwd,std_fwd,info_fwd,avg_bwd,std_bwd,info_bwd") {
      inTable = true;
      continue;
    }
    if (!inTable || line.starts_with("#") || line.starts_with("Benchmarking")) {
      inTable = false;
      continue;
    }
    auto cells = csvCells(line);
    ASSERT_EQ(cells.size(), 7u) << line;
    EXPECT_GT(std::stod(cells[1]), 0) << line;
    if (cells[0].starts_with("jit")) {
      EXPECT_NE(cells[3].find(", jit "), std::string::npos) << cells[3];
    }
    ++rows;
  }
  EXPECT_EQ(rows, 13) << r.out;  // cudnn, aten, py, and 5 jit rows x 2 fusers
}

// Contradictions and typos: "graphbench: error:", what and a hint, exit status 1.
// --check (fastrnns' test.py): every rnns row, compiled ones under each fuser x executor, agrees with its
// twin at small sizes, two layers; a gradient error planted in one row's result fails it and the run.
TEST(GraphbenchCheck, EveryRowAgreesWithItsTwinAndAPlantedErrorFails) {
  const std::string rows = "--rnns cudnn,aten,py,jit,jit_premul,jit_premul_bias,jit_simple,jit_multilayer,"
                           "jit_layernorm,jit_layernorm_decom,cudnn_layernorm,cudnn_dropout,jit_dropout";
  const std::string args = fmt::format("--check {} --fuser none,old,te --executor legacy,profiling --seqLength 3 "
                                       "--miniBatch 2 --inputSize 5 --hiddenSize 4 --numLayers 2", rows);
  Outcome ok = runGraphbench(args);
  EXPECT_EQ(ok.status, 0) << ok.out;
  // 3 uncompiled rows, 7 compiled ones under 6 pairs, and the dropout rows at dropout 0 and 0.4 (cudnn_dropout
  // once, jit_dropout under 6 pairs), with their masks checked; cudnn_layernorm is not compared.
  EXPECT_NE(ok.out.find("59 of 59 rows agree with their twins; 7 dropout mask checks pass"), std::string::npos)
      << ok.out;
  EXPECT_NE(ok.out.find("check jit_dropout/te/legacy (dropout 0.4) vs cudnn: 3 outputs, 11 gradients"),
            std::string::npos) << ok.out;
  EXPECT_NE(ok.out.find("check jit_layernorm/te/profiling vs aten: 3 outputs, 19 gradients"), std::string::npos)
      << ok.out;
  EXPECT_NE(ok.out.find("check jit_simple/old/legacy vs cudnn: 2 outputs, 11 gradients"), std::string::npos)
      << ok.out;
  EXPECT_EQ(ok.out.find("MISMATCH"), std::string::npos) << ok.out;

  Outcome planted = runGraphbench(args, "GJ_CHECK_PLANT_ERROR=jit_premul/te/profiling");
  EXPECT_EQ(planted.status, 1) << planted.out;
  EXPECT_NE(planted.out.find("check jit_premul/te/profiling vs cudnn: 3 outputs, 11 gradients, max |diff| 2.00e-03"),
            std::string::npos) << planted.out;
  EXPECT_NE(planted.out.find("58 of 59 rows agree"), std::string::npos) << planted.out;
}

// fastrnns' variable-length rows: vl_jit, vl_py and the packed row against vl_cudnn (the library LSTM over the
// packed batch), every compiled one under each fuser x executor, two layers; a planted error fails.
TEST(GraphbenchCheck, VariableLengthRowsAgreeWithTheLibraryAndAPlantedErrorFails) {
  const std::string args = "--check --group vl_lstm --fuser none,old,te --executor legacy,profiling --miniBatch 3 "
                           "--inputSize 4 --hiddenSize 5 --numLayers 2";
  Outcome ok = runGraphbench(args);
  EXPECT_EQ(ok.status, 0) << ok.out;
  EXPECT_NE(ok.out.find("14 of 14 rows agree with their twins"), std::string::npos) << ok.out;
  EXPECT_NE(ok.out.find("check vl_packed/old/profiling vs vl_cudnn: 3 outputs, 11 gradients"), std::string::npos)
      << ok.out;
  EXPECT_NE(ok.out.find("check vl_cudnn vs vl_py: 3 outputs, 11 gradients"), std::string::npos) << ok.out;
  Outcome planted = runGraphbench(args, "GJ_CHECK_PLANT_ERROR=vl_packed/old/legacy");
  EXPECT_EQ(planted.status, 1) << planted.out;
  EXPECT_NE(planted.out.find("13 of 14 rows agree"), std::string::npos) << planted.out;
}

// fastrnns' test.py for the cnns group: resnet*_jit against the eager ResNet under each fuser (the running
// statistics among the outputs), the eager one against its graph interpreted; a planted error fails.
TEST(GraphbenchCheck, ResnetRowsAgreeWithTheEagerKernelsAndAPlantedErrorFails) {
  const std::string args = "--check --group cnns --fuser none,old,te --executor profiling --miniBatch 2 --imageSize 16";
  Outcome ok = runGraphbench(args);
  EXPECT_EQ(ok.status, 0) << ok.out;
  EXPECT_NE(ok.out.find("8 of 8 rows agree with their twins"), std::string::npos) << ok.out;
  EXPECT_NE(ok.out.find("check resnet18_jit/te/profiling vs resnet18: 41 outputs, 63 gradients"), std::string::npos)
      << ok.out;
  EXPECT_NE(ok.out.find("check resnet50 vs py (the graph interpreted): 107 outputs, 162 gradients"),
            std::string::npos) << ok.out;
  Outcome planted = runGraphbench(args, "GJ_CHECK_PLANT_ERROR=resnet18_jit/old/profiling");
  EXPECT_EQ(planted.status, 1) << planted.out;
  EXPECT_NE(planted.out.find("7 of 8 rows agree"), std::string::npos) << planted.out;
}

// A dropout row whose mask differs from the host kernel's for one seed fails --check, its gradients agreeing.
TEST(GraphbenchCheck, APlantedMaskErrorFails) {
  Outcome planted = runGraphbench("--check --rnns jit_dropout --fuser old --seqLength 3 --miniBatch 2 --inputSize 5 "
                                  "--hiddenSize 4 --numLayers 2",
                                  "GJ_CHECK_PLANT_ERROR='jit_dropout masks'");
  EXPECT_EQ(planted.status, 1) << planted.out;
  EXPECT_NE(planted.out.find("NOT the same as the host kernel's for seed 17"), std::string::npos) << planted.out;
  EXPECT_NE(planted.out.find("2 of 2 rows agree with their twins; 1 dropout mask checks FAIL"), std::string::npos)
      << planted.out;
}

// fastrnns' --print-json forms on standard output (the tables on standard error): oss, one object of groups
// with a -backward twin; pep, a Caffe2Observer line per timed run of each row and pass.
TEST(GraphbenchPrintJson, OssAndPepAreFastrnnsForms) {
  const std::string args = "--rnns cudnn,aten,jit --seqLength 3 --miniBatch 2 --inputSize 4 --hiddenSize 4 --nloops 3";
  Outcome oss = runGraphbench(args + " --print-json 2>/dev/null");
  ASSERT_EQ(oss.status, 0) << oss.out;
  nlohmann::json j = nlohmann::json::parse(oss.out);  // nothing else on standard output
  ASSERT_TRUE(j.contains("LSTM") && j.contains("LSTM-backward")) << j;
  for (const char* row : {"cudnn", "aten", "jit"}) {
    EXPECT_GT(j["LSTM"][row].get<double>(), 0) << j;
    EXPECT_GT(j["LSTM-backward"][row].get<double>(), 0) << j;
  }
  Outcome pep = runGraphbench(args + " --print-json pep 2>/dev/null");
  ASSERT_EQ(pep.status, 0) << pep.out;
  std::istringstream lines(pep.out);
  std::map<std::string, int> runs;
  for (std::string line; std::getline(lines, line);) {
    ASSERT_TRUE(line.starts_with("Caffe2Observer {")) << line;
    auto e = nlohmann::json::parse(line.substr(std::string("Caffe2Observer ").size()));
    EXPECT_EQ(e["type"], "NET");
    EXPECT_EQ(e["unit"], "ms");
    EXPECT_GT(std::stod(e["value"].get<std::string>()), 0) << line;
    ++runs[e["metric"].get<std::string>()];
  }
  const std::map<std::string, int> expected = {{"LSTM-cudnn", 3}, {"LSTM-aten", 3}, {"LSTM-jit", 3},
                                               {"LSTM-backward-cudnn", 3}, {"LSTM-backward-aten", 3},
                                               {"LSTM-backward-jit", 3}};
  EXPECT_EQ(runs, expected);
}

TEST(GraphbenchErrors, SayWhatIsWrong) {
  const std::pair<const char*, const char*> cases[] = {
      {"--group rnns,speech", "--group: must be one of rnns, vl_lstm, cnns, lm, classifier, cells, ops, got 'speech'"},
      {"--group rnn", "got 'rnn'; did you mean 'rnns'?"},
      {"--rnns jit_fast", "--rnns: must be one of cudnn, aten, py, jit, "},
      {"--rnns jit_premull", "did you mean 'jit_premul'?"},
      {"--group lm --rnns jit", "--rnns selects rows of the rnns group"},
      {"--cuda-graphs", "--cuda-graphs applies to --device=cuda only"},
      {"--cuda-pointwise-block-size 128", "--cuda-pointwise-block-size applies to --device=cuda only"},
      {"--cuda-pointwise-block-size 2000", "--cuda-pointwise-block-size: must be from 1 to 1024, got 2000"},
      {"--cuda-pointwise-loop-level 4", "--cuda-pointwise-loop-level: must be from 2 to 3, got 4"},
      {"--plot table.png", "--plot writes SVG"},
      {"--device cuda", "no CUDA device"},
      {"--nloops 0", "--nloops: must be a positive integer, got 0"},
      {"--miniBatch 99999999999999999999", "--miniBatch: '99999999999999999999' is too large"},
      {"--threads two", "--threads: must be a whole number, got 'two'"},
      {"--fuser te,old,te", "--fuser names 'te' twice"},
      {"--fuser te --executor profiling,tracing", "--executor: must be one of legacy, profiling, got 'tracing'"},
      {"--fusr=old", "unknown option '--fusr' for graphbench; did you mean '--fuser'?"},
      {"--json /proc/nope/b.json --seqLength 2 --miniBatch 1 --inputSize 2 --hiddenSize 2 --rnns aten "
       "--nloops 1 --warmup 1",
       "--json: cannot write '/proc/nope/b.json'"},
  };
  for (auto [args, message] : cases) {
    Outcome r = runGraphbench(args);
    EXPECT_EQ(r.status, 1) << args << "\n" << r.out;
    EXPECT_NE(r.out.find(message), std::string::npos) << args << "\n" << r.out;
    EXPECT_NE(r.out.find("graphbench: error: "), std::string::npos) << args << "\n" << r.out;
  }
}

TEST(GraphbenchErrors, MoreThreadsThanCoresIsWarnedAbout) {
  Outcome r = runGraphbench(fmt::format("--threads 99 --rnns aten {}", kSmall));
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("warning: --threads 99 is more than the"), std::string::npos) << r.out;
}

TEST(GraphbenchVersion, PrintsTheVersionAndCommit) {
  Outcome r = runGraphbench("--version");
  EXPECT_EQ(r.status, 0);
  EXPECT_TRUE(gj::test::isVersionLine(r.out)) << r.out;
}

}  // namespace
