// Tests of canonicalization (passes/canonicalize.h).
#include "tests/passes/pass_test.h"

namespace gj {
namespace {

using test::checkPass;
using test::randomFor;

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

}  // namespace
}  // namespace gj
