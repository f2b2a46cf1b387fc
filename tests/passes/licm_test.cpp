// Tests of loop-invariant code motion (passes/licm.h).
#include "tests/passes/pass_test.h"

namespace gj {
namespace {

using test::checkPass;
using test::randomFor;

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

}  // namespace
}  // namespace gj
