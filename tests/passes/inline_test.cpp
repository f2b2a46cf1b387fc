// Tests of inlining (passes/inline.h).
#include "tests/passes/pass_test.h"

namespace gj {
namespace {

using test::checkPass;
using test::randomFor;

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

}  // namespace
}  // namespace gj
