// The legacy fuser: group structure, fused vs unfused numerics, the kernel cache, kernel dumps,
// compile-failure fallback, and NVRTC compiles of every CUDA kernel the models produce.
#include "executors/function.h"
#include "executors/interpreter.h"
#include "ir/parser.h"
#include "executors/pipeline.h"
#include "fusers/group_rules.h"
#include "fusers/legacy/codegen.h"
#include "fusers/legacy/kernel_spec.h"
#include "fusers/te/interpreter.h"
#include "fusers/te/lowering.h"
#include "fusers/te/printer.h"
#include "ir/printer.h"
#include "models/lstm.h"
#include "passes/shape_propagation.h"
#include "passes/util.h"
#include "runtime/ops/ops.h"
#include "runtime/cuda/device.h"
#include "runtime/nvrtc.h"
#include "tests/support/build_config.h"
#include "tests/support/filecheck.h"
#include "tests/support/kernel_dump.h"
#include "tests/support/reference.h"

#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <map>
#include <set>

namespace gj {
namespace {

// A specialized plan (complete input types, as the executors make) with the legacy fuser.
Plan fusedPlan(const Model& m, bool withGrad, bool unroll = true) {
  auto g = std::shared_ptr<Graph>(m.graph->clone());
  std::vector<bool> rg;
  for (Value* in : g->inputs()) rg.push_back(withGrad && isFloating(*in->type().dtype));
  PipelineOptions o;
  o.fuser = FuserKind::Legacy;
  o.unrollLoops = unroll;
  o.passes.verifyEach = true;
  return optimizeSpecialized(g, rg, o);
}

size_t countGroups(const Graph& g) {
  size_t n = 0;
  forEachNode(g.block(), [&](Node* node) { n += node->kind() == OpKind::FusionGroup; });
  return n;
}

std::vector<const Graph*> planGraphs(const Plan& p) {
  std::vector<const Graph*> gs = {p.graph.get()};
  for (const auto& [node, grad] : p.gradients) gs.insert(gs.end(), {grad->forward.get(), grad->backward.get()});
  return gs;
}

TEST(LegacyFuser, LstmCellForwardIsOneGroup) {
  SKIP_WITHOUT_LLVM();
  Plan p = fusedPlan(buildLstmCell(3, 4, 5), false);
  EXPECT_EQ(countGroups(*p.graph), 1u) << printIR(*p.graph);
  std::string text = printIR(*p.graph);
  // Nothing pointwise is left outside the group: before the group's subgraph, no sigmoid or tanh.
  for (const char* op : {"aten::sigmoid", "aten::tanh("})
    EXPECT_FILECHECK(text, fmt::format("CHECK-NOT: {}\nCHECK: with prim::FusionGroup_0\nCHECK: {}", op, op));
  EXPECT_EQ(p.fusion.warnings.size(), 0u);
  EXPECT_EQ(p.kernels.size(), 1u);
}

TEST(LegacyFuser, LstmCellBackwardHasAtMostTwoGroups) {
  Plan p = fusedPlan(buildLstmCell(3, 4, 5), true);
  ASSERT_EQ(p.gradients.size(), 1u);
  const Gradient& g = *p.gradients.begin()->second;
  EXPECT_EQ(countGroups(*g.forward), 1u) << printIR(*g.forward);
  size_t backward = countGroups(*g.backward);
  EXPECT_GE(backward, 1u) << printIR(*g.backward);
  EXPECT_LE(backward, 2u) << printIR(*g.backward);
}

TEST(LegacyFuser, UnrolledLstmHasOneGroupPerStep) {
  Plan p = fusedPlan(buildLstm(LstmVariantKind::Jit, {5, 3, 4, 6, 1}), false);
  EXPECT_EQ(countGroups(*p.graph), 5u) << printIR(*p.graph);
}

// Fused and unfused runs agree on random inputs, at odd sizes (tails of the vector loops, size-1 dims).
// A stacked LSTM: the upper layers' loops run over the stacked outputs of the layer below, whose length
// is known only once that layer is unrolled; the pipeline's rounds of unrolling unroll every layer, one
// group per step and layer, and the result matches the model's eager kernels.
TEST(LegacyFuser, EveryLayerOfAStackedLstmUnrolls) {
  Model m = buildLstm(LstmVariantKind::Jit, {7, 3, 4, 5, 3});
  Plan p = fusedPlan(m, false);
  size_t loops = 0;
  forEachNode(p.graph->block(), [&](Node* n) { loops += n->kind() == OpKind::Loop; });
  EXPECT_EQ(loops, 0u) << printIR(*p.graph);
  EXPECT_EQ(countGroups(*p.graph), 21u);
  auto in = randomInputs(m, 5);
  auto out = Interpreter(*p.graph, nullptr, &p.kernels).run(std::vector<IValue>(in.begin(), in.end()));
  auto ref = m.eager(in);
  ASSERT_EQ(out.size(), ref.size());
  for (size_t k = 0; k < ref.size(); ++k) EXPECT_LE(test::relError(out[k].toTensor(), ref[k]), 1e-5) << k;
}

TEST(LegacyFuser, FusedMatchesUnfusedAtOddSizes) {
  for (LstmParams lp : {LstmParams{3, 1, 3, 1, 1}, LstmParams{4, 3, 7, 17, 2}, LstmParams{2, 5, 33, 67, 1}}) {
    Model m = buildLstm(LstmVariantKind::JitPremul, lp);
    auto in = randomInputs(m, 21);
    std::vector<bool> rg(in.size(), true);
    std::vector<std::vector<Tensor>> grads;
    std::vector<std::vector<IValue>> outs;
    for (FuserKind f : {FuserKind::None, FuserKind::Legacy}) {
      Function fn(*m.graph, {.fuser = f, .executor = ExecutorKind::Legacy});
      outs.push_back(fn.forward(std::vector<IValue>(in.begin(), in.end()), rg));
      std::vector<Tensor> go;
      for (const IValue& o : outs.back()) go.push_back(Tensor::rand(o.toTensor().sizes(), DType::Float32, 5));
      grads.push_back(fn.backward(go));
      if (f == FuserKind::Legacy) {
        EXPECT_GT(fn.stats().fusionGroups, 0) << fn.stats().str();
      }
    }
    for (size_t i = 0; i < outs[0].size(); ++i)
      EXPECT_LE(test::relError(outs[1][i].toTensor(), outs[0][i].toTensor()), 1e-6) << "output " << i;
    for (size_t i = 0; i < grads[0].size(); ++i) EXPECT_LE(test::relError(grads[1][i], grads[0][i]), 1e-5) << i;
  }
}

TEST(LegacyFuser, Float64KernelsMatchTheInterpreter) {
  const char* ir = R"IR(graph(%x : Double(3, 7), %y : Double(7)):
  %one : int = prim::Constant[value=1]()
  %h : float = prim::Constant[value=0.5]()
  %a : Tensor = aten::add(%x, %y, %h)
  %b : Tensor = aten::sigmoid(%a)
  %c : Tensor = aten::tanh(%b)
  %d : Tensor = aten::exp(%c)
  %e : Tensor = aten::log(%d)
  %f : Tensor = aten::sqrt(%e)
  %r : Tensor = aten::relu(%f)
  %o : Tensor = aten::sub(%r, %x, %one)
  return (%o)
)IR";
  auto g = parseIR(ir);
  Function f(*g, {.fuser = FuserKind::Legacy, .executor = ExecutorKind::Legacy});
  std::vector<IValue> in = {Tensor::rand({3, 7}, DType::Float64, 1, 0.1, 2), Tensor::rand({7}, DType::Float64, 2)};
  auto fused = f.forward(in);
  auto ref = Interpreter(*g).run(in);
  EXPECT_EQ(f.stats().fusionGroups, 1) << f.stats().str();
  EXPECT_LE(test::relError(fused[0].toTensor(), ref[0].toTensor()), 1e-14);
}

// a and b hold the same bytes: dtype, sizes and every element's bits (a may be on the device).
bool bitForBit(const Tensor& a, const Tensor& b) {
  const Tensor x = a.to(DeviceKind::Cpu).contiguous(), y = b.contiguous();
  return x.dtype() == y.dtype() && x.sizes() == y.sizes() &&
         std::memcmp(x.rawData(), y.rawData(), static_cast<size_t>(x.numel()) * dtypeSize(x.dtype())) == 0;
}

// g under each fuser, on the CPU (with LLVM) and the device (when there is one), makes `groups` fusion groups
// that run, and gives the interpreter's results `ref` bit for bit.
void expectFusedBitForBit(const Graph& g, const std::vector<IValue>& in, const std::vector<IValue>& ref,
                          std::initializer_list<FuserKind> fusers, int64_t groups) {
  std::vector<DeviceKind> devices;
  if (test::kHaveLlvm) devices.push_back(DeviceKind::Cpu);
  if (cuda::available()) devices.push_back(DeviceKind::Cuda);
  for (FuserKind fk : fusers)
    for (DeviceKind d : devices) {
      const std::string where = fmt::format("fuser {} on {}", fuserName(fk), deviceName(d));
      Function f(g, {.fuser = fk, .executor = ExecutorKind::Legacy, .device = d});
      std::vector<IValue> on;
      for (const IValue& v : in) on.push_back(v.toTensor().to(d));
      auto out = f.forward(on);
      EXPECT_EQ(f.stats().fusionGroups, groups) << where << ": " << f.stats().str();
      EXPECT_GE(f.stats().kernelRuns, 1) << where << ": " << f.stats().str();
      for (size_t i = 0; i < ref.size(); ++i)
        EXPECT_TRUE(bitForBit(out[i].toTensor(), ref[i].toTensor())) << where << ", output " << i;
    }
}

// The groups fuser fk makes of g, checked without a device: on a TE group whose inputs are graph inputs the
// TE interpreter gives the graph outputs the group holds as `ref` does, bit for bit; NVRTC compiles every
// group's CUDA C without a word. Returns each group's CUDA C.
std::vector<std::string> checkGroupsOffline(const Graph& g, const std::vector<IValue>& in,
                                            const std::vector<IValue>& ref, FuserKind fk) {
  PipelineOptions o;
  o.fuser = fk;
  Plan plan = optimizeSpecialized(std::shared_ptr<Graph>(g.clone()), std::vector<bool>(in.size(), false), o);
  std::vector<std::string> sources;
  forEachNode(plan.graph->block(), [&](Node* n) {
    if (!n->subgraph() || (n->kind() != OpKind::FusionGroup && n->kind() != OpKind::TensorExprGroup)) return;
    std::string src;
    if (fk == FuserKind::Legacy) {
      src = legacy::emitCudaKernel(legacy::buildKernelSpec(*n->subgraph()), "k");
    } else {
      std::vector<Tensor> args;
      const auto& graphIns = plan.graph->inputs();
      for (const Value* v : n->inputs())
        if (auto at = std::find(graphIns.begin(), graphIns.end(), v); at != graphIns.end())
          args.push_back(in[at - graphIns.begin()].toTensor());
      te::LoopNest nest = te::lowerGroup(*n->subgraph());
      nest.lowerReductions();
      const auto outs = args.size() == n->inputs().size() ? te::interpret(nest, args) : std::vector<Tensor>{};
      const auto& graphOuts = plan.graph->outputs();
      for (size_t i = 0; i < outs.size(); ++i) {
        auto at = std::find(graphOuts.begin(), graphOuts.end(), n->output(i));
        if (at == graphOuts.end()) continue;
        EXPECT_TRUE(bitForBit(outs[i], ref[at - graphOuts.begin()].toTensor())) << "TE interpreter, output " << i;
      }
      const te::LoopNest gpu = te::gpuLoopNest(*n->subgraph(), {});
      src = te::CudaPrinter().kernel("k", gpu.inputs(), gpu.outputs(), gpu.root());
    }
    if (haveNvrtc()) {
      auto r = nvrtcCompile(src, "k", "sm_90");
      EXPECT_TRUE(r.ok()) << r.error().what() << "\n" << src;
      if (r.ok()) {
        EXPECT_TRUE(r.value().log.empty()) << r.value().log << "\n" << src;
      }
    }
    sources.push_back(std::move(src));
  });
  return sources;
}

// float16 and bfloat16 in a group of either fuser: loaded as floats, every op's result rounded to its dtype at
// once and numbers to the dtype they meet (0.1 beside float16), as the unfused ops do, so the group's results
// are the interpreter's bit for bit (ops whose float32 code is exact: products, sums, quotients, sqrt, relu,
// comparisons), at NaN, the infinities, ties, subnormals and overflow; on the CPU, the device when there is
// one, the TE interpreter on the group's nest, and NVRTC compiles both fusers' kernels.
TEST(Fusers, HalfAndBFloat16GroupsAreTheInterpretersBitForBit) {
  const char* ir = R"IR(graph(%x : Half(3, 5), %y : Half(5), %u : BFloat16(3, 5)):
  %one : int = prim::Constant[value=1]()
  %tenth : float = prim::Constant[value=0.1]()
  %a : Tensor = aten::mul(%x, %tenth)
  %b : Tensor = aten::add(%a, %y, %one)
  %c : Tensor = aten::div(%b, %x)
  %d : Tensor = aten::sqrt(%c)
  %e : Tensor = aten::relu(%d)
  %m : Tensor = aten::lt(%b, %tenth)
  %v : Tensor = aten::mul(%u, %tenth)
  %w : Tensor = aten::add(%v, %u, %one)
  %q : Tensor = aten::sub(%w, %b, %one)
  return (%e, %m, %w, %q)
)IR";
  auto g = parseIR(ir);
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  std::vector<IValue> in = {
      Tensor::fromVector({3, 5}, {1.0, -2.5, 65504.0, 6.1e-5, -0.0, nan, inf, 3.0, 0.30004882812, 1e-7, 2049.0, -7.0,
                                  0.5, 100.0, -inf}, DType::Float16),
      Tensor::fromVector({5}, {0.25, -1.0, 1e-4, 3.5, 60000.0}, DType::Float16),
      Tensor::fromVector({3, 5}, {1.5, -3.0e38, 1.0e-38, 0.1, -0.0, nan, -inf, 2.5, 3.0e38, 7.0, 0.3, -0.2, 1e3, 4.0,
                                  1.0}, DType::BFloat16)};
  const auto ref = Interpreter(*g).run(in);
  expectFusedBitForBit(*g, in, ref, {FuserKind::Legacy, FuserKind::Te}, 1);
  for (FuserKind fk : {FuserKind::Legacy, FuserKind::Te}) {
    const std::vector<std::string> sources = checkGroupsOffline(*g, in, ref, fk);
    EXPECT_EQ(sources.size(), 1u) << fuserName(fk);
    for (const std::string& src : sources) EXPECT_NE(src.find("gjHalfBits"), std::string::npos) << src;
  }
}

// float16 and bfloat16 in the TE fuser's reductions, softmax and cat: loaded widened to float32, summed,
// averaged and normalized in float32 and rounded once as stored, as the unfused ops (and PyTorch's kernels)
// compute them. The values are such that float32's sums are exact, so the group is the interpreter's bit for
// bit on the CPU, the device when there is one and the TE interpreter, and NVRTC compiles its kernel.
TEST(Fusers, TeReductionsSoftmaxAndCatOfFloat16AreTheInterpretersBitForBit) {
  auto g = parseIR(R"IR(graph(%x : Half(4, 6), %b : BFloat16(4, 6)):
  %one : int = prim::Constant[value=1]()
  %d : int[] = prim::Constant[value=[1]]()
  %no : bool = prim::Constant[value=0]()
  %a : Tensor = aten::mul(%x, %x)
  %s : Tensor = aten::sum(%a, %d, %no)
  %e : Tensor = aten::add(%b, %b, %one)
  %m : Tensor = aten::mean(%e, %d, %no)
  %p : Tensor = aten::softmax(%e, %one)
  %n : Tensor = aten::neg(%x)
  %l : Tensor[] = prim::ListConstruct(%a, %n)
  %c : Tensor = aten::cat(%l, %one)
  return (%s, %m, %p, %c)
)IR");
  std::vector<double> xs, bs;
  for (int i = 0; i < 24; ++i) {
    xs.push_back((i % 7 - 3) * 0.375 + (i % 2 ? 0.125 : 0.0));
    bs.push_back((i % 5 - 2) * 1.5 + 0.25 * (i % 3));
  }
  std::vector<IValue> in = {Tensor::fromVector({4, 6}, xs, DType::Float16), Tensor::fromVector({4, 6}, bs, DType::BFloat16)};
  const auto ref = Interpreter(*g).run(in);
  ASSERT_EQ(ref[0].toTensor().dtype(), DType::Float16);
  ASSERT_EQ(ref[1].toTensor().dtype(), DType::BFloat16);
  expectFusedBitForBit(*g, in, ref, {FuserKind::Te}, 1);
  PipelineOptions o;
  o.fuser = FuserKind::Te;
  Plan plan = optimizeSpecialized(std::shared_ptr<Graph>(g->clone()), {false, false}, o);
  size_t reductions = 0;
  forEachNode(plan.graph->block(), [&](Node* n) {
    if (n->kind() != OpKind::TensorExprGroup) return;
    for (const Node* m : *n->subgraph()->block())
      reductions += m->kind() == OpKind::SumDim || m->kind() == OpKind::MeanDim || m->kind() == OpKind::Softmax ||
                    m->kind() == OpKind::Cat;
  });
  EXPECT_EQ(reductions, 4u) << "the sum, mean, softmax and cat are in TE groups";
  EXPECT_EQ(checkGroupsOffline(*g, in, ref, FuserKind::Te).size(), 1u);
}

// Integer groups in either fuser, computed in int64: sums, differences, products and negations wrap (int64's
// ends, INT64_MIN's negation), each narrow result is truncated to its dtype at once (uint8 200 + 200 is 144,
// int8 -128 * -1 is -128), uint8 beside int8 meets in int16, numbers beside int8 are truncated first (300 is
// 44), comparisons, where, clamp, abs, sign and relu are exact, and so are floor and trunc division,
// remainder and fmod by constants (of both signs, INT64_MIN among the dividends); so the group's results are
// the interpreter's bit for bit on the CPU, the device when there is one, the TE interpreter on the group's
// nest, and NVRTC compiles both fusers' kernels.
TEST(Fusers, IntegerGroupsAreTheInterpretersBitForBit) {
  const char* ir = R"IR(graph(%x : Long(3, 5), %y : Int(5), %u : Byte(3, 5), %c : Char(3, 5), %m : Bool(3, 5)):
  %one : int = prim::Constant[value=1]()
  %three : int = prim::Constant[value=3]()
  %lo : int = prim::Constant[value=-100]()
  %hi : int = prim::Constant[value=300]()
  %a : Tensor = aten::add(%x, %y, %three)
  %n : Tensor = aten::neg(%a)
  %p : Tensor = aten::mul(%n, %x)
  %r : Tensor = aten::relu(%p)
  %k : Tensor = aten::clamp(%p, %lo, %hi)
  %l : Tensor = aten::lt(%p, %x)
  %w : Tensor = aten::where(%m, %r, %a)
  %b : Tensor = aten::add(%u, %u, %one)
  %q : Tensor = aten::mul(%c, %c)
  %d : Tensor = aten::sub(%u, %c, %one)
  %e : Tensor = aten::abs(%c)
  %f : Tensor = aten::sign(%d)
  %g : Tensor = aten::add(%c, %hi, %one)
  %h : Tensor = aten::ge(%m, %l)
  %i : Tensor = aten::maximum(%q, %y)
  %m3 : int = prim::Constant[value=-3]()
  %five : int = prim::Constant[value=5]()
  %j : Tensor = prim::div_floor(%x, %m3)
  %t : Tensor = prim::div_trunc(%c, %five)
  %o : Tensor = aten::remainder(%x, %five)
  %z : Tensor = aten::fmod(%c, %m3)
  %s : Tensor = aten::remainder(%d, %m3)
  return (%k, %l, %w, %b, %q, %d, %e, %f, %g, %h, %i, %j, %t, %o, %z, %s)
)IR";
  auto g = parseIR(ir);
  auto ints = [](Shape shape, std::vector<int64_t> values, DType t) {
    Tensor x = Tensor::empty(shape, DType::Int64);
    std::copy(values.begin(), values.end(), x.data<int64_t>());
    return x.to(t);
  };
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max(), kMin = std::numeric_limits<int64_t>::min();
  std::vector<IValue> in = {
      ints({3, 5}, {kMax, kMin, -1, 0, 7, 3037000500, -3037000500, 1, 2, -2, 100, -100, 65536, 4294967296, 5},
           DType::Int64),
      ints({5}, {2147483647, -2147483648, 3, -7, 0}, DType::Int32),
      ints({3, 5}, {200, 255, 0, 1, 128, 127, 100, 3, 250, 17, 6, 99, 255, 254, 64}, DType::UInt8),
      ints({3, 5}, {-128, 127, -1, 0, 1, 100, -100, 12, -12, 64, -64, 2, 3, 127, -127}, DType::Int8),
      ints({3, 5}, {1, 0, 1, 1, 0, 0, 1, 0, 1, 0, 1, 1, 0, 0, 1}, DType::Bool)};
  const auto ref = Interpreter(*g).run(in);
  ASSERT_EQ(ref[3].toTensor().dtype(), DType::UInt8);
  EXPECT_EQ(ref[3].toTensor().to(DType::Int64).data<int64_t>()[0], 144);  // 200 + 200 in uint8
  EXPECT_EQ(ref[5].toTensor().dtype(), DType::Int16);                    // uint8 - int8
  EXPECT_EQ(ref[8].toTensor().to(DType::Int64).data<int64_t>()[1], -85);  // 127 + 44 (300 as int8), wrapped
  expectFusedBitForBit(*g, in, ref, {FuserKind::Legacy, FuserKind::Te}, 1);
  for (FuserKind fk : {FuserKind::Legacy, FuserKind::Te})
    EXPECT_EQ(checkGroupsOffline(*g, in, ref, fk).size(), 1u) << fuserName(fk);
}

// An integer division joins a group only by a constant other than 0 (PyTorch's error, which the unfused op
// raises) and -1 (INT64_MIN / -1 traps): by a tensor, by 0 or by -1 it stays out, saying why.
TEST(Fusers, AnIntegerDivisionFusesOnlyByASafeConstant) {
  auto g = parseIR(R"IR(graph(%x : Long(4), %y : Long(4)):
  %zero : int = prim::Constant[value=0]()
  %m1 : int = prim::Constant[value=-1]()
  %two : int = prim::Constant[value=2]()
  %a : Tensor = prim::div_floor(%x, %y)
  %b : Tensor = aten::remainder(%x, %zero)
  %c : Tensor = prim::div_trunc(%x, %m1)
  %d : Tensor = aten::fmod(%x, %two)
  return (%a, %b, %c, %d)
)IR");
  propagateShapes(*g);
  std::vector<std::string> why;
  for (const Node* n : *g->block())
    if (n->kind() != OpKind::Constant)
      why.push_back(fusion::pointwiseBlocker(n, false, fusion::SizeRule::Static, fusion::Admit::Integers));
  ASSERT_EQ(why.size(), 4u);
  for (size_t i = 0; i < 3; ++i) EXPECT_NE(why[i].find("constant divisor other than 0 and -1"), std::string::npos) << why[i];
  EXPECT_EQ(why[3], "");
  // Below the Integers level an integer op never joins.
  EXPECT_NE(fusion::pointwiseBlocker(g->outputs()[3]->node(), false, fusion::SizeRule::Static, fusion::Admit::Storage),
            "");
}

// Two groups whose nests differ only in an input's storage (float16 beside float32 computing in float32)
// are two kernels: the cache keys hold each buffer's dtype, so the second group gets a kernel of its own
// (the first's would refuse its float16 input, and the group would run unfused).
TEST(Fusers, AFloat16InputIsAnotherKernelThanAFloat32One) {
  const char* ir = R"IR(graph(%x : DT(3, 5), %y : Float(3, 5)):
  %one : int = prim::Constant[value=1]()
  %a : Tensor = aten::mul(%x, %y)
  %b : Tensor = aten::add(%a, %x, %one)
  return (%b)
)IR";
  auto typed = [&](const char* dt) {
    std::string s = ir;
    s.replace(s.find("DT"), 2, dt);
    return parseIR(s);
  };
  const Tensor y = Tensor::rand({3, 5}, DType::Float32, 2, -1.0, 1.0);
  for (FuserKind fk : {FuserKind::Legacy, FuserKind::Te}) {
    if (!test::kHaveLlvm) break;
    for (const char* dt : {"Float", "Half"}) {
      auto g = typed(dt);
      const Tensor x = Tensor::rand({3, 5}, std::string(dt) == "Half" ? DType::Float16 : DType::Float32, 1, 0.5, 2.0);
      const auto ref = Interpreter(*g).run({IValue(x), IValue(y)});
      Function f(*g, {.fuser = fk, .executor = ExecutorKind::Legacy});
      const auto out = f.forward({IValue(x), IValue(y)});
      EXPECT_EQ(f.stats().fusionGroups, 1) << fuserName(fk) << " " << dt << ": " << f.stats().str();
      EXPECT_GE(f.stats().kernelRuns, 1) << fuserName(fk) << " " << dt << ": " << f.stats().str();
      EXPECT_EQ(f.stats().kernelRefusals, 0) << fuserName(fk) << " " << dt << ": " << f.stats().str();
      EXPECT_LE(test::relError(out[0].toTensor(), ref[0].toTensor()), 1e-6) << fuserName(fk) << " " << dt;
    }
  }
}

TEST(LegacyFuser, NanAndInfPropagateAsUnfused) {
  const char* ir = R"IR(graph(%x : Float(2, 4)):
  %a : Tensor = aten::sigmoid(%x)
  %b : Tensor = aten::tanh(%x)
  %c : Tensor = aten::exp(%x)
  %d : Tensor = aten::relu(%x)
  return (%a, %b, %c, %d)
)IR";
  auto g = parseIR(ir);
  Function f(*g, {.fuser = FuserKind::Legacy, .executor = ExecutorKind::Legacy});
  double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  Tensor x = Tensor::fromVector({2, 4}, {nan, inf, -inf, 0.0, 100.0, -100.0, 1e-6, -3.0});
  auto fused = f.forward({x});
  auto ref = Interpreter(*g).run({x});
  EXPECT_EQ(f.stats().fusionGroups, 1);
  for (size_t k = 0; k < ref.size(); ++k)
    for (int64_t i = 0; i < 8; ++i) {
      double a = fused[k].toTensor().item(i), b = ref[k].toTensor().item(i);
      if (std::isnan(b)) {
        EXPECT_TRUE(std::isnan(a)) << "output " << k << " element " << i;
      } else if (std::isinf(b)) {
        EXPECT_EQ(a, b) << "output " << k << " element " << i;
      } else {
        EXPECT_NEAR(a, b, 1e-6 * std::max(1.0, std::abs(b))) << "output " << k << " element " << i;
      }
    }
}

// amax's gradient, fused or not: a tie shares it, and a row holding NaN (whose amax is NaN) gets NaN in
// every element, as PyTorch's (its mask `self == amax` is false everywhere there and the count 0).
TEST(Fusers, AmaxGradientSharesTiesAndIsNanInARowHoldingNan) {
  const char* ir = R"IR(graph(%x : Float(3, 4)):
  %last : int[] = prim::Constant[value=[-1]]()
  %no : bool = prim::Constant[value=0]()
  %e : Tensor = aten::tanh(%x)
  %a : Tensor = aten::amax(%e, %last, %no)
  return (%a)
)IR";
  const double nan = std::nan("");
  Tensor x = Tensor::fromVector({3, 4}, {0.1, 0.5, 0.5, -0.2, nan, 0.1, 0.2, 0.3, -0.1, -0.3, 0.05, -0.7});
  Tensor gy = Tensor::fromVector({3}, {2.0, 3.0, 4.0});
  auto dtanh = [](double v) { return 1 - std::tanh(v) * std::tanh(v); };
  const std::vector<double> want = {0, 1 * dtanh(0.5), 1 * dtanh(0.5), 0, nan, nan, nan, nan, 0, 0, 4 * dtanh(0.05), 0};
  for (FuserKind fuser : allFusers()) {
    Function f(*parseIR(ir), {.fuser = fuser, .executor = ExecutorKind::Legacy});
    f.forward({x}, {true});
    Tensor g = f.backward({gy})[0];
    for (int64_t i = 0; i < 12; ++i) {
      const double got = g.item(i), w = want[static_cast<size_t>(i)];
      if (std::isnan(w)) {
        EXPECT_TRUE(std::isnan(got)) << fuserName(fuser) << " element " << i << ": " << got;
      } else {
        EXPECT_NEAR(got, w, 1e-6) << fuserName(fuser) << " element " << i;
      }
    }
  }
}

// pow(x, e)'s gradients where x or e is 0, fused or not, as PyTorch 1.13 gives them (torch.pow on these
// values): zero for x where e is 0, zero for e where x is 0 and e is not negative, inf and NaN elsewhere
// as the formulas give.
TEST(Fusers, PowGradientsAtAZeroBaseOrExponentAreTorchs) {
  const char* ir = R"IR(graph(%x : Float(6), %e : Float(6)):
  %y : Tensor = aten::pow(%x, %e)
  return (%y)
)IR";
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  Tensor x = Tensor::fromVector({6}, {0.0, 0.0, 0.5, 2.0, 0.0, -0.5});
  Tensor e = Tensor::fromVector({6}, {0.0, 2.0, 0.0, 1.5, -1.0, 0.0});
  Tensor gy = Tensor::fromVector({6}, {2.0, 3.0, 4.0, 5.0, 2.0, 3.0});
  const std::vector<double> wantX = {0, 0, 0, 10.606601717798213, -inf, 0};
  const std::vector<double> wantE = {0, 0, -2.772588722239781, 9.802581434685472, -inf, nan};
  for (FuserKind fuser : allFusers()) {
    Function f(*parseIR(ir), {.fuser = fuser, .executor = ExecutorKind::Legacy});
    f.forward({x, e}, {true, true});
    std::vector<Tensor> g = f.backward({gy});
    for (size_t k = 0; k < 2; ++k)
      for (int64_t i = 0; i < 6; ++i) {
        const double got = g[k].item(i), w = (k == 0 ? wantX : wantE)[static_cast<size_t>(i)];
        if (std::isnan(w)) {
          EXPECT_TRUE(std::isnan(got)) << fuserName(fuser) << " input " << k << " element " << i << ": " << got;
        } else if (std::isinf(w)) {
          EXPECT_EQ(got, w) << fuserName(fuser) << " input " << k << " element " << i;
        } else {
          EXPECT_NEAR(got, w, 1e-5 * std::max(1.0, std::abs(w))) << fuserName(fuser) << " input " << k << " element " << i;
        }
      }
  }
}

TEST(LegacyFuser, InjectedCompileFailureFallsBackWithCorrectResults) {
  auto c = test::loadCase("lstm_1layer");
  Model m = buildModel(c.model, c.config);
  Function f(*m.graph, {.fuser = FuserKind::Legacy, .executor = ExecutorKind::Legacy, .fuserOptions = {.injectCompileFailure = true}});
  auto in = test::inputsFor(m, c);
  auto outs = f.forward(std::vector<IValue>(in.begin(), in.end()));
  for (size_t i = 0; i < m.outputs.size(); ++i)
    EXPECT_LE(test::relError(outs[i].toTensor(), c.outputs.at(m.outputs[i])), 1e-5);
  FunctionStats s = f.stats();
  EXPECT_GT(s.fusionGroups, 0);
  EXPECT_EQ(s.kernelsCompiled, 0);
  ASSERT_FALSE(s.warnings.empty());
  EXPECT_NE(s.warnings[0].find("runs unfused: compile failure injected"), std::string::npos) << s.warnings[0];
}

TEST(LegacyFuser, KernelCacheIsSharedAcrossFunctions) {
  Model m = buildLstm(LstmVariantKind::Jit, {3, 2, 4, 9, 1});
  auto in = randomInputs(m, 3);
  Function a(*m.graph, {.fuser = FuserKind::Legacy, .executor = ExecutorKind::Legacy});
  a.forward(std::vector<IValue>(in.begin(), in.end()));
  Function b(*m.graph, {.fuser = FuserKind::Legacy, .executor = ExecutorKind::Legacy});
  b.forward(std::vector<IValue>(in.begin(), in.end()));
  EXPECT_GT(b.stats().fusionGroups, 0);
  EXPECT_EQ(b.stats().kernelsCompiled, 0) << "the second Function should reuse the first one's kernels";
}

// compileGroups prepares (lowers) each structurally distinct group once: an unrolled LSTM's steps are
// equal groups under different names. The oracle: each group printed with its names cleared (a clone
// numbers its values in order, so equal groups print alike).
// The groups of `kind` in g, and their bodies as printed without names (one string per structure).
std::pair<size_t, std::set<std::string>> groupStructures(const Graph& g, OpKind kind) {
  std::set<std::string> distinct;
  size_t groups = 0;
  forEachNode(g.block(), [&](Node* n) {
    if (n->kind() != kind) return;
    ++groups;
    auto anonymous = n->subgraph()->clone();
    forEachNode(anonymous->block(), [](Node* m) {
      for (Value* v : m->outputs()) v->setName("");
    });
    for (Value* v : anonymous->inputs()) v->setName("");
    distinct.insert(printIR(*anonymous));
  });
  return {groups, distinct};
}

TEST(CompileGroups, StructurallyEqualGroupsArePreparedOnce) {
  Plan p = fusedPlan(buildLstm(LstmVariantKind::Jit, {7, 3, 4, 6, 2}), false);
  struct Stub final : CompiledKernel {
    std::vector<Tensor> run(std::span<const Tensor* const>) const override { return {}; }
  };
  const auto [groups, distinct] = groupStructures(*p.graph, OpKind::FusionGroup);
  ASSERT_GE(groups, 14u) << printIR(*p.graph);
  ASSERT_LT(distinct.size(), groups);
  int prepared = 0;
  KernelTable kernels;
  FusionReport report;
  setKernelCacheCapacity(0);  // nothing from an earlier test
  setKernelCacheCapacity(kDefaultKernelCacheCapacity);
  compileGroups(*p.graph, OpKind::FusionGroup, FuserOptions{}, "fusion group", "gj_structure_test", kernels, report,
                [&](const Graph& sub) {
                  ++prepared;
                  return PreparedGroup{printIR(sub), [](const std::string&) { return std::make_shared<Stub>(); }};
                });
  EXPECT_EQ(static_cast<size_t>(prepared), distinct.size());
  EXPECT_EQ(kernels.size(), groups);
  EXPECT_EQ(static_cast<size_t>(report.groups), groups);
  EXPECT_EQ(static_cast<size_t>(report.kernelsCompiled + report.cacheHits), groups);
  EXPECT_TRUE(report.warnings.empty());
}

// Note [Shared group bodies]: both fusers give the alike groups of an unrolled stacked LSTM (forward and
// backward) one body per structure, and the plan computes what the model's eager kernels do.
TEST(Fusers, AlikeGroupsOfAnUnrolledLstmShareOneBody) {
  Model m = buildLstm(LstmVariantKind::Jit, {7, 3, 4, 6, 2});
  for (FuserKind f : {FuserKind::Legacy, FuserKind::Te}) {
    const OpKind kind = f == FuserKind::Legacy ? OpKind::FusionGroup : OpKind::TensorExprGroup;
    auto g = std::shared_ptr<Graph>(m.graph->clone());
    PipelineOptions o;
    o.fuser = f;
    o.passes.verifyEach = true;
    Plan p = optimizeSpecialized(g, std::vector<bool>(m.inputs.size(), true), o);
    for (const Graph* graph : planGraphs(p)) {
      const auto [groups, distinct] = groupStructures(*graph, kind);
      std::set<const Graph*> bodies;
      forEachNode(graph->block(), [&](Node* n) {
        if (n->kind() == kind) bodies.insert(n->subgraph().get());
      });
      EXPECT_EQ(bodies.size(), distinct.size()) << fuserName(f) << "\n" << printIR(*graph);
      if (graph != p.graph.get()) {
        EXPECT_GE(groups, 14u) << fuserName(f);  // a forward or backward graph: one group a step and layer at least
        EXPECT_LT(bodies.size(), groups) << fuserName(f);
      }
    }
    auto in = randomInputs(m, 5);
    Function fn(*m.graph, {.fuser = f, .executor = ExecutorKind::Legacy});
    auto out = fn.forward(std::vector<IValue>(in.begin(), in.end()), std::vector<bool>(in.size(), false));
    auto ref = m.eager(in);
    ASSERT_EQ(out.size(), ref.size());
    for (size_t k = 0; k < ref.size(); ++k) EXPECT_LE(test::relError(out[k].toTensor(), ref[k]), 1e-5) << fuserName(f) << k;
  }
}

TEST(LegacyFuser, DumpsEveryKernel) {
  SKIP_WITHOUT_LLVM();
  size_t ll = 0, opt = 0, cu = 0;
  // A size no other test compiles, so nothing comes from the cache.
  for (const auto& [name, text] : test::dumpedKernels(buildLstmCell(2, 3, 11), FuserKind::Legacy, "legacy_test")) {
    opt += name.ends_with(".opt.ll");
    ll += name.ends_with(".ll") && !name.ends_with(".opt.ll");
    cu += name.ends_with(".cu");
  }
  EXPECT_EQ(ll, 1u);
  EXPECT_EQ(opt, 1u);
  EXPECT_EQ(cu, 1u);
}

// Calls fn(model, plan graph, fusion node) for every fusion group of the models of tests/data
// (forward and backward, every LSTM variant).
void forEachModelFusionGroup(const std::function<void(const Model&, const Graph&, Node*)>& fn) {
  std::vector<Model> models;
  for (LstmVariantKind v : allLstmVariants()) models.push_back(buildLstm(v, {3, 2, 4, 5, 2}));
  for (const char* name : {"lstm_cell", "lstm_lm", "lstm_classifier", "linear", "softmax", "conv2d",
                           "multihead_attention"}) {
    auto c = test::loadCase(name);
    models.push_back(buildModel(c.model, c.config));
  }
  for (const Model& m : models)
    for (bool grad : {false, true}) {
      Plan p = fusedPlan(m, grad);
      for (const Graph* g : planGraphs(p))
        forEachNode(g->block(), [&](Node* n) {
          if (n->kind() == OpKind::FusionGroup) fn(m, *g, n);
        });
    }
}

// Every CUDA kernel the models of tests/data produce (forward and backward, every LSTM variant)
// compiles with NVRTC for sm_80 and sm_90 without a warning. Needs NVRTC, not a GPU.
TEST(LegacyFuserCuda, EveryModelKernelCompilesWithNvrtc) {
  if (!haveNvrtc()) GTEST_SKIP() << "built without CUDA (GJ_WITH_CUDA=OFF)";
  std::set<std::string> sources;  // the same group at the same sizes gives the same kernel: compile it once
  forEachModelFusionGroup([&](const Model& m, const Graph&, Node* n) {
    std::string src = legacy::emitCudaKernel(legacy::buildKernelSpec(*n->subgraph()), "k");
    if (!sources.insert(src).second) return;
    for (const char* arch : {"sm_80", "sm_90"}) {
      auto r = nvrtcCompile(src, "k", arch);
      ASSERT_TRUE(r.ok()) << m.name << ": " << r.error().what() << "\n" << src;
      EXPECT_TRUE(r.value().log.empty()) << m.name << " " << arch << ": " << r.value().log << "\n" << src;
      EXPECT_NE(r.value().ptx.find(".entry k"), std::string::npos);
      EXPECT_FALSE(r.value().cubin.empty()) << "no machine code for " << arch;
    }
  });
  EXPECT_GE(sources.size(), 10u);
}

// ptxas' report (NVRTC runs it in-process) on the fastrnns LSTM's CUDA kernels, forward and backward, of
// both fusers, for sm_90: every kernel keeps its values in registers (no spill stores or loads), and the
// report is read (a register count for each). Needs NVRTC, not a GPU.
TEST(CudaKernels, LstmKernelsOfBothFusersDoNotSpill) {
  if (!haveNvrtc()) GTEST_SKIP() << "built without CUDA (GJ_WITH_CUDA=OFF)";
  Model m = buildLstm(LstmVariantKind::Jit, {3, 64, 512, 512, 1});
  for (FuserKind kind : {FuserKind::Legacy, FuserKind::Te}) {
    PipelineOptions o;
    o.fuser = kind;
    Plan p = optimizeSpecialized(std::shared_ptr<Graph>(m.graph->clone()), std::vector<bool>(m.inputs.size(), true), o);
    std::vector<const Graph*> graphs = {p.graph.get()};
    for (const auto& [node, gr] : p.gradients) graphs.insert(graphs.end(), {gr->forward.get(), gr->backward.get()});
    std::unique_ptr<Fuser> cuda = makeFuser(kind, {.device = DeviceKind::Cuda});
    std::set<std::string> sources;
    size_t entries = 0;
    for (const Graph* g : graphs)
      forEachNode(g->block(), [&](Node* n) {
        if (!isFusionGroupOp(n->kind())) return;
        const std::string src = cuda->emit(n, "k");
        if (!sources.insert(src).second) return;
        auto usage = nvrtcResourceUsage(src, "k", "sm_90");
        ASSERT_TRUE(usage.ok()) << usage.error().what() << "\n" << src;
        for (const KernelResources& r : usage.value()) {
          ++entries;
          EXPECT_GT(r.registers, 0) << r.entry;
          EXPECT_EQ(r.spillStoreBytes + r.spillLoadBytes, 0) << fuserName(kind) << " " << r.entry << ": " << r.str()
                                                            << "\n" << src;
        }
      });
    EXPECT_GE(sources.size(), 2u) << fuserName(kind) << ": a forward and a backward kernel at least";
    EXPECT_GE(entries, sources.size()) << fuserName(kind);
  }
}

// The same kernels run on a GPU, through the fuser's compile step, and give the interpreter's outputs
// for the group's subgraph on random inputs.
TEST(LegacyFuserCuda, EveryModelKernelRunsOnTheDeviceLikeTheInterpreter) {
  if (auto d = cuda::device(); !d) GTEST_SKIP() << d.error().what();
  auto fuser = makeFuser(FuserKind::Legacy, {.device = DeviceKind::Cuda});
  std::set<std::string> seen;
  uint64_t seed = 1;
  forEachModelFusionGroup([&](const Model& m, const Graph& g, Node* n) {
    const Graph& sub = *n->subgraph();
    legacy::KernelSpec spec = legacy::buildKernelSpec(sub);
    if (!seen.insert(spec.key()).second) return;
    KernelTable kernels;
    FusionReport report;
    fuser->compile(g, kernels, report);
    ASSERT_TRUE(report.warnings.empty()) << m.name << ": " << report.warnings.front();
    ASSERT_TRUE(kernels.contains(n)) << m.name;
    std::vector<IValue> inputs;
    std::vector<Tensor> onDevice;
    for (const auto& sizes : spec.argSizes) {
      Tensor t = Tensor::rand(sizes, spec.dtype, seed++, 0.1, 1.0);
      inputs.emplace_back(t);
      onDevice.push_back(t.to(DeviceKind::Cuda));
    }
    std::vector<IValue> want = Interpreter(sub).run(inputs);
    std::vector<Tensor> got = kernels.at(n)->run(onDevice);
    ASSERT_EQ(got.size(), want.size()) << m.name;
    for (size_t o = 0; o < got.size(); ++o) {
      ASSERT_EQ(got[o].device(), DeviceKind::Cuda);
      EXPECT_LE(test::relError(got[o].to(DeviceKind::Cpu), want[o].toTensor()), 1e-5)
          << m.name << " output " << o << "\n" << printIR(sub);
    }
  });
  EXPECT_GE(seen.size(), 10u);
}

// Every pointwise op of ops.def that a fuser takes, fused by it (with a mul, so that a group forms) on the
// CPU and on a CUDA device, against the interpreter: a new op is tested here with no change to this file.
// Operands in (-1.5, 1.5), so that every kink and sign is seen; NaN (log of a negative) must match NaN.
struct FusedOpCase {
  FuserKind fuser;
  DeviceKind device;
};

class PointwiseOpsFuse : public testing::TestWithParam<FusedOpCase> {};

TEST_P(PointwiseOpsFuse, AsTheInterpreterComputesThem) {
  const auto [fuser, device] = GetParam();
  if (device == DeviceKind::Cpu) SKIP_WITHOUT_LLVM();
  if (device == DeviceKind::Cuda)
    if (auto d = cuda::device(); !d) GTEST_SKIP() << d.error().what();
  const uint8_t flag = fuser == FuserKind::Legacy ? kOpFusedByLegacy : kOpFusedByTe;
  int tested = 0;
  uint64_t seed = 40;
  for (const OpInfo& op : allOps()) {
    if (op.pointwise < 0 || !(op.flags & flag)) continue;
    SCOPED_TRACE(std::string(op.name));
    const OpSignature& sig = opSignature(op.kind);
    std::string params, operands, constants;
    std::vector<IValue> inputs;
    for (size_t i = 0; i < sig.inputs.size(); ++i) {
      const std::string v = fmt::format("%a{}", i);
      operands += (i ? ", " : "") + v;
      const ArgKind k = sig.inputs[i];
      if (static_cast<int>(i) == conditionOperand(op.kind)) {  // a random bool condition
        params += fmt::format("{}{} : Bool(4, 5)", params.empty() ? "" : ", ", v);
        inputs.emplace_back(ops::compare(PointwiseOp::Gt, Tensor::rand({4, 5}, DType::Float32, seed++, -1, 1),
                                         Tensor::scalar(0, DType::Float32)));
      } else if (k == ArgKind::Tensor || k == ArgKind::TensorOrScalar) {
        params += fmt::format("{}{} : Float(4, 5)", params.empty() ? "" : ", ", v);
        inputs.emplace_back(Tensor::rand({4, 5}, DType::Float32, seed++, -1.5, 1.5));
      } else {  // a scalar: alpha, a bound (min below max), a slope, a threshold
        constants += fmt::format("  {} : float = prim::Constant[value={}]()\n", v, i == 1 ? -0.4 : 0.6);
      }
    }
    if (inputs.size() == 2 && inputs[0].toTensor().dtype() == inputs[1].toTensor().dtype()) {
      // ties: every other element of the second operand equals the first's
      Tensor first = inputs[0].toTensor(), second = inputs[1].toTensor();
      for (int64_t i = 0; i < second.numel(); i += 2) second.data<float>()[i] = first.data<float>()[i];
    }
    // A comparison's bool result leaves the group and feeds a where in it; any other result a product
    // with a float operand.
    const bool compare = isComparison(op.kind);
    const std::string factor = conditionOperand(op.kind) == 0 ? "%a1" : "%a0";
    const std::string text = fmt::format("graph({}):\n{}  %y : Tensor = {}({})\n  %z : Tensor = {}\n"
                                         "  return ({})\n", params, constants, op.name, operands,
                                         compare ? "aten::where(%y, %a0, %a1)" : fmt::format("aten::mul(%y, {})", factor),
                                         compare ? "%z, %y" : "%z");
    auto g = parseIR(text);
    Function f(*g, {.fuser = fuser, .executor = ExecutorKind::Legacy, .device = device});
    auto got = f.forward(inputs);
    auto want = Interpreter(*g).run(inputs);
    EXPECT_GE(f.stats().fusionGroups, 1) << text;
    ASSERT_EQ(got.size(), want.size());
    for (size_t k = 0; k < got.size(); ++k) {
      const Tensor a = got[k].toTensor().to(DeviceKind::Cpu), b = want[k].toTensor();
      ASSERT_EQ(a.sizes(), b.sizes());
      ASSERT_EQ(a.dtype(), b.dtype()) << text;
      int64_t finite = 0, truths = 0;
      for (int64_t i = 0; i < a.numel(); ++i) {
        const double x = a.item(i), y = b.item(i);
        truths += y != 0;
        if (std::isnan(y)) {
          EXPECT_TRUE(std::isnan(x)) << "element " << i << "\n" << text;
          continue;
        }
        ++finite;
        EXPECT_NEAR(x, y, 1e-5 * std::max(1.0, std::abs(y))) << "element " << i << "\n" << text;
      }
      EXPECT_GT(finite, 0) << text;
      if (b.dtype() == DType::Bool) {
        EXPECT_TRUE(truths > 0 && truths < b.numel()) << "a constant mask\n" << text;
      }
    }
    ++tested;
  }
  EXPECT_GE(tested, 30);
}

INSTANTIATE_TEST_SUITE_P(Fusers, PointwiseOpsFuse,
                         testing::Values(FusedOpCase{FuserKind::Legacy, DeviceKind::Cpu},
                                         FusedOpCase{FuserKind::Te, DeviceKind::Cpu},
                                         FusedOpCase{FuserKind::Legacy, DeviceKind::Cuda},
                                         FusedOpCase{FuserKind::Te, DeviceKind::Cuda}),
                         [](const auto& info) {
                           return std::string(info.param.fuser == FuserKind::Legacy ? "Legacy" : "Te") +
                                  (info.param.device == DeviceKind::Cpu ? "Cpu" : "Cuda");
                         });

// nvrtcResourceUsage reads ptxas' report per entry: a kernel with a local array indexed at run time has a
// stack frame, a plain one none; a virtual architecture has no ptxas step and is refused.
TEST(CudaKernels, PtxasReportIsReadPerEntry) {
  if (!haveNvrtc()) GTEST_SKIP() << "built without CUDA (GJ_WITH_CUDA=OFF)";
  const char* src = R"(
extern "C" __global__ void plain(const float* x, float* y) { y[threadIdx.x] = 2.0f * x[threadIdx.x]; }
extern "C" __global__ void local(const float* x, float* y, int n) {
  float a[256];
  for (int i = 0; i < 256; ++i) a[(i * n) & 255] = x[i];
  y[threadIdx.x] = a[(threadIdx.x * 7 + n) & 255];
})";
  auto usage = nvrtcResourceUsage(src, "two", "sm_90");
  ASSERT_TRUE(usage.ok()) << usage.error().what();
  ASSERT_EQ(usage.value().size(), 2u);
  std::map<std::string, KernelResources> by;
  for (const KernelResources& r : usage.value()) by[r.entry] = r;
  ASSERT_TRUE(by.count("plain") && by.count("local")) << usage.value()[0].entry << " " << usage.value()[1].entry;
  EXPECT_GT(by["plain"].registers, 0);
  EXPECT_EQ(by["plain"].stackBytes, 0);
  EXPECT_GE(by["local"].stackBytes, 1024) << by["local"].str();
  EXPECT_FALSE(nvrtcResourceUsage(src, "two", "compute_90").ok());
}

TEST(LegacyFuserCuda, NvrtcReportsErrorsWithTheLog) {
  if (!haveNvrtc()) GTEST_SKIP() << "built without CUDA (GJ_WITH_CUDA=OFF)";
  auto r = nvrtcCompile("extern \"C\" __global__ void k() { undefined_thing(); }", "bad", "sm_80");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(std::string(r.error().what()).find("undefined_thing"), std::string::npos) << r.error().what();
}

}  // namespace
}  // namespace gj
