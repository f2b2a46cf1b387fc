// Tests of batching of matrix products (passes/batch_mm.h).
#include "tests/passes/pass_test.h"

namespace gj {
namespace {

using test::checkPass;
using test::randomFor;

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

// Nor where the right operands are large (an LSTM cell's backward: dgates W_hh and dgates W_ih at batch
// 128), whose copy on every run costs more than one product instead of two saves.
TEST(BatchMM, MatmulsSharingTheLeftOperandKeepLargeRightOperandsApart) {
  const std::string ir = fmt::format(R"IR(graph(%g : Double(40, 8), %w : Double(8, {0}), %v : Double(8, {0})):
  %a : Tensor = aten::mm(%g, %w)
  %b : Tensor = aten::mm(%g, %v)
  return (%a, %b)
)IR", kMaxConcatenatedRightElements / 16);
  checkPass(ir, "batch-mm", R"(
    CHECK: aten::cat
    CHECK: aten::mm(%g, {{.*}})
    CHECK-NOT: aten::mm
  )");
  const std::string large = fmt::format(R"IR(graph(%g : Double(40, 8), %w : Double(8, {0}), %v : Double(8, {0})):
  %a : Tensor = aten::mm(%g, %w)
  %b : Tensor = aten::mm(%g, %v)
  return (%a, %b)
)IR", kMaxConcatenatedRightElements / 16 + 1);
  checkPass(large, "batch-mm", R"(
    CHECK-NOT: aten::cat
    CHECK: %a : {{.*}} = aten::mm(%g, %w)
    CHECK: %b : {{.*}} = aten::mm(%g, %v)
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

}  // namespace
}  // namespace gj
