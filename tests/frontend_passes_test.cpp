// The frontend passes (passes/frontend.h), one behaviour each: TorchScript's text in, a FileCheck of what
// the pass made, and where the result runs, the interpreter's values against the same computation written
// in graphjit's own IR.
#include "executors/interpreter.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "passes/frontend.h"
#include "passes/pass_manager.h"
#include "passes/util.h"
#include "tests/support/filecheck.h"
#include "tests/support/reference.h"

#include <gtest/gtest.h>

#include <set>

namespace gj {
namespace {

// Runs the named pass through the registry (so a frontend pass must be let past requireLowered) and
// verifies the result.
std::unique_ptr<Graph> lowered(const std::string& ir, const std::string& pass, bool expectChange = true) {
  auto g = parseIR(ir, "ts.ir");
  PassOptions opts;
  opts.verifyEach = true;
  auto rec = runPasses(*g, std::vector<std::string>{pass}, opts);
  EXPECT_EQ(rec[0].changed, expectChange) << pass;
  return g;
}

std::vector<IValue> randomTensors(size_t n, Shape shape, uint64_t seed) {
  std::vector<IValue> in;
  for (size_t i = 0; i < n; ++i) in.push_back(Tensor::rand(shape, DType::Float64, seed + i, 0.2, 1.0));
  return in;
}

// The interpreter's outputs of a and b on the same inputs agree (b written by hand in graphjit's IR).
void expectSameResults(const Graph& a, const Graph& b, const std::vector<IValue>& in) {
  auto x = Interpreter(a).run(in);
  auto y = Interpreter(b).run(in);
  ASSERT_EQ(x.size(), y.size());
  for (size_t i = 0; i < x.size(); ++i) {
    ASSERT_TRUE(x[i].isTensor() && y[i].isTensor()) << "output " << i;
    const Tensor& t = y[i].toTensor().contiguous();
    double largest = 0;
    for (int64_t k = 0; k < t.numel(); ++k) largest = std::max(largest, std::abs(t.item(k)));
    EXPECT_GT(largest, 0.0) << "output " << i << " is all zeros: the test would prove nothing";
    EXPECT_LE(test::relError(x[i].toTensor(), y[i].toTensor()), 1e-15) << "output " << i;
  }
}

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return std::string(e.what()) + " @ " + e.where() + " hint: " + e.hint();
  }
  return "no error";
}

TEST(CheckCalls, ACallWhoseBodyIsNotInTheTextNamesTheCalleeAndInlinedGraph) {
  const char* ir = R"IR(graph(%x.1 : Tensor):
  %f : Function = prim::Constant[name="helper"]()
  %y : Tensor = prim::CallFunction(%f, %x.1) # model.py:7:8
  return (%y)
)IR";
  std::string e = errorOf([&] { lowered(ir, "check-calls"); });
  EXPECT_NE(e.find("prim::CallFunction calls function helper, whose body is not in the text"), std::string::npos) << e;
  EXPECT_NE(e.find("ts.ir:3:17 (Python source model.py:7:8)"), std::string::npos) << e;
  EXPECT_NE(e.find(".inlined_graph"), std::string::npos) << e;
}

TEST(CheckCalls, DropsPythonWarnings) {
  auto g = lowered(R"IR(graph(%x : Tensor):
  %m : str = prim::Constant[value="careful"]()
  %l : int = prim::Constant[value=2]()
   = aten::warn(%m, %l)
  %y : Tensor = aten::tanh(%x)
  return (%y)
)IR", "check-calls");
  EXPECT_FILECHECK(printIR(*g), "CHECK-NOT: aten::warn\nCHECK: aten::tanh");
}

TEST(CheckCalls, DropsAStrictFusionBlocksObjectAndRefusesOtherObjects) {
  auto g = lowered(R"IR(graph(%x.1 : Tensor):
  %one : int = prim::Constant[value=1]()
  %o : __torch__.torch.jit.strict_fusion = prim::CreateObject()
  %i : NoneType = prim::CallMethod[name="__init__"](%o)
  %e : NoneType = prim::Enter(%o)
  %y : Tensor = aten::add(%x.1, %x.1, %one)
  %q : Tensor = prim::Exit(%o)
  return (%y)
)IR", "check-calls");
  EXPECT_FILECHECK(printIR(*g), "CHECK-NOT: prim::CreateObject\nCHECK-NOT: prim::Enter\nCHECK: aten::add\nCHECK-NOT: prim::Exit");
  std::string e = errorOf([&] {
    lowered(R"IR(graph(%x.1 : Tensor):
  %o : __torch__.Counter = prim::CreateObject() # model.py:3:8
  return (%x.1)
)IR", "check-calls");
  });
  EXPECT_NE(e.find("prim::CreateObject makes an object of class __torch__.Counter"), std::string::npos) << e;
  EXPECT_NE(e.find("ts.ir:2:28 (Python source model.py:3:8)"), std::string::npos) << e;
}

TEST(LowerModuleAttributes, GetAttrChainsBecomeInputsNamedByStateDictKey) {
  auto g = lowered(R"IR(graph(%self : __torch__.Outer, %x.1 : Double(2, 3)):
  %block : __torch__.Block = prim::GetAttr[name="block"](%self)
  %fc : __torch__.Linear = prim::GetAttr[name="fc"](%block)
  %w : Tensor = prim::GetAttr[name="weight"](%fc)
  %b : Tensor = prim::GetAttr[name="bias"](%fc)
  %y : Tensor = aten::linear(%x.1, %w, %b)
  %fc.2 : __torch__.Linear = prim::GetAttr[name="fc"](%block)
  %w2 : Tensor = prim::GetAttr[name="weight"](%fc.2)
  %z : Tensor = aten::linear(%y, %w2, %b)
  return (%z)
)IR", "lower-module-attributes");
  EXPECT_FILECHECK(printIR(*g), R"(CHECK: graph(%x.1 : Double(2, 3),
CHECK-NEXT: %block.fc.weight : Tensor,
CHECK-NEXT: %block.fc.bias : Tensor):
CHECK-NOT: prim::GetAttr
CHECK: aten::linear(%x.1, %block.fc.weight, %block.fc.bias)
CHECK: aten::linear(%y, %block.fc.weight, %block.fc.bias))");
  auto mine = parseIR(R"IR(graph(%x : Double(2, 3), %w : Double(3, 3), %b : Double(3)):
  %y : Tensor = aten::linear(%x, %w, %b)
  %z : Tensor = aten::linear(%y, %w, %b)
  return (%z)
)IR");
  auto in = randomTensors(1, {2, 3}, 1);
  in.push_back(Tensor::rand({3, 3}, DType::Float64, 5, 0.2, 1.0));
  in.push_back(Tensor::rand({3}, DType::Float64, 6, 0.2, 1.0));
  expectSameResults(*g, *mine, in);
}

TEST(LowerModuleAttributes, AnAttributeOfAnotherValueIsAnError) {
  std::string e = errorOf([] {
    lowered(R"IR(graph(%self : __torch__.M, %other : __torch__.M):
  %w : Tensor = prim::GetAttr[name="weight"](%other)
  return (%w)
)IR", "lower-module-attributes");
  });
  EXPECT_NE(e.find("prim::GetAttr reads weight of %other, which is not the module's self"), std::string::npos) << e;
}

TEST(LowerModuleAttributes, AnAttributeNameThatIsNotAnIdentifierIsAnError) {
  std::string e = errorOf([] {
    lowered(R"IR(graph(%self : __torch__.M):
  %w : Tensor = prim::GetAttr[name="bad name"](%self)
  return (%w)
)IR", "lower-module-attributes");
  });
  EXPECT_NE(e.find("ts.ir:2:17: prim::GetAttr's name \"bad name\" is not a Python identifier"), std::string::npos) << e;
}

TEST(LowerTuples, InputsReturnsLoopsAndIfsCarryTheElements) {
  const char* ir = R"IR(graph(%n : int, %hidden.1 : (Tensor, Tensor), %c : bool):
  %true : bool = prim::Constant[value=1]()
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %state : (Tensor, Tensor) = prim::Loop(%n, %true, %hidden.1)
    block0(%i : int, %s.1 : (Tensor, Tensor)):
      %h : Tensor, %x : Tensor = prim::TupleUnpack(%s.1)
      %h2 : Tensor = aten::tanh(%x)
      %x2 : Tensor = aten::add(%h, %x, %one)
      %s.2 : (Tensor, Tensor) = prim::TupleConstruct(%h2, %x2)
      -> (%true, %s.2)
  %picked : (Tensor, Tensor) = prim::If(%c)
    block0():
      -> (%state)
    block1():
      %a : Tensor = prim::TupleIndex(%state, %one)
      %b : Tensor = prim::TupleIndex(%state, %zero)
      %swapped : (Tensor, Tensor) = prim::TupleConstruct(%a, %b)
      -> (%swapped)
  %first : Tensor = prim::TupleIndex(%picked, %zero)
  %out : (Tensor, (Tensor, Tensor)) = prim::TupleConstruct(%first, %picked)
  return (%out)
)IR";
  auto g = lowered(ir, "lower-tuples");
  EXPECT_FILECHECK(printIR(*g), R"(CHECK: graph(%n : int,
CHECK-NEXT: %hidden_0 : Tensor,
CHECK-NEXT: %hidden_1 : Tensor,
CHECK-NEXT: %c : bool):
CHECK-NOT: prim::Tuple
CHECK: prim::Loop(%n, %true, %hidden_0, %hidden_1)
CHECK: block0(%i : int, %[[H:.*]] : Tensor, %[[X:.*]] : Tensor):
CHECK: aten::tanh(%[[X]])
CHECK: -> (%true, %h2, %x2)
CHECK: prim::If(%c)
CHECK-NOT: prim::Tuple
CHECK: return ({{.*}}, {{.*}}, {{.*}})
)");
  EXPECT_EQ(g->outputs().size(), 3u);
  auto mine = parseIR(R"IR(graph(%n : int, %h0 : Tensor, %h1 : Tensor, %c : bool):
  %true : bool = prim::Constant[value=1]()
  %one : int = prim::Constant[value=1]()
  %h : Tensor, %x : Tensor = prim::Loop(%n, %true, %h0, %h1)
    block0(%i : int, %a : Tensor, %b : Tensor):
      %a2 : Tensor = aten::tanh(%b)
      %b2 : Tensor = aten::add(%a, %b, %one)
      -> (%true, %a2, %b2)
  %p : Tensor, %q : Tensor = prim::If(%c)
    block0():
      -> (%h, %x)
    block1():
      -> (%x, %h)
  return (%p, %p, %q)
)IR");
  for (bool c : {true, false}) {
    std::vector<IValue> in{int64_t{3}};
    for (IValue& t : randomTensors(2, {2, 3}, 11)) in.push_back(t);
    in.push_back(c);
    expectSameResults(*g, *mine, in);
  }
}

TEST(FunctionalizeLists, AppendsInALoopBecomeALoopCarriedList) {
  const char* ir = R"IR(graph(%xs : Tensor[], %h.1 : Tensor):
  %true : bool = prim::Constant[value=1]()
  %zero : int = prim::Constant[value=0]()
  %outputs.1 : Tensor[] = prim::ListConstruct()
  %n : int = aten::len(%xs)
  %h : Tensor = prim::Loop(%n, %true, %h.1)
    block0(%i : int, %h.2 : Tensor):
      %x : Tensor = aten::__getitem__(%xs, %i)
      %h.3 : Tensor = aten::mul(%h.2, %x)
      %l : Tensor[] = aten::append(%outputs.1, %h.3)
      %more : Tensor[] = prim::ListConstruct(%x)
      %l2 : Tensor[] = aten::add_(%outputs.1, %more)
      -> (%true, %h.3)
  %k : int = aten::len(%outputs.1)
  %s : Tensor = aten::stack(%outputs.1, %zero)
  return (%s, %h)
)IR";
  auto g = lowered(ir, "functionalize-lists");
  EXPECT_FILECHECK(printIR(*g), R"(CHECK: %outputs.1 : Tensor[] = prim::ListConstruct()
CHECK: prim::Loop(%n, %true, %h.1, %outputs.1)
CHECK: block0(%i : int, %h.2 : Tensor, %[[L:.*]] : Tensor[]):
CHECK: %[[A:.*]] : Tensor[] = prim::ListAppend(%[[L]], %h.3)
CHECK: %[[B:.*]] : Tensor[] = prim::ListAppend(%[[A]], %x)
CHECK: -> (%true, %h.3, %[[B]])
CHECK-NOT: aten::append
CHECK-NOT: aten::add_
CHECK: aten::stack(
)");
  auto mine = parseIR(R"IR(graph(%xs : Tensor[], %h.1 : Tensor):
  %true : bool = prim::Constant[value=1]()
  %zero : int = prim::Constant[value=0]()
  %empty : Tensor[] = prim::ListConstruct()
  %n : int = aten::len(%xs)
  %h : Tensor, %outs : Tensor[] = prim::Loop(%n, %true, %h.1, %empty)
    block0(%i : int, %h.2 : Tensor, %acc : Tensor[]):
      %x : Tensor = aten::__getitem__(%xs, %i)
      %h.3 : Tensor = aten::mul(%h.2, %x)
      %acc2 : Tensor[] = prim::ListAppend(%acc, %h.3)
      %acc3 : Tensor[] = prim::ListAppend(%acc2, %x)
      -> (%true, %h.3, %acc3)
  %s : Tensor = aten::stack(%outs, %zero)
  return (%s, %h)
)IR");
  TensorList xs;
  for (IValue& t : randomTensors(3, {2, 2}, 21)) xs.push_back(t.toTensor());
  expectSameResults(*g, *mine, {IValue(xs), Tensor::rand({2, 2}, DType::Float64, 30, 0.2, 1.0)});
}

TEST(FunctionalizeLists, AnAppendInOneBranchMakesTheIfReturnTheList) {
  auto g = lowered(R"IR(graph(%x : Tensor, %c : bool):
  %zero : int = prim::Constant[value=0]()
  %l.1 : Tensor[] = prim::ListConstruct(%x)
  = prim::If(%c)
    block0():
      %y : Tensor = aten::tanh(%x)
      %l.2 : Tensor[] = aten::append(%l.1, %y)
      -> ()
    block1():
      -> ()
  %s : Tensor = aten::cat(%l.1, %zero)
  return (%s)
)IR", "functionalize-lists");
  EXPECT_FILECHECK(printIR(*g), R"(CHECK: %[[L:.*]] : Tensor[] = prim::If(%c)
CHECK: prim::ListAppend(%l.1, %y)
CHECK: block1():
CHECK-NEXT: -> (%l.1)
CHECK: aten::cat(%[[L]], %zero)
)");
  for (bool c : {true, false}) {
    auto out = Interpreter(*g).run({Tensor::rand({2}, DType::Float64, 3, 0.2, 1.0), c});
    EXPECT_EQ(out[0].toTensor().size(0), c ? 4 : 2);
  }
}

TEST(FoldShapeChecks, ARaiseBecomesARunTimeCheckWithItsMessage) {
  auto g = lowered(R"IR(graph(%x.1 : Tensor, %y.1 : Tensor?):
  %none : NoneType = prim::Constant()
  %msg : str = prim::Constant[value="x must be a matrix"]()
  %cls : str = prim::Constant[value="builtins.ValueError"]()
  %two : int = prim::Constant[value=2]()
  %u : Tensor = prim::Uninitialized()
  %missing : bool = aten::__is__(%y.1, %none)
  %y : Tensor = prim::If(%missing)
    block0():
       = prim::RaiseException(%msg, %cls)
      -> (%u)
    block1():
      %y.2 : Tensor = prim::unchecked_cast(%y.1)
      -> (%y.2)
  %d : int = aten::dim(%x.1)
  %bad : bool = aten::ne(%d, %two)
   = prim::If(%bad) # model.py:4:4
    block0():
       = prim::RaiseException(%msg, %cls) # model.py:5:8
      -> ()
    block1():
      -> ()
  %z : Tensor = aten::mul(%x.1, %y)
  return (%z)
)IR", "fold-shape-checks");
  EXPECT_FILECHECK(printIR(*g), R"(CHECK: graph(%x.1 : Tensor,
CHECK-NEXT: %y.1 : Tensor):
CHECK-NOT: prim::If
CHECK: aten::len
CHECK: prim::RaiseIf[message="ValueError: x must be a matrix"](%bad) # model.py:5:8
CHECK: aten::mul(%x.1, %y.1)
)");
  runPasses(*g, std::vector<std::string>{"lower-torchscript"});  // the message constants, now unread, go
  auto a = Tensor::rand({2, 3}, DType::Float64, 1, 0.2, 1.0), b = Tensor::rand({2, 3}, DType::Float64, 2, 0.2, 1.0);
  auto out = Interpreter(*g).run({a, b});
  EXPECT_NEAR(out[0].toTensor().item(4), a.item(4) * b.item(4), 1e-15);
  std::string e = errorOf([&] { Interpreter(*g).run({Tensor::rand({6}, DType::Float64, 1), Tensor::rand({6}, DType::Float64, 2)}); });
  EXPECT_NE(e.find("ts.ir:19:10 (Python source model.py:5:8): ValueError: x must be a matrix"), std::string::npos) << e;
}

TEST(FoldShapeChecks, TypesDecideTheCheck) {
  const char* ir = R"IR(graph(%x.1 : Float(4, 3)):
  %msg : str = prim::Constant[value="too small"]()
  %five : int = prim::Constant[value=5]()
  %zero : int = prim::Constant[value=0]()
  %n : int = aten::size(%x.1, %zero)
  %small : bool = aten::lt(%n, %five)
   = prim::If(%small)
    block0():
       = prim::RaiseException(%msg)
      -> ()
    block1():
      -> ()
  return (%x.1)
)IR";
  std::string e = errorOf([&] { lowered(ir, "fold-shape-checks"); });
  EXPECT_NE(e.find("this check fails for the graph's input types: too small"), std::string::npos) << e;
  std::string fine(ir);
  fine.replace(fine.find("Float(4, 3)"), 11, "Float(6, 3)");
  auto g = lowered(fine, "fold-shape-checks");
  EXPECT_FILECHECK(printIR(*g), "CHECK-NOT: prim::RaiseIf\nCHECK-NOT: prim::If\nCHECK: return (%x.1)");
}

TEST(FoldShapeChecks, ATracesScalarTensorsAreScalarOperands) {
  auto g = lowered(R"IR(graph(%x : Double(3)):
  %two : Long() = prim::Constant[value={2}]()
  %y : Double(3) = aten::mul(%x, %two)
  %zero : int = prim::Constant[value=0]()
  %n : int = aten::size(%x, %zero)
  %t : Long() = prim::NumToTensor(%n)
  %one : int = prim::Constant[value=1]()
  %z : Double(3) = aten::add(%y, %t, %one)
  return (%z)
)IR", "lower-torchscript");
  EXPECT_FILECHECK(printIR(*g), "CHECK-NOT: prim::NumToTensor\nCHECK: aten::mul(%x, %{{.*}})\nCHECK: aten::add");
  auto x = Tensor::rand({3}, DType::Float64, 4, 0.2, 1.0);
  auto out = Interpreter(*g).run({x});
  for (int64_t i = 0; i < 3; ++i) EXPECT_NEAR(out[0].toTensor().item(i), x.item(i) * 2 + 3, 1e-15);
}

TEST(LowerOverloads, ADTypeArgumentBecomesACast) {
  auto g = lowered(R"IR(graph(%x : Float(2, 3)):
  %none : NoneType = prim::Constant()
  %double : int = prim::Constant[value=7]()
  %one : int = prim::Constant[value=1]()
  %a : Tensor = aten::sum(%x, %none)
  %b : Tensor = aten::softmax(%x, %one, %double)
  return (%a, %b)
)IR", "lower-overloads");
  EXPECT_FILECHECK(printIR(*g), R"(CHECK: %a : Tensor = aten::sum(%x)
CHECK: aten::to(%x, %{{.*}})
CHECK: %b : Tensor = aten::softmax(
)");
  auto out = Interpreter(*g).run({Tensor::rand({2, 3}, DType::Float32, 8, 0.2, 1.0)});
  EXPECT_EQ(out[1].toTensor().dtype(), DType::Float64);
  std::string e = errorOf([] {
    lowered(R"IR(graph(%x : Tensor):
  %complex64 : int = prim::Constant[value=9]()
  %a : Tensor = aten::sum(%x, %complex64)
  return (%a)
)IR", "lower-overloads");
  });
  EXPECT_NE(e.find("aten::sum's dtype must be a constant torch.float32, float64, float16"), std::string::npos) << e;
}

TEST(LowerOverloads, FactoriesWithOptionsAndGelusApproximation) {
  const char* ts = R"IR(graph(%x : Double(2, 3)):
  %none : NoneType = prim::Constant()
  %fill : float = prim::Constant[value=2.5]()
  %f64 : int = prim::Constant[value=7]()
  %strided : int = prim::Constant[value=0]()
  %cpu : Device = prim::Constant[value="cpu"]()
  %no : bool = prim::Constant[value=0]()
  %exact : str = prim::Constant[value="none"]()
  %tanh : str = prim::Constant[value="tanh"]()
  %z : Tensor = aten::zeros_like(%x, %none, %none, %none, %none, %none)
  %o : Tensor = aten::ones_like(%x, %f64, %strided, %cpu, %no, %none)
  %f : Tensor = aten::full_like(%x, %fill, %none, %none, %none, %none, %none)
  %g : Tensor = aten::gelu(%x, %exact)
  %t : Tensor = aten::gelu(%x, %tanh)
  %s : Tensor = aten::add(%z, %o, %fill)
  %u : Tensor = aten::mul(%f, %g)
  %r : Tensor = aten::add(%s, %u, %fill)
  return (%r, %t)
)IR";
  auto g = lowered(ts, "lower-torchscript");
  EXPECT_FILECHECK(printIR(*g), R"(CHECK: aten::zeros_like(%x)
CHECK: aten::ones_like(%{{.*}})
CHECK: aten::full_like(%x, %fill)
CHECK: aten::gelu(%x)
CHECK-NOT: aten::gelu
CHECK: aten::tanh
CHECK-NOT: prim::Constant[value="
)");
  // The same in graphjit's own IR; the tanh form written out as PyTorch documents it.
  auto mine = parseIR(R"IR(graph(%x : Double(2, 3)):
  %fill : float = prim::Constant[value=2.5]()
  %one : int = prim::Constant[value=1]()
  %half : float = prim::Constant[value=0.5]()
  %c : float = prim::Constant[value=0.044715]()
  %k : float = prim::Constant[value=0.79788456080286536]()
  %z : Tensor = aten::zeros_like(%x)
  %o : Tensor = aten::ones_like(%x)
  %f : Tensor = aten::full_like(%x, %fill)
  %g : Tensor = aten::gelu(%x)
  %s : Tensor = aten::add(%z, %o, %fill)
  %u : Tensor = aten::mul(%f, %g)
  %r : Tensor = aten::add(%s, %u, %fill)
  %cube : Tensor = aten::mul(%x, %x)
  %cube2 : Tensor = aten::mul(%cube, %x)
  %inner : Tensor = aten::add(%x, %cube2, %c)
  %th2 : Tensor = aten::mul(%inner, %k)
  %th3 : Tensor = aten::tanh(%th2)
  %p : Tensor = aten::add(%th3, %one, %one)
  %hx : Tensor = aten::mul(%x, %half)
  %t : Tensor = aten::mul(%hx, %p)
  return (%r, %t)
)IR");
  expectSameResults(*g, *mine, randomTensors(1, {2, 3}, 21));
  std::string e = errorOf([] {
    lowered(R"IR(graph(%x : Tensor):
  %none : NoneType = prim::Constant()
  %yes : bool = prim::Constant[value=1]()
  %z : Tensor = aten::zeros_like(%x, %none, %none, %none, %yes, %none)
  return (%z)
)IR", "lower-overloads");
  });
  EXPECT_NE(e.find("aten::zeros_like with a layout other than torch.strided or pinned memory"), std::string::npos) << e;
}

TEST(LowerOverloads, TrailingArgumentsAtTheirDefaultsAreDroppedAndOthersNamed) {
  const char* ts = R"IR(graph(%w : Double(5, 3), %ids : Long(2, 4), %target : Long(8), %x : Double(2, 3)):
  %none : NoneType = prim::Constant()
  %minus1 : int = prim::Constant[value=-1]()
  %no : bool = prim::Constant[value=0]()
  %yes : bool = prim::Constant[value=1]()
  %mean : int = prim::Constant[value=1]()
  %ignore : int = prim::Constant[value=-100]()
  %smooth : float = prim::Constant[value=0.]()
  %format : int = prim::Constant[value=0]()
  %f64 : int = prim::Constant[value=7]()
  %flat : int[] = prim::Constant[value=[8, 3]]()
  %size : int[] = prim::Constant[value=[4, 2, 3]]()
  %e : Tensor = aten::embedding(%w, %ids, %minus1, %no, %no)
  %rows : Tensor = aten::reshape(%e, %flat)
  %loss : Tensor = aten::cross_entropy_loss(%rows, %target, %none, %mean, %ignore, %smooth)
  %logp : Tensor = aten::log_softmax(%rows, %mean, %none)
  %nll : Tensor = aten::nll_loss(%logp, %target, %none, %mean, %ignore)
  %c : Tensor = aten::contiguous(%x, %format)
  %big : Tensor = aten::expand(%c, %size, %yes)
  %copy : Tensor = aten::clone(%big, %none)
  %d : Tensor = aten::to(%copy, %f64, %no, %no, %none)
  return (%loss, %nll, %d)
)IR";
  auto g = lowered(ts, "lower-torchscript");
  EXPECT_FILECHECK(printIR(*g), R"(CHECK: %e : Tensor = aten::embedding(%w, %ids)
CHECK: %loss : Tensor = aten::cross_entropy(%rows, %target)
CHECK: %nll : Tensor = aten::nll_loss(%logp, %target)
CHECK: %c : Tensor = aten::contiguous(%x)
CHECK: %big : Tensor = aten::expand(%c, %size)
CHECK-NOT: aten::clone
CHECK: %d : Tensor = aten::to(%big, %{{.*}})
)");
  auto mine = parseIR(R"IR(graph(%w : Double(5, 3), %ids : Long(2, 4), %target : Long(8), %x : Double(2, 3)):
  %one : int = prim::Constant[value=1]()
  %f64 : int = prim::Constant[value=1]()
  %flat : int[] = prim::Constant[value=[8, 3]]()
  %size : int[] = prim::Constant[value=[4, 2, 3]]()
  %e : Tensor = aten::embedding(%w, %ids)
  %rows : Tensor = aten::reshape(%e, %flat)
  %loss : Tensor = aten::cross_entropy(%rows, %target)
  %logp : Tensor = aten::log_softmax(%rows, %one)
  %nll : Tensor = aten::nll_loss(%logp, %target)
  %c : Tensor = aten::contiguous(%x)
  %big : Tensor = aten::expand(%c, %size)
  %d : Tensor = aten::to(%big, %f64)
  return (%loss, %nll, %d)
)IR");
  const std::vector<IValue> in = {Tensor::rand({5, 3}, DType::Float64, 3, -1.0, 1.0),
                                  Tensor::fromVector({2, 4}, {0, 4, 2, 1, 3, 3, 0, 2}, DType::Int64),
                                  Tensor::fromVector({8}, {2, 0, 1, 2, 1, 0, 0, 2}, DType::Int64),
                                  Tensor::rand({2, 3}, DType::Float64, 4, 0.2, 1.0)};
  expectSameResults(*g, *mine, in);
  std::string e = errorOf([] {
    lowered(R"IR(graph(%w : Tensor, %ids : Tensor):
  %pad : int = prim::Constant[value=0]()
  %no : bool = prim::Constant[value=0]()
  %e : Tensor = aten::embedding(%w, %ids, %pad, %no, %no)
  return (%e)
)IR", "lower-overloads");
  });
  EXPECT_NE(e.find("ts.ir:4:17: aten::embedding's padding_idx must be -1, its default"), std::string::npos) << e;
}

TEST(LowerOverloads, AnInPlaceBatchNormUpdatesTheStatisticsLaterReadsSee) {
  auto g = lowered(R"IR(graph(%x : Double(4, 2, 3), %w : Double(2), %b : Double(2), %rm : Double(2), %rv : Double(2)):
  %none : NoneType = prim::Constant()
  %yes : bool = prim::Constant[value=1]()
  %momentum : float = prim::Constant[value=0.1]()
  %eps : float = prim::Constant[value=1e-05]()
  %before : Tensor = aten::clone(%rm, %none)
  %y : Tensor, %m : Tensor, %s : Tensor = aten::native_batch_norm(%x, %w, %b, %rm, %rv, %yes, %momentum, %eps)
  return (%y, %before, %rm, %rv)
)IR", "lower-overloads");
  EXPECT_FILECHECK(printIR(*g), R"(CHECK: %y : Tensor, %m : Tensor, %s : Tensor, %[[M:.*]] : Double(2), %[[V:.*]] : Double(2) = aten::_native_batch_norm_legit_functional(%x, %w, %b, %rm, %rv,
CHECK: return (%y, %rm, %[[M]], %[[V]])
)");
}

// aten::ones / zeros / empty / full by sizes: prim::full, float32 unless a dtype is given (full: its fill
// value's dtype); a layout other than strided is an error naming the op.
TEST(LowerOverloads, SizedFactoriesAreFullsOfTheirDtype) {
  auto g = lowered(R"IR(graph(%k : int):
  %none : NoneType = prim::Constant()
  %two : int = prim::Constant[value=2]()
  %seven : int = prim::Constant[value=7]()
  %f64 : int = prim::Constant[value=7]()
  %half : float = prim::Constant[value=0.5]()
  %s : int[] = prim::ListConstruct(%k, %two)
  %a : Tensor = aten::ones(%s, %none, %none, %none, %none)
  %b : Tensor = aten::zeros(%s, %f64, %none, %none, %none)
  %c : Tensor = aten::empty(%s, %none, %none, %none, %none, %none)
  %d : Tensor = aten::full(%s, %seven, %none, %none, %none, %none)
  %e : Tensor = aten::full(%s, %half, %none, %none, %none, %none)
  return (%a, %b, %c, %d, %e)
)IR", "lower-overloads");
  const std::vector<DType> dtypes = {DType::Float32, DType::Float64, DType::Float32, DType::Int64, DType::Float32};
  auto out = Interpreter(*g).run({IValue(int64_t{3})});
  ASSERT_EQ(out.size(), 5u);
  const double fills[] = {1, 0, 0, 7, 0.5};
  for (size_t i = 0; i < 5; ++i) {
    const Tensor& t = out[i].toTensor();
    EXPECT_EQ(t.sizes(), (Shape{3, 2})) << i;
    EXPECT_EQ(t.dtype(), dtypes[i]) << i;
    for (int64_t j = 0; j < t.numel(); ++j) EXPECT_EQ(t.item(j), fills[i]) << i;
  }
  std::string e = errorOf([&] {
    lowered(R"IR(graph(%k : int):
  %none : NoneType = prim::Constant()
  %sparse : int = prim::Constant[value=1]()
  %s : int[] = prim::ListConstruct(%k)
  %a : Tensor = aten::ones(%s, %none, %sparse, %none, %none) # model.py:4:8
  return (%a)
)IR", "lower-overloads");
  });
  EXPECT_NE(e.find("aten::ones with a layout other than torch.strided"), std::string::npos) << e;
}

// self.add_(other, alpha), a buffer's num_batches_tracked.add_(1): aten::add, which later reads of self read;
// a read outside the block that updates it is an error.
TEST(LowerOverloads, AnInPlaceAddIsReadAfterIt) {
  auto g = lowered(R"IR(graph(%x : Tensor, %n : Tensor):
  %one : int = prim::Constant[value=1]()
  %before : Tensor = aten::mul(%x, %n)
  %u : Tensor = aten::add_(%n, %one, %one)
  %after : Tensor = aten::mul(%x, %n)
  return (%before, %after)
)IR", "lower-overloads");
  EXPECT_FILECHECK(printIR(*g), R"(CHECK: %before : Tensor = aten::mul(%x, %n)
CHECK: %[[N:.*]] : Tensor = aten::add(%n, %one, %one)
CHECK: %after : Tensor = aten::mul(%x, %[[N]])
CHECK-NOT: aten::add_)");
  std::string e = errorOf([&] {
    lowered(R"IR(graph(%x : Tensor, %n : Tensor, %c : bool):
  %one : int = prim::Constant[value=1]()
   = prim::If(%c)
    block0():
      %u : Tensor = aten::add_(%n, %one, %one) # model.py:5:8
      -> ()
    block1():
      -> ()
  %after : Tensor = aten::mul(%x, %n)
  return (%after)
)IR", "lower-overloads");
  });
  EXPECT_NE(e.find("aten::add_ updates %n in place, and it is read outside the loop or if that updates it"),
            std::string::npos) << e;
}

// A random op inside loops draws new numbers in every iteration, as PyTorch's: its stream numbers the
// iteration of every enclosing loop, so no two iterations of two nested loops repeat a draw.
TEST(LowerOverloads, ARandomOpInLoopsDrawsAStreamOfItsOwnEachIteration) {
  auto g = parseIR(R"IR(graph(%x : Float(2, 3), %n : int, %m : int):
  %none : NoneType = prim::Constant()
  %yes : bool = prim::Constant[value=1]()
  %zero : int = prim::Constant[value=0]()
  %empty : Tensor[] = prim::ListConstruct()
  %outs : Tensor[] = prim::Loop(%n, %yes, %empty)
    block0(%i : int, %acc : Tensor[]):
      %inner : Tensor[] = prim::Loop(%m, %yes, %acc)
        block0(%j : int, %acc2 : Tensor[]):
          %r : Tensor = aten::rand_like(%x, %none, %none, %none, %none, %none)
          %more : Tensor[] = prim::ListConstruct(%r)
          %next : Tensor[] = aten::add(%acc2, %more)
          -> (%yes, %next)
      -> (%yes, %inner)
  %all : Tensor = aten::stack(%outs, %zero)
  return (%all)
)IR", "ts.ir");
  lowerTorchScript(*g);
  const Tensor rng = Tensor::fromVector({2}, {77, 4}, DType::Int64);
  const Tensor all = Interpreter(*g).run({IValue(Tensor::rand({2, 3}, DType::Float32, 1)), IValue(int64_t{3}),
                                           IValue(int64_t{2}), IValue(rng)})[0].toTensor();
  ASSERT_EQ(all.sizes(), (Shape{6, 2, 3}));
  std::set<double> firsts;
  for (int64_t k = 0; k < 6; ++k) firsts.insert(all.item(k * 6));
  EXPECT_EQ(firsts.size(), 6u) << "two iterations drew the same numbers";
}

// A trace's {2} constant where an op reads a tensor (`2 ** x` casts it with aten::to first): a 0-d prim::full
// of its declared dtype, so the power is float32 here.
TEST(FoldShapeChecks, ATensorConstantReadAsATensorIsAFull) {
  auto g = parseIR(R"IR(graph(%a : Float(3)):
  %2 : Float(requires_grad=0, device=cpu) = prim::Constant[value={2}]() # t.py:1:0
  %3 : Device = prim::Constant[value="cpu"]()
  %4 : int = prim::Constant[value=6]()
  %5 : bool = prim::Constant[value=0]()
  %7 : NoneType = prim::Constant()
  %8 : Float(requires_grad=0, device=cpu) = aten::to(%2, %3, %4, %5, %5, %7)
  %9 : Float(requires_grad=0, device=cpu) = aten::detach(%8)
  %10 : Float(3) = aten::pow(%9, %a)
  return (%10)
)IR", "ts.ir");
  lowerTorchScript(*g);
  EXPECT_FILECHECK(printIR(*g), "CHECK: prim::full\nCHECK: aten::pow");
  const Tensor a = Tensor::fromVector({3}, {0.5, -1.5, 3.0}, DType::Float32);
  const Tensor y = Interpreter(*g).run({IValue(a)})[0].toTensor();
  ASSERT_EQ(y.dtype(), DType::Float32);
  for (int64_t i = 0; i < 3; ++i) EXPECT_EQ(y.item(i), static_cast<double>(std::pow(2.0f, static_cast<float>(a.item(i))))) << i;
}

// A trace prints x + (-2.0) as a Double constant {-2}: read as the number -2.0 (its declared dtype), it
// promotes an int8 tensor to float32, as PyTorch's wrapped number does; read as the int -2 it would not.
TEST(FoldShapeChecks, ADoubleTensorConstantWrittenAsAnIntegerIsAFloat) {
  auto g = parseIR(R"IR(graph(%x : Char(3)):
  %1 : Double(requires_grad=0, device=cpu) = prim::Constant[value={-2}]() # t.py:1:0
  %2 : int = prim::Constant[value=1]() # t.py:1:0
  %3 : Float(3) = aten::add(%x, %1, %2) # t.py:1:0
  %4 : Float(3) = aten::mul(%x, %1) # t.py:1:0
  return (%3, %4)
)IR", "ts.ir");
  lowerTorchScript(*g);
  const Tensor x = Tensor::fromVector({3}, {5, -7, 100}, DType::Int8);
  const auto outs = Interpreter(*g).run({IValue(x)});
  for (size_t k = 0; k < 2; ++k) {
    const Tensor y = outs[k].toTensor();
    ASSERT_EQ(y.dtype(), DType::Float32) << k;
    for (int64_t i = 0; i < 3; ++i) EXPECT_EQ(y.item(i), k == 0 ? x.item(i) - 2.0 : x.item(i) * -2.0) << k << " " << i;
  }
}

// aten::rand_like and aten::rand draw from the graph's %rng, their streams counted with the dropouts'.
TEST(LowerOverloads, RandomOpsShareTheGraphsRngAndCountStreams) {
  auto g = lowered(R"IR(graph(%x : Tensor, %k : int):
  %none : NoneType = prim::Constant()
  %p : float = prim::Constant[value=0.5]()
  %yes : bool = prim::Constant[value=1]()
  %s : int[] = prim::ListConstruct(%k)
  %a : Tensor = aten::dropout(%x, %p, %yes)
  %r : Tensor = aten::rand_like(%a, %none, %none, %none, %none, %none)
  %q : Tensor = aten::rand(%s, %none, %none, %none, %none)
  return (%r, %q)
)IR", "lower-overloads");
  EXPECT_FILECHECK(printIR(*g), R"(CHECK: %rng : Long(2)):
CHECK: prim::philox_dropout(%x, %p, %yes, %rng,
CHECK: %r : Tensor = prim::philox_uniform(%a, %rng,
CHECK: %[[F:.*]] : Tensor = prim::full(%s,
CHECK: %q : Tensor = prim::philox_uniform(%[[F]], %rng,)");
  std::vector<int64_t> streams;
  for (const Node* n : *g->block()) {
    if (n->kind() == OpKind::PhiloxDropout) streams.push_back(*constantInt(n->input(4)));
    if (n->kind() == OpKind::PhiloxUniform) streams.push_back(*constantInt(n->input(2)));
  }
  EXPECT_EQ(streams, (std::vector<int64_t>{0, 1, 2}));
}

TEST(LowerOverloads, DropoutDrawsFromTheGraphsRngInputInTraining) {
  auto g = lowered(R"IR(graph(%x : Tensor):
  %p : float = prim::Constant[value=0.5]()
  %yes : bool = prim::Constant[value=1]()
  %no : bool = prim::Constant[value=0]()
  %a : Tensor = aten::dropout(%x, %p, %yes)
  %b : Tensor = aten::dropout(%a, %p, %no)
  %c : Tensor = aten::dropout(%b, %p, %yes)
  return (%c)
)IR", "lower-overloads");
  EXPECT_FILECHECK(printIR(*g), R"(CHECK: graph(%x : Tensor,
CHECK-NEXT: %rng : Long(2)):
CHECK: %a : Tensor = prim::philox_dropout(%x, %p, %yes, %rng, %[[S0:.*]])
CHECK-NOT: aten::dropout
CHECK: %c : Tensor = prim::philox_dropout(%a, %p, %yes, %rng, %[[S1:.*]])
)");
  const Graph& graph = *g;
  std::vector<int64_t> streams;
  for (const Node* n : *graph.block())
    if (n->kind() == OpKind::PhiloxDropout) streams.push_back(*constantInt(n->input(4)));
  EXPECT_EQ(streams, (std::vector<int64_t>{0, 1}));
}

TEST(FunctionalizeLists, AnAppendToACopyLeavesTheOriginal) {
  auto g = lowered(R"IR(graph(%x : Tensor, %y : Tensor):
  %zero : int = prim::Constant[value=0]()
  %xs : Tensor[] = prim::ListConstruct(%x)
  %copy : Tensor[] = aten::list(%xs)
  %l : Tensor[] = aten::append(%copy, %y)
  %a : Tensor = aten::stack(%xs, %zero)
  %b : Tensor = aten::stack(%copy, %zero)
  return (%a, %b)
)IR", "functionalize-lists");
  EXPECT_FILECHECK(printIR(*g), R"(CHECK: %[[NEW:.*]] : Tensor[] = prim::ListAppend(%xs, %y)
CHECK: %a : Tensor = aten::stack(%xs, %zero)
CHECK: %b : Tensor = aten::stack(%[[NEW]], %zero)
CHECK-NOT: aten::list
)");
}

// The export writes PyTorch's forms; lower-torchscript reads them back to the same computation.
TEST(ExportTorchScript, WritesPyTorchsFormsThatReadBackToTheSameValues) {
  const char* mine = R"IR(graph(%xs : Tensor[], %h.1 : Double(2, 2)):
  %true : bool = prim::Constant[value=1]()
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %f32 : int = prim::Constant[value=0]()
  %empty : Tensor[] = prim::ListConstruct()
  %n : int = aten::len(%xs)
  %short : bool = aten::lt(%n, %two)
  prim::RaiseIf[message="ValueError: two steps at least"](%short)
  %h : Tensor, %outs : Tensor[] = prim::Loop(%n, %true, %h.1, %empty)
    block0(%i : int, %h.2 : Tensor, %acc : Tensor[]):
      %x : Tensor = aten::__getitem__(%xs, %i)
      %h.3 : Tensor = aten::mul(%h.2, %x)
      %acc2 : Tensor[] = prim::ListAppend(%acc, %h.3)
      -> (%true, %h.3, %acc2)
  %more : Tensor[] = prim::ListAppend(%outs, %h)
  %s : Tensor = aten::stack(%outs, %zero)
  %t : Tensor = aten::stack(%more, %zero)
  %total : Tensor = aten::sum(%t)
  %p : Tensor = aten::softmax(%s, %one)
  %g : Tensor = aten::gelu(%p)
  %z : Tensor = aten::zeros_like(%g)
  %r : Tensor = aten::add(%g, %z, %one)
  %single : Tensor = aten::to(%r, %f32)
  return (%single, %total)
)IR";
  auto g = parseIR(mine, "mine.ir");
  exportTorchScript(*g);
  verifyOrThrow(*g, "export-torchscript");
  const std::string text = printIR(*g);
  EXPECT_FILECHECK(text, R"(CHECK: prim::If(%short)
CHECK-NEXT: block0():
CHECK-NEXT: prim::Constant[value="ValueError: two steps at least"]()
CHECK: prim::RaiseException(
CHECK: block0(%i : int, %h.2 : Tensor, %acc : Tensor[]):
CHECK: %acc2 : Tensor[] = aten::append(%acc, %h.3)
CHECK: %[[COPY:.*]] : Tensor[] = aten::list(%outs)
CHECK: %more : Tensor[] = aten::append(%[[COPY]], %h)
CHECK: %total : Tensor = aten::sum(%t, %{{.*}})
CHECK: %p : Tensor = aten::softmax(%s, %one, %{{.*}})
CHECK: %g : Tensor = aten::gelu(%p, %{{.*}})
CHECK: %z : Tensor = aten::zeros_like(%g, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}})
CHECK: %single : Tensor = aten::to(%r, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}})
CHECK: prim::TupleConstruct(%single, %total)
CHECK-NOT: prim::ListAppend
CHECK-NOT: prim::RaiseIf
)");
  auto back = parseIR(text, "exported.ir");
  lowerTorchScript(*back);
  TensorList xs;
  for (IValue& t : randomTensors(3, {2, 2}, 41)) xs.push_back(t.toTensor());
  const std::vector<IValue> in = {IValue(xs), Tensor::rand({2, 2}, DType::Float64, 50, 0.2, 1.0)};
  expectSameResults(*back, *parseIR(mine, "mine.ir"), in);
  // and the check still raises
  TensorList one = {xs[0]};
  std::string e = errorOf([&] { Interpreter(*back).run({IValue(one), in[1]}); });
  EXPECT_NE(e.find("ValueError: two steps at least"), std::string::npos) << e;
}

TEST(ExportTorchScript, AGraphjitOnlyOpIsNamedWithHowToExport) {
  auto g = parseIR(R"IR(graph(%g : Tensor, %x : Tensor, %o : Tensor):
  %y : Tensor = prim::maximum_backward(%g, %x, %o)
  return (%y)
)IR", "grad.ir");
  std::string e = errorOf([&] { exportTorchScript(*g); });
  EXPECT_NE(e.find("grad.ir:2:17: prim::maximum_backward has no TorchScript form"), std::string::npos) << e;
  EXPECT_NE(e.find("before the executors' passes"), std::string::npos) << e;
}

TEST(FoldShapeChecks, AnInPlaceBranchOnAConstantIsDropped) {
  const char* ts = R"IR(graph(%x : Double(2, 3)):
  %no : bool = prim::Constant[value=0]()
  %slope : float = prim::Constant[value=0.2]()
  %r : Tensor = prim::If(%no)
    block0():
      %a : Tensor = aten::leaky_relu_(%x, %slope)
      -> (%a)
    block1():
      %b : Tensor = aten::leaky_relu(%x, %slope)
      -> (%b)
  return (%r)
)IR";
  auto g = lowered(ts, "lower-torchscript");
  EXPECT_FILECHECK(printIR(*g), "CHECK-NOT: prim::If\nCHECK-NOT: leaky_relu_\nCHECK: aten::leaky_relu(%x, %slope)");
  std::string live = ts;
  live.replace(live.find("value=0]"), 8, "value=1]");
  std::string e = errorOf([&] { lowered(live, "lower-torchscript"); });
  EXPECT_NE(e.find("aten::leaky_relu_ is TorchScript's form"), std::string::npos) << e;
  EXPECT_NE(e.find("inplace=False"), std::string::npos) << e;
}

TEST(LowerTorchScript, LeavesGraphjitsOwnIRAlone) {
  const char* ir = R"IR(graph(%x : Float(2, 3)):
  %y : Tensor = aten::tanh(%x)
  return (%y)
)IR";
  auto g = lowered(ir, "lower-torchscript", /*expectChange=*/false);
  EXPECT_EQ(printIR(*g), printIR(*parseIR(ir, "ts.ir")));
}

TEST(LowerTorchScript, OtherPassesRefuseTorchScriptAndSayHowToLowerIt) {
  auto g = parseIR(R"IR(graph(%h.1 : (Tensor, Tensor)):
  %a : Tensor, %b : Tensor = prim::TupleUnpack(%h.1)
  return (%a)
)IR", "ts.ir");
  std::string e = errorOf([&] { runPasses(*g, std::vector<std::string>{"dce"}); });
  EXPECT_NE(e.find("pass dce cannot run this graph: %h.1 is of TorchScript's type (Tensor, Tensor)"), std::string::npos)
      << e;
  EXPECT_NE(e.find("lower-torchscript"), std::string::npos) << e;
  runPasses(*g, std::vector<std::string>{"lower-torchscript", "dce"});
  EXPECT_EQ(g->inputs().size(), 2u);
  EXPECT_EQ(g->inputs()[0]->name(), "h_0");
}

TEST(LowerTorchScript, WhatCannotBeLoweredIsNamedWithItsPosition) {
  std::string e = errorOf([] {
    lowered(R"IR(graph(%x : Tensor, %d : Device):
  %y : Tensor = aten::tanh(%x)
  return (%y, %d)
)IR", "lower-torchscript");
  });
  EXPECT_NE(e.find("lower-torchscript cannot lower this graph: %d is of TorchScript's type Device"), std::string::npos)
      << e;
}

TEST(BaseName, DropsANumericSuffixOnly) {
  EXPECT_EQ(baseName("input.1"), "input");
  EXPECT_EQ(baseName("x"), "x");
  EXPECT_EQ(baseName("fc1.weight"), "fc1.weight");
  EXPECT_EQ(baseName("layers.0.weight"), "layers.0.weight");
  EXPECT_EQ(baseName("a.b.12"), "a.b");
  EXPECT_EQ(baseName("7"), "7");
}

}  // namespace
}  // namespace gj
