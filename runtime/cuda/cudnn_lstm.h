#pragma once
// cuDNN's fused LSTM (the cuDNN 9 RNN API), forward and backward, on nn.LSTM-layout device tensors: the
// baseline that graphbench shows as the `cudnn` row when --device=cuda. cuDNN is loaded at run time
// (dlopen of libcudnn.so.9, or $GJ_CUDNN), like the driver and cuBLAS; where it is missing, or under the
// emulated driver, constructing one fails with the reason.
#include "runtime/library_lstm.h"

#include <memory>
#include <string>

namespace gj::cuda {

class CudnnLstm final : public LibraryLstm {
 public:
  /// Descriptors and the weight space for fixed sizes; float32, FMA math (no TF32, so results compare with
  /// float32 references).
  CudnnLstm(int64_t seqLength, int64_t miniBatch, int64_t inputSize, int64_t hiddenSize, int64_t numLayers);
  ~CudnnLstm() override;
  /// The weights are copied into cuDNN's weight space on every call (8 device copies a layer).
  std::vector<Tensor> forward(const Tensor& input, const Tensor& hx, const Tensor& cx,
                              const std::vector<Tensor>& weights) override;
  std::vector<Tensor> backward(const Tensor& gradOutput, const Tensor& gradHy, const Tensor& gradCy) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Why cuDNN (its LSTM, its convolution) cannot run here ("" when it can): no device, an emulated one, or
/// no cuDNN library.
std::string cudnnUnavailable();

}  // namespace gj::cuda
