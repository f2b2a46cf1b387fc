// Tests of shape propagation (passes/shape_propagation.h, passes/shapes/).
#include "tests/passes/pass_test.h"

#include "passes/shapes/rules.h"

namespace gj {
namespace {

using test::checkPass;
using test::randomFor;

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

// Every op of ops.def has one shape rule, from the file of its group (passes/shapes/): ruleFor assembles
// the table and checks both. A rule from each group's file types its node.
TEST(ShapePropagation, EveryOpHasARuleFromItsGroupsFile) {
  for (const OpInfo& info : allOps()) EXPECT_NE(shapes::ruleFor(info.kind), nullptr) << info.name;
  checkPass(R"IR(graph(%x : Double(2, 3, 5), %w : Double(7, 5)):
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %f : bool = prim::Constant[value=0]()
  %none : NoneType = prim::Constant()
  %dims : int[] = prim::ListConstruct(%one)
  %p : Tensor = aten::transpose(%x, %zero, %one)
  %s : Tensor = aten::sum(%p, %dims, %f)
  %y : Tensor = aten::linear(%x, %w, %none)
  %l : Tensor[] = prim::ListConstruct(%y, %y)
  %c : Tensor = aten::cat(%l, %one)
  %e : Tensor = aten::exp(%c)
  return (%s, %e)
)IR",
            "shape-propagation", R"(
    CHECK: %p : Double(3, 2, 5) = aten::transpose
    CHECK: %s : Double(3, 5) = aten::sum
    CHECK: %y : Double(2, 3, 7) = aten::linear
    CHECK: %c : Double(2, 6, 7) = aten::cat
    CHECK: %e : Double(2, 6, 7) = aten::exp
  )");
}

}  // namespace
}  // namespace gj
