// Tests of requires_grad propagation (passes/requires_grad.h).
#include "tests/passes/pass_test.h"

namespace gj {
namespace {

using test::checkPass;
using test::randomFor;

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

}  // namespace
}  // namespace gj
