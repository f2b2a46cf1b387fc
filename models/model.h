#pragma once
// Built-in models: a graph with named, typed inputs, plus the same computation run eagerly
// (runtime kernels called directly, no graph: the "aten" row of the benchmark).
#include "ir/graph.h"
#include "models/eager.h"
#include "runtime/tensor.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace gj {

/// Every size a built-in model can take. Each model reads the fields it needs; the defaults are the
/// fastrnns benchmark's (seq 100, batch 64, input 512, hidden 512, 1 layer).
struct ModelConfig {
  std::string variant = "jit";  ///< LSTM variant, see lstm.h
  int64_t seqLength = 100, miniBatch = 64, inputSize = 512, hiddenSize = 512, numLayers = 1;
  int64_t vocab = 10001, embedding = 128, classes = 5;  ///< language model and classifier
  int64_t embedDim = 8, numHeads = 2;                   ///< multi-head attention
  int64_t channels = 3, outChannels = 4, height = 8, width = 9, kernel = 3, stride = 1, padding = 1;  ///< conv2d
  int64_t rows = 4, features = 6, outFeatures = 5;      ///< linear and softmax
  int64_t dim = -1;                                     ///< softmax
  bool decomposeLayerNorm = false;                      ///< lnlstm: custom_lstms' own LayerNorm (lnlstm.h)
  double dropout = 0;                                   ///< lstm: between layers, in training (lstm.h)
  bool perSequence = false;                             ///< vl_lstm: fastrnns' loop over sequences (vl_lstm.h)
  int64_t imageSize = 224, baseWidth = 64, imageClasses = 1000;  ///< resnet18, resnet50 (resnet.h)
  bool training = true;                                 ///< resnet: batch norm by the batch's statistics
};

/// A graph input: its name (PyTorch's), dtype and sizes. Int64 inputs hold values in [low, high); float
/// inputs in [floatLow, floatHigh) where that range is set (randomInputs).
struct InputSpec {
  std::string name;
  DType dtype = DType::Float32;
  Shape sizes;
  int64_t high = 0;
  int64_t low = 0;
  double floatLow = 0, floatHigh = 0;
  bool requiresGrad = true;  ///< false for a float input no gradient reaches (a batch norm's running statistics)
};

/// Whether an input of `s` takes a gradient: a float one the model does not exempt.
inline bool takesGradient(const InputSpec& s) { return isFloating(s.dtype) && s.requiresGrad; }

struct Model {
  std::string name;
  std::shared_ptr<Graph> graph;    ///< inputs and outputs in the order of `inputs` and `outputs`
  std::vector<InputSpec> inputs;
  std::vector<std::string> outputs;
  /// The eager computation: same inputs and outputs as the graph.
  std::function<std::vector<Tensor>(const std::vector<Tensor>&)> eager;
  /// The same on an eager autograd tape (eager.h), for models that have it (the LSTMs): gradients without
  /// a graph. Inputs and outputs as above, as tape values.
  std::function<std::vector<eager::Var>(eager::Tape&, const std::vector<eager::Var>&)> eagerAutograd;
};

/// Names accepted by buildModel: lstm_cell, lstm, lnlstm, vl_lstm, lstm_lm, lstm_classifier, linear, softmax, conv2d,
/// multihead_attention, resnet18, resnet50.
const std::vector<std::string>& modelNames();
/// Builds a model by name; a gj::Error lists the known names for an unknown one.
Model buildModel(const std::string& name, const ModelConfig& config);

/// Seeded random inputs for `m`: floats uniform in their spec's range, else in [-1/sqrt(hidden),
/// 1/sqrt(hidden)) like nn.LSTM's initialization (or [-1, 1) when the model has no hidden size); int64
/// uniform in [low, high).
std::vector<Tensor> randomInputs(const Model& m, uint64_t seed, DType floatType = DType::Float32);

}  // namespace gj
