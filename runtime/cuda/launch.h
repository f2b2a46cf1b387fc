#pragma once
// Launching kernels.cuh's kernels, internal to runtime/cuda (ops.cpp, reduce.cpp): each compiled entry,
// a launch over a number of elements, and the shapes, strides and operands the kernels take.
#include "runtime/cuda/device.h"
#include "runtime/tensor.h"

#include <algorithm>
#include <span>

#define GJ_KERNEL_TYPES_ONLY
#include "runtime/cuda/kernels.cuh"

namespace gj::cuda::detail {

/// kernels.cuh's entry `entry`: the kernels compiled together (once, while the persistent kernel cache
/// keeps the image), each entry loaded on first use.
const Kernel& kernel(const char* entry);

// Threads per block, and blocks: enough to fill the device a few times over; the grid-stride loops cover
// the rest.
inline constexpr unsigned kBlock = 256;

template <typename Args>
void launch(const char* entry, int64_t work, Args& args) {
  if (work <= 0) return;
  const int64_t most = int64_t{requireDevice().multiprocessors} * 8;
  const int64_t blocks = std::clamp<int64_t>((work + kBlock - 1) / kBlock, 1, std::max<int64_t>(most, 1));
  void* params[] = {&args};
  kernel(entry).launch({.grid = {static_cast<unsigned>(blocks), 1, 1}, .block = {kBlock, 1, 1}}, params);
}

/// The kernels' shape of `sizes` (a gj::Error past GJ_MAX_RANK dimensions).
GjShape shapeOf(std::span<const int64_t> sizes);
/// `t`'s strides over a shape of its own rank (expand first to broadcast).
GjStrides stridesOf(const Tensor& t);
/// A device operand: a 0-dim host tensor (a scalar operand) is brought over, any other host tensor refused.
Tensor onDevice(const Tensor& t, const char* what);

}  // namespace gj::cuda::detail
