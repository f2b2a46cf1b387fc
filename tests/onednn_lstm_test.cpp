// oneDNN's LSTM (the CPU `cudnn` row) against PyTorch's references, forward and backward.
#include "runtime/cpu/onednn_lstm.h"
#include "tests/support/build_config.h"
#include "tests/support/reference.h"

#include <gtest/gtest.h>

namespace gj {
namespace {

void checkCase(const char* name) {
  auto c = test::loadCase(name);
  const ModelConfig& p = c.config;
  cpu::OnednnLstm lstm(p.seqLength, p.miniBatch, p.inputSize, p.hiddenSize, p.numLayers);
  std::vector<Tensor> weights;
  std::vector<std::string> weightNames;
  for (int64_t k = 0; k < p.numLayers; ++k)
    for (const char* w : {"weight_ih_l", "weight_hh_l", "bias_ih_l", "bias_hh_l"}) {
      weightNames.push_back(w + std::to_string(k));
      weights.push_back(c.inputs.at(weightNames.back()));
    }
  for (int call = 0; call < 2; ++call) {  // the second call reuses the primitives
    auto out = lstm.forward(c.inputs.at("input"), c.inputs.at("hx"), c.inputs.at("cx"), weights);
    EXPECT_LE(test::relError(out[0], c.outputs.at("output")), 1e-5);
    EXPECT_LE(test::relError(out[1], c.outputs.at("hy")), 1e-5);
    EXPECT_LE(test::relError(out[2], c.outputs.at("cy")), 1e-5);
    auto g = lstm.backward(c.gradOutputs.at("output"), c.gradOutputs.at("hy"), c.gradOutputs.at("cy"));
    EXPECT_LE(test::relError(g[0], c.grads.at("input")), 1e-4);
    EXPECT_LE(test::relError(g[1], c.grads.at("hx")), 1e-4);
    EXPECT_LE(test::relError(g[2], c.grads.at("cx")), 1e-4);
    for (size_t i = 0; i < weightNames.size(); ++i)
      EXPECT_LE(test::relError(g[3 + i], c.grads.at(weightNames[i])), 1e-4) << weightNames[i];
  }
}

TEST(OnednnLstm, OneLayerMatchesPyTorch) {
  SKIP_WITHOUT_ONEDNN();
  checkCase("lstm_1layer");
}

TEST(OnednnLstm, ThreeLayersMatchPyTorch) {
  SKIP_WITHOUT_ONEDNN();
  checkCase("lstm_3layer");
}

TEST(OnednnLstm, WrongShapesAreClearErrors) {
  SKIP_WITHOUT_ONEDNN();
  cpu::OnednnLstm lstm(3, 2, 4, 5, 1);
  Tensor x = Tensor::rand({3, 2, 5}, DType::Float32, 1);
  Tensor h = Tensor::rand({1, 2, 5}, DType::Float32, 2);
  EXPECT_THROW(lstm.forward(x, h, h, {}), Error);
  EXPECT_THROW(lstm.backward(x, h, h), Error);
}

}  // namespace
}  // namespace gj
