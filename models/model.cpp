#include "models/model.h"

#include "models/lm.h"
#include "models/lnlstm.h"
#include "models/lstm.h"
#include "models/modules.h"
#include "models/resnet.h"
#include "models/vl_lstm.h"
#include "support/error.h"

#include <cmath>

namespace gj {

const std::vector<std::string>& modelNames() {
  static const std::vector<std::string> kNames = {"lstm_cell", "lstm",    "lnlstm", "vl_lstm", "lstm_lm", "lstm_classifier",
                                                  "linear",    "softmax", "conv2d", "multihead_attention",
                                                  "resnet18",  "resnet50"};
  return kNames;
}

Model buildModel(const std::string& name, const ModelConfig& c) {
  if (name == "lstm_cell") return buildLstmCell(c.miniBatch, c.inputSize, c.hiddenSize);
  if (name == "lstm")
    return buildLstm(lstmVariantFromName(c.variant),
                     {c.seqLength, c.miniBatch, c.inputSize, c.hiddenSize, c.numLayers, c.dropout});
  if (name == "lnlstm") return buildLnLstm(c);
  if (name == "vl_lstm") return buildVlLstm(c);
  if (name == "lstm_lm") return buildLstmLm(c);
  if (name == "lstm_classifier") return buildLstmClassifier(c);
  if (name == "linear") return buildLinear(c);
  if (name == "softmax") return buildSoftmax(c);
  if (name == "conv2d") return buildConv2d(c);
  if (name == "multihead_attention") return buildMultiheadAttention(c);
  if (name == "resnet18" || name == "resnet50") return buildResnet(name, c);
  std::string known;
  for (const auto& n : modelNames()) known += (known.empty() ? "" : ", ") + n;
  throw Error(fmt::format("unknown model '{}'", name), "", "models: " + known);
}

std::vector<Tensor> randomInputs(const Model& m, uint64_t seed, DType floatType) {
  double bound = 1.0;
  for (const auto& s : m.inputs)
    if (s.name == "hx" && !s.sizes.empty()) bound = 1.0 / std::sqrt(static_cast<double>(s.sizes.back()));
  std::vector<Tensor> out;
  for (size_t i = 0; i < m.inputs.size(); ++i) {
    const InputSpec& s = m.inputs[i];
    if (s.dtype == DType::Int64) {
      Tensor u = Tensor::rand(s.sizes, DType::Float64, seed + 1000 * i, static_cast<double>(s.low),
                              static_cast<double>(s.high));
      Tensor t = Tensor::empty(s.sizes, DType::Int64);
      for (int64_t k = 0; k < t.numel(); ++k)
        t.data<int64_t>()[k] = std::min<int64_t>(static_cast<int64_t>(u.data<double>()[k]), s.high - 1);
      out.push_back(t);
    } else if (s.floatHigh > s.floatLow) {
      out.push_back(Tensor::rand(s.sizes, floatType, seed + 1000 * i, s.floatLow, s.floatHigh));
    } else {
      out.push_back(Tensor::rand(s.sizes, floatType, seed + 1000 * i, -bound, bound));
    }
  }
  return out;
}

}  // namespace gj
