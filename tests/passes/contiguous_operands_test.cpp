// Tests of contiguous operands (passes/contiguous_operands.h).
#include "tests/passes/pass_test.h"

namespace gj {
namespace {

using test::checkPass;
using test::randomFor;

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

}  // namespace
}  // namespace gj
