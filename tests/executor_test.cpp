// The legacy and profiling executors behind Function: every reference case forward and backward,
// re-specialization on new shapes, guard failures and fallback, threads.
#include "executors/autograd.h"
#include "executors/function.h"
#include "executors/interpreter.h"
#include "executors/pipeline.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "runtime/ops/ops.h"
#include "models/lstm.h"
#include "models/eager.h"
#include "tests/support/reference.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <thread>

namespace gj {
namespace {

std::vector<bool> floatInputs(const std::vector<Tensor>& xs) {
  std::vector<bool> rg;
  for (const Tensor& t : xs) rg.push_back(isFloating(t.dtype()));
  return rg;
}

struct CaseRun {
  std::vector<Tensor> outputs, grads;
};

CaseRun runCase(Function& f, const Model& m, const std::vector<Tensor>& inputs, const test::ReferenceCase& c) {
  auto outs = f.forward(std::vector<IValue>(inputs.begin(), inputs.end()), floatInputs(inputs));
  std::vector<Tensor> gradOutputs;
  for (const auto& name : m.outputs) gradOutputs.push_back(c.gradOutputs.at(name));
  CaseRun r;
  for (const IValue& v : outs) r.outputs.push_back(v.toTensor());
  r.grads = f.backward(gradOutputs);
  return r;
}

void expectMatchesReference(const Model& m, const CaseRun& r, const test::ReferenceCase& c) {
  for (size_t i = 0; i < m.outputs.size(); ++i)
    EXPECT_LE(test::relError(r.outputs[i], c.outputs.at(m.outputs[i])), 1e-5) << "output " << m.outputs[i];
  for (size_t i = 0; i < m.inputs.size(); ++i) {
    auto it = c.grads.find(m.inputs[i].name);
    if (it == c.grads.end()) continue;
    ASSERT_TRUE(r.grads[i].defined()) << m.inputs[i].name;
    EXPECT_LE(test::relError(r.grads[i], it->second), 1e-4) << "gradient of " << m.inputs[i].name;
  }
}

struct Param {
  std::string caseName;
  std::string variant;  // LSTM cases
  ExecutorKind executor;
  bool unroll;
  FuserKind fuser;
};

std::string paramName(const testing::TestParamInfo<Param>& info) {
  const Param& p = info.param;
  return p.caseName + (p.variant.empty() ? "" : "_" + p.variant) + "_" + std::string(executorName(p.executor)) +
         (p.unroll ? "_unrolled" : "_kept") + "_fuser_" + std::string(fuserName(p.fuser));
}

class EveryCase : public testing::TestWithParam<Param> {};

TEST_P(EveryCase, ForwardAndBackwardMatchPyTorch) {
  const Param& p = GetParam();
  auto c = test::loadCase(p.caseName);
  ModelConfig cfg = c.config;
  if (!p.variant.empty()) cfg.variant = p.variant;
  Model m = buildModel(c.model, cfg);
  FunctionOptions opts;
  opts.executor = p.executor;
  opts.unrollLoops = p.unroll;
  opts.fuser = p.fuser;
  opts.verifyEach = true;
  Function f(*m.graph, opts);
  auto inputs = test::inputsFor(m, c);
  // Run three times: profiling, then optimized (twice: the cached plan).
  for (int call = 0; call < 3; ++call) {
    SCOPED_TRACE("call " + std::to_string(call));
    expectMatchesReference(m, runCase(f, m, inputs, c), c);
  }
  FunctionStats s = f.stats();
  EXPECT_EQ(s.specializations, 1) << s.str();
  EXPECT_EQ(s.guardFailures, 0) << s.str();
  EXPECT_TRUE(s.warnings.empty()) << s.str();
  if (p.executor == ExecutorKind::Profiling) {
    EXPECT_EQ(s.profiledRuns, 1) << s.str();
  }
}

std::vector<Param> everyCase() {
  std::vector<Param> ps;
  for (FuserKind f : allFusers())
    for (ExecutorKind e : allExecutors())
      for (bool unroll : {true, false}) {
        for (const char* c : {"lstm_1layer", "lstm_3layer"})
          for (const char* v : {"jit", "jit_premul", "jit_premul_bias", "jit_multilayer"})
            ps.push_back({c, v, e, unroll, f});
        for (const char* c : {"lstm_cell", "lstm_lm", "lstm_classifier", "linear", "softmax", "conv2d",
                              "multihead_attention"})
          ps.push_back({c, "", e, unroll, f});
      }
  return ps;
}

INSTANTIATE_TEST_SUITE_P(Executors, EveryCase, testing::ValuesIn(everyCase()), paramName);

// Groups of `g` of kind `group` whose body holds an op `last` reading an op `first`.
size_t groupsWith(const Graph& g, OpKind group, OpKind first, OpKind last) {
  size_t n = 0;
  for (const Node* node : *g.block()) {
    if (node->kind() != group) continue;
    bool found = false;
    for (const Node* m : *node->subgraph()->block())
      found = found || (m->kind() == last && m->input(0)->node()->kind() == first);
    n += found;
  }
  return n;
}

// A ResNet block ends in relu(bn2(conv2(...)) + identity): the add and the relu fuse, though the region
// growth meets a convolution of another shape first (Note [Rounds of region growth]); in the backward the
// sum of the two paths' gradients fuses with relu's. Results against PyTorch's, through both fusers.
TEST(Fusers, ResnetResidualAddAndReluFuseForwardAndBackward) {
  auto c = test::loadCase("resnet18");
  Model m = buildModel(c.model, c.config);
  auto inputs = test::inputsFor(m, c);
  for (FuserKind f : {FuserKind::Legacy, FuserKind::Te}) {
    SCOPED_TRACE(fuserName(f));
    const OpKind group = f == FuserKind::Legacy ? OpKind::FusionGroup : OpKind::TensorExprGroup;
    PipelineOptions o;
    o.fuser = f;
    o.passes.verifyEach = true;
    Plan p = optimizeSpecialized(std::shared_ptr<Graph>(m.graph->clone()), floatInputs(inputs), o);
    ASSERT_EQ(p.gradients.size(), 1u);
    const Gradient& grad = *p.gradients.begin()->second;
    // ResNet-18's eight blocks; seven sums of two paths' gradients read by a relu's backward (the stem's
    // sum is read by the max pool's).
    EXPECT_EQ(groupsWith(*grad.forward, group, OpKind::Add, OpKind::Relu), 8u) << printIR(*grad.forward);
    EXPECT_EQ(groupsWith(*grad.backward, group, OpKind::Add, OpKind::ThresholdBackward), 7u) << printIR(*grad.backward);
    for (const Node* n : *grad.forward->block())
      EXPECT_FALSE(n->kind() == OpKind::Relu && n->input(0)->node()->kind() == OpKind::Add) << n->describe();
    Function fn(*m.graph, {.fuser = f, .executor = ExecutorKind::Legacy, .verifyEach = true});
    expectMatchesReference(m, runCase(fn, m, inputs, c), c);
  }
}

Model smallLstm(int64_t seq, int64_t batch) { return buildLstm(LstmVariantKind::Jit, {seq, batch, 4, 5, 1}); }

// The same inputs through the plain interpreter (no executor) as the reference.
std::vector<Tensor> eagerOutputs(const Model& m, const std::vector<Tensor>& in) { return m.eager(in); }

TEST(LegacyExecutor, NewShapesMakeNewSpecializations) {
  Model m = smallLstm(3, 2);
  Function f(*m.graph, {.executor = ExecutorKind::Legacy});
  for (int64_t seq : {3, 5, 3}) {
    Model shaped = smallLstm(seq, 2);
    auto in = randomInputs(shaped, static_cast<uint64_t>(seq));
    auto out = f.forward(std::vector<IValue>(in.begin(), in.end()));
    auto ref = eagerOutputs(shaped, in);
    for (size_t i = 0; i < ref.size(); ++i) EXPECT_LE(test::relError(out[i].toTensor(), ref[i]), 1e-6);
  }
  EXPECT_EQ(f.stats().specializations, 2) << f.stats().str();
}

// The packed variable-length LSTM (models/vl_lstm.h): no size of its graph depends on the lengths, so a new
// set of lengths runs on the plan compiled for the first, fused (the legacy fuser's kernels read their
// rows at run time, the batch shrinking step by step), forward and backward equal to the eager per-sequence
// loop's.
TEST(VariableLength, PackedLstmCompilesOnceForDifferentLengths) {
  ModelConfig c;
  c.seqLength = 9, c.miniBatch = 5, c.inputSize = 3, c.hiddenSize = 4, c.numLayers = 2;
  const Model m = buildModel("vl_lstm", c);
  const std::vector<std::vector<double>> lengthSets = {{3, 9, 1, 5, 5}, {7, 2, 8, 8, 4}};
  for (ExecutorKind e : allExecutors()) {
    SCOPED_TRACE(executorName(e));
    Function f(*m.graph, {.fuser = FuserKind::Legacy, .executor = e});
    int64_t compiledAfterFirst = -1;
    for (size_t set = 0; set < lengthSets.size(); ++set)
      for (int call = 0; call < 3; ++call) {  // the profiling executor's first call profiles
        std::vector<Tensor> in = randomInputs(m, 40 + set);
        in[1] = Tensor::fromVector({c.miniBatch}, lengthSets[set], DType::Int64);
        auto outs = f.forward(std::vector<IValue>(in.begin(), in.end()), floatInputs(in));
        std::vector<Tensor> gradOutputs;
        for (size_t k = 0; k < outs.size(); ++k)
          gradOutputs.push_back(Tensor::rand(outs[k].toTensor().sizes(), DType::Float32, 70 + k, -1, 1));
        auto grads = f.backward(gradOutputs);
        eager::Tape tape;
        std::vector<eager::Var> vars;
        for (const Tensor& t : in) vars.push_back(tape.input(t, isFloating(t.dtype())));
        auto ref = m.eagerAutograd(tape, vars);
        tape.backward(ref, gradOutputs);
        for (size_t k = 0; k < outs.size(); ++k)
          EXPECT_LE(test::relError(outs[k].toTensor(), ref[k].value), 1e-5) << "set " << set << " output " << k;
        for (size_t i = 0; i < in.size(); ++i) {
          if (isFloating(in[i].dtype())) {
            EXPECT_LE(test::relError(grads[i], tape.grad(vars[i])), 1e-4) << "set " << set << " " << m.inputs[i].name;
          }
        }
        if (set == 0 && call == 2) compiledAfterFirst = f.stats().kernelsCompiled;
      }
    const FunctionStats s = f.stats();
    EXPECT_EQ(s.specializations, 1) << s.str();
    EXPECT_EQ(s.guardFailures, 0) << s.str();
    EXPECT_EQ(s.kernelsCompiled, compiledAfterFirst) << "the second set of lengths compiled kernels: " << s.str();
    EXPECT_GT(s.fusionGroups, 0) << s.str();
    EXPECT_GT(s.kernelRuns, 0) << s.str();
  }
}

TEST(ProfilingExecutor, ShapeChangeTakesTheFallbackThenReprofiles) {
  Model m = smallLstm(3, 2);
  FunctionOptions opts;
  opts.executor = ExecutorKind::Profiling;
  opts.maxGuardFailures = 2;
  Function f(*m.graph, opts);
  auto call = [&](int64_t seq) {
    Model shaped = smallLstm(seq, 2);
    auto in = randomInputs(shaped, static_cast<uint64_t>(seq) + 100);
    auto out = f.forward(std::vector<IValue>(in.begin(), in.end()));
    auto ref = eagerOutputs(shaped, in);
    for (size_t i = 0; i < ref.size(); ++i) EXPECT_LE(test::relError(out[i].toTensor(), ref[i]), 1e-6) << seq;
  };
  call(3);  // profiled
  call(3);  // optimized for seq 3
  EXPECT_EQ(f.stats().specializations, 1);
  call(6);  // guard fails: fallback
  FunctionStats s = f.stats();
  EXPECT_EQ(s.guardFailures, 1) << s.str();
  EXPECT_EQ(s.fallbackRuns, 1);
  ASSERT_EQ(s.guardFailureReasons.size(), 1u) << s.str();
  EXPECT_NE(s.guardFailureReasons.begin()->first.find("input %input: size 6 in dimension 0 where 3 was expected"),
            std::string::npos)
      << s.str();
  call(6);  // second consecutive failure: re-profile next
  EXPECT_EQ(f.stats().reprofiles, 1);
  call(6);  // profiled again
  call(6);  // a new plan that accepts both lengths
  call(3);
  s = f.stats();
  EXPECT_EQ(s.specializations, 2) << s.str();
  EXPECT_EQ(s.guardFailures, 2) << s.str();
  EXPECT_NE(f.optimizedGraph().find(": Float(*, 2, 4, device=cpu), "), std::string::npos) << f.optimizedGraph();
}

TEST(ProfilingExecutor, GuardedPlanHasTypeCheckAndFallback) {
  Model m = smallLstm(3, 2);
  Function f(*m.graph, {.executor = ExecutorKind::Profiling});
  auto in = randomInputs(m, 1);
  for (int i = 0; i < 2; ++i) f.forward(std::vector<IValue>(in.begin(), in.end()));
  std::string ir = f.optimizedGraph();
  EXPECT_NE(ir.find("prim::TypeCheck"), std::string::npos) << ir;
  EXPECT_NE(ir.find("prim::FallbackGraph_0"), std::string::npos) << ir;
  EXPECT_EQ(ir.find("prim::Loop(", ir.find("block0")), ir.find("prim::Loop(", ir.find("block1"))) << ir;
}

TEST(Function, ThreadsCallingAtOnceMatchSerialCalls) {
  for (ExecutorKind e : allExecutors()) {
    Model m = smallLstm(4, 3);
    Function f(*m.graph, {.executor = e});
    std::vector<std::vector<Tensor>> inputs;
    for (int t = 0; t < 4; ++t) inputs.push_back(randomInputs(m, 50 + static_cast<uint64_t>(t)));
    std::vector<bool> rg(m.inputs.size(), true);
    auto gradOutputsFor = [&](const std::vector<IValue>& outs) {
      std::vector<Tensor> g;
      for (const IValue& o : outs) g.push_back(Tensor::full(o.toTensor().sizes(), DType::Float32, 0.5));
      return g;
    };
    // Profiling: the first call is interpreted, the next ones run the optimized plan.
    f.backward(gradOutputsFor(f.forward(std::vector<IValue>(inputs[0].begin(), inputs[0].end()), rg)));
    std::vector<std::vector<Tensor>> serial(4);
    for (int t = 0; t < 4; ++t) {
      auto outs = f.forward(std::vector<IValue>(inputs[t].begin(), inputs[t].end()), rg);
      serial[t] = f.backward(gradOutputsFor(outs));
    }
    std::vector<std::vector<Tensor>> parallel(4);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([&, t] {
        for (int rep = 0; rep < 3; ++rep) {
          auto outs = f.forward(std::vector<IValue>(inputs[t].begin(), inputs[t].end()), rg);
          parallel[t] = f.backward(gradOutputsFor(outs));
        }
      });
    for (auto& th : threads) th.join();
    for (int t = 0; t < 4; ++t)
      for (size_t i = 0; i < serial[t].size(); ++i)
        EXPECT_EQ(test::relError(parallel[t][i], serial[t][i]), 0.0) << executorName(e) << " thread " << t;
  }
}

// Outputs and gradients of `m` with its loops unrolled ([0]) and kept ([1]), on the same random inputs
// and output gradients, and the unrolled plan's optimized graph.
struct UnrolledAndKept {
  std::vector<std::vector<IValue>> outs;
  std::vector<std::vector<Tensor>> grads;
  std::string unrolledGraph;
};

UnrolledAndKept runUnrolledAndKept(const Model& m, FunctionOptions opts, uint64_t inputSeed, uint64_t gradSeed) {
  auto in = randomInputs(m, inputSeed);
  std::vector<bool> rg(m.inputs.size(), true);
  UnrolledAndKept r;
  for (bool unroll : {true, false}) {
    opts.unrollLoops = unroll;
    Function f(*m.graph, opts);
    r.outs.push_back(f.forward(std::vector<IValue>(in.begin(), in.end()), rg));
    std::vector<Tensor> g;
    for (const IValue& o : r.outs.back()) g.push_back(Tensor::rand(o.toTensor().sizes(), DType::Float32, gradSeed));
    r.grads.push_back(f.backward(g));
    if (unroll) r.unrolledGraph = f.optimizedGraph();
  }
  return r;
}

TEST(Function, KeptAndUnrolledLoopsAgree) {
  Model m = buildLstm(LstmVariantKind::JitPremul, {6, 3, 5, 7, 2});
  auto [outs, grads, unrolledGraph] = runUnrolledAndKept(m, {.executor = ExecutorKind::Legacy}, 9, 3);
  for (size_t i = 0; i < outs[0].size(); ++i)
    EXPECT_LE(test::relError(outs[0][i].toTensor(), outs[1][i].toTensor()), 1e-6);
  for (size_t i = 0; i < grads[0].size(); ++i) EXPECT_LE(test::relError(grads[0][i], grads[1][i]), 1e-5) << i;
}

// A kept loop's step returns its weight gradients as factors (Note [Products left to the tape]); the tape
// multiplies every step's at once. Its gradients are those of the unrolled loop, whose backward sums the
// steps' products inside one graph.
TEST(Function, KeptLoopWeightGradientsAreProductsTheTapeAdds) {
  Model m = buildLstm(LstmVariantKind::Jit, {7, 1, 6, 5, 2});
  PipelineOptions o;
  o.unrollLoops = false;
  o.passes.verifyEach = true;
  Plan p = optimizeSpecialized(std::shared_ptr<Graph>(m.graph->clone()), std::vector<bool>(m.inputs.size(), true), o);
  size_t products = 0;
  for (const auto& [node, grad] : p.gradients) {
    products += grad->products.size();
    for (const Gradient::Product& q : grad->products) {
      EXPECT_LT(q.output, grad->gradInputs.size());
      EXPECT_GE(q.right, grad->gradInputs.size());
      EXPECT_LT(q.right, grad->backward->outputs().size());
    }
  }
  EXPECT_GE(products, 4u) << "two weights a layer, two layers: no gradient was left to the tape";
  // The second model's steps hold back 7 x 700 rows of factors, more than a sum may (4096): the tape adds
  // them in two products.
  for (const Model& model : {m, buildLstm(LstmVariantKind::Jit, {7, 700, 3, 4, 1})})
    for (FuserKind fuser : {FuserKind::None, FuserKind::Te}) {
      auto [outs, grads, unrolledGraph] =
          runUnrolledAndKept(model, {.fuser = fuser, .executor = ExecutorKind::Legacy}, 4, 8);
      for (size_t i = 0; i < outs[0].size(); ++i)
        EXPECT_LE(test::relError(outs[0][i].toTensor(), outs[1][i].toTensor()), 1e-5) << "output " << i;
      for (size_t i = 0; i < grads[0].size(); ++i)
        EXPECT_LE(test::relError(grads[0][i], grads[1][i]), 1e-5) << fuserName(fuser) << " " << model.inputs[i].name;
    }
}

// 40 steps of 64 x 2048 gates are more than one batched GEMM may hold (passes/batch_mm.h): unrolled, the
// input GEMM is made in two chunks of 20 steps (1280 rows) and the backward's weight and input gradients
// likewise; with the loop kept nothing is batched across steps. Both agree, forward and backward.
TEST(Function, ChunkedBatchedGemmsAgreeWithUnbatchedSteps) {
  Model m = buildLstm(LstmVariantKind::Jit, {40, 64, 16, 512, 1});
  auto [outs, grads, unrolledGraph] =
      runUnrolledAndKept(m, {.fuser = FuserKind::Te, .executor = ExecutorKind::Legacy}, 21, 5);
  EXPECT_NE(unrolledGraph.find("Float(1280, 2048"), std::string::npos) << "not chunked";
  for (size_t i = 0; i < outs[0].size(); ++i)
    EXPECT_LE(test::relError(outs[0][i].toTensor(), outs[1][i].toTensor()), 1e-5) << "output " << i;
  for (size_t i = 0; i < grads[0].size(); ++i) EXPECT_LE(test::relError(grads[0][i], grads[1][i]), 1e-4) << m.inputs[i].name;
}

TEST(Function, TwoFunctionsWithDifferentOptionsLiveSideBySide) {
  Model m = smallLstm(3, 2);
  Function legacy(*m.graph, {.executor = ExecutorKind::Legacy});
  Function profiling(*m.graph, {.executor = ExecutorKind::Profiling, .profilingRuns = 2});
  auto in = randomInputs(m, 4);
  for (int i = 0; i < 3; ++i) {
    auto a = legacy.forward(std::vector<IValue>(in.begin(), in.end()));
    auto b = profiling.forward(std::vector<IValue>(in.begin(), in.end()));
    EXPECT_LE(test::relError(a[0].toTensor(), b[0].toTensor()), 1e-6);
  }
  EXPECT_EQ(profiling.stats().profiledRuns, 2);
  EXPECT_EQ(legacy.stats().profiledRuns, 0);
}

// Type promotion end to end: float32 and float64 inputs, promoting ops, an explicit aten::type_as, a
// GEMM in float32 behind a float64 op (its gradient must come back in float32). Every fuser x executor
// against the graph interpreted with the tape; each gradient in its input's dtype.
TEST(TypePromotion, MixedFloat32AndFloat64UnderEveryFuserAndExecutor) {
  auto g = parseIR(R"IR(
graph(%x : Float(3, 4), %s : Double(3, 4), %w : Float(4, 5), %b : Double(5), %c : Double()):
  %one : int = prim::Constant[value=1]()
  %h : Tensor = aten::tanh(%x)
  %m : Tensor = aten::mul(%h, %s)
  %z : Tensor = aten::sigmoid(%m)
  %k : Tensor = aten::mul(%z, %h)
  %t : Tensor = aten::type_as(%k, %x)
  %y : Tensor = aten::mm(%t, %w)
  %o : Tensor = aten::add(%y, %b, %one)
  %p : Tensor = aten::mul(%y, %c)
  %q : Tensor = aten::tanh(%p)
  return (%o, %q, %m)
)IR");
  std::vector<IValue> in;
  uint64_t seed = 5;
  for (const Value* v : g->inputs()) in.push_back(Tensor::rand(*v->type().sizes, *v->type().dtype, seed++, -1, 1));
  std::vector<bool> rg(in.size(), true);
  AutodiffGraph ag = prepareAutodiff(std::shared_ptr<Graph>(g->clone()), rg);
  Tape tape(in.size());
  auto refOut = Interpreter(*ag.graph, &ag.gradients).runWithTape(in, rg, tape);
  const DType outDtypes[] = {DType::Float64, DType::Float32, DType::Float64};
  std::vector<Tensor> gradOutputs;
  for (size_t k = 0; k < refOut.size(); ++k) {
    EXPECT_EQ(refOut[k].toTensor().dtype(), outDtypes[k]) << "output " << k;
    gradOutputs.push_back(Tensor::rand(refOut[k].toTensor().sizes(), outDtypes[k], 50 + k, -1, 1));
  }
  auto refGrads = tape.backward(refOut, gradOutputs);
  for (size_t i = 0; i < in.size(); ++i) EXPECT_EQ(refGrads[i].dtype(), in[i].toTensor().dtype()) << "grad " << i;
  // The forward against float64 arithmetic with the two conversions the graph asks for.
  auto d = [&](size_t i) { return in[i].toTensor().to(DType::Float64); };
  Tensor h = ops::tanh(d(0)), k = ops::mul(ops::sigmoid(ops::mul(h, d(1))), h);
  Tensor y = ops::mm(k.to(DType::Float32).to(DType::Float64), d(2));
  EXPECT_LE(test::relError(refOut[0].toTensor(), ops::add(y, d(3), 1.0)), 1e-6);
  EXPECT_LE(test::relError(refOut[1].toTensor(), ops::tanh(ops::mul(y, d(4)))), 1e-6);
  for (FuserKind f : allFusers())
    for (ExecutorKind e : allExecutors()) {
      Function fn(*g, {.fuser = f, .executor = e, .verifyEach = true});
      for (int call = 0; call < 2; ++call) {
        auto outs = fn.forward(in, rg);
        auto grads = fn.backward(gradOutputs);
        std::string where = fmt::format("fuser {} executor {} call {}", fuserName(f), executorName(e), call);
        for (size_t j = 0; j < outs.size(); ++j) {
          EXPECT_EQ(outs[j].toTensor().dtype(), outDtypes[j]) << where;
          EXPECT_LE(test::relError(outs[j].toTensor(), refOut[j].toTensor()), 1e-6) << where << " output " << j;
        }
        for (size_t i = 0; i < grads.size(); ++i) {
          EXPECT_EQ(grads[i].dtype(), in[i].toTensor().dtype()) << where << " grad " << i;
          EXPECT_LE(test::relError(grads[i], refGrads[i]), 1e-6) << where << " grad " << i;
        }
        if (call == 1 && f == FuserKind::Te) {
          EXPECT_GE(fn.stats().fusionGroups, 1) << where;
        }
      }
    }
}

TEST(Function, MisuseIsAClearError) {
  Model m = smallLstm(3, 2);
  Function f(*m.graph);
  EXPECT_THROW(f.backward({}), Error);
  EXPECT_THROW(Function(*m.graph, {.device = DeviceKind::Cuda}), Error);
  auto in = randomInputs(m, 4);
  in.pop_back();
  EXPECT_THROW(f.forward(std::vector<IValue>(in.begin(), in.end())), Error);
}

// Every step of the optimizing pipeline goes through the pass runner: it is among the plan's records
// (timed), GJ_LOG can name it, and the graph is verified after it.
TEST(Pipeline, EveryStepGoesThroughThePassRunner) {
  Model m = buildLstm(LstmVariantKind::Jit, {4, 2, 3, 5, 1});
  std::vector<bool> rg;
  for (const InputSpec& in : m.inputs) rg.push_back(isFloating(in.dtype));
  std::ostringstream log;
  PipelineOptions o;
  o.fuser = FuserKind::Te;
  o.passes.verifyEach = true;
  o.passes.log = &log;
  o.passes.logAfter = {"unroll-loops", "differentiate"};
  Plan p = optimizeSpecialized(std::shared_ptr<Graph>(m.graph->clone()), rg, o);
  std::set<std::string> steps;
  for (const PassRecord& r : p.passes) steps.insert(r.name);
  for (const char* name : {"unroll-loops<full=512;by=1>", "unroll-loops<full=512;by=8>", "requires-grad",
                           "create-autodiff-subgraphs", "differentiate", "fuse", "contiguous-operands"})
    EXPECT_TRUE(steps.count(name)) << name << " is not among the plan's passes";
  EXPECT_NE(log.str().find("IR after unroll-loops<full=512;by=1> (changed"), std::string::npos);
  EXPECT_NE(log.str().find("IR after differentiate (changed"), std::string::npos);
}

}  // namespace
}  // namespace gj
