#pragma once
// oneDNN's fused LSTM (its RNN primitive), forward and backward, on nn.LSTM-layout tensors: the CPU
// baseline that graphbench shows as the `cudnn` row when --device=cpu.
#include "runtime/tensor.h"

#include <memory>
#include <vector>

namespace gj::cpu {

class OnednnLstm {
 public:
  /// Primitives for fixed sizes; float32. One oneDNN primitive per layer (layer 0 reads inputSize features).
  OnednnLstm(int64_t seqLength, int64_t miniBatch, int64_t inputSize, int64_t hiddenSize, int64_t numLayers);
  ~OnednnLstm();
  OnednnLstm(const OnednnLstm&) = delete;
  OnednnLstm& operator=(const OnednnLstm&) = delete;

  /// input [T, B, I], hx and cx [L, B, H], weights: per layer w_ih [4H, I or H], w_hh [4H, H], b_ih, b_hh
  /// (gates i, f, g, o as nn.LSTM). Returns output [T, B, H], hy, cy. Keeps what backward needs.
  std::vector<Tensor> forward(const Tensor& input, const Tensor& hx, const Tensor& cx,
                              const std::vector<Tensor>& weights);
  /// Gradients of the last forward's inputs: input, hx, cx, then 4 per layer (nn.LSTM layout).
  std::vector<Tensor> backward(const Tensor& gradOutput, const Tensor& gradHy, const Tensor& gradCy);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gj::cpu
