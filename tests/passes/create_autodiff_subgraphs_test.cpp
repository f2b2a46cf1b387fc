// Tests of differentiable subgraphs (passes/create_autodiff_subgraphs.h).
#include "tests/passes/pass_test.h"

namespace gj {
namespace {

using test::checkPass;
using test::randomFor;

TEST(CreateAutodiffSubgraphs, WrapsTheLoopBodyAndTheCodeAround) {
  const char* ir = R"IR(graph(%x : Double(2, 3, requires_grad=1), %w : Double(3, 3, requires_grad=1)):
  %n : int = prim::Constant[value=3]()
  %t : bool = prim::Constant[value=1]()
  %x2 : Tensor = aten::tanh(%x)
  %y : Tensor = prim::Loop(%n, %t, %x2)
    block0(%i : int, %a : Tensor):
      %wt : Tensor = aten::t(%w)
      %b : Tensor = aten::mm(%a, %wt)
      %c : Tensor = aten::sigmoid(%b)
      -> (%t, %c)
  %z : Tensor = aten::exp(%y)
  return (%z)
)IR";
  auto g = parseIR(ir);
  propagateRequiresGrad(*g);
  EXPECT_TRUE(createAutodiffSubgraphs(*g));
  verifyOrThrow(*g);
  EXPECT_FILECHECK(printIR(*g), R"(
    CHECK: %x2 : Tensor(..., requires_grad=1) = prim::DifferentiableGraph_0(%x)
    CHECK: prim::Loop
    CHECK: prim::DifferentiableGraph_1(%w, %a)
    CHECK: prim::DifferentiableGraph_2(%y)
    CHECK: with prim::DifferentiableGraph_0 = graph
    CHECK: aten::tanh
    CHECK: with prim::DifferentiableGraph_1 = graph
    CHECK: aten::mm
    CHECK: aten::sigmoid
  )");
  auto in = randomFor(*g, 3);
  auto ref = Interpreter(*parseIR(ir)).run(in);
  EXPECT_EQ(test::relError(Interpreter(*g).run(in)[0].toTensor(), ref[0].toTensor()), 0.0);
}

}  // namespace
}  // namespace gj
