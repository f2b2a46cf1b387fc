// Gradients of every reference case against PyTorch: as built (the interpreted `py` row: no passes, types
// unknown inside), and optimized with loops kept and unrolled.
#include "executors/autograd.h"
#include "executors/interpreter.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "models/lstm.h"
#include "runtime/ops/ops.h"
#include "passes/pass_manager.h"
#include "tests/support/reference.h"

#include <gtest/gtest.h>

namespace gj {
namespace {

constexpr double kGradTol = 1e-4;

enum class LoopMode { Interpreted, Kept, Unrolled };

std::string modeName(LoopMode m) {
  switch (m) {
    case LoopMode::Interpreted: return "interpreted";
    case LoopMode::Kept: return "kept";
    case LoopMode::Unrolled: return "unrolled";
  }
  return "?";
}

struct GradOutcome {
  std::vector<IValue> outputs;
  std::vector<Tensor> grads;
  AutodiffGraph ag;
};

// Optimizes a copy of the model's graph (unrolling when asked), prepares it for autodiff, runs forward
// and backward.
GradOutcome runGrad(const Model& m, const std::vector<Tensor>& inputs, const std::vector<Tensor>& gradOutputs,
                    LoopMode mode) {
  auto g = std::shared_ptr<Graph>(m.graph->clone());
  PassOptions opts;
  opts.verifyEach = true;
  std::vector<std::string> passes = {"shape-propagation", "constant-propagation", "peephole"};
  if (mode == LoopMode::Unrolled)
    passes.insert(passes.end(), {"unroll-loops", "peephole", "constant-propagation", "shape-propagation", "cse"});
  passes.push_back("dce");
  if (mode != LoopMode::Interpreted) runPasses(*g, passes, opts);
  std::vector<bool> rg;
  for (const Tensor& t : inputs) rg.push_back(isFloating(t.dtype()));
  GradOutcome out{{}, {}, prepareAutodiff(g, rg)};
  verifyOrThrow(*out.ag.graph, "create-autodiff-subgraphs");
  Tape tape(inputs.size());
  out.outputs = Interpreter(*out.ag.graph, &out.ag.gradients)
                    .runWithTape(std::vector<IValue>(inputs.begin(), inputs.end()), rg, tape);
  out.grads = tape.backward(out.outputs, gradOutputs);
  return out;
}

// PyTorch's gradients of the case, or for a model that returns fewer outputs than the case (jit_simple
// returns hy and cy, not output), the `reference` model's gradients with zero for the missing outputs.
void checkCase(const Model& m, const test::ReferenceCase& c, LoopMode mode, const Model* reference = nullptr) {
  auto inputs = test::inputsFor(m, c);
  std::vector<Tensor> gradOutputs;
  for (const auto& name : m.outputs) gradOutputs.push_back(c.gradOutputs.at(name));
  GradOutcome r = runGrad(m, inputs, gradOutputs, mode);
  for (size_t i = 0; i < m.outputs.size(); ++i)
    EXPECT_LE(test::relError(r.outputs[i].toTensor(), c.outputs.at(m.outputs[i])), 1e-5) << m.outputs[i];
  std::vector<Tensor> expected(m.inputs.size());
  if (reference) {
    std::vector<Tensor> refGradOutputs;
    for (const auto& name : reference->outputs) {
      bool kept = std::find(m.outputs.begin(), m.outputs.end(), name) != m.outputs.end();
      const Tensor& g = c.gradOutputs.at(name);
      refGradOutputs.push_back(kept ? g : Tensor::zeros(g.sizes(), g.dtype()));
    }
    expected = runGrad(*reference, inputs, refGradOutputs, LoopMode::Kept).grads;
  } else {
    for (size_t i = 0; i < m.inputs.size(); ++i)
      if (c.grads.count(m.inputs[i].name)) expected[i] = c.grads.at(m.inputs[i].name);
  }
  for (size_t i = 0; i < m.inputs.size(); ++i) {
    if (!expected[i].defined()) continue;
    ASSERT_TRUE(r.grads[i].defined()) << "no gradient for " << m.inputs[i].name;
    EXPECT_LE(test::relError(r.grads[i], expected[i]), kGradTol) << "gradient of " << m.inputs[i].name;
  }
}

void checkLstmCase(LstmVariantKind v, const test::ReferenceCase& c, LoopMode mode) {
  const ModelConfig& p = c.config;
  LstmParams params{p.seqLength, p.miniBatch, p.inputSize, p.hiddenSize, p.numLayers};
  Model m = buildLstm(v, params);
  if (v != LstmVariantKind::JitSimple) return checkCase(m, c, mode);
  Model full = buildLstm(LstmVariantKind::Jit, params);
  checkCase(m, c, mode, &full);
}

struct Param {
  LstmVariantKind variant;
  LoopMode mode;
};

class LstmGradients : public testing::TestWithParam<Param> {};

TEST_P(LstmGradients, OneLayerMatchesPyTorch) {
  checkLstmCase(GetParam().variant, test::loadCase("lstm_1layer"), GetParam().mode);
}

TEST_P(LstmGradients, ThreeLayersMatchPyTorch) {
  checkLstmCase(GetParam().variant, test::loadCase("lstm_3layer"), GetParam().mode);
}

std::vector<Param> allParams() {
  std::vector<Param> ps;
  for (LstmVariantKind v : allLstmVariants())
    for (LoopMode mode : {LoopMode::Interpreted, LoopMode::Kept, LoopMode::Unrolled}) {
      // As built, the premul variants' aten::matmul has an operand of unknown rank, whose gradient
      // autodiff refuses with a clear error (shape propagation gives it the rank).
      bool premul = v == LstmVariantKind::JitPremul || v == LstmVariantKind::JitPremulBias;
      if (!(premul && mode == LoopMode::Interpreted)) ps.push_back({v, mode});
    }
  return ps;
}

INSTANTIATE_TEST_SUITE_P(All, LstmGradients, testing::ValuesIn(allParams()), [](const auto& info) {
  return std::string(lstmVariantName(info.param.variant)) + "_" + modeName(info.param.mode);
});

TEST(Gradients, LstmCellMatchesPyTorch) {
  auto c = test::loadCase("lstm_cell");
  checkCase(buildModel("lstm_cell", c.config), c, LoopMode::Kept);
}

class ReferenceGradients : public testing::TestWithParam<std::tuple<std::string, LoopMode>> {};

TEST_P(ReferenceGradients, MatchPyTorch) {
  auto c = test::loadCase(std::get<0>(GetParam()));
  checkCase(buildModel(c.model, c.config), c, std::get<1>(GetParam()));
}

INSTANTIATE_TEST_SUITE_P(Cases, ReferenceGradients,
                         testing::Combine(testing::Values("lstm_lm", "lstm_classifier", "linear", "softmax", "conv2d",
                                                          "multihead_attention"),
                                          testing::Values(LoopMode::Interpreted, LoopMode::Kept, LoopMode::Unrolled)),
                         [](const auto& info) { return std::get<0>(info.param) + "_" + modeName(std::get<1>(info.param)); });

TEST(Gradients, ClassifierSgdStepMatchesPyTorch) {
  auto c = test::loadCase("lstm_classifier");
  ASSERT_GT(c.sgdLr, 0);
  Model m = buildModel(c.model, c.config);
  auto inputs = test::inputsFor(m, c);
  GradOutcome r = runGrad(m, inputs, {c.gradOutputs.at("loss")}, LoopMode::Kept);
  for (size_t i = 0; i < m.inputs.size(); ++i) {
    const std::string& name = m.inputs[i].name;
    if (!c.grads.count(name) || name == "hx" || name == "cx") continue;
    // new = old - lr * grad, against the same update with PyTorch's gradient.
    Tensor ours = ops::sub(inputs[i].to(DType::Float64), r.grads[i].to(DType::Float64), c.sgdLr);
    Tensor ref = ops::sub(inputs[i].to(DType::Float64), c.grads.at(name), c.sgdLr);
    EXPECT_LE(test::relError(ours, ref), 1e-6) << name;
    EXPECT_GT(test::relError(ours, inputs[i]), 0) << name << " did not move";
  }
}

TEST(Gradients, KeptLoopRecordsOneStepPerIteration) {
  auto c = test::loadCase("lstm_1layer");
  const ModelConfig& p = c.config;
  Model m = buildLstm(LstmVariantKind::Jit, {p.seqLength, p.miniBatch, p.inputSize, p.hiddenSize, 1});
  auto g = std::shared_ptr<Graph>(m.graph->clone());
  std::vector<bool> rg(m.inputs.size(), true);
  AutodiffGraph ag = prepareAutodiff(g, rg);
  EXPECT_NE(printIR(*ag.graph).find("prim::DifferentiableGraph_"), std::string::npos);
  Tape tape(m.inputs.size());
  auto inputs = test::inputsFor(m, c);
  Interpreter(*ag.graph, &ag.gradients).runWithTape(std::vector<IValue>(inputs.begin(), inputs.end()), rg, tape);
  EXPECT_GE(tape.size(), static_cast<size_t>(p.seqLength));
}

TEST(Gradients, OpWithoutFormulaIsAClearError) {
  auto g = std::make_shared<Graph>();
  Value* x = g->addInput(Type::tensor(DType::Float32, {3}), "x");
  GraphBuilder b(*g);
  Value* y = b.op(OpKind::SigmoidBackward, {x, x});  // no double-backward formula
  g->registerOutput(b.op(OpKind::Tanh, {y}));
  try {
    prepareAutodiff(g, {true});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no gradient formula for aten::sigmoid_backward"), std::string::npos)
        << e.what();
  }
}


// A formula that needs only a forward tensor's sizes or dtype saves those, not the tensor (Note [Save
// metadata, not tensors]): as built, an LSTM step's types are unknown inside, and its backward once kept
// the four gate sums alive only to read their sizes and dtypes. Every tensor the backward is handed must
// be read for its data by some node.
TEST(Gradients, AStepSavesMetadataRatherThanTensorsItOnlyMeasures) {
  Model m = buildLstm(LstmVariantKind::Jit, {3, 2, 4, 4, 1});
  std::vector<bool> rg;
  for (const InputSpec& in : m.inputs) rg.push_back(isFloating(in.dtype));
  AutodiffGraph ag = prepareAutodiff(std::shared_ptr<Graph>(m.graph->clone()), rg);
  size_t savedTensors = 0, savedMetadata = 0;
  for (const auto& [node, grad] : ag.gradients) {
    const Graph& bw = *grad->backward;
    for (size_t i = grad->numOutputs; i < bw.inputs().size(); ++i) {
      const Value* v = bw.inputs()[i];
      if (!v->type().isTensor()) {
        ++savedMetadata;
        continue;
      }
      ++savedTensors;
      bool readsData = false;
      for (const Use& u : v->uses()) {
        OpKind k = u.user->kind();
        bool metadataOnly = k == OpKind::Sizes || k == OpKind::DTypeOf || (k == OpKind::TypeAs && u.index == 1) ||
                            (k == OpKind::ZerosLike);
        readsData = readsData || !metadataOnly;
      }
      EXPECT_TRUE(readsData) << "backward input " << i << " (a saved tensor) is only measured:\n" << printIR(bw);
    }
  }
  EXPECT_GT(savedTensors, 0u);
  EXPECT_GT(savedMetadata, 0u) << "the step's types are unknown: some sizes must be saved";
}

}  // namespace
}  // namespace gj
