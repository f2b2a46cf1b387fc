// Tests of constant propagation (passes/constant_propagation.h).
#include "tests/passes/pass_test.h"

namespace gj {
namespace {

using test::checkPass;
using test::randomFor;

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

}  // namespace
}  // namespace gj
