#pragma once
// The check shared by the library LSTMs (oneDNN's on the CPU, cuDNN's on CUDA): a reference case of
// tests/data through the library, twice (the second call reuses what the first built), forward and
// backward against PyTorch.
#include "tests/support/reference.h"

#include <gtest/gtest.h>

namespace gj::test {

template <typename Lstm>
void checkLibraryLstm(const char* name, DeviceKind device) {
  auto c = loadCase(name);
  const ModelConfig& p = c.config;
  Lstm lstm(p.seqLength, p.miniBatch, p.inputSize, p.hiddenSize, p.numLayers);
  auto in = [&](const Tensor& t) { return t.to(device); };
  auto back = [](const Tensor& t) { return t.to(DeviceKind::Cpu); };
  std::vector<Tensor> weights;
  std::vector<std::string> weightNames;
  for (int64_t k = 0; k < p.numLayers; ++k)
    for (const char* w : {"weight_ih_l", "weight_hh_l", "bias_ih_l", "bias_hh_l"}) {
      weightNames.push_back(w + std::to_string(k));
      weights.push_back(in(c.inputs.at(weightNames.back())));
    }
  for (int call = 0; call < 2; ++call) {
    SCOPED_TRACE("call " + std::to_string(call));
    auto out = lstm.forward(in(c.inputs.at("input")), in(c.inputs.at("hx")), in(c.inputs.at("cx")), weights);
    EXPECT_LE(relError(back(out[0]), c.outputs.at("output")), 1e-5);
    EXPECT_LE(relError(back(out[1]), c.outputs.at("hy")), 1e-5);
    EXPECT_LE(relError(back(out[2]), c.outputs.at("cy")), 1e-5);
    auto g = lstm.backward(in(c.gradOutputs.at("output")), in(c.gradOutputs.at("hy")), in(c.gradOutputs.at("cy")));
    EXPECT_LE(relError(back(g[0]), c.grads.at("input")), 1e-4);
    EXPECT_LE(relError(back(g[1]), c.grads.at("hx")), 1e-4);
    EXPECT_LE(relError(back(g[2]), c.grads.at("cx")), 1e-4);
    for (size_t i = 0; i < weightNames.size(); ++i)
      EXPECT_LE(relError(back(g[3 + i]), c.grads.at(weightNames[i])), 1e-4) << weightNames[i];
  }
}

}  // namespace gj::test
