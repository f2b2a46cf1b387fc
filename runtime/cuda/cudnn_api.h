#pragma once
// cuDNN, loaded at run time (dlopen of libcudnn.so.9, or $GJ_CUDNN) like the driver and cuBLAS: the entry
// points that cudnn_lstm.cpp (the RNN API) and conv.cpp (the convolution API) call, a handle per
// thread on its current stream, and status checks. Internal to runtime/cuda; needs cudnn.h.
#include <cudnn.h>

#include <cstdint>
#include <string>

namespace gj::cuda::detail {

#define GJ_CUDNN_ENTRIES(X)                                                                                      \
  X(cudnnCreate) X(cudnnSetStream) X(cudnnGetErrorString) X(cudnnCreateTensorDescriptor)                         \
  X(cudnnDestroyTensorDescriptor) X(cudnnSetTensorNdDescriptor) X(cudnnGetTensorNdDescriptor)                    \
  X(cudnnSetTensor4dDescriptor) X(cudnnCreateDropoutDescriptor) X(cudnnDestroyDropoutDescriptor)                 \
  X(cudnnSetDropoutDescriptor) X(cudnnCreateRNNDescriptor) X(cudnnDestroyRNNDescriptor)                          \
  X(cudnnSetRNNDescriptor_v8) X(cudnnCreateRNNDataDescriptor) X(cudnnDestroyRNNDataDescriptor)                   \
  X(cudnnSetRNNDataDescriptor) X(cudnnGetRNNWeightSpaceSize) X(cudnnGetRNNTempSpaceSizes)                        \
  X(cudnnGetRNNWeightParams) X(cudnnRNNForward) X(cudnnRNNBackwardData_v8) X(cudnnRNNBackwardWeights_v8)         \
  X(cudnnCreateFilterDescriptor) X(cudnnDestroyFilterDescriptor) X(cudnnSetFilter4dDescriptor)                   \
  X(cudnnCreateConvolutionDescriptor) X(cudnnDestroyConvolutionDescriptor) X(cudnnSetConvolution2dDescriptor)    \
  X(cudnnSetConvolutionGroupCount) X(cudnnSetConvolutionMathType) X(cudnnGetConvolutionForwardAlgorithm_v7)      \
  X(cudnnGetConvolutionForwardWorkspaceSize) X(cudnnConvolutionForward)                                          \
  X(cudnnGetConvolutionBackwardDataAlgorithm_v7) X(cudnnGetConvolutionBackwardDataWorkspaceSize)                 \
  X(cudnnConvolutionBackwardData) X(cudnnGetConvolutionBackwardFilterAlgorithm_v7)                               \
  X(cudnnGetConvolutionBackwardFilterWorkspaceSize) X(cudnnConvolutionBackwardFilter)

struct Cudnn {
#define GJ_CUDNN_FIELD(name) decltype(&::name) name = nullptr;
  GJ_CUDNN_ENTRIES(GJ_CUDNN_FIELD)
#undef GJ_CUDNN_FIELD
  std::string failure;  ///< why cuDNN cannot be used; empty when it can
};

/// The library, opened on first use (its `failure` says why not, when it could not be).
const Cudnn& cudnn();
/// Throws gj::Error "<what> failed: <cuDNN's message>" unless s is success.
void check(cudnnStatus_t s, const char* what);
/// This thread's handle, set to its current stream.
cudnnHandle_t cudnnHandle();
/// v as a cuDNN int, or an error naming `what` and `who` (the op) when it does not fit.
int32_t cudnnInt(int64_t v, const char* who, const char* what);

}  // namespace gj::cuda::detail
