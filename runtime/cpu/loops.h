#pragma once
// Strided element loops shared by the CPU kernels.
#include "runtime/tensor.h"

#include <array>
#include <cstdint>
#include <span>

namespace gj::cpu {

/// True when an operand is a device tensor: the op hands its work to runtime/cuda (cuda/ops.h).
inline bool onCuda(const Tensor& a, const Tensor& b = Tensor()) {
  return (a.defined() && a.device() == DeviceKind::Cuda) || (b.defined() && b.device() == DeviceKind::Cuda);
}

/// Calls f(std::array<int64_t, N> offsets) for every element of `sizes` in row-major order;
/// offsets[k] is the element offset of operand k, whose strides are strides[k] (one per dim).
/// The innermost dimension runs as a plain loop.
template <size_t N, typename F>
void forEachOffset(std::span<const int64_t> sizes, const std::array<const int64_t*, N>& strides, F&& f) {
  const int64_t rank = static_cast<int64_t>(sizes.size());
  for (int64_t s : sizes)
    if (s == 0) return;
  if (rank == 0) {
    f(std::array<int64_t, N>{});
    return;
  }
  int64_t counter[16] = {};
  std::array<int64_t, N> base{};
  const int64_t inner = sizes[rank - 1];
  while (true) {
    std::array<int64_t, N> off = base;
    for (int64_t i = 0; i < inner; ++i) {
      f(off);
      for (size_t k = 0; k < N; ++k) off[k] += strides[k][rank - 1];
    }
    int64_t d = rank - 2;
    for (; d >= 0; --d) {
      ++counter[d];
      for (size_t k = 0; k < N; ++k) base[k] += strides[k][d];
      if (counter[d] < sizes[d]) break;
      for (size_t k = 0; k < N; ++k) base[k] -= strides[k][d] * sizes[d];
      counter[d] = 0;
    }
    if (d < 0) return;
  }
}

}  // namespace gj::cpu
