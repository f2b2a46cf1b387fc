// Golden tests, one behaviour each: parse IR, run one pass, FileCheck the printed result, and check
// that the interpreter computes the same before and after on random inputs.
#include "executors/interpreter.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "passes/batch_mm.h"
#include "passes/pass_manager.h"
#include "passes/canonicalize.h"
#include "passes/contiguous_operands.h"
#include "passes/create_autodiff_subgraphs.h"
#include "passes/requires_grad.h"
#include "passes/unroll_loops.h"
#include "models/lstm.h"
#include "tests/support/filecheck.h"
#include "tests/support/reference.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <sstream>

namespace gj {
namespace {

// Random values for the graph's inputs: tensors from their (complete) types; ints from `ints` in order.
std::vector<IValue> randomFor(const Graph& g, uint64_t seed, std::vector<int64_t> ints = {}) {
  std::vector<IValue> in;
  size_t nextInt = 0;
  for (const Value* v : g.inputs()) {
    const Type& t = v->type();
    if (t.kind == TypeKind::Int) {
      in.push_back(ints.at(nextInt++));
    } else {
      in.push_back(Tensor::rand(*t.sizes, t.dtype.value_or(DType::Float64), seed++, 0.1, 1.0));
    }
  }
  return in;
}

// Runs `pass` on the IR, checks the printed result, and compares interpreter results before and after.
std::unique_ptr<Graph> checkPass(const std::string& ir, const std::string& pass, const std::string& checks,
                                 bool expectChange = true, std::vector<int64_t> ints = {}) {
  auto before = parseIR(ir);
  auto after = before->clone();
  PassOptions opts;
  opts.verifyEach = true;
  auto rec = runPasses(*after, std::vector<std::string>{pass}, opts);
  EXPECT_EQ(rec[0].changed, expectChange) << pass;
  std::string text = printIR(*after);
  EXPECT_FILECHECK(text, checks);
  auto in = randomFor(*before, 7, ints);
  auto a = Interpreter(*before).run(in);
  auto b = Interpreter(*after).run(in);
  EXPECT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size() && i < b.size(); ++i)
    if (a[i].isTensor()) {
      EXPECT_LE(test::relError(b[i].toTensor(), a[i].toTensor()), 1e-12) << "output " << i;
    }
  return after;
}

TEST(FileCheck, MatchesInOrderAndRejectsWhatIsAbsent) {
  std::string text = "%a = tanh(%x)\n%b = sigmoid(%a)\nreturn (%b)\n";
  EXPECT_TRUE(test::fileCheck(text, "CHECK: %[[A:.*]] = tanh\nCHECK-NEXT: sigmoid(%[[A]])\nCHECK-NOT: relu"));
  EXPECT_FALSE(test::fileCheck(text, "CHECK: sigmoid\nCHECK: tanh"));        // order matters
  EXPECT_FALSE(test::fileCheck(text, "CHECK: tanh\nCHECK-NEXT: return"));    // not the next line
  EXPECT_FALSE(test::fileCheck(text, "CHECK: tanh\nCHECK-NOT: sigmoid\nCHECK: return"));
  EXPECT_FALSE(test::fileCheck(text, "CHECK: %[[A:.*]] = tanh\nCHECK: relu(%[[A]])"));
  EXPECT_TRUE(test::fileCheck(text, "CHECK: %b = {{[a-z]+}}(%a)"));
  EXPECT_THROW(test::fileCheck(text, "CHECK-COUNT: tanh"), std::runtime_error);
}

TEST(DeadCodeElimination, RemovesUnusedChain) {
  checkPass(R"IR(graph(%x : Double(4, 8)):
  %a : Tensor = aten::sigmoid(%x)
  %b : Tensor = aten::tanh(%a)
  %c : Tensor = aten::exp(%b)
  return (%a)
)IR",
            "dce", R"(
    CHECK: %[[A:.*]] : Tensor = aten::sigmoid(%x)
    CHECK-NOT: aten::tanh
    CHECK-NOT: aten::exp
    CHECK: return (%[[A]])
  )");
}

TEST(DeadCodeElimination, RemovesUnusedLoop) {
  checkPass(R"IR(graph(%x : Double(3)):
  %n : int = prim::Constant[value=4]()
  %t : bool = prim::Constant[value=1]()
  %y : Tensor = prim::Loop(%n, %t, %x)
    block0(%i : int, %a : Tensor):
      %b : Tensor = aten::tanh(%a)
      -> (%t, %b)
  return (%x)
)IR",
            "dce", "CHECK-NOT: prim::Loop\nCHECK: return (%x)");
}

TEST(CommonSubexpressionElimination, MergesIdenticalNodes) {
  checkPass(R"IR(graph(%x : Double(3)):
  %a : Tensor = aten::tanh(%x)
  %b : Tensor = aten::tanh(%x)
  %c : Tensor = aten::mul(%a, %b)
  return (%c)
)IR",
            "cse", R"(
    CHECK: %[[A:.*]] : Tensor = aten::tanh(%x)
    CHECK-NOT: aten::tanh
    CHECK: aten::mul(%[[A]], %[[A]])
  )");
}

// 0.0 and -0.0 compare equal but are different constants: x / 0.0 is +inf where x / -0.0 is -inf.
TEST(CommonSubexpressionElimination, KeepsZeroAndNegativeZeroApart) {
  checkPass(R"IR(graph(%x : Double(3)):
  %z : float = prim::Constant[value=0.]()
  %m : float = prim::Constant[value=-0.]()
  %p : Tensor = aten::div(%x, %z)
  %q : Tensor = aten::div(%x, %m)
  %a : Tensor = aten::tanh(%p)
  %b : Tensor = aten::tanh(%q)
  %one : int = prim::Constant[value=1]()
  %c : Tensor = aten::sub(%a, %b, %one)
  return (%c)
)IR",
            "cse", R"(
    CHECK: prim::Constant[value=0.]
    CHECK: prim::Constant[value=-0.]
    CHECK: aten::div(%x, %z)
    CHECK: aten::div(%x, %m)
  )",
            /*expectChange=*/false);
  // The same graphs, one with the constants swapped, are not one graph to the kernel caches either.
  auto g = parseIR("graph(%x : Double(3)):\n  %z : float = prim::Constant[value=0.]()\n"
                   "  %p : Tensor = aten::div(%x, %z)\n  return (%p)\n");
  auto h = parseIR("graph(%x : Double(3)):\n  %z : float = prim::Constant[value=-0.]()\n"
                   "  %p : Tensor = aten::div(%x, %z)\n  return (%p)\n");
  EXPECT_FALSE(structurallyEqual(*g, *h));
  EXPECT_TRUE(structurallyEqual(*g, *g->clone()));
}

TEST(CommonSubexpressionElimination, LoopBodyReusesAnOuterValue) {
  checkPass(R"IR(graph(%x : Double(3), %w : Double(3)):
  %n : int = prim::Constant[value=2]()
  %t : bool = prim::Constant[value=1]()
  %o : Tensor = aten::exp(%w)
  %y : Tensor = prim::Loop(%n, %t, %x)
    block0(%i : int, %a : Tensor):
      %e : Tensor = aten::exp(%w)
      %b : Tensor = aten::mul(%a, %e)
      -> (%t, %b)
  %z : Tensor = aten::add(%y, %o, %n)
  return (%z)
)IR",
            "cse", R"(
    CHECK: %o : Tensor = aten::exp(%w)
    CHECK: block0
    CHECK-NOT: aten::exp
    CHECK: aten::mul(%a, %o)
  )");
}

TEST(ConstantPropagation, FoldsStaticSizesAndLengths) {
  checkPass(R"IR(graph(%x : Double(7, 3)):
  %zero : int = prim::Constant[value=0]()
  %n : int = aten::size(%x, %zero)
  %l : Tensor[] = aten::unbind(%x, %zero)
  %m : int = aten::len(%l)
  %s : int = aten::add(%n, %m)
  %y : Tensor = aten::mul(%x, %s)
  return (%y)
)IR",
            "constant-propagation", R"(
    CHECK: %[[S:.*]] : int = prim::Constant[value=14]()
    CHECK-NOT: aten::size
    CHECK: aten::mul(%x, %[[S]])
  )");
}

// A known dtype folds to its code, and aten::to by a constant code types its result.
TEST(ConstantPropagation, FoldsTheDTypeOfATypedTensor) {
  checkPass(R"IR(graph(%x : Double(3), %f : Float(3)):
  %d : int = prim::dtype(%x)
  %y : Tensor = aten::to(%f, %d)
  return (%y)
)IR",
            "constant-propagation", R"(
    CHECK: %[[D:.*]] : int = prim::Constant[value=1]()
    CHECK-NOT: prim::dtype
    CHECK: aten::to(%f, %[[D]])
  )");
  checkPass(R"IR(graph(%f : Float(3)):
  %d : int = prim::Constant[value=1]()
  %y : Tensor = aten::to(%f, %d)
  return (%y)
)IR",
            "shape-propagation", "CHECK: Double(3) = aten::to(%f, %d)");
}

TEST(ConstantPropagation, InlinesTheTakenBranchOfAConstantIf) {
  checkPass(R"IR(graph(%x : Double(3)):
  %c : bool = prim::Constant[value=0]()
  %y : Tensor = prim::If(%c)
    block0():
      %a : Tensor = aten::tanh(%x)
      -> (%a)
    block1():
      %b : Tensor = aten::sigmoid(%x)
      -> (%b)
  return (%y)
)IR",
            "constant-propagation", "CHECK-NOT: prim::If\nCHECK-NOT: aten::tanh\nCHECK: aten::sigmoid(%x)");
}

TEST(Canonicalize, HoistsSortsAndDeduplicatesConstants) {
  checkPass(R"IR(graph(%x : Double(3)):
  %a : Tensor = aten::tanh(%x)
  %two : int = prim::Constant[value=2]()
  %b : Tensor = aten::mul(%a, %two)
  %one : int = prim::Constant[value=1]()
  %two.1 : int = prim::Constant[value=2]()
  %c : Tensor = aten::add(%b, %two.1, %one)
  return (%c)
)IR",
            "canonicalize", R"(
    CHECK: graph(%x
    CHECK-NEXT: %0 : int = prim::Constant[value=1]()
    CHECK-NEXT: %1 : int = prim::Constant[value=2]()
    CHECK-NEXT: %2 : Tensor = aten::tanh(%x)
    CHECK-NEXT: %3 : Tensor = aten::mul(%2, %1)
    CHECK-NEXT: %c : Tensor = aten::add(%3, %1, %0)
  )");
}

TEST(Canonicalize, EqualGraphsPrintEqual) {
  auto a = parseIR("graph(%x : Double(3)):\n  %p : Tensor = aten::tanh(%x)\n  return (%p)\n");
  auto b = parseIR("graph(%x : Double(3)):\n  %q.7 : Tensor = aten::tanh(%x)\n  return (%q.7)\n");
  a->outputs()[0]->setName("");
  b->outputs()[0]->setName("");
  canonicalize(*a);
  canonicalize(*b);
  EXPECT_EQ(printIR(*a), printIR(*b));
}

TEST(Peephole, RemovesIdentityArithmeticAndDoubleTranspose) {
  checkPass(R"IR(graph(%x : Double(3, 4)):
  %one : int = prim::Constant[value=1]()
  %zero : float = prim::Constant[value=0.]()
  %a : Tensor = aten::mul(%x, %one)
  %b : Tensor = aten::add(%a, %zero, %one)
  %c : Tensor = aten::t(%b)
  %d : Tensor = aten::t(%c)
  %e : Tensor = aten::tanh(%d)
  return (%e)
)IR",
            "peephole", "CHECK-NOT: aten::mul\nCHECK-NOT: aten::add\nCHECK: aten::tanh(%x)");
}

// x * 1.0, x / 1 and x + 0 change a long or bool tensor's dtype: they stay (the host kernels reject such
// tensors with an error; without the node the graph would return x as it is).
TEST(Peephole, KeepsIdentityArithmeticThatPromotesTheDType) {
  auto g = parseIR(R"IR(graph(%x : Long(3), %y : Bool(3), %f : Float(3)):
  %one : int = prim::Constant[value=1]()
  %onef : float = prim::Constant[value=1.]()
  %zero : int = prim::Constant[value=0]()
  %a : Tensor = aten::mul(%x, %onef)
  %b : Tensor = aten::div(%x, %one)
  %c : Tensor = aten::add(%y, %zero, %one)
  %d : Tensor = aten::mul(%x, %one)
  %e : Tensor = aten::div(%f, %one)
  return (%a, %b, %c, %d, %e)
)IR");
  auto rec = runPasses(*g, std::vector<std::string>{"peephole"}, PassOptions{});
  EXPECT_TRUE(rec[0].changed);
  EXPECT_FILECHECK(printIR(*g), R"(
    CHECK: aten::mul(%x, %onef)
    CHECK: aten::div(%x, %one)
    CHECK: aten::add(%y, %zero, %one)
    CHECK-NOT: aten::mul
    CHECK-NOT: aten::div
    CHECK: return (%a, %b, %c, %x, %f)
  )");
}

// A clamp with a None bound (torch.clamp(x, max=...)) has one bound, or none.
TEST(Peephole, OpensAClampWithANoneBound) {
  checkPass(R"IR(graph(%x : Double(3, 4)):
  %none : NoneType = prim::Constant()
  %lo : float = prim::Constant[value=0.3]()
  %hi : float = prim::Constant[value=0.6]()
  %a : Tensor = aten::clamp(%x, %none, %hi)
  %b : Tensor = aten::clamp(%x, %lo, %none)
  %c : Tensor = aten::clamp(%x, %none, %none)
  %d : Tensor = aten::clamp(%x, %lo, %hi)
  return (%a, %b, %c, %d)
)IR",
            "peephole", R"(
    CHECK: aten::clamp_max(%x, %hi)
    CHECK: aten::clamp_min(%x, %lo)
    CHECK: aten::clamp(%x, %lo, %hi)
    CHECK: return (%{{.*}}, %{{.*}}, %x, %d)
  )");
}

TEST(Peephole, ResolvesListAccess) {
  checkPass(R"IR(graph(%x : Double(4, 3), %y : Double(3)):
  %zero : int = prim::Constant[value=0]()
  %two : int = prim::Constant[value=2]()
  %seq : Tensor[] = aten::unbind(%x, %zero)
  %r : Tensor = aten::__getitem__(%seq, %two)
  %l0 : Tensor[] = prim::ListConstruct(%r)
  %l1 : Tensor[] = prim::ListAppend(%l0, %y)
  %s : Tensor = aten::stack(%l1, %zero)
  return (%s)
)IR",
            "peephole", R"(
    CHECK: %[[R:.*]] : Tensor = aten::select(%x, %zero, %two)
    CHECK: %[[L:.*]] : Tensor[] = prim::ListConstruct(%[[R]], %y)
    CHECK-NOT: prim::ListAppend
    CHECK: aten::stack(%[[L]], %zero)
  )");
}

TEST(ShapePropagation, ComputesSizesThroughGemmAndChunk) {
  checkPass(R"IR(graph(%x : Double(3, 4), %w : Double(8, 4)):
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %wt : Tensor = aten::t(%w)
  %y : Tensor = aten::mm(%x, %wt)
  %c : Tensor[] = aten::chunk(%y, %two, %one)
  %a : Tensor, %b : Tensor = prim::ListUnpack(%c)
  %s : Tensor = aten::sum(%a)
  return (%b, %s)
)IR",
            "shape-propagation", R"(
    CHECK: %wt : Double(4, 8) = aten::t(%w)
    CHECK: %y : Double(3, 8) = aten::mm(%x, %wt)
    CHECK: %a : Double(3, 4), %b : Double(3, 4) = prim::ListUnpack(%c)
    CHECK: %s : Double() = aten::sum(%a)
  )");
}

TEST(ShapePropagation, LoopCarriedSizesMergeToAFixedPoint) {
  checkPass(R"IR(graph(%x : Double(2, 3), %n : int):
  %t : bool = prim::Constant[value=1]()
  %zero : int = prim::Constant[value=0]()
  %y : Tensor = prim::Loop(%n, %t, %x)
    block0(%i : int, %a : Tensor):
      %l : Tensor[] = prim::ListConstruct(%a, %a)
      %b : Tensor = aten::cat(%l, %zero)
      -> (%t, %b)
  return (%y)
)IR",
            "shape-propagation", R"(
    CHECK: %y : Double(*, 3) = prim::Loop
    CHECK: block0(%i : int, %a : Double(*, 3))
  )",
            true, {2});
}

TEST(Inline, ReplacesADifferentiableGraphByItsBody) {
  checkPass(R"IR(graph(%x : Double(3)):
  %y : Tensor = prim::DifferentiableGraph_0(%x)
  return (%y)
with prim::DifferentiableGraph_0 = graph(%a : Tensor):
  %b : Tensor = aten::tanh(%a)
  return (%b)
)IR",
            "inline", "CHECK-NOT: DifferentiableGraph\nCHECK: aten::tanh(%x)\nCHECK: return");
}

TEST(UnrollLoops, UnrollsAConstantTripCountCompletely) {
  checkPass(R"IR(graph(%x : Double(3)):
  %n : int = prim::Constant[value=3]()
  %t : bool = prim::Constant[value=1]()
  %y : Tensor = prim::Loop(%n, %t, %x)
    block0(%i : int, %a : Tensor):
      %b : Tensor = aten::tanh(%a)
      -> (%t, %b)
  return (%y)
)IR",
            "unroll-loops", R"(
    CHECK-NOT: prim::Loop
    CHECK: %[[B1:.*]] : Tensor = aten::tanh(%x)
    CHECK: %[[B2:.*]] : Tensor = aten::tanh(%[[B1]])
    CHECK: %[[B3:.*]] : Tensor = aten::tanh(%[[B2]])
    CHECK: return (%[[B3]])
  )");
}

// A loop over more steps than full unrolling takes (eleven, read from a size, against a limit of eight) is
// unrolled by a factor: a main loop of eight copies, then the remainder.
TEST(UnrollLoops, UnrollsALoopOverTheFullLimitByAFactor) {
  const char* ir = R"IR(graph(%x : Double(3), %s : Double(11, 2)):
  %zero : int = prim::Constant[value=0]()
  %t : bool = prim::Constant[value=1]()
  %n : int = aten::size(%s, %zero)
  %y : Tensor = prim::Loop(%n, %t, %x)
    block0(%i : int, %a : Tensor):
      %b : Tensor = aten::tanh(%a)
      -> (%t, %b)
  return (%y)
)IR";
  auto after = checkPass(ir, "unroll-loops<full=8;by=8>", R"(
    CHECK: aten::floordiv(%n
    CHECK: aten::remainder(%n
    CHECK: prim::Loop
    CHECK: aten::tanh
    CHECK: prim::Loop
  )");
  std::string text = printIR(*after);
  size_t tanhs = 0;
  for (size_t p = text.find("aten::tanh"); p != std::string::npos; p = text.find("aten::tanh", p + 1)) ++tanhs;
  EXPECT_EQ(tanhs, 9u);  // 8 copies in the main loop, 1 in the remainder loop
}

// A stacked RNN's loops: the second runs over the unbound stack of the first's results, a trip count known
// only once the first is unrolled and its results' types propagated. One walk of the pass unrolls both.
TEST(UnrollLoops, UnrollsAChainOfLoopsInOneWalk) {
  auto after = checkPass(R"IR(graph(%x : Double(4, 3)):
  %zero : int = prim::Constant[value=0]()
  %t : bool = prim::Constant[value=1]()
  %xs : Tensor[] = aten::unbind(%x, %zero)
  %n : int = aten::len(%xs)
  %empty : Tensor[] = prim::ListConstruct()
  %l1 : Tensor[] = prim::Loop(%n, %t, %empty)
    block0(%i : int, %acc : Tensor[]):
      %xi : Tensor = aten::__getitem__(%xs, %i)
      %h : Tensor = aten::tanh(%xi)
      %acc2 : Tensor[] = prim::ListAppend(%acc, %h)
      -> (%t, %acc2)
  %s1 : Tensor = aten::stack(%l1, %zero)
  %hs : Tensor[] = aten::unbind(%s1, %zero)
  %m : int = aten::len(%hs)
  %l2 : Tensor[] = prim::Loop(%m, %t, %empty)
    block0(%j : int, %acc3 : Tensor[]):
      %hj : Tensor = aten::__getitem__(%hs, %j)
      %y : Tensor = aten::sigmoid(%hj)
      %acc4 : Tensor[] = prim::ListAppend(%acc3, %y)
      -> (%t, %acc4)
  %s2 : Tensor = aten::stack(%l2, %zero)
  return (%s2)
)IR",
                         "unroll-loops", R"(
    CHECK: %s1 : Double(4, 3) = aten::stack
    CHECK-NOT: prim::Loop
    CHECK: aten::sigmoid
  )");
  std::string text = printIR(*after);
  size_t sigmoids = 0;
  for (size_t p = text.find("aten::sigmoid"); p != std::string::npos; p = text.find("aten::sigmoid", p + 1)) ++sigmoids;
  EXPECT_EQ(sigmoids, 4u);
}

TEST(LoopInvariantCodeMotion, HoistsTheTransposedWeight) {
  checkPass(R"IR(graph(%x : Double(2, 3), %w : Double(3, 3)):
  %n : int = prim::Constant[value=3]()
  %t : bool = prim::Constant[value=1]()
  %y : Tensor = prim::Loop(%n, %t, %x)
    block0(%i : int, %a : Tensor):
      %wt : Tensor = aten::t(%w)
      %b : Tensor = aten::mm(%a, %wt)
      -> (%t, %b)
  return (%y)
)IR",
            "licm", R"(
    CHECK: %wt : Tensor = aten::t(%w)
    CHECK-NEXT: prim::Loop
    CHECK: aten::mm(%a, %wt)
  )");
}

TEST(BatchMM, MergesIndependentMatmulsSharingTheRightOperand) {
  checkPass(R"IR(graph(%x1 : Double(2, 4), %x2 : Double(3, 4), %w : Double(4, 5)):
  %a : Double(2, 5) = aten::mm(%x1, %w)
  %b : Double(3, 5) = aten::mm(%x2, %w)
  %one : int = prim::Constant[value=1]()
  %c : Tensor = aten::sum(%a)
  %d : Tensor = aten::add(%b, %c, %one)
  return (%a, %d)
)IR",
            "batch-mm", R"(
    CHECK: aten::cat
    CHECK: %[[P:.*]] : Tensor = aten::mm({{.*}}, %w)
    CHECK: aten::split_with_sizes(%[[P]]
    CHECK-NOT: aten::mm
  )");
}

// Products sharing their left operand merge into one product of the right operands concatenated only
// where that operand has rows enough to pay for copying them on every run: not at batch 1, where the copy
// of the weights costs as much as the products (a kept loop's step ran it every step).
TEST(BatchMM, MatmulsSharingTheLeftOperandMergeOnlyWithEnoughRows) {
  const std::string ir = R"IR(graph(%g : Double(ROWS, 4), %w : Double(4, 5), %v : Double(4, 3)):
  %a : Double(ROWS, 5) = aten::mm(%g, %w)
  %b : Double(ROWS, 3) = aten::mm(%g, %v)
  return (%a, %b)
)IR";
  auto withRows = [&](int64_t rows) {
    std::string text = ir;
    for (size_t at; (at = text.find("ROWS")) != std::string::npos;) text.replace(at, 4, std::to_string(rows));
    return text;
  };
  checkPass(withRows(kMinRowsToConcatenateRightOperands), "batch-mm", R"(
    CHECK: aten::cat
    CHECK: %[[P:.*]] : Tensor = aten::mm(%g, {{.*}})
    CHECK: aten::split_with_sizes(%[[P]]
    CHECK-NOT: aten::mm
  )");
  checkPass(withRows(1), "batch-mm", R"(
    CHECK-NOT: aten::cat
    CHECK: %a : Double(1, 5) = aten::mm(%g, %w)
    CHECK: %b : Double(1, 3) = aten::mm(%g, %v)
  )", /*expectChange=*/false);
}

// Merging %a with %e hoists %d above %t, so %c (after the merge) depends on %d although it came first
// in the block: the second merge must see that and leave %c and %d apart (found by tests/difftest).
TEST(BatchMM, AMergeThatMovesNodesDoesNotLeadToAMergeOfDependentMatmuls) {
  auto after = checkPass(R"IR(graph(%x : Double(3, 2), %y : Double(3, 2), %w : Double(2, 2), %v : Double(2, 2)):
  %a : Double(3, 2) = aten::mm(%x, %w)
  %t : Double(3, 2) = aten::tanh(%a)
  %c : Double(3, 2) = aten::mm(%t, %v)
  %d : Double(3, 2) = aten::mm(%y, %v)
  %e : Double(3, 2) = aten::mm(%d, %w)
  %one : int = prim::Constant[value=1]()
  %s : Double(3, 2) = aten::mul(%c, %e)
  return (%s)
)IR",
                         "batch-mm", R"(
    CHECK: %d : Double(3, 2) = aten::mm(%y, %v)
    CHECK: aten::mm({{.*}}, %w)
    CHECK: aten::tanh
    CHECK: %c : Double(3, 2) = aten::mm(%t, %v)
  )");
  EXPECT_TRUE(verify(*after).empty());
}

TEST(BatchMM, TurnsAnAddOfMatmulsIntoOneMatmul) {
  checkPass(R"IR(graph(%x : Double(2, 4), %h : Double(2, 3), %wi : Double(4, 5), %wh : Double(3, 5)):
  %one : int = prim::Constant[value=1]()
  %a : Double(2, 5) = aten::mm(%x, %wi)
  %b : Double(2, 5) = aten::mm(%h, %wh)
  %c : Tensor = aten::add(%a, %b, %one)
  return (%c)
)IR",
            "batch-mm", R"(
    CHECK: %[[L:.*]] : Tensor = aten::cat({{.*}}, %{{.*}})
    CHECK: %[[R:.*]] : Tensor = aten::cat
    CHECK: %c : Tensor = aten::mm(%[[L]], %[[R]])
    CHECK-NOT: aten::add
  )");
}

// A backward's weight gradient over three steps: %w = t(h1) g1 + t(h2) g2 + t(h3) g3, a chain of adds.
const char* kWeightGradientSum = R"IR(  %one : int = prim::Constant[value=1]()
  %t1 : Double(3, 2) = aten::t(%h1)
  %m1 : Double(3, 4) = aten::mm(%t1, %g1)
  %t2 : Double(3, 2) = aten::t(%h2)
  %m2 : Double(3, 4) = aten::mm(%t2, %g2)
  %s : Double(3, 4) = aten::add(%m1, %m2, %one)
  %t3 : Double(3, 2) = aten::t(%h3)
  %m3 : Double(3, 4) = aten::mm(%t3, %g3)
  %w : Double(3, 4) = aten::add(%s, %m3, %one)
)IR";

// A backward's weight gradient: a chain of adds over per-step products t(h_i) x g_i becomes one product
// of the steps concatenated (one copy each side, no nested cats).
TEST(BatchMM, ASumOfTransposedProductsBecomesOneProduct) {
  auto after = checkPass(std::string(R"IR(graph(%h1 : Double(2, 3), %h2 : Double(2, 3), %h3 : Double(2, 3),
      %g1 : Double(2, 4), %g2 : Double(2, 4), %g3 : Double(2, 4)):
)IR") + kWeightGradientSum + "  return (%w)\n",
                         "batch-mm", R"(
    CHECK: prim::ListConstruct(%h1, %h2, %h3)
    CHECK: %[[X:.*]] : Tensor = aten::cat
    CHECK: %[[XT:.*]] : Tensor = aten::t(%[[X]])
    CHECK: prim::ListConstruct(%g1, %g2, %g3)
    CHECK: %[[G:.*]] : Tensor = aten::cat
    CHECK: %w : Double(3, 4) = aten::mm(%[[XT]], %[[G]])
    CHECK-NOT: aten::add
  )");
  size_t mms = 0;
  for (const Node* n : *after->block()) mms += n->kind() == OpKind::Mm;
  EXPECT_EQ(mms, 1u);
}

// The LSTM backward also stacks the per-step gate gradients (for the input's gradient), after the sum: the
// product takes the terms in the stack's order and a view of the stack, recreated before it, instead of a
// second copy of the same tensors; the later user reads the recreated stack.
TEST(BatchMM, ASumOfProductsReusesAStackOfItsRightOperands) {
  auto after = checkPass(std::string(R"IR(graph(%h1 : Double(2, 3), %h2 : Double(2, 3), %h3 : Double(2, 3),
      %g1 : Double(2, 4), %g2 : Double(2, 4), %g3 : Double(2, 4), %wi : Double(4, 5)):
)IR") + kWeightGradientSum + R"IR(  %zero : int = prim::Constant[value=0]()
  %gs : Tensor[] = prim::ListConstruct(%g3, %g2, %g1)
  %st : Double(3, 2, 4) = aten::stack(%gs, %zero)
  %dx : Tensor = aten::matmul(%st, %wi)
  return (%w, %dx)
)IR",
                         "batch-mm", R"(
    CHECK: %[[GL:.*]] : Tensor[] = prim::ListConstruct(%g3, %g2, %g1)
    CHECK: %[[ST:.*]] : Double(3, 2, 4) = aten::stack(%[[GL]]
    CHECK: %[[G:.*]] : Tensor = aten::reshape(%[[ST]]
    CHECK: prim::ListConstruct(%h3, %h2, %h1)
    CHECK: %[[X:.*]] : Tensor = aten::cat
    CHECK: %[[XT:.*]] : Tensor = aten::t(%[[X]])
    CHECK: %w : Double(3, 4) = aten::mm(%[[XT]], %[[G]])
    CHECK: aten::matmul(%[[ST]], %wi)
  )");
  size_t cats = 0;
  for (const Node* n : *after->block()) cats += n->kind() == OpKind::Cat && !n->output()->uses().empty();
  EXPECT_EQ(cats, 1u);
  EXPECT_TRUE(verify(*after).empty());
}

// "%x1, %x2, ..., %xN" for the values x1..xN of a list in the IR.
std::string valueList(const std::string& stem, int from, int to) {
  std::string s;
  for (int i = from; i <= to; ++i) s += (i > from ? ", %" : "%") + stem + std::to_string(i);
  return s;
}

size_t countOf(const Graph& g, OpKind k) {
  size_t n = 0;
  for (const Node* node : *g.block()) n += node->kind() == k && !node->output()->uses().empty();
  return n;
}

// Ten products of 2048 x 512 (1 Mi elements each, 10 Mi in all) sharing %w are more than one batch may
// hold (kBatchChunkElements, 4 Mi): they become three products of 3, 4 and 3 (the fewest within the
// limit, evenly filled), each made just before its own first use, after the previous chunk's users.
TEST(BatchMM, ALargeBatchIsMadeInEvenChunksEachBeforeItsFirstUse) {
  static_assert(kBatchChunkElements == 4 * 1024 * 1024, "the sizes below assume chunks of 4 Mi elements");
  std::string ir = "graph(";
  for (int i = 1; i <= 10; ++i) ir += "%x" + std::to_string(i) + " : Double(2048, 8), ";
  ir += "%w : Double(8, 512)):\n  %one : int = prim::Constant[value=1]()\n";
  ir += "  %a1 : Double(2048, 512) = aten::mm(%x1, %w)\n  %y1 : Double(2048, 512) = aten::tanh(%a1)\n";
  for (int i = 2; i <= 10; ++i)
    ir += fmt::format("  %a{0} : Double(2048, 512) = aten::mm(%x{0}, %w)\n"
                      "  %y{0} : Double(2048, 512) = aten::add(%y{1}, %a{0}, %one)\n",
                      i, i - 1);
  ir += "  return (%y10)\n";
  auto after = checkPass(ir, "batch-mm", "CHECK: prim::ListConstruct(" + valueList("x", 1, 3) + R"()
    CHECK: aten::mm({{.*}}, %w)
    CHECK: %y3 : Double(2048, 512) = aten::add
    CHECK: prim::ListConstruct()" + valueList("x", 4, 7) + R"()
    CHECK: aten::mm({{.*}}, %w)
    CHECK: %y7 : Double(2048, 512) = aten::add
    CHECK: prim::ListConstruct()" + valueList("x", 8, 10) + R"()
    CHECK: aten::mm({{.*}}, %w)
    CHECK: %y8 : Double(2048, 512) = aten::add
  )");
  EXPECT_EQ(countOf(*after, OpKind::Mm), 3u);
  EXPECT_TRUE(verify(*after).empty());
}

// A weight gradient over ten steps whose gate gradients %g1..%g10 come one after another: the sum is made
// of three products (3, 4 and 3 steps), each right after its last gate gradient, summed as they come, so
// the first steps' tensors are dead before the later ones exist.
TEST(BatchMM, AWeightGradientIsSummedInChunksAsItsStepsAppear) {
  std::string ir = "graph(%x : Double(2048, 512), ";
  for (int i = 1; i <= 10; ++i) ir += "%h" + std::to_string(i) + " : Double(2048, 8)" + (i < 10 ? ", " : "):\n");
  ir += "  %one : int = prim::Constant[value=1]()\n  %g1 : Double(2048, 512) = aten::tanh(%x)\n";
  for (int i = 2; i <= 10; ++i) ir += fmt::format("  %g{} : Double(2048, 512) = aten::tanh(%g{})\n", i, i - 1);
  for (int i = 1; i <= 10; ++i)
    ir += fmt::format("  %t{0} : Double(8, 2048) = aten::t(%h{0})\n  %m{0} : Double(8, 512) = aten::mm(%t{0}, %g{0})\n", i);
  ir += "  %s2 : Double(8, 512) = aten::add(%m1, %m2, %one)\n";
  for (int i = 3; i <= 9; ++i) ir += fmt::format("  %s{} : Double(8, 512) = aten::add(%s{}, %m{}, %one)\n", i, i - 1, i);
  ir += "  %w : Double(8, 512) = aten::add(%s9, %m10, %one)\n  return (%w)\n";
  auto after = checkPass(ir, "batch-mm", "CHECK: prim::ListConstruct(" + valueList("h", 1, 3) + R"()
    CHECK: prim::ListConstruct()" + valueList("g", 1, 3) + R"()
    CHECK: %[[P1:.*]] : Double(8, 512) = aten::mm
    CHECK: %g4 : Double(2048, 512) = aten::tanh(%g3)
    CHECK: prim::ListConstruct()" + valueList("g", 4, 7) + R"()
    CHECK: %[[P2:.*]] : Double(8, 512) = aten::mm
    CHECK: %[[S:.*]] : Double(8, 512) = aten::add(%[[P1]], %[[P2]]
    CHECK: %g8 : Double(2048, 512) = aten::tanh(%g7)
    CHECK: prim::ListConstruct()" + valueList("g", 8, 10) + R"()
    CHECK: %[[P3:.*]] : Double(8, 512) = aten::mm
    CHECK: %w : Double(8, 512) = aten::add(%[[S]], %[[P3]]
    CHECK: return (%w)
  )");
  EXPECT_EQ(countOf(*after, OpKind::Mm), 3u);
  EXPECT_EQ(countOf(*after, OpKind::Add), 2u);
  EXPECT_TRUE(verify(*after).empty());
}

// The backward of a batched forward concatenates the gate gradients itself (the gradient of the split);
// the weight gradient's product reads that concatenation, in its order, instead of making a second copy.
TEST(BatchMM, ASumOfProductsReadsAConcatenationOfItsRightOperandsTheGraphHas) {
  auto after = checkPass(std::string(R"IR(graph(%h1 : Double(2, 3), %h2 : Double(2, 3), %h3 : Double(2, 3),
      %g1 : Double(2, 4), %g2 : Double(2, 4), %g3 : Double(2, 4), %wi : Double(4, 5)):
  %zero : int = prim::Constant[value=0]()
  %gs : Tensor[] = prim::ListConstruct(%g3, %g1, %g2)
  %c : Double(6, 4) = aten::cat(%gs, %zero)
  %dx : Double(6, 5) = aten::mm(%c, %wi)
)IR") + kWeightGradientSum + "  return (%w, %dx)\n",
                         "batch-mm", R"(
    CHECK: %c : Double(6, 4) = aten::cat
    CHECK: prim::ListConstruct(%h3, %h1, %h2)
    CHECK: %[[X:.*]] : Tensor = aten::cat
    CHECK: %[[XT:.*]] : Tensor = aten::t(%[[X]])
    CHECK: %w : Double(3, 4) = aten::mm(%[[XT]], %c)
  )");
  EXPECT_EQ(countOf(*after, OpKind::Cat), 2u);
  EXPECT_TRUE(verify(*after).empty());
}

// A bias gradient accumulated over twenty steps, one add at a time (with a shorter sum beside it, which
// stays): the terms are stacked and reduced once, after the last of them, and the result is the same.
TEST(BatchMM, ALongSumOfSameSizedTensorsBecomesOneReductionOfTheirStack) {
  std::string ir = "graph(%x : Double(3, 5)):\n  %one : int = prim::Constant[value=1]()\n";
  ir += "  %g1 : Double(3, 5) = aten::tanh(%x)\n  %s1 : Double(3, 5) = aten::sigmoid(%g1)\n";
  for (int i = 2; i <= 20; ++i)
    ir += fmt::format("  %g{0} : Double(3, 5) = aten::tanh(%g{1})\n"
                      "  %s{0} : Double(3, 5) = aten::add(%s{1}, %g{0}, %one)\n", i, i - 1);
  ir += "  %short : Double(3, 5) = aten::add(%g1, %g2, %one)\n  return (%s20, %short)\n";
  auto after = checkPass(ir, "batch-mm", "CHECK: %g20 : Double(3, 5) = aten::tanh(%g19)\n"
                                         "CHECK: prim::ListConstruct(%s1, " + valueList("g", 2, 20) + R"()
    CHECK: %[[ST:.*]] : Tensor = aten::stack
    CHECK: %s20 : Double(3, 5) = aten::sum(%[[ST]]
    CHECK: %short : Double(3, 5) = aten::add(%g1, %g2
  )");
  EXPECT_EQ(countOf(*after, OpKind::Add), 1u);
  EXPECT_TRUE(verify(*after).empty());
  auto in = randomFor(*after, 5);
  auto ref = Interpreter(*parseIR(ir)).run(in);
  auto got = Interpreter(*after).run(in);
  EXPECT_LT(test::relError(got[0].toTensor(), ref[0].toTensor()), 1e-14);
  EXPECT_EQ(test::relError(got[1].toTensor(), ref[1].toTensor()), 0.0);
}

// Every step of an unrolled RNN multiplies by the same transposed weight: one row-major copy, read by all.
TEST(ContiguousOperands, ATransposedWeightThatSmallProductsShareIsCopiedOnce) {
  checkPass(R"IR(graph(%x1 : Double(2, 4), %x2 : Double(2, 4), %x3 : Double(2, 4), %w : Double(5, 4)):
  %wt : Double(4, 5) = aten::t(%w)
  %a : Double(2, 5) = aten::mm(%x1, %wt)
  %b : Double(2, 5) = aten::mm(%x2, %wt)
  %c : Double(2, 5) = aten::mm(%x3, %wt)
  return (%a, %b, %c)
)IR",
            "contiguous-operands", R"(
    CHECK: %wt : Double(4, 5) = aten::t(%w)
    CHECK-NEXT: %[[C:.*]] : Double(4, 5) = aten::contiguous(%wt)
    CHECK: aten::mm(%x1, %[[C]])
    CHECK: aten::mm(%x2, %[[C]])
    CHECK: aten::mm(%x3, %[[C]])
    CHECK-NOT: aten::contiguous
  )");
}

// In a loop one product runs once per iteration: the copy is made once, before the loop.
TEST(ContiguousOperands, AProductInALoopCountsAsShared) {
  checkPass(R"IR(graph(%h : Double(2, 4), %w : Double(4, 4)):
  %n : int = prim::Constant[value=3]()
  %t : bool = prim::Constant[value=1]()
  %wt : Double(4, 4) = aten::t(%w)
  %y : Tensor = prim::Loop(%n, %t, %h)
    block0(%i : int, %a : Double(2, 4)):
      %b : Double(2, 4) = aten::mm(%a, %wt)
      -> (%t, %b)
  return (%y)
)IR",
            "contiguous-operands", R"(
    CHECK: %wt : Double(4, 4) = aten::t(%w)
    CHECK-NEXT: %[[C:.*]] : Double(4, 4) = aten::contiguous(%wt)
    CHECK: prim::Loop
    CHECK: aten::mm(%a, %[[C]])
  )");
}

// Products of many rows run faster by the transposed operand (bench/results/gemm-cpu.md), and a single
// product gains nothing from a copy: both keep their operand.
TEST(ContiguousOperands, LargeOrLoneProductsKeepTheirOperand) {
  static_assert(kRowMajorOperandMaxRows < 300);
  checkPass(R"IR(graph(%x1 : Double(300, 4), %x2 : Double(300, 4), %x3 : Double(2, 4), %w : Double(5, 4), %v : Double(5, 4)):
  %wt : Double(4, 5) = aten::t(%w)
  %a : Double(300, 5) = aten::mm(%x1, %wt)
  %b : Double(300, 5) = aten::mm(%x2, %wt)
  %vt : Double(4, 5) = aten::t(%v)
  %c : Double(2, 5) = aten::mm(%x3, %vt)
  return (%a, %b, %c)
)IR",
            "contiguous-operands", "CHECK-NOT: aten::contiguous", /*expectChange=*/false);
}

TEST(RequiresGrad, FollowsFloatDataflowOnly) {
  checkPass(R"IR(graph(%w : Double(5, 3, requires_grad=1), %idx : Long(4), %x : Double(4, 3)):
  %e : Tensor = aten::embedding(%w, %idx)
  %y : Tensor = aten::mul(%x, %x)
  %one : int = prim::Constant[value=1]()
  %z : Tensor = aten::add(%e, %y, %one)
  return (%z, %y)
)IR",
            "requires-grad", R"(
    CHECK: %e : Tensor(..., requires_grad=1) = aten::embedding
    CHECK: %y : Tensor(..., requires_grad=0) = aten::mul
  )",
            true);
}

TEST(CreateAutodiffSubgraphs, WrapsTheLoopBodyAndTheCodeAround) {
  const char* ir = R"IR(graph(%x : Double(2, 3, requires_grad=1), %w : Double(3, 3, requires_grad=1)):
  %n : int = prim::Constant[value=3]()
  %t : bool = prim::Constant[value=1]()
  %x2 : Tensor = aten::tanh(%x)
  %y : Tensor = prim::Loop(%n, %t, %x2)
    block0(%i : int, %a : Tensor):
      %wt : Tensor = aten::t(%w)
      %b : Tensor = aten::mm(%a, %wt)
      %c : Tensor = aten::sigmoid(%b)
      -> (%t, %c)
  %z : Tensor = aten::exp(%y)
  return (%z)
)IR";
  auto g = parseIR(ir);
  propagateRequiresGrad(*g);
  EXPECT_TRUE(createAutodiffSubgraphs(*g));
  verifyOrThrow(*g);
  EXPECT_FILECHECK(printIR(*g), R"(
    CHECK: %x2 : Tensor(..., requires_grad=1) = prim::DifferentiableGraph_0(%x)
    CHECK: prim::Loop
    CHECK: prim::DifferentiableGraph_1(%w, %a)
    CHECK: prim::DifferentiableGraph_2(%y)
    CHECK: with prim::DifferentiableGraph_0 = graph
    CHECK: aten::tanh
    CHECK: with prim::DifferentiableGraph_1 = graph
    CHECK: aten::mm
    CHECK: aten::sigmoid
  )");
  auto in = randomFor(*g, 3);
  auto ref = Interpreter(*parseIR(ir)).run(in);
  EXPECT_EQ(test::relError(Interpreter(*g).run(in)[0].toTensor(), ref[0].toTensor()), 0.0);
}

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
