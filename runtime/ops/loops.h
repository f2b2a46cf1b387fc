#pragma once
// Strided element loops shared by the CPU kernels.
#include "runtime/tensor.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <utility>

namespace gj::ops {

/// Work below this many elements runs on one thread: a fork costs more than it saves.
constexpr int64_t kParallelGrain = 1 << 15;

/// Calls f(i) for every i in [0, n): split over the OpenMP threads when `work` (the elements the loop
/// touches) is above kParallelGrain, else in a plain loop on the calling thread. Every host kernel's
/// parallel loop goes through here rather than `#pragma omp parallel for if (...)`: libgomp starts a
/// team even when that clause is false, and starting one (a futex call) costs more than a small tensor's
/// whole kernel (bench/interpreter_bench's Pointwise rows measure it).
template <typename F>
void parallelFor(int64_t n, int64_t work, F&& f) {
  if (work <= kParallelGrain) {
    for (int64_t i = 0; i < n; ++i) f(i);
    return;
  }
#pragma omp parallel for
  for (int64_t i = 0; i < n; ++i) f(i);
}

/// The sums over j in [0, n) of each f(j), in double, as eight running partial sums each: the compiler
/// keeps them in vector registers, where a single running sum waits out every add's latency (batch norm's
/// statistics on one such chain stand out in a ResNet profile). For the kernels' sums over a row in
/// double: a tensor's statistics, a row's sum. Several sums in one call read the row once.
template <typename... F>
std::array<double, sizeof...(F)> sumsInLanes(int64_t n, F&&... f) {
  constexpr int kLanes = 8;
  constexpr size_t kSums = sizeof...(F);
  double lanes[kSums][kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int l = 0; l < kLanes; ++l) {
      size_t k = 0;
      ((lanes[k++][l] += f(j + l)), ...);
    }
  std::array<double, kSums> sums{};
  for (; j < n; ++j) {
    size_t k = 0;
    ((sums[k++] += f(j)), ...);
  }
  for (size_t k = 0; k < kSums; ++k)
    for (int l = 0; l < kLanes; ++l) sums[k] += lanes[k][l];
  return sums;
}

/// The sum over j in [0, n) of f(j), as sumsInLanes adds it.
template <typename F>
double sumInLanes(int64_t n, F&& f) {
  return sumsInLanes(n, f)[0];
}

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

/// Calls tile(i0, i1, j0, j1) for forEachInTiles' tiles: rows [i0, i1) by columns [j0, j1), for a walk
/// that does more per tile than an element at a time (a float transpose by register blocks).
template <typename F>
void forEachTile(int64_t rows, int64_t cols, F&& tile) {
  constexpr int64_t kTile = 64;
  parallelFor((rows + kTile - 1) / kTile, rows * cols, [&](int64_t tileRow) {
    const int64_t i0 = tileRow * kTile, i1 = std::min(i0 + kTile, rows);
    for (int64_t j0 = 0; j0 < cols; j0 += kTile) tile(i0, i1, j0, std::min(j0 + kTile, cols));
  });
}

/// Calls f(i, j) for every element of a rows x cols matrix, in square tiles of 64 x 64 and over the
/// threads by rows of tiles (when the matrix is large enough to pay for the fork). For a walk that reads
/// one operand along its rows and another down its columns (a transposed view): in row-major order every
/// element of the column-wise operand is a cache miss once a row of it is longer than the cache; within
/// a tile, each cache line of both is fetched once.
template <typename F>
void forEachInTiles(int64_t rows, int64_t cols, F&& f) {
  forEachTile(rows, cols, [&](int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
    for (int64_t i = i0; i < i1; ++i)
      for (int64_t j = j0; j < j1; ++j) f(i, j);
  });
}

/// What a reduction over `dims` (all when empty) of x does: the input sizes with the reduced dims as 1, the
/// output sizes (with or without them, by keepdim) and the elements folded into each output. A dim listed
/// twice is an error.
struct ReducePlan {
  Shape keptSizes;
  Shape outSizes;
  int64_t count = 1;
};
ReducePlan planReduce(const Tensor& x, std::span<const int64_t> dims, bool keepdim);
/// Whether p's reduced dims are x's trailing ones (ignoring size-1 dims), so that a contiguous x reduces
/// as rows of p.count elements, one per output.
bool reducesTrailingDims(const Tensor& x, const ReducePlan& p);

}  // namespace gj::ops
