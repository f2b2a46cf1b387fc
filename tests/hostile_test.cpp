// Legal but hostile inputs and injected faults: zero-size dimensions, size-1 broadcasting, non-contiguous
// views, very long sequences, NaN and inf, allocation failure, and a storm of guard failures.
#include "executors/function.h"
#include "executors/interpreter.h"
#include "ir/parser.h"
#include "models/lstm.h"
#include "runtime/ops/ops.h"
#include "tests/support/reference.h"

#include <gtest/gtest.h>

#include <cmath>

namespace gj {
namespace {

const std::span<const FuserKind> kFusers = allFusers();

const char* kPointwise = R"IR(graph(%x : Double(*, *), %y : Double(*)):
  %one : int = prim::Constant[value=1]()
  %a : Tensor = aten::mul(%x, %y)
  %b : Tensor = aten::sigmoid(%a)
  %c : Tensor = aten::add(%b, %x, %one)
  %d : Tensor = aten::tanh(%c)
  return (%d)
)IR";

std::vector<IValue> run(FuserKind f, ExecutorKind e, const Graph& g, const std::vector<IValue>& in, int calls = 2) {
  Function fn(g, {.fuser = f, .executor = e});
  std::vector<IValue> out;
  for (int i = 0; i < calls; ++i) out = fn.forward(in);
  return out;
}

TEST(Hostile, ZeroSizeDimensions) {
  auto g = parseIR(kPointwise);
  std::vector<IValue> in = {Tensor::rand({0, 5}, DType::Float64, 1), Tensor::rand({5}, DType::Float64, 2)};
  for (FuserKind f : kFusers)
    for (ExecutorKind e : allExecutors()) {
      auto out = run(f, e, *g, in);
      EXPECT_EQ(out[0].toTensor().sizes(), (Shape{0, 5})) << fuserName(f);
    }
}

TEST(Hostile, SizeOneBroadcastingAndNonContiguousViews) {
  auto g = parseIR(kPointwise);
  Tensor base = Tensor::rand({7, 3}, DType::Float64, 3);
  Tensor y = Tensor::rand({1, 7}, DType::Float64, 4).select(0, 0);  // a view
  for (Tensor x : {base.t(), Tensor::rand({1, 7}, DType::Float64, 5), base.t().slice(0, 0, 3, 2)}) {
    std::vector<IValue> in = {x, x.size(1) == 7 ? y : Tensor::rand({x.size(1)}, DType::Float64, 6)};
    auto ref = Interpreter(*g).run(in)[0].toTensor();
    for (FuserKind f : kFusers)
      for (ExecutorKind e : allExecutors())
        EXPECT_LE(test::relError(run(f, e, *g, in)[0].toTensor(), ref), 1e-12) << fuserName(f) << shapeStr(x.sizes());
  }
}

TEST(Hostile, NanAndInfPropagateAsInTheInterpreter) {
  auto g = parseIR(kPointwise);
  double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  std::vector<IValue> in = {Tensor::fromVector({2, 3}, {nan, inf, -inf, 0, 1, -1}, DType::Float64),
                            Tensor::fromVector({3}, {1, nan, 2}, DType::Float64)};
  auto ref = Interpreter(*g).run(in)[0].toTensor();
  for (FuserKind f : kFusers) {
    auto out = run(f, ExecutorKind::Legacy, *g, in)[0].toTensor();
    for (int64_t i = 0; i < 6; ++i) {
      double a = out.item(i), b = ref.item(i);
      EXPECT_TRUE((std::isnan(a) && std::isnan(b)) || a == b) << fuserName(f) << " element " << i << ": " << a
                                                              << " vs " << b;
    }
  }
}

TEST(Hostile, VeryLongSequencesRunWithoutOverflowOrQuadraticPasses) {
  LstmParams p{10000, 2, 3, 4, 1};
  Model m = buildLstm(LstmVariantKind::Jit, p);
  auto in = randomInputs(m, 11);
  auto ref = m.eager(in);
  for (ExecutorKind e : allExecutors()) {
    Function f(*m.graph, {.fuser = FuserKind::Legacy, .executor = e});
    std::vector<IValue> args(in.begin(), in.end());
    std::vector<IValue> out;
    for (int call = 0; call < 2; ++call) out = f.forward(args);
    for (size_t k = 0; k < ref.size(); ++k) EXPECT_LE(test::relError(out[k].toTensor(), ref[k]), 1e-5) << k;
    EXPECT_LT(f.stats().passMs, 20000) << f.stats().str();
  }
}

TEST(FaultInjection, AllocationFailureIsACleanError) {
  try {
    Tensor::empty({int64_t{1} << 40, int64_t{1} << 20}, DType::Float32);
    FAIL() << "an allocation of 4 EiB succeeded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("out of memory"), std::string::npos) << e.what();
  }
}

TEST(FaultInjection, AGuardFailureStormStaysBounded) {
  Model m = buildLstm(LstmVariantKind::Jit, {3, 2, 4, 5, 1});
  Function f(*m.graph, {.fuser = FuserKind::Te, .executor = ExecutorKind::Profiling});
  for (int call = 0; call < 60; ++call) {
    LstmParams p{2 + call % 7, 1 + call % 3, 4, 5, 1};  // the shapes change on every call
    Model shaped = buildLstm(LstmVariantKind::Jit, p);
    auto in = randomInputs(shaped, static_cast<uint64_t>(call));
    auto out = f.forward(std::vector<IValue>(in.begin(), in.end()));
    auto ref = shaped.eager(in);
    for (size_t k = 0; k < ref.size(); ++k) ASSERT_LE(test::relError(out[k].toTensor(), ref[k]), 1e-5) << call;
  }
  FunctionStats s = f.stats();
  // Each re-profile merges what it saw, so the plan soon accepts every shape: few recompilations.
  EXPECT_LE(s.specializations, 4) << s.str();
  EXPECT_LE(s.reprofiles, 3) << s.str();
}

}  // namespace
}  // namespace gj
