#pragma once
// softmax and log_softmax, forward and backward, on oneDNN's softmax primitive (float32, contiguous): the
// host's softmax where oneDNN is built in (GJ_WITH_ONEDNN). reduce.cpp and grad.cpp keep their own loops for
// float64, for other layouts and for builds without it.
#include "runtime/tensor.h"

namespace gj::ops {

/// out = softmax(x) along `dim` (log_softmax when `log`); x and out contiguous float32 of the same sizes, rank
/// 1 or more. False when oneDNN is not in this build or cannot take these sizes (out untouched then), and
/// when a row holds NaN or +inf (out unspecified then), where oneDNN's result differs from PyTorch's all-NaN
/// row: the caller computes those itself.
bool onednnSoftmax(const Tensor& x, int64_t dim, bool log, const Tensor& out);
/// gx = the gradient of softmax (log_softmax when `log`) along `dim` for the output y and its gradient g; all
/// contiguous float32 of the same sizes. False as above.
bool onednnSoftmaxBackward(const Tensor& g, const Tensor& y, int64_t dim, bool log, const Tensor& gx);

}  // namespace gj::ops
