// Tests of dead code elimination (passes/dce.h).
#include "tests/passes/pass_test.h"

namespace gj {
namespace {

using test::checkPass;
using test::randomFor;

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

}  // namespace
}  // namespace gj
