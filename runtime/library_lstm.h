#pragma once
// A library's fused LSTM on nn.LSTM-layout tensors, for fixed sizes: the `cudnn` baseline rows of
// graphbench. oneDNN's on the CPU (ops::OnednnLstm), cuDNN's on CUDA (cuda::CudnnLstm).
#include "runtime/tensor.h"

#include <vector>

namespace gj {

class LibraryLstm {
 public:
  LibraryLstm() = default;
  virtual ~LibraryLstm() = default;
  LibraryLstm(const LibraryLstm&) = delete;
  LibraryLstm& operator=(const LibraryLstm&) = delete;

  /// input [T, B, I], hx and cx [L, B, H], weights: per layer w_ih [4H, I or H], w_hh [4H, H], b_ih, b_hh
  /// (gates i, f, g, o as nn.LSTM), on the library's device. Returns output [T, B, H], hy, cy. Keeps what
  /// backward needs.
  virtual std::vector<Tensor> forward(const Tensor& input, const Tensor& hx, const Tensor& cx,
                                      const std::vector<Tensor>& weights) = 0;
  /// Gradients of the last forward's inputs: input, hx, cx, then 4 per layer (nn.LSTM layout).
  virtual std::vector<Tensor> backward(const Tensor& gradOutput, const Tensor& gradHy, const Tensor& gradCy) = 0;
};

}  // namespace gj
