// The interpreter on control flow (loops, ifs, lists) and bad inputs.
#include "executors/interpreter.h"
#include "executors/interpreter/kernels.h"
#include "ir/parser.h"
#include "runtime/allocator.h"
#include "runtime/ops/ops.h"
#include "runtime/gemm.h"
#include "tests/support/reference.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>

namespace gj {
namespace {

std::vector<IValue> run(const Graph& g, std::vector<IValue> in) { return Interpreter(g).run(std::move(in)); }

// x_{k+1} = tanh(x_k * w) for n steps, collecting every x in a list, then stacking.
const char* kLoopIR = R"IR(graph(%x : Double(2, 3), %w : Double(2, 3), %n : int):
  %t : bool = prim::Constant[value=1]()
  %zero : int = prim::Constant[value=0]()
  %l0 : Tensor[] = prim::ListConstruct()
  %y : Tensor, %l : Tensor[] = prim::Loop(%n, %t, %x, %l0)
    block0(%i : int, %a : Tensor, %acc : Tensor[]):
      %m : Tensor = aten::mul(%a, %w)
      %b : Tensor = aten::tanh(%m)
      %acc2 : Tensor[] = prim::ListAppend(%acc, %b)
      -> (%t, %b, %acc2)
  %s : Tensor = aten::stack(%l, %zero)
  return (%y, %s)
)IR";

TEST(Interpreter, LoopCarriesValuesAndCollectsAList) {
  auto g = parseIR(kLoopIR);
  Tensor x = Tensor::rand({2, 3}, DType::Float64, 1), w = Tensor::rand({2, 3}, DType::Float64, 2);
  auto out = run(*g, {x, w, int64_t{4}});
  Tensor expect = x;
  std::vector<Tensor> steps;
  for (int i = 0; i < 4; ++i) {
    expect = ops::tanh(ops::mul(expect, w));
    steps.push_back(expect);
  }
  EXPECT_EQ(test::relError(out[0].toTensor(), expect), 0.0);
  ASSERT_EQ(out[1].toTensor().sizes(), (Shape{4, 2, 3}));
  EXPECT_EQ(test::relError(out[1].toTensor(), ops::stack(steps, 0)), 0.0);
}

// kernelFor checks the table when it is first made (one kernel per op, from its group's file); each
// group's kernels then run one node apiece here, against the runtime's ops called directly.
TEST(Interpreter, EveryOpHasAKernelFromItsGroupsFile) {
  for (const OpInfo& info : allOps()) EXPECT_NE(interp::kernelFor(info.kind), nullptr) << info.name;
  auto g = parseIR(R"IR(graph(%x : Double(2, 3), %w : Double(3, 4)):
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %f : bool = prim::Constant[value=0]()
  %dims : int[] = prim::ListConstruct(%one)
  %p : Tensor = aten::transpose(%x, %zero, %one)
  %s : Tensor = aten::sum(%p, %dims, %f)
  %m : Tensor = aten::mm(%x, %w)
  %l : Tensor[] = prim::ListConstruct(%m, %m)
  %c : Tensor = aten::cat(%l, %one)
  %e : Tensor = aten::exp(%c)
  return (%s, %e)
)IR");
  Tensor x = Tensor::rand({2, 3}, DType::Float64, 11), w = Tensor::rand({3, 4}, DType::Float64, 12);
  auto out = run(*g, {x, w});
  const std::vector<int64_t> dims{1};
  EXPECT_EQ(test::relError(out[0].toTensor(), ops::sum(x.transpose(0, 1), dims, false)), 0.0);
  const Tensor m = ops::mm(x, w);
  const std::vector<Tensor> both{m, m};
  EXPECT_EQ(test::relError(out[1].toTensor(), ops::exp(ops::cat(both, 1))), 0.0);
  ASSERT_EQ(out[1].toTensor().sizes(), (Shape{2, 8}));
}

TEST(Interpreter, ZeroTripLoopReturnsInitialValues) {
  auto g = parseIR(R"IR(graph(%x : Double(2, 3), %w : Double(2, 3), %n : int):
  %t : bool = prim::Constant[value=1]()
  %y : Tensor = prim::Loop(%n, %t, %x)
    block0(%i : int, %a : Tensor):
      %b : Tensor = aten::mul(%a, %w)
      -> (%t, %b)
  return (%y)
)IR");
  Tensor x = Tensor::rand({2, 3}, DType::Float64, 3);
  EXPECT_EQ(test::relError(run(*g, {x, x, int64_t{0}})[0].toTensor(), x), 0.0);
}

TEST(Interpreter, LoopStopsWhenTheConditionIsFalse) {
  // The body returns false: one iteration runs although the trip count is 10. With a false initial
  // condition none runs.
  auto g = parseIR(R"IR(graph(%x : Double(2), %n : int, %go : bool):
  %f : bool = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %y : Tensor = prim::Loop(%n, %go, %x)
    block0(%i : int, %a : Tensor):
      %b : Tensor = aten::add(%a, %a, %one)
      -> (%f, %b)
  return (%y)
)IR");
  Tensor x = Tensor::fromVector({2}, {1, 2}, DType::Float64);
  EXPECT_EQ(run(*g, {x, int64_t{10}, true})[0].toTensor().item(1), 4.0);
  EXPECT_EQ(run(*g, {x, int64_t{10}, false})[0].toTensor().item(1), 2.0);
}

TEST(Interpreter, IfTakesTheBranchOfItsCondition) {
  auto g = parseIR(R"IR(graph(%c : bool, %x : Double(3)):
  %y : Tensor = prim::If(%c)
    block0():
      %a : Tensor = aten::tanh(%x)
      -> (%a)
    block1():
      %b : Tensor = aten::sigmoid(%x)
      -> (%b)
  return (%y)
)IR");
  Tensor x = Tensor::rand({3}, DType::Float64, 4);
  EXPECT_EQ(test::relError(run(*g, {true, x})[0].toTensor(), ops::tanh(x)), 0.0);
  EXPECT_EQ(test::relError(run(*g, {false, x})[0].toTensor(), ops::sigmoid(x)), 0.0);
}

TEST(Interpreter, ScalarOperandsTakeTheTensorsDtype) {
  auto g = parseIR(R"IR(graph(%x : Float(3)):
  %h : float = prim::Constant[value=0.5]()
  %two : int = prim::Constant[value=2]()
  %y : Tensor = aten::add(%x, %h, %two)
  %z : Tensor = aten::mul(%y, %two)
  return (%z)
)IR");
  Tensor x = Tensor::fromVector({3}, {1, 2, 3});
  Tensor z = run(*g, {x})[0].toTensor();
  EXPECT_EQ(z.dtype(), DType::Float32);
  EXPECT_EQ(z.item(2), (3 + 2 * 0.5) * 2);
}

TEST(Interpreter, WrongInputsAreClearErrors) {
  auto g = parseIR(kLoopIR);
  Tensor x = Tensor::rand({2, 3}, DType::Float64, 1);
  auto expectError = [&](std::vector<IValue> in, const std::string& fragment) {
    try {
      run(*g, std::move(in));
      FAIL() << "expected: " << fragment;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  expectError({x, x}, "the graph takes 3 inputs but 2 were given");
  expectError({x, x.to(DType::Float32), int64_t{1}}, "input %w: expected dtype float64, got float32");
  expectError({x, Tensor::rand({3, 2}, DType::Float64, 2), int64_t{1}}, "input %w: expected shape Double(2, 3)");
  expectError({x, x, 1.5}, "%n: expected an int, got float 1.5");
}

TEST(Interpreter, KernelErrorsNameTheNode) {
  auto g = parseIR(R"IR(graph(%x : Float(2, 3), %y : Float(4, 5)):
  %z : Tensor = aten::mm(%x, %y)
  return (%z)
)IR",
                   "mm.ir");
  try {
    run(*g, {Tensor::rand({2, 3}, DType::Float32, 1), Tensor::rand({4, 5}, DType::Float32, 2)});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), "node aten::mm at mm.ir:2:17");
    EXPECT_NE(e.message().find("mm: inner dimensions differ"), std::string::npos) << e.what();
  }
}

TEST(Interpreter, ConvertsByDTypeCodeAndRefusesUnknownCodes) {
  auto g = parseIR(R"IR(graph(%x : Float(3), %like : Double(2), %code : int):
  %d : int = prim::dtype(%like)
  %y : Tensor = aten::to(%x, %d)
  %z : Tensor = aten::to(%x, %code)
  return (%d, %y, %z)
)IR",
                   "to.ir");
  Tensor x = Tensor::fromVector({3}, {0.1f, 2, 3});
  Tensor like = Tensor::rand({2}, DType::Float64, 1);
  auto out = run(*g, {x, like, int64_t{2}});
  EXPECT_EQ(out[0].toInt(), 1);
  EXPECT_EQ(out[1].toTensor().dtype(), DType::Float64);
  EXPECT_EQ(out[1].toTensor().item(0), static_cast<double>(0.1f));
  EXPECT_EQ(out[2].toTensor().dtype(), DType::Int64);
  try {
    run(*g, {x, like, int64_t{10}});
    FAIL() << "expected an error for dtype code 10";
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), "node aten::to at to.ir:4:17");
    EXPECT_NE(e.message().find("10 is not a dtype code"), std::string::npos) << e.what();
  }
}

TEST(Interpreter, LongSequencesAppendInPlace) {
  auto g = parseIR(kLoopIR);
  Tensor x = Tensor::rand({2, 3}, DType::Float64, 5);
  Tensor w = Tensor::full({2, 3}, DType::Float64, 1.0);
  auto out = run(*g, {x, w, int64_t{20000}});
  EXPECT_EQ(out[1].toTensor().size(0), 20000);
}

// Each value is dropped once nothing later reads it: a chain of 40 one-MiB intermediates holds about two
// of them at a time, not all 40 until the run ends (an unrolled backward's per-step weight gradients
// held this way took 2.5 GB in a 3-layer LSTM). Also inside a loop body, whose outer values stay.
TEST(Interpreter, DropsEveryValueAfterItsLastUse) {
  constexpr size_t kMiB = size_t{1} << 20;
  for (bool inLoop : {false, true}) {
    std::string body, prev = "%x";
    for (int k = 1; k <= 40; ++k) {
      body += fmt::format("  %v{} : Double(256, 512) = aten::add({}, {}, %one)\n", k, prev, prev);
      prev = fmt::format("%v{}", k);
    }
    std::string ir = "graph(%x : Double(256, 512)):\n  %one : int = prim::Constant[value=1]()\n";
    if (!inLoop) {
      ir += body + "  %s : Double(256, 512) = aten::add(%v40, %x, %one)\n  return (%s)\n";
    } else {
      // Two trips; the body's chain starts from the outer %x each time, which must survive the first.
      ir += "  %t : bool = prim::Constant[value=1]()\n  %two : int = prim::Constant[value=2]()\n"
            "  %r : Tensor = prim::Loop(%two, %t, %x)\n    block0(%i : int, %a : Tensor):\n" +
            body + "      %s : Double(256, 512) = aten::add(%v40, %a, %one)\n      -> (%t, %s)\n  return (%r)\n";
    }
    auto g = parseIR(ir);
    Tensor x = Tensor::rand({256, 512}, DType::Float64, 3, 0.5, 1.0);
    const size_t before = cpuMemoryStats().currentBytes;
    resetCpuPeak();
    auto out = run(*g, {x});
    EXPECT_LE(cpuMemoryStats().peakBytes - before, 4 * kMiB) << (inLoop ? "in a loop" : "straight");
    // x * 2^40 + x; in the loop, the second trip adds x * 2^40 to the first trip's result.
    const double scale = std::ldexp(1.0, 40);
    for (int64_t i = 0; i < x.numel(); i += 4099) {
      double want = inLoop ? x.item(i) * scale + (x.item(i) * scale + x.item(i)) : x.item(i) * scale + x.item(i);
      EXPECT_DOUBLE_EQ(out[0].toTensor().item(i), want) << i;
    }
  }
}

// Note [Run plans]: the top block's slots are reused once their values are dropped. A chain whose
// early values die while a value from before them (%keep) is still to be read, after them, by an If's
// branch; a value returned twice, and an input returned as it is. Each result against the same ops
// called directly. Run twice through one RunPlanCache: the second run reuses the plan.
TEST(Interpreter, ReusedSlotsKeepLiveValuesAndOutputsMayRepeat) {
  auto g = parseIR(R"IR(graph(%x : Double(3, 4), %c : bool):
  %one : int = prim::Constant[value=1]()
  %keep : Tensor = aten::tanh(%x)
  %a : Tensor = aten::sigmoid(%x)
  %b : Tensor = aten::neg(%a)
  %d : Tensor = aten::exp(%b)
  %e : Tensor = aten::add(%d, %d, %one)
  %r : Tensor = prim::If(%c)
    block0():
      %s : Tensor = aten::mul(%keep, %e)
      -> (%s)
    block1():
      %t : Tensor = aten::sub(%e, %keep, %one)
      -> (%t)
  return (%r, %e, %r, %x)
)IR");
  Tensor x = Tensor::rand({3, 4}, DType::Float64, 9);
  const Tensor e = ops::mul(ops::exp(ops::neg(ops::sigmoid(x))), Tensor::scalar(2.0, DType::Float64));
  RunPlanCache plans;
  for (bool c : {true, false, true}) {
    auto out = Interpreter(*g, nullptr, nullptr, &plans).run({x, c});
    ASSERT_EQ(out.size(), 4u);
    const Tensor want = c ? ops::mul(ops::tanh(x), e) : ops::sub(e, ops::tanh(x));
    EXPECT_LE(test::relError(out[0].toTensor(), want), 1e-15) << c;
    EXPECT_LE(test::relError(out[2].toTensor(), want), 1e-15) << c;
    EXPECT_LE(test::relError(out[1].toTensor(), e), 1e-15) << c;
    EXPECT_EQ(out[3].toTensor().rawData(), x.rawData()) << "an input returned as it is";
  }
}

// A weight shared by many small products is packed once per run (runtime/gemm.h, PackedGemmB): an unrolled
// chain of three products by one %w; a loop whose body multiplies by an outer %wt (a transposed view);
// a loop whose body makes its own weight each trip (it must be packed again, not reused stale). Every
// result agrees with ops::mm, and the packed path is what ran where this CPU has it.
TEST(Interpreter, SharedMatmulWeightsArePackedOncePerRun) {
  auto chain = parseIR(R"IR(graph(%x : Float(8, 96), %w : Float(96, 96)):
  %a : Tensor = aten::mm(%x, %w)
  %b : Tensor = aten::tanh(%a)
  %c : Tensor = aten::mm(%b, %w)
  %d : Tensor = aten::tanh(%c)
  %e : Tensor = aten::mm(%d, %w)
  return (%e)
)IR");
  auto loop = parseIR(R"IR(graph(%x : Float(8, 96), %w : Float(96, 96), %n : int):
  %t : bool = prim::Constant[value=1]()
  %wt : Tensor = aten::t(%w)
  %y : Tensor = prim::Loop(%n, %t, %x)
    block0(%i : int, %h : Tensor):
      %p : Tensor = aten::mm(%h, %wt)
      %q : Tensor = aten::tanh(%p)
      -> (%t, %q)
  return (%y)
)IR");
  auto fresh = parseIR(R"IR(graph(%x : Float(8, 96), %w : Float(96, 96), %n : int):
  %t : bool = prim::Constant[value=1]()
  %y : Tensor, %v : Tensor = prim::Loop(%n, %t, %x, %w)
    block0(%i : int, %h : Tensor, %u : Tensor):
      %u2 : Tensor = aten::tanh(%u)
      %p : Tensor = aten::mm(%h, %u2)
      %q : Tensor = aten::mm(%p, %u2)
      %r : Tensor = aten::tanh(%q)
      -> (%t, %r, %u2)
  return (%y)
)IR");
  Tensor x = Tensor::rand({8, 96}, DType::Float32, 1, -1, 1);
  Tensor w = Tensor::rand({96, 96}, DType::Float32, 2, -0.2, 0.2);
  const bool packs = PackedGemmB::available() && PackedGemmB::pack(8, 96, 96, w.data<float>(), 96, false);

  Tensor want = x;
  for (int s = 0; s < 3; ++s) want = ops::mm(s ? ops::tanh(want) : want, w);
  uint64_t before = packedGemmCount();
  EXPECT_LE(test::relError(run(*chain, {x, w})[0].toTensor(), want), 1e-6);
  EXPECT_EQ(packedGemmCount() - before, packs ? 3u : 0u);

  want = x;
  for (int s = 0; s < 4; ++s) want = ops::tanh(ops::mm(want, w.t()));
  before = packedGemmCount();
  EXPECT_LE(test::relError(run(*loop, {x, w, int64_t{4}})[0].toTensor(), want), 1e-6);
  EXPECT_EQ(packedGemmCount() - before, packs ? 4u : 0u);

  want = x;
  Tensor u = w;
  for (int s = 0; s < 3; ++s) {
    u = ops::tanh(u);
    want = ops::tanh(ops::mm(ops::mm(want, u), u));
  }
  before = packedGemmCount();
  EXPECT_LE(test::relError(run(*fresh, {x, w, int64_t{3}})[0].toTensor(), want), 1e-6);
  EXPECT_EQ(packedGemmCount() - before, packs ? 6u : 0u);

  // contiguous-operands' copy of a transposed weight is skipped when only packed products read it, and
  // made when anything else does (here the graph's output, which must then be row-major).
  for (bool returned : {false, true}) {
    auto g = parseIR(fmt::format(R"IR(graph(%x : Float(8, 96), %w : Float(96, 96)):
  %wt : Tensor = aten::t(%w)
  %wc : Tensor = aten::contiguous(%wt)
  %a : Tensor = aten::mm(%x, %wc)
  %b : Tensor = aten::mm(%a, %wc)
  return (%b{})
)IR", returned ? ", %wc" : ""));
    before = packedGemmCount();
    auto out = run(*g, {x, w});
    EXPECT_LE(test::relError(out[0].toTensor(), ops::mm(ops::mm(x, w.t()), w.t())), 1e-6);
    EXPECT_EQ(packedGemmCount() - before, packs ? 2u : 0u);
    if (returned) {
      EXPECT_TRUE(out[1].toTensor().isContiguous());
      EXPECT_EQ(test::relError(out[1].toTensor(), w.t()), 0.0);
    }
  }

  // One product alone is not packed: nothing to amortize the packing over.
  auto single = parseIR("graph(%x : Float(8, 96), %w : Float(96, 96)):\n  %a : Tensor = aten::mm(%x, %w)\n  return (%a)\n");
  before = packedGemmCount();
  EXPECT_LE(test::relError(run(*single, {x, w})[0].toTensor(), ops::mm(x, w)), 1e-6);
  EXPECT_EQ(packedGemmCount(), before);
}

}  // namespace
}  // namespace gj
