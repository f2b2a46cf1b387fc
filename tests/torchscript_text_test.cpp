// TorchScript's text as PyTorch 1.13 prints it (tests/data/torchscript, written by
// tests/data/gen/torchscript_text.py): every graph parses, verifies and prints back to text that parses
// to the same print; the types, constants, attributes and source comments read as PyTorch meant them.
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "passes/pass_manager.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace gj {
namespace {

std::string dataPath(const std::string& name) { return std::string(GJ_TEST_DATA_DIR) + "/torchscript/" + name + ".ir"; }

const Node* findNode(const Block* b, OpKind k, int skip = 0) {
  for (const Node* n : *b) {
    if (n->kind() == k && skip-- == 0) return n;
    for (const Block* inner : n->blocks())
      if (const Node* f = findNode(inner, k, skip)) return f;
  }
  return nullptr;
}

class TorchScriptText : public testing::TestWithParam<std::string> {};

TEST_P(TorchScriptText, ParsesAndPrintsBackToTheSameGraph) {
  auto g = parseIRFile(dataPath(GetParam()));
  std::string once = printIR(*g);
  auto again = parseIR(once, "printed.ir");
  EXPECT_EQ(printIR(*again), once);
  EXPECT_TRUE(verify(*again).empty());
}

INSTANTIATE_TEST_SUITE_P(Fixtures, TorchScriptText,
                         testing::Values("lstm_cell_script", "lstm_cell_trace", "dynamic_rnn_script",
                                         "dynamic_rnn_inlined", "checks_script", "module_script", "module_inlined",
                                         "scalar_trace"));

TEST(TorchScriptText, EveryFixtureIsListed) {
  size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(std::string(GJ_TEST_DATA_DIR) + "/torchscript"))
    files += e.path().extension() == ".ir";
  EXPECT_EQ(files, 8u) << "a new fixture in tests/data/torchscript belongs in the list above";
}

TEST(TorchScriptText, TupleTypesAndTheirOps) {
  auto g = parseIRFile(dataPath("dynamic_rnn_script"));
  const Type& hidden = g->inputs()[1]->type();
  ASSERT_EQ(hidden.kind, TypeKind::Tuple);
  ASSERT_EQ(hidden.elements.size(), 2u);
  EXPECT_TRUE(hidden.elements[0].isTensor() && hidden.elements[1].isTensor());
  const Type& out = g->outputs()[0]->type();
  EXPECT_EQ(out.str(), "(Tensor, (Tensor, Tensor))");
  const Node* unpack = findNode(g->block(), OpKind::TupleUnpack);
  ASSERT_NE(unpack, nullptr);
  EXPECT_EQ(unpack->outputs().size(), 2u);
  EXPECT_EQ(unpack->output(0)->name(), "hx.1");
  // `outputs += [hy]` is the list aten::add_, told from the tensor one by its operands' kinds
  const Node* extend = findNode(g->block(), OpKind::ListExtendInPlace);
  ASSERT_NE(extend, nullptr);
  EXPECT_EQ(extend->output()->type().kind, TypeKind::TensorList);
  // the callee, a Function constant named by its name= attribute
  const Node* fn = findNode(g->block(), OpKind::Constant);
  ASSERT_NE(fn, nullptr);
  EXPECT_EQ(fn->output()->type().kind, TypeKind::Function);
  EXPECT_EQ(std::get<std::string>(fn->constant()), "lstm_cell");
  EXPECT_NE(findNode(g->block(), OpKind::CallFunction), nullptr);
}

TEST(TorchScriptText, SourceCommentsBecomeTheNodesPythonSource) {
  auto g = parseIRFile(dataPath("lstm_cell_script"));
  const Node* mm = findNode(g->block(), OpKind::Mm);
  ASSERT_NE(mm, nullptr);
  EXPECT_EQ(mm->pySource().file, "gen/torchscript_text.py");
  EXPECT_GT(mm->pySource().line, 0);
  EXPECT_GT(mm->pySource().col, 0);
  EXPECT_NE(mm->describe().find("(Python source gen/torchscript_text.py:"), std::string::npos) << mm->describe();
  // a node without a comment (TupleUnpack) has none
  EXPECT_FALSE(findNode(g->block(), OpKind::TupleUnpack)->pySource().known());
}

TEST(TorchScriptText, TracedTensorTypesKeepSizesDeviceAndRequiresGrad) {
  auto g = parseIRFile(dataPath("lstm_cell_trace"));
  const Type& input = g->inputs()[0]->type();
  EXPECT_EQ(input.str(), "Float(2, 3, device=cpu, requires_grad=0)");
  const Type& hidden = g->inputs()[1]->type();
  ASSERT_EQ(hidden.kind, TypeKind::Tuple);
  EXPECT_EQ(hidden.elements[0].str(), "Float(2, 4, device=cpu, requires_grad=0)");
  // scalar_trace: `x * 2` as a one-element tensor constant {2}, typed Long()
  auto s = parseIRFile(dataPath("scalar_trace"));
  const Node* c = findNode(s->block(), OpKind::Constant);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->output()->type().str(), "Long(device=cpu, requires_grad=0)");
  EXPECT_EQ(std::get<int64_t>(c->constant()), 2);
  EXPECT_NE(printIR(*s).find("prim::Constant[value={2}]()"), std::string::npos);
}

TEST(TorchScriptText, ModulesOptionalsStringsAndDevices) {
  auto m = parseIRFile(dataPath("module_script"));
  EXPECT_EQ(m->inputs()[0]->type().kind, TypeKind::Class);
  EXPECT_EQ(m->inputs()[0]->type().name, "__torch__.Outer");
  const Node* attr = findNode(m->block(), OpKind::GetAttr);
  ASSERT_NE(attr, nullptr);
  EXPECT_EQ(std::get<std::string>(attr->constant()), "block");
  const Node* call = findNode(m->block(), OpKind::CallMethod);
  ASSERT_NE(call, nullptr);
  EXPECT_EQ(std::get<std::string>(call->constant()), "forward");

  auto c = parseIRFile(dataPath("checks_script"));
  EXPECT_EQ(c->inputs()[1]->type().str(), "Tensor?");
  EXPECT_EQ(c->inputs()[3]->type().kind, TypeKind::Device);
  const Node* raise = findNode(c->block(), OpKind::RaiseException);
  ASSERT_NE(raise, nullptr);
  EXPECT_TRUE(raise->outputs().empty());
  EXPECT_EQ(std::get<std::string>(raise->input(0)->node()->constant()), "y must be \"given\"\n");
  EXPECT_NE(findNode(c->block(), OpKind::IntGt), nullptr);
  EXPECT_NE(findNode(c->block(), OpKind::Dim), nullptr);

  auto i = parseIRFile(dataPath("module_inlined"));
  const Node* floats = findNode(i->block(), OpKind::ListConstruct);
  ASSERT_NE(floats, nullptr);
  EXPECT_EQ(floats->output()->type().kind, TypeKind::FloatList);
}

TEST(TorchScriptText, OverloadNamesAndConstantsOfEveryKind) {
  auto g = parseIR(R"(graph(%x : Float(2, *, strides=[4, 1], device=cuda:0), %n : List[int], %t : Tuple[int, Tensor]):
  %one : int = prim::Constant[value=1]()
  %e : float = prim::Constant[value=1e-05]()
  %half : float = prim::Constant[value=0.5]()
  %b : bool = prim::Constant[value=0]()
  %s : str = prim::Constant[value='it\'s']()
  %none : Tensor? = prim::Constant()
  %ints : int[] = prim::Constant[value=[1, -2]]()
  %floats : float[] = prim::Constant[value=[1., 2.5]]()
  %dev : Device = prim::Constant[value="cpu"]()
  %y : Tensor = aten::add.Tensor(%x, %x, %one)
  %k : int = aten::add.int(%one, %one)
  %l : int[] = aten::add.t(%n, %ints)
  return (%y, %k, %l, %e, %half, %b, %s, %none, %floats, %dev, %t)
)");
  EXPECT_EQ(g->inputs()[0]->type().str(), "Float(2, *, device=cuda)");
  EXPECT_EQ(g->inputs()[1]->type().kind, TypeKind::IntList);
  EXPECT_EQ(g->inputs()[2]->type().str(), "(int, Tensor)");
  std::vector<OpKind> kinds;
  for (const Node* n : *g->block()) kinds.push_back(n->kind());
  EXPECT_EQ(kinds[9], OpKind::Add);
  EXPECT_EQ(kinds[10], OpKind::IntAdd);
  EXPECT_EQ(kinds[11], OpKind::ListConcat);
  EXPECT_EQ(std::get<double>(g->outputs()[3]->node()->constant()), 1e-05);
  EXPECT_EQ(std::get<std::string>(g->outputs()[6]->node()->constant()), "it's");
  EXPECT_EQ(std::get<std::vector<double>>(g->outputs()[8]->node()->constant()), (std::vector<double>{1.0, 2.5}));
  std::string printed = printIR(*g);
  EXPECT_NE(printed.find("prim::Constant[value=\"it's\"]()"), std::string::npos) << printed;
  EXPECT_NE(printed.find("prim::Constant[value=[1., 2.5]]()"), std::string::npos) << printed;
  EXPECT_EQ(printIR(*parseIR(printed)), printed);
}

TEST(TorchScriptText, NothingRunsTorchScriptsFormsBeforeTheyAreLowered) {
  auto g = parseIRFile(dataPath("lstm_cell_script"));
  try {
    runPasses(*g, std::vector<std::string>{"dce"});
    FAIL() << "dce ran on a graph with a tuple input";
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("%hidden.1 is of TorchScript's type (Tensor, Tensor)"), std::string::npos) << e.what();
  }
  auto m = parseIRFile(dataPath("module_inlined"));
  m->inputs()[0]->setType(Type::tensor());  // past the class-typed self, the first GetAttr (line 3) stops it
  try {
    requireLowered(*m, "the test");
    FAIL() << "a prim::GetAttr passed requireLowered";
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("prim::GetAttr is TorchScript's form"), std::string::npos) << e.what();
    EXPECT_NE(e.where().find("module_inlined.ir:3:30"), std::string::npos) << e.where();
  }
}

}  // namespace
}  // namespace gj
