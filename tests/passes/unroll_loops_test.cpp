// Tests of loop unrolling (passes/unroll_loops.h).
#include "tests/passes/pass_test.h"

namespace gj {
namespace {

using test::checkPass;
using test::randomFor;

TEST(UnrollLoops, UnrollsAConstantTripCountCompletely) {
  checkPass(R"IR(graph(%x : Double(3)):
  %n : int = prim::Constant[value=3]()
  %t : bool = prim::Constant[value=1]()
  %y : Tensor = prim::Loop(%n, %t, %x)
    block0(%i : int, %a : Tensor):
      %b : Tensor = aten::tanh(%a)
      -> (%t, %b)
  return (%y)
)IR",
            "unroll-loops", R"(
    CHECK-NOT: prim::Loop
    CHECK: %[[B1:.*]] : Tensor = aten::tanh(%x)
    CHECK: %[[B2:.*]] : Tensor = aten::tanh(%[[B1]])
    CHECK: %[[B3:.*]] : Tensor = aten::tanh(%[[B2]])
    CHECK: return (%[[B3]])
  )");
}

// A loop over more steps than full unrolling takes (eleven, read from a size, against a limit of eight) is
// unrolled by a factor: a main loop of eight copies, then the remainder.
TEST(UnrollLoops, UnrollsALoopOverTheFullLimitByAFactor) {
  const char* ir = R"IR(graph(%x : Double(3), %s : Double(11, 2)):
  %zero : int = prim::Constant[value=0]()
  %t : bool = prim::Constant[value=1]()
  %n : int = aten::size(%s, %zero)
  %y : Tensor = prim::Loop(%n, %t, %x)
    block0(%i : int, %a : Tensor):
      %b : Tensor = aten::tanh(%a)
      -> (%t, %b)
  return (%y)
)IR";
  auto after = checkPass(ir, "unroll-loops<full=8;by=8>", R"(
    CHECK: aten::floordiv(%n
    CHECK: aten::remainder(%n
    CHECK: prim::Loop
    CHECK: aten::tanh
    CHECK: prim::Loop
  )");
  std::string text = printIR(*after);
  size_t tanhs = 0;
  for (size_t p = text.find("aten::tanh"); p != std::string::npos; p = text.find("aten::tanh", p + 1)) ++tanhs;
  EXPECT_EQ(tanhs, 9u);  // 8 copies in the main loop, 1 in the remainder loop
}

// A stacked RNN's loops: the second runs over the unbound stack of the first's results, a trip count known
// only once the first is unrolled and its results' types propagated. One walk of the pass unrolls both.
TEST(UnrollLoops, UnrollsAChainOfLoopsInOneWalk) {
  auto after = checkPass(R"IR(graph(%x : Double(4, 3)):
  %zero : int = prim::Constant[value=0]()
  %t : bool = prim::Constant[value=1]()
  %xs : Tensor[] = aten::unbind(%x, %zero)
  %n : int = aten::len(%xs)
  %empty : Tensor[] = prim::ListConstruct()
  %l1 : Tensor[] = prim::Loop(%n, %t, %empty)
    block0(%i : int, %acc : Tensor[]):
      %xi : Tensor = aten::__getitem__(%xs, %i)
      %h : Tensor = aten::tanh(%xi)
      %acc2 : Tensor[] = prim::ListAppend(%acc, %h)
      -> (%t, %acc2)
  %s1 : Tensor = aten::stack(%l1, %zero)
  %hs : Tensor[] = aten::unbind(%s1, %zero)
  %m : int = aten::len(%hs)
  %l2 : Tensor[] = prim::Loop(%m, %t, %empty)
    block0(%j : int, %acc3 : Tensor[]):
      %hj : Tensor = aten::__getitem__(%hs, %j)
      %y : Tensor = aten::sigmoid(%hj)
      %acc4 : Tensor[] = prim::ListAppend(%acc3, %y)
      -> (%t, %acc4)
  %s2 : Tensor = aten::stack(%l2, %zero)
  return (%s2)
)IR",
                         "unroll-loops", R"(
    CHECK: %s1 : Double(4, 3) = aten::stack
    CHECK-NOT: prim::Loop
    CHECK: aten::sigmoid
  )");
  std::string text = printIR(*after);
  size_t sigmoids = 0;
  for (size_t p = text.find("aten::sigmoid"); p != std::string::npos; p = text.find("aten::sigmoid", p + 1)) ++sigmoids;
  EXPECT_EQ(sigmoids, 4u);
}

}  // namespace
}  // namespace gj
