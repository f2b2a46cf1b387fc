// graphir end to end: check and run exercise the fuser they name (a planted error in a fused kernel fails
// check under every fuser x executor), ill-typed IR is rejected at verify time with its position, and every
// bad input ends in "graphir: error:", what, where and a hint, with exit status 1.
#include "runtime/npy.h"
#include "tests/support/build_config.h"
#include "tests/support/command.h"
#include "tests/support/reference.h"
#include "tests/support/registry.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

namespace gj {
namespace {

namespace fs = std::filesystem;
using test::CommandResult;

CommandResult graphir(const std::string& args, const std::string& env = "") {
  return test::runCommand(fmt::format("{} {} {}", env, GJ_GRAPHIR, args));
}

// A scratch folder of this test's own, removed when the test ends.
class Scratch {
 public:
  Scratch() : dir_(fs::temp_directory_path() / fmt::format("graphir_test_{}_{}", getpid(), counter_++)) {
    fs::create_directories(dir_);
  }
  ~Scratch() { fs::remove_all(dir_); }
  fs::path path(const std::string& name) const { return dir_ / name; }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }

 private:
  fs::path dir_;
  static inline int counter_ = 0;
};

// The number in "run N (optimized): K fused kernel launches" (or "run N: ..." under the legacy executor):
// what the last run, the one the settings name, launched.
int64_t lastRunLaunches(const std::string& out) {
  std::smatch m;
  int64_t last = -1;
  std::string rest = out;
  std::regex line(R"(run [0-9]+[^:\n]*: ([0-9]+) fused kernel launches)");
  while (std::regex_search(rest, m, line)) {
    last = std::stoll(m[1]);
    rest = m.suffix();
  }
  return last;
}

class CheckRunsTheFuser : public testing::TestWithParam<test::FuserExecutor> {};

// The fused kernels run in the run check reports (under the profiling executor, the run after the
// profiling one), and an error planted in them makes check fail.
TEST_P(CheckRunsTheFuser, FusedKernelsRunAndAPlantedErrorFails) {
  const std::string fuser(fuserName(GetParam().first)), executor(executorName(GetParam().second));
  for (const char* c : {"lstm_cell", "lstm_1layer"}) {
    const std::string args = fmt::format("check {}/{} --fuser {} --executor {}", test::dataDir(), c, fuser, executor);
    CommandResult ok = graphir(args);
    EXPECT_EQ(ok.status, 0) << ok.out;
    EXPECT_NE(ok.out.find("\nPASS\n"), std::string::npos) << ok.out;
    EXPECT_GT(lastRunLaunches(ok.out), 0) << ok.out;
    if (GetParam().second == ExecutorKind::Profiling) {
      EXPECT_NE(ok.out.find("run 1 (profiling): 0 fused kernel launches"), std::string::npos) << ok.out;
      EXPECT_NE(ok.out.find("run 2 (optimized)"), std::string::npos) << ok.out;
    }
    EXPECT_TRUE(std::regex_search(ok.out, std::regex(fmt::format("fuser {}: [1-9][0-9]* fusion groups", fuser))))
        << ok.out;
    CommandResult planted = graphir(args + " --inject-kernel-error");
    EXPECT_EQ(planted.status, 1) << planted.out;
    EXPECT_NE(planted.out.find("FAIL (> "), std::string::npos) << planted.out;
    EXPECT_NE(planted.out.find("\nFAIL\n"), std::string::npos) << planted.out;
  }
}

// Every fuser that compiles kernels, under every executor.
INSTANTIATE_TEST_SUITE_P(FuserExecutor, CheckRunsTheFuser, testing::ValuesIn(test::everyPair(true)),
                         [](const auto& i) { return test::pairTestName(i.param); });

TEST(GraphirCheck, WithoutAFuserNothingIsFusedAndAPlantedErrorHasNothingToSpoil) {
  const std::string args = fmt::format("check {}/lstm_cell --fuser none --executor profiling", test::dataDir());
  for (const std::string& a : {args, args + " --inject-kernel-error"}) {
    CommandResult r = graphir(a);
    EXPECT_EQ(r.status, 0) << r.out;
    EXPECT_NE(r.out.find("fuser none: no fusion groups\nPASS\n"), std::string::npos) << r.out;
  }
}

// Ill-typed IR that used to fail only at run time, if at all: rejected at verify time, with its position.
TEST(GraphirTypes, IllTypedGraphsAreRejectedWithTheirPosition) {
  Scratch s;
  const std::pair<const char*, const char*> cases[] = {
      {"graph(%z : Float(2, 4), %w1 : Float(4, 4)):\n  %y : Tensor = aten::softmax(%z, %w1)\n  return (%y)\n",
       ":2:17: aten::softmax's argument 2 must be an int, but %w1 is Float(4, 4)"},
      {"graph(%h : Float(2, 4)):\n  %a : int = aten::relu(%h)\n  return (%a)\n",
       ":2:14: %a is declared int, but aten::relu returns a Tensor"},
      {"graph(%x : Float(4, 8), %w : Float(5, 16), %b : Float(5)):\n  %y : Tensor = aten::linear(%x, %w, %b)\n"
       "  return (%y)\n",
       ":2:17: aten::linear of an input [4, 8] and a weight [5, 16]: the input has 8 features, the weight takes 16"},
      {"graph(%a : Float(4, 8), %b : Float(4, 8)):\n  %y : Tensor = aten::mm(%a, %b)\n  return (%y)\n",
       ":2:17: aten::mm of [4, 8] and [4, 8]: the first operand's 8 columns do not match the second's 4 rows"},
      {"graph(%a : Float(4, 8), %b : Float(8, 3)):\n  %y : Float(4, 4) = aten::mm(%a, %b)\n  return (%y)\n",
       ":2:22: %y: it is declared Float(4, 4) but the op makes Float(4, 3)"},
      {"graph(%a : Float(4, 8), %b : Float(5, 8)):\n  %y : Tensor = aten::add(%a, %b, %a)\n  return (%y)\n",
       ":2:17: aten::add's argument 3 must be a scalar (int, float or bool), but %a is Float(4, 8)"},
      {"graph(%a : Float(4, 8), %b : Float(5, 8)):\n  %one : int = prim::Constant[value=1]()\n"
       "  %y : Tensor = aten::mul(%a, %b)\n  return (%y)\n",
       ":3:17: sizes [4, 8] and [5, 8] do not broadcast: 4 against 5"},
  };
  for (auto [text, message] : cases) {
    const std::string file = s.write("bad.ir", text);
    for (const char* sub : {"dump --types", "dump", "stats"}) {
      CommandResult r = graphir(fmt::format("{} {}", sub, file));
      EXPECT_EQ(r.status, 1) << sub << "\n" << text << r.out;
      EXPECT_NE(r.out.find("graphir: error: " + file + message), std::string::npos) << sub << "\n" << r.out;
    }
  }
}

// The models' own graphs, as graphir model writes them, pass the same checks.
TEST(GraphirTypes, EveryModelsGraphPassesTheTypeChecks) {
  Scratch s;
  for (const char* model : {"lstm_cell", "lstm", "lstm_lm", "lstm_classifier", "linear", "softmax", "conv2d",
                            "multihead_attention"}) {
    const std::string file = s.path(std::string(model) + ".ir").string();
    CommandResult made = graphir(fmt::format("model {} --seqLength 3 --miniBatch 2 --inputSize 4 --hiddenSize 5 "
                                             "--vocab 7 --numLayers 2 -o {}", model, file));
    ASSERT_EQ(made.status, 0) << made.out;
    CommandResult r = graphir("dump --types " + file);
    EXPECT_EQ(r.status, 0) << model << "\n" << r.out;
  }
}

// run and check read .npy inputs against the graph's declared types, naming the input.
TEST(GraphirRun, AnInputOfTheWrongShapeOrDtypeIsNamed) {
  Scratch s;
  const std::string ir = s.write("lin.ir", "graph(%x : Float(2, 4), %w : Float(3, 4)):\n"
                                           "  %none : NoneType = prim::Constant()\n"
                                           "  %y : Tensor = aten::linear(%x, %w, %none)\n  return (%y)\n");
  fs::create_directories(s.path("in"));
  writeNpy(s.path("in/x.npy").string(), Tensor::rand({1, 4}, DType::Float32, 1));
  writeNpy(s.path("in/w.npy").string(), Tensor::rand({3, 4}, DType::Float32, 2));
  CommandResult r = graphir(fmt::format("run {} --inputs {} --out {}", ir, s.path("in").string(), s.path("out").string()));
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("input %x: " + s.path("in/x.npy").string() + " has float32 [1, 4] but the graph declares "
                       "Float(2, 4)"),
            std::string::npos)
      << r.out;
  writeNpy(s.path("in/x.npy").string(), Tensor::rand({2, 4}, DType::Float64, 1));
  r = graphir(fmt::format("run {} --inputs {} --out {}", ir, s.path("in").string(), s.path("out").string()));
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("has float64 [2, 4] but the graph declares Float(2, 4): dtype float64 where float32 was "
                       "expected"),
            std::string::npos)
      << r.out;
}

// run --backward with no --grad-outputs: the gradient of every output is ones, said so, and the gradients
// are those of an explicit folder of ones.
TEST(GraphirRun, BackwardWithoutGradOutputsUsesOnes) {
  const std::string ir = test::dataDir() + "/linear.ir", inputs = test::dataDir() + "/linear/inputs";
  Scratch s;
  fs::create_directories(s.path("ones"));
  writeNpy(s.path("ones/output.npy").string(), Tensor::full({4, 5}, DType::Float32, 1.0));
  for (std::string_view fuser : {fuserName(FuserKind::None), fuserName(FuserKind::Te)}) {
    CommandResult implicit = graphir(fmt::format("run {} --inputs {} --out {} --backward --fuser {}", ir, inputs,
                                                 s.path("a").string(), fuser));
    ASSERT_EQ(implicit.status, 0) << implicit.out;
    EXPECT_NE(implicit.out.find("no --grad-outputs: the gradient of every output is ones"), std::string::npos);
    CommandResult given = graphir(fmt::format("run {} --inputs {} --out {} --backward --grad-outputs {} --fuser {}", ir,
                                              inputs, s.path("b").string(), s.path("ones").string(), fuser));
    ASSERT_EQ(given.status, 0) << given.out;
    for (const char* g : {"input", "weight", "bias"}) {
      Tensor a = readNpy(s.path(fmt::format("a/grads/{}.npy", g)).string());
      Tensor b = readNpy(s.path(fmt::format("b/grads/{}.npy", g)).string());
      EXPECT_EQ(test::relError(a, b), 0.0) << g;
      EXPECT_GT(test::relError(a, Tensor::zeros(a.sizes(), a.dtype())), 0.5) << g << " is not a real gradient";
    }
  }
}

// Bad input of every kind: "graphir: error:", what (and where), a hint, exit status 1; never an abort.
TEST(GraphirErrors, EveryBadInputIsAClearError) {
  Scratch s;
  const std::string cell = s.path("cell.ir").string();
  ASSERT_EQ(graphir("model lstm_cell --miniBatch 2 --inputSize 3 --hiddenSize 4 -o " + cell).status, 0);
  const std::string data = test::dataDir();
  std::vector<std::string_view> fuserNames;  // graphir fuse's: the table's fusers, none left out
  for (FuserKind f : allFusers())
    if (f != FuserKind::None) fuserNames.push_back(fuserName(f));
  const struct {
    std::string args, env, message;
  } cases[] = {
      {"dmp " + cell, "", "unknown subcommand 'dmp'; did you mean 'dump'?"},
      {"", "", "a subcommand is required: dump, ops, model"},
      {"fuse " + cell + " --fusr=te", "", "unknown option '--fusr' for graphir fuse; did you mean '--fuser'?"},
      {"fuse " + cell + " --fuser tee", "", fmt::format("--fuser: must be one of {}, got 'tee'; did you mean 'te'?",
                                                       fmt::join(fuserNames, ", "))},
      {"model lstm --miniBatch 0", "", "--miniBatch: must be a positive integer, got 0"},
      {"model lstm --miniBatch 2x", "", "--miniBatch: must be a whole number, got '2x'"},
      {"model lstm_typo", "", "unknown model 'lstm_typo'"},
      {"dump " + s.path("missing.ir").string(), "", "cannot open IR file"},
      {fmt::format("run {}/linear.ir --inputs {}/linear/inputs --out /proc/nope", data, data), "",
       "cannot create the output folder /proc/nope/outputs"},
      {fmt::format("check {}/lstm_cell", data), "GJ_LOG=dcee", "GJ_LOG names an unknown pass 'dcee'; did you mean 'dce'?"},
      {fmt::format("check {}/lstm_cell", data), "GJ_LOG=dce,shape_propagation",
       "unknown pass 'shape_propagation'; did you mean 'shape-propagation'?"},
      {fmt::format("check {}/lstm_cell --fuser old", data), "GJ_DUMP_KERNELS=/proc/nope",
       "cannot create the kernel dump folder '/proc/nope'"},
      {"passes " + cell + " --passes dce,csee", "", "unknown pass 'csee'; did you mean 'cse'?"},
      {"check " + s.path("no_case").string(), "", "not a reference case folder"},
      {"model lstm_cell -o /proc/nope/cell.ir", "", "cannot write '/proc/nope/cell.ir': No such file or directory"},
      {"codegen " + cell + " --fuser old -o /proc/nope/kernels", "", "cannot create the codegen output folder"},
      {"dot " + cell + " -o /proc/nope/g.dot", "", "cannot write '/proc/nope/g.dot'"},
  };
  for (const auto& c : cases) {
    CommandResult r = graphir(c.args, c.env);
    EXPECT_EQ(r.status, 1) << c.env << " graphir " << c.args << "\n" << r.out;
    EXPECT_NE(r.out.find("graphir: error: "), std::string::npos) << c.args << "\n" << r.out;
    EXPECT_NE(r.out.find(c.message), std::string::npos) << c.env << " graphir " << c.args << "\n" << r.out;
  }
}

TEST(GraphirErrors, AMissingKernelDumpFolderIsCreated) {
  Scratch s;
  const fs::path dump = s.path("a/b/kernels");
  CommandResult r = graphir(fmt::format("check {}/lstm_cell --fuser te --executor legacy", test::dataDir()),
                            "GJ_DUMP_KERNELS=" + dump.string());
  EXPECT_EQ(r.status, 0) << r.out;
  ASSERT_TRUE(fs::is_directory(dump));
  size_t files = 0;
  for (const auto& e : fs::directory_iterator(dump)) files += e.path().extension() == ".cu";
  EXPECT_GE(files, 2u) << "the forward and backward kernels' CUDA C";
}

// explain answers for the fuser that was named, and labels the graphs it walks.
TEST(GraphirExplain, TheNamedFuserGivesItsOwnReasonsPerGraph) {
  Scratch s;
  const std::string cell = s.path("cell.ir").string();
  ASSERT_EQ(graphir("model lstm_cell --miniBatch 2 --inputSize 3 --hiddenSize 4 -o " + cell).status, 0);
  CommandResult te = graphir("explain " + cell + " --fuser te --backward");
  ASSERT_EQ(te.status, 0) << te.out;
  EXPECT_NE(te.out.find("# forward of prim::DifferentiableGraph_0\n"), std::string::npos) << te.out;
  EXPECT_NE(te.out.find("# backward of prim::DifferentiableGraph_0\n"), std::string::npos) << te.out;
  EXPECT_NE(te.out.find("a product joins a TE group from 1 row by a weight"), std::string::npos) << te.out;
  EXPECT_EQ(te.out.find("legacy fuser"), std::string::npos) << te.out;
  CommandResult old = graphir("explain " + cell + " --fuser old --backward");
  ASSERT_EQ(old.status, 0) << old.out;
  EXPECT_NE(old.out.find("not pointwise (a gemm op; the legacy fuser fuses pointwise ops"), std::string::npos)
      << old.out;
  EXPECT_EQ(old.out.find("TE fuser"), std::string::npos) << old.out;
}

// The code both fusers generate for the LSTM cell, forward and backward, against the committed snapshots
// (tests/data/codegen): a change to code generation shows as a diff to review, made by
// scripts/update-snapshots.
TEST(CodegenSnapshots, TheLstmCellsGeneratedCodeIsTheCommittedOne) {
  Scratch s;
  const std::string cell = s.path("cell.ir").string();
  ASSERT_EQ(graphir("model lstm_cell --miniBatch 2 --inputSize 3 --hiddenSize 4 -o " + cell).status, 0);
  for (FuserKind kind : kernelFusers())
    for (const char* target : {"cpu", "cuda"}) {
      const std::string_view fuser = fuserName(kind);
      if (std::string(target) == "cpu" && !test::kHaveLlvm) continue;  // no LLVM IR without LLVM
      const fs::path snapshot = fs::path(test::dataDir()) / "codegen" /
                                fmt::format("lstm_cell.{}.{}.{}", fuser, target, std::string(target) == "cpu" ? "ll" : "cu");
      std::ifstream in(snapshot);
      ASSERT_TRUE(in.good()) << "no snapshot " << snapshot << "; scripts/update-snapshots writes it";
      const std::string want((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      CommandResult got = graphir(fmt::format("codegen {} --fuser={} --target={} --backward", cell, fuser, target));
      ASSERT_EQ(got.status, 0) << got.out;
      if (got.out == want) continue;
      // The first line that differs, to start the review from.
      std::istringstream a(want), b(got.out);
      std::string la, lb;
      int line = 1;
      while (std::getline(a, la) && std::getline(b, lb) && la == lb) ++line;
      ADD_FAILURE() << snapshot.string() << " differs from graphir codegen --fuser=" << fuser << " --target=" << target
                    << " at line " << line << ":\n  snapshot: " << la << "\n  now:      " << lb
                    << "\nif the change is meant, run scripts/update-snapshots and review the diff";
    }
}

// The TE fuser's row schedule on the GPU: a layer norm's and a softmax's kernels, forward and backward,
// a block a row, with the block's reductions in shared memory, barriers and shuffles.
TEST(CodegenSnapshots, TheTeFusersRowKernelsForTheGpuAreTheCommittedOnes) {
  // What each schedule prints: short rows a warp each (shuffles, no barrier); rows of 1000 a block each,
  // kept in registers, folded through shared memory between barriers; the weight gradients' column sums.
  const std::map<std::string, std::vector<std::string>> parts = {
      {"layer_norm", {"gjWarpFold<GjAdd>(", "__shfl_xor_sync(", "in0_row[", "__shared__ float gj_cols_f32[256];",
                      "gjColumnFold<GjAdd>(", "__syncthreads();"}},
      {"layer_norm_wide", {"__shared__ float gj_red_f32[32];", "gjBlockFold<GjAdd>(", "__syncthreads();",
                           "float in0_row[4];", "#pragma unroll"}},
      {"softmax", {"gjWarpFold<GjMaxOf>(", "gjWarpFold<GjAdd>(", "in0_row["}}};
  for (const auto& [rows, want_parts] : parts) {
    const fs::path dir = fs::path(test::dataDir()) / "codegen";
    std::ifstream in(dir / fmt::format("{}.te.cuda.cu", rows));
    ASSERT_TRUE(in.good()) << "no snapshot for " << rows << "; scripts/update-snapshots writes it";
    const std::string want((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string ir = (dir / rows).string() + ".ir";
    CommandResult got = graphir(fmt::format("codegen {} --fuser=te --target=cuda --backward", ir));
    ASSERT_EQ(got.status, 0) << got.out;
    EXPECT_EQ(got.out, want) << rows << ": if the change is meant, run scripts/update-snapshots and review the diff";
    for (const std::string& part : want_parts) EXPECT_NE(want.find(part), std::string::npos) << rows << " lacks " << part;
  }
}

TEST(GraphirVersion, PrintsTheVersionAndCommit) {
  CommandResult r = graphir("--version");
  EXPECT_EQ(r.status, 0);
  EXPECT_TRUE(test::isVersionLine(r.out)) << r.out;
}

}  // namespace
}  // namespace gj
