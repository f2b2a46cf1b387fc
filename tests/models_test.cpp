// Every model, interpreted and eager, against PyTorch's reference outputs (tests/data).
#include "executors/interpreter.h"
#include "models/lstm.h"
#include "tests/support/reference.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace gj {
namespace {

constexpr double kForwardTol = 1e-5;

std::vector<Tensor> interpret(const Model& m, const std::vector<Tensor>& inputs) {
  std::vector<IValue> in(inputs.begin(), inputs.end());
  std::vector<Tensor> out;
  for (const IValue& v : Interpreter(*m.graph).run(in)) out.push_back(v.toTensor());
  return out;
}

void expectMatches(const Model& m, const std::vector<Tensor>& out, const test::ReferenceCase& c, const char* how) {
  ASSERT_EQ(out.size(), m.outputs.size());
  for (size_t i = 0; i < out.size(); ++i) {
    const Tensor& ref = c.outputs.at(m.outputs[i]);
    double err = test::relError(out[i], ref);
    EXPECT_LE(err, kForwardTol) << m.name << " (" << how << ") output " << m.outputs[i];
    EXPECT_GT(ref.numel(), 0);
  }
}

void checkCase(const Model& m, const test::ReferenceCase& c) {
  auto inputs = test::inputsFor(m, c);
  expectMatches(m, interpret(m, inputs), c, "interpreted");
  expectMatches(m, m.eager(inputs), c, "eager");
}

class LstmVariants : public testing::TestWithParam<LstmVariantKind> {};

TEST_P(LstmVariants, MatchesPyTorchOnOneLayer) {
  auto c = test::loadCase("lstm_1layer");
  const ModelConfig& p = c.config;
  checkCase(buildLstm(GetParam(), {p.seqLength, p.miniBatch, p.inputSize, p.hiddenSize, p.numLayers}), c);
}

TEST_P(LstmVariants, MatchesPyTorchOnThreeLayers) {
  auto c = test::loadCase("lstm_3layer");
  const ModelConfig& p = c.config;
  ASSERT_EQ(p.numLayers, 3);
  checkCase(buildLstm(GetParam(), {p.seqLength, p.miniBatch, p.inputSize, p.hiddenSize, p.numLayers}), c);
}

// The cell case run as a one-step, one-layer sequence through each variant.
TEST_P(LstmVariants, MatchesPyTorchOnTheCellCase) {
  auto c = test::loadCase("lstm_cell");
  const ModelConfig& p = c.config;
  Model m = buildLstm(GetParam(), {1, p.miniBatch, p.inputSize, p.hiddenSize, 1});
  std::map<std::string, Tensor> byName = {
      {"input", c.inputs.at("input").unsqueeze(0)}, {"hx", c.inputs.at("hx").unsqueeze(0)},
      {"cx", c.inputs.at("cx").unsqueeze(0)},       {"weight_ih_l0", c.inputs.at("weight_ih")},
      {"weight_hh_l0", c.inputs.at("weight_hh")},   {"bias_ih_l0", c.inputs.at("bias_ih")},
      {"bias_hh_l0", c.inputs.at("bias_hh")}};
  std::vector<Tensor> inputs;
  for (const auto& s : m.inputs) inputs.push_back(byName.at(s.name));
  for (auto out : {interpret(m, inputs), m.eager(inputs)}) {
    size_t first = out.size() == 3 ? 1 : 0;  // skip `output` where the variant returns it
    EXPECT_LE(test::relError(out[first].squeeze(0), c.outputs.at("hy")), kForwardTol);
    EXPECT_LE(test::relError(out[first + 1].squeeze(0), c.outputs.at("cy")), kForwardTol);
    if (first) {
      EXPECT_LE(test::relError(out[0].select(0, 0), c.outputs.at("hy")), kForwardTol);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(AllVariants, LstmVariants, testing::ValuesIn(allLstmVariants()),
                         [](const auto& info) { return std::string(lstmVariantName(info.param)); });

TEST(Models, LstmCellMatchesPyTorch) {
  auto c = test::loadCase("lstm_cell");
  checkCase(buildModel("lstm_cell", c.config), c);
}

class ReferenceModels : public testing::TestWithParam<std::string> {};

TEST_P(ReferenceModels, MatchesPyTorch) {
  auto c = test::loadCase(GetParam());
  checkCase(buildModel(c.model, c.config), c);
}

INSTANTIATE_TEST_SUITE_P(Cases, ReferenceModels,
                         testing::Values("lnlstm", "lnlstm_decom", "lnlstm_odd", "lstm_lm", "lstm_classifier", "linear", "softmax", "conv2d",
                                         "multihead_attention", "vl_lstm", "vl_lstm_2layer", "vl_lstm_per_sequence",
                                         "resnet18"));

TEST(Models, LanguageModelMatchesPyTorchWithEveryLoopVariant) {
  auto c = test::loadCase("lstm_lm");
  for (const char* v : {"jit", "jit_premul", "jit_premul_bias", "jit_multilayer"}) {
    ModelConfig cfg = c.config;
    cfg.variant = v;
    SCOPED_TRACE(v);
    checkCase(buildModel("lstm_lm", cfg), c);
  }
}

// The eager autograd (the aten row's backward): the LSTMs, the layer-norm LSTM and ResNet-18 through the runtime's
// kernels on a tape, gradients against PyTorch's (1e-4).
TEST(Models, EagerAutogradMatchesPyTorchGradients) {
  for (const char* name : {"lstm_1layer", "lstm_3layer", "lstm_cell", "lnlstm", "lnlstm_decom", "lnlstm_odd", "vl_lstm",
                           "vl_lstm_2layer", "resnet18"}) {
    SCOPED_TRACE(name);
    auto c = test::loadCase(name);
    Model m = buildModel(c.model, c.config);
    ASSERT_TRUE(m.eagerAutograd);
    auto inputs = test::inputsFor(m, c);
    eager::Tape tape;
    std::vector<eager::Var> vars;
    for (const Tensor& t : inputs) vars.push_back(tape.input(t, isFloating(t.dtype())));
    std::vector<eager::Var> outs = m.eagerAutograd(tape, vars);
    std::vector<Tensor> values, gradOutputs;
    for (size_t k = 0; k < outs.size(); ++k) {
      values.push_back(outs[k].value);
      gradOutputs.push_back(c.gradOutputs.at(m.outputs[k]));
    }
    expectMatches(m, values, c, "eager autograd");
    tape.backward(outs, gradOutputs);
    size_t checked = 0;
    for (size_t i = 0; i < m.inputs.size(); ++i) {
      auto ref = c.grads.find(m.inputs[i].name);
      if (ref == c.grads.end()) continue;
      Tensor g = tape.grad(vars[i]);
      ASSERT_TRUE(g.defined()) << m.inputs[i].name;
      EXPECT_LE(test::relError(g, ref->second), 1e-4) << "gradient " << m.inputs[i].name;
      ++checked;
    }
    EXPECT_EQ(checked, c.grads.size());  // every gradient the case holds (running statistics have none)
  }
}

TEST(Models, UnknownModelAndVariantAreClearErrors) {
  EXPECT_THROW(
      {
        try {
          buildModel("lstm_typo", {});
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find("unknown model 'lstm_typo'"), std::string::npos);
          EXPECT_NE(std::string(e.what()).find("multihead_attention"), std::string::npos);
          throw;
        }
      },
      Error);
  ModelConfig cfg;
  cfg.variant = "jit_fast";
  EXPECT_THROW(buildModel("lstm", cfg), Error);
}

TEST(Models, InterpreterRejectsWrongInputShape) {
  Model m = buildLstmCell(3, 4, 5);
  auto inputs = randomInputs(m, 1);
  inputs[1] = Tensor::rand({2, 5}, DType::Float32, 2);
  std::vector<IValue> in(inputs.begin(), inputs.end());
  try {
    Interpreter(*m.graph).run(in);
    FAIL() << "expected a shape error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("input %hx: expected shape Float(3, 5)"), std::string::npos) << e.what();
  }
}

TEST(Models, VariantsAgreeAtLargerOddSizes) {
  LstmParams p{5, 7, 13, 11, 2};
  Model ref = buildLstm(LstmVariantKind::Jit, p);
  auto inputs = randomInputs(ref, 42);
  auto expected = ref.eager(inputs);
  for (LstmVariantKind v : allLstmVariants()) {
    Model m = buildLstm(v, p);
    auto out = interpret(m, inputs);
    size_t skip = v == LstmVariantKind::JitSimple ? 1 : 0;
    ASSERT_EQ(out.size() + skip, expected.size());
    for (size_t i = 0; i < out.size(); ++i)
      EXPECT_LE(test::relError(out[i], expected[i + skip]), 1e-6) << lstmVariantName(v) << " output " << i;
  }
}

}  // namespace
}  // namespace gj
