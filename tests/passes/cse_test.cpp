// Tests of common subexpression elimination (passes/cse.h).
#include "tests/passes/pass_test.h"

namespace gj {
namespace {

using test::checkPass;
using test::randomFor;

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

}  // namespace
}  // namespace gj
