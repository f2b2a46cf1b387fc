// Tests of the peephole rewrites (passes/peephole.h).
#include "tests/passes/pass_test.h"

namespace gj {
namespace {

using test::checkPass;
using test::randomFor;

TEST(Peephole, RemovesIdentityArithmeticAndDoubleTranspose) {
  checkPass(R"IR(graph(%x : Double(3, 4)):
  %one : int = prim::Constant[value=1]()
  %zero : float = prim::Constant[value=0.]()
  %a : Tensor = aten::mul(%x, %one)
  %b : Tensor = aten::add(%a, %zero, %one)
  %c : Tensor = aten::t(%b)
  %d : Tensor = aten::t(%c)
  %e : Tensor = aten::tanh(%d)
  return (%e)
)IR",
            "peephole", "CHECK-NOT: aten::mul\nCHECK-NOT: aten::add\nCHECK: aten::tanh(%x)");
}

// x * 1.0, x / 1 and x + 0 change a long or bool tensor's dtype: they stay (the host kernels reject such
// tensors with an error; without the node the graph would return x as it is).
TEST(Peephole, KeepsIdentityArithmeticThatPromotesTheDType) {
  auto g = parseIR(R"IR(graph(%x : Long(3), %y : Bool(3), %f : Float(3)):
  %one : int = prim::Constant[value=1]()
  %onef : float = prim::Constant[value=1.]()
  %zero : int = prim::Constant[value=0]()
  %a : Tensor = aten::mul(%x, %onef)
  %b : Tensor = aten::div(%x, %one)
  %c : Tensor = aten::add(%y, %zero, %one)
  %d : Tensor = aten::mul(%x, %one)
  %e : Tensor = aten::div(%f, %one)
  return (%a, %b, %c, %d, %e)
)IR");
  auto rec = runPasses(*g, std::vector<std::string>{"peephole"}, PassOptions{});
  EXPECT_TRUE(rec[0].changed);
  EXPECT_FILECHECK(printIR(*g), R"(
    CHECK: aten::mul(%x, %onef)
    CHECK: aten::div(%x, %one)
    CHECK: aten::add(%y, %zero, %one)
    CHECK-NOT: aten::mul
    CHECK-NOT: aten::div
    CHECK: return (%a, %b, %c, %x, %f)
  )");
}

// A clamp with a None bound (torch.clamp(x, max=...)) has one bound, or none.
TEST(Peephole, OpensAClampWithANoneBound) {
  checkPass(R"IR(graph(%x : Double(3, 4)):
  %none : NoneType = prim::Constant()
  %lo : float = prim::Constant[value=0.3]()
  %hi : float = prim::Constant[value=0.6]()
  %a : Tensor = aten::clamp(%x, %none, %hi)
  %b : Tensor = aten::clamp(%x, %lo, %none)
  %c : Tensor = aten::clamp(%x, %none, %none)
  %d : Tensor = aten::clamp(%x, %lo, %hi)
  return (%a, %b, %c, %d)
)IR",
            "peephole", R"(
    CHECK: aten::clamp_max(%x, %hi)
    CHECK: aten::clamp_min(%x, %lo)
    CHECK: aten::clamp(%x, %lo, %hi)
    CHECK: return (%{{.*}}, %{{.*}}, %x, %d)
  )");
}

TEST(Peephole, ResolvesListAccess) {
  checkPass(R"IR(graph(%x : Double(4, 3), %y : Double(3)):
  %zero : int = prim::Constant[value=0]()
  %two : int = prim::Constant[value=2]()
  %seq : Tensor[] = aten::unbind(%x, %zero)
  %r : Tensor = aten::__getitem__(%seq, %two)
  %l0 : Tensor[] = prim::ListConstruct(%r)
  %l1 : Tensor[] = prim::ListAppend(%l0, %y)
  %s : Tensor = aten::stack(%l1, %zero)
  return (%s)
)IR",
            "peephole", R"(
    CHECK: %[[R:.*]] : Tensor = aten::select(%x, %zero, %two)
    CHECK: %[[L:.*]] : Tensor[] = prim::ListConstruct(%[[R]], %y)
    CHECK-NOT: prim::ListAppend
    CHECK: aten::stack(%[[L]], %zero)
  )");
}

// A chain of appends folds at its last append into one list (not a list per append: quadratic in the chain);
// a list read twice in the middle keeps the appends after it.
TEST(Peephole, FoldsAChainOfAppendsAtItsEnd) {
  checkPass(R"IR(graph(%x : Double(3), %y : Double(3), %z : Double(3)):
  %zero : int = prim::Constant[value=0]()
  %l0 : Tensor[] = prim::ListConstruct(%x)
  %l1 : Tensor[] = prim::ListAppend(%l0, %y)
  %l2 : Tensor[] = prim::ListAppend(%l1, %z)
  %l3 : Tensor[] = prim::ListAppend(%l2, %x)
  %s : Tensor = aten::stack(%l3, %zero)
  %l4 : Tensor[] = prim::ListAppend(%l3, %y)
  %t : Tensor = aten::stack(%l4, %zero)
  %u : Tensor = aten::add(%s, %x, %zero)
  return (%u, %t)
)IR",
            "peephole", R"(
    CHECK: %[[L:.*]] : Tensor[] = prim::ListConstruct(%x, %y, %z, %x)
    CHECK-NOT: prim::ListConstruct
    CHECK: aten::stack(%[[L]], %zero)
    CHECK: prim::ListAppend(%[[L]], %y)
  )");
}

}  // namespace
}  // namespace gj
