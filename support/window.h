#pragma once
// The extent of a sliding window's output along one dimension: convolution and pooling, for the kernels
// (runtime/ops) and for shape propagation (passes), which must agree.
#include <cstdint>

namespace gj {

/// Convolution: may be <= 0 when the kernel overhangs the padded input.
inline int64_t convOutputSize(int64_t in, int64_t kernel, int64_t stride, int64_t pad, int64_t dilation) {
  return (in + 2 * pad - dilation * (kernel - 1) - 1) / stride + 1;
}

/// Pooling, as PyTorch computes it: ceil_mode rounds up, but no window starts in the right padding; 0 when
/// the window overhangs the padded input.
inline int64_t poolOutputSize(int64_t in, int64_t kernel, int64_t stride, int64_t pad, int64_t dilation,
                              bool ceilMode) {
  const int64_t span = in + 2 * pad - dilation * (kernel - 1) - 1;
  if (span < 0 || stride <= 0) return 0;
  int64_t out = (ceilMode ? (span + stride - 1) / stride : span / stride) + 1;
  if (ceilMode && (out - 1) * stride >= in + pad) --out;
  return out;
}

}  // namespace gj
