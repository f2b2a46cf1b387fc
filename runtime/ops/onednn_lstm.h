#pragma once
// oneDNN's fused LSTM (its RNN primitive), forward and backward, on nn.LSTM-layout tensors: the CPU
// baseline that graphbench shows as the `cudnn` row when --device=cpu.
#include "runtime/library_lstm.h"

#include <memory>
#include <vector>

namespace gj::ops {

class OnednnLstm final : public LibraryLstm {
 public:
  /// Primitives for fixed sizes; float32. One oneDNN primitive per layer (layer 0 reads inputSize features).
  OnednnLstm(int64_t seqLength, int64_t miniBatch, int64_t inputSize, int64_t hiddenSize, int64_t numLayers);
  ~OnednnLstm() override;
  std::vector<Tensor> forward(const Tensor& input, const Tensor& hx, const Tensor& cx,
                              const std::vector<Tensor>& weights) override;
  std::vector<Tensor> backward(const Tensor& gradOutput, const Tensor& gradHy, const Tensor& gradCy) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gj::ops
