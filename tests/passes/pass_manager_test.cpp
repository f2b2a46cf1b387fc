// Tests of the pass manager (passes/pass_manager.h): names, parameters, verification, logging.
#include "tests/passes/pass_test.h"

namespace gj {
namespace {

using test::checkPass;
using test::randomFor;

TEST(PassManager, RunsByNameVerifiesAndLogs) {
  auto g = parseIR("graph(%x : Double(3)):\n  %a : Tensor = aten::tanh(%x)\n  %b : Tensor = aten::tanh(%x)\n"
                   "  return (%a)\n");
  std::ostringstream log;
  PassOptions opts;
  opts.verifyEach = true;
  opts.log = &log;
  opts.logAfter = {"dce"};
  auto records = runPasses(*g, parsePassList("dce, cse"), opts);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_TRUE(records[0].changed);
  EXPECT_FALSE(records[1].changed);
  EXPECT_NE(log.str().find("IR after dce (changed"), std::string::npos) << log.str();
  EXPECT_EQ(log.str().find("IR after cse"), std::string::npos);
  EXPECT_THROW(parsePassList("dce,cse,dcee"), Error);
}

// A loop of five tanh steps, which unroll-loops takes with parameters.
constexpr const char* kFiveSteps = R"IR(graph(%x : Double(3)):
  %n : int = prim::Constant[value=5]()
  %true : bool = prim::Constant[value=1]()
  %y : Tensor = prim::Loop(%n, %true, %x)
    block0(%i : int, %h : Tensor):
      %h2 : Tensor = aten::tanh(%h)
      -> (%true, %h2)
  return (%y)
)IR";

// Options that verify after each pass and log unroll-loops' graph to `log`.
PassOptions loggingUnroll(std::ostringstream& log) {
  PassOptions opts;
  opts.verifyEach = true;
  opts.log = &log;
  opts.logAfter = {"unroll-loops"};
  return opts;
}

// A pass that takes parameters runs through the same runner, by name with its parameters.
TEST(PassManager, APassWithParametersRunsByItsNameAndParameters) {
  const std::string src = kFiveSteps;
  std::ostringstream log;
  const PassOptions opts = loggingUnroll(log);
  auto partial = parseIR(src);
  auto records = runPasses(*partial, parsePassList("unroll-loops<full=0;by=2>"), opts);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].name, "unroll-loops<full=0;by=2>");
  EXPECT_TRUE(records[0].changed);
  EXPECT_NE(log.str().find("IR after unroll-loops<full=0;by=2> (changed"), std::string::npos) << log.str();
  EXPECT_FILECHECK(printIR(*partial), "CHECK: prim::Loop\nCHECK: aten::tanh\nCHECK: aten::tanh\n");
  auto full = parseIR(src);
  EXPECT_TRUE(runPasses(*full, parsePassList("unroll-loops<full=8>"), opts)[0].changed);
  EXPECT_EQ(printIR(*full).find("prim::Loop"), std::string::npos) << printIR(*full);
  for (auto [list, message] : {std::pair{"unroll-loops<fast>", "'fast' is not a parameter"},
                               std::pair{"unroll-loops<by=0>", "'by=0' is not a parameter"},
                               std::pair{"dce<x=1>", "pass 'dce' takes no parameters"}}) {
    try {
      runPasses(*parseIR(src), parsePassList(list), opts);
      ADD_FAILURE() << list << ": no error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  }
}

// Code gives a pass its parameters typed (passes.def's PASS_WITH_PARAMS): the same pass, the same
// result and the same record as the text a person types, with no text parsed; the text form round-trips.
TEST(PassManager, APassWithParametersRunsFromTypedParameters) {
  std::ostringstream log;
  const PassOptions opts = loggingUnroll(log);
  auto typed = parseIR(kFiveSteps), text = parseIR(kFiveSteps);
  const UnrollOptions params{.maxFullUnroll = 0, .factor = 3};
  PassRecord r = runPass(*typed, params, opts);
  EXPECT_EQ(r.name, "unroll-loops<full=0;by=3>");
  EXPECT_TRUE(r.changed);
  EXPECT_NE(log.str().find("IR after unroll-loops<full=0;by=3> (changed"), std::string::npos) << log.str();
  EXPECT_EQ(runPasses(*text, parsePassList(r.name), opts)[0].name, r.name);
  EXPECT_EQ(printIR(*typed), printIR(*text));
  EXPECT_FILECHECK(printIR(*typed), "CHECK: prim::Loop\nCHECK: aten::tanh\nCHECK: aten::tanh\nCHECK: aten::tanh\n");
  const UnrollOptions back = UnrollOptions::parse(params.str());
  EXPECT_EQ(back.maxFullUnroll, 0);
  EXPECT_EQ(back.factor, 3);
  EXPECT_EQ(UnrollOptions::parse("").str(), UnrollOptions{}.str());
}

// A step that breaks the graph is blamed on itself, not on the next pass.
TEST(PassManager, AStepThatBreaksTheGraphIsNamedByTheVerifier) {
  auto g = parseIR("graph(%x : Double(3)):\n  %a : Tensor = aten::tanh(%x)\n  return (%a)\n");
  PassOptions opts;
  opts.verifyEach = true;
  try {
    runPass(*g, "break-it", [](Graph& graph) {
      Node* n = graph.block()->paramNode()->next();
      n->addInput(graph.inputs()[0]);  // tanh with two operands
      return true;
    }, opts);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("(after break-it)"), std::string::npos) << e.what();
  }
}

TEST(PassManager, EveryRegisteredPassKeepsAnLstmCorrect) {
  auto c = test::loadCase("lstm_1layer");
  for (const PassInfo& p : allPasses()) {
    SCOPED_TRACE(std::string(p.name));
    Model m = buildLstm(LstmVariantKind::Jit, {3, 2, 4, 5, 1});
    auto g = m.graph->clone();
    std::vector<std::string> pipeline = {"shape-propagation", "constant-propagation", std::string(p.name)};
    PassOptions opts;
    opts.verifyEach = true;
    runPasses(*g, pipeline, opts);
    auto inputs = randomInputs(m, 5);
    std::vector<IValue> in(inputs.begin(), inputs.end());
    auto a = Interpreter(*m.graph).run(in);
    auto b = Interpreter(*g).run(in);
    for (size_t i = 0; i < a.size(); ++i) EXPECT_LE(test::relError(b[i].toTensor(), a[i].toTensor()), 1e-6);
  }
}

}  // namespace
}  // namespace gj
