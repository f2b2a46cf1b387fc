// Variable-length plumbing: sort, index_select and packed sequences (PyTorch's _pack_padded_sequence), with
// their gradients. Integer operands (lengths, indices, batch sizes) are small and read on the host; the
// float data moves by views and copies, so a device tensor's runs on the device through Tensor::copyFrom.
#include "runtime/ops/loops.h"
#include "runtime/ops/ops.h"
#include "support/error.h"

#include <algorithm>
#include <cstring>
#include <numeric>

namespace gj::ops {

std::vector<int64_t> hostInts(const Tensor& x, const char* what) {
  USER_CHECK(x.defined() && x.dtype() == DType::Int64, "{}: expected an int64 tensor, got {}", what,
             x.defined() ? dtypeName(x.dtype()) : "an undefined tensor");
  Tensor h = x.to(DeviceKind::Cpu).contiguous();
  return std::vector<int64_t>(h.data<int64_t>(), h.data<int64_t>() + h.numel());
}

SortResult sort(const Tensor& x, int64_t dim, bool descending) {
  USER_CHECK(x.defined(), "sort: undefined input");
  if (x.dim() == 0) return {x, Tensor::zeros({}, DType::Int64, x.device())};
  const int64_t d = wrapDim(dim, x.dim());
  // Sort rows of the dim moved last, on the host, as doubles (exact for int64 up to 2^53: lengths, indices).
  Tensor moved = x.transpose(d, x.dim() - 1).to(DeviceKind::Cpu).contiguous();
  const int64_t n = moved.size(-1), rows = n == 0 ? 0 : moved.numel() / n;
  std::vector<double> vals(static_cast<size_t>(moved.numel()));
  for (int64_t i = 0; i < moved.numel(); ++i) vals[i] = moved.item(i);
  Tensor values = Tensor::empty(moved.sizes(), x.dtype()), indices = Tensor::empty(moved.sizes(), DType::Int64);
  // Each value is moved by its bytes, so an int64 stays exact.
  const size_t bytes = dtypeSize(x.dtype());
  const char* from = static_cast<const char*>(moved.rawData());
  char* to = static_cast<char*>(values.rawData());
  int64_t* order = indices.data<int64_t>();
  for (int64_t r = 0; r < rows; ++r, order += n) {
    const double* row = &vals[r * n];
    std::iota(order, order + n, int64_t{0});
    std::stable_sort(order, order + n,
                     [&](int64_t a, int64_t b) { return descending ? row[a] > row[b] : row[a] < row[b]; });
    for (int64_t i = 0; i < n; ++i) std::memcpy(to + (r * n + i) * bytes, from + (r * n + order[i]) * bytes, bytes);
  }
  return {values.transpose(d, x.dim() - 1).contiguous().to(x.device()),
          indices.transpose(d, x.dim() - 1).contiguous().to(x.device())};
}

namespace {

// The indices, checked to lie in [0, size).
std::vector<int64_t> checkedIndices(const Tensor& index, int64_t size, const char* what) {
  USER_CHECK(index.defined() && index.dim() <= 1, "{}: the index must be a 1-D int64 tensor, not {}", what,
             index.defined() ? shapeStr(index.sizes()) : "undefined");
  std::vector<int64_t> idx = hostInts(index, what);
  for (int64_t i : idx) USER_CHECK(i >= 0 && i < size, "{}: index {} out of range for a dimension of {}", what, i, size);
  return idx;
}

// A contiguous host tensor viewed as [outer, size(d), inner].
struct Blocks {
  int64_t outer = 1, inner = 1;
  Blocks(const Shape& s, int64_t d) {
    for (int64_t i = 0; i < d; ++i) outer *= s[i];
    for (size_t i = static_cast<size_t>(d) + 1; i < s.size(); ++i) inner *= s[i];
  }
};

}  // namespace

Tensor indexSelect(const Tensor& x, int64_t dim, const Tensor& index) {
  USER_CHECK(x.defined() && x.dim() >= 1, "index_select: expected a tensor of rank 1 or more");
  const int64_t d = wrapDim(dim, x.dim());
  std::vector<int64_t> idx = checkedIndices(index, x.size(d), "index_select");
  Shape sizes = x.sizes();
  sizes[d] = static_cast<int64_t>(idx.size());
  Tensor out = Tensor::empty(sizes, x.dtype(), x.device());
  if (x.device() == DeviceKind::Cpu) {  // whole contiguous blocks
    Tensor in = x.contiguous();
    const Blocks b(x.sizes(), d);
    const size_t elem = dtypeSize(x.dtype()), bytes = b.inner * elem;
    const char* src = static_cast<const char*>(in.rawData());
    char* dst = static_cast<char*>(out.rawData());
    for (int64_t o = 0; o < b.outer; ++o)
      for (size_t k = 0; k < idx.size(); ++k)
        std::memcpy(dst + ((o * static_cast<int64_t>(idx.size()) + static_cast<int64_t>(k)) * b.inner) * elem,
                    src + ((o * x.size(d) + idx[k]) * b.inner) * elem, bytes);
    return out;
  }
  for (size_t k = 0; k < idx.size(); ++k) out.select(d, static_cast<int64_t>(k)).copyFrom(x.select(d, idx[k]));
  return out;
}

Tensor indexSelectBackward(const Tensor& g, std::span<const int64_t> sizes, int64_t dim, const Tensor& index) {
  USER_CHECK(g.defined() && isFloating(g.dtype()), "index_select_backward: expected a float gradient");
  const int64_t d = wrapDim(dim, static_cast<int64_t>(sizes.size()));
  std::vector<int64_t> idx = checkedIndices(index, sizes[d], "index_select_backward");
  Shape expect(sizes.begin(), sizes.end());
  expect[d] = static_cast<int64_t>(idx.size());
  USER_CHECK(g.sizes() == expect, "index_select_backward: the gradient is {} where {} was expected",
             shapeStr(g.sizes()), shapeStr(expect));
  Tensor out = Tensor::zeros(Shape(sizes.begin(), sizes.end()), g.dtype(), g.device());
  if (g.device() == DeviceKind::Cpu) {  // rows added in index order (repeats accumulate)
    Tensor gc = g.contiguous();
    const Blocks b(out.sizes(), d);
    const int64_t n = static_cast<int64_t>(idx.size());
    auto run = [&](auto* dst, const auto* src) {
      for (int64_t o = 0; o < b.outer; ++o)
        for (int64_t k = 0; k < n; ++k) {
          auto* to = dst + (o * sizes[d] + idx[k]) * b.inner;
          const auto* from = src + (o * n + k) * b.inner;
          for (int64_t i = 0; i < b.inner; ++i) to[i] += from[i];
        }
    };
    if (g.dtype() == DType::Float32) run(out.data<float>(), gc.data<float>());
    else run(out.data<double>(), gc.data<double>());
    return out;
  }
  for (size_t k = 0; k < idx.size(); ++k) {
    Tensor slot = out.select(d, idx[k]);
    slot.copyFrom(add(slot, g.select(d, static_cast<int64_t>(k))));
  }
  return out;
}

namespace {

// Batch sizes of lengths sorted descending: how many sequences run at each step.
std::vector<int64_t> batchSizesOf(const std::vector<int64_t>& lengths, int64_t steps) {
  USER_CHECK(!lengths.empty(), "_pack_padded_sequence: no sequences (lengths is empty)");
  for (size_t b = 0; b < lengths.size(); ++b) {
    USER_CHECK(lengths[b] >= 1 && lengths[b] <= steps,
               "_pack_padded_sequence: length {} of sequence {} is not in [1, {}] (the input's steps)", lengths[b], b,
               steps);
    USER_CHECK(b == 0 || lengths[b] <= lengths[b - 1],
               "_pack_padded_sequence: lengths must be sorted in descending order ({} follows {} at {}); sort the "
               "batch first (aten::sort, aten::index_select)", lengths[b], lengths[b - 1], b);
  }
  std::vector<int64_t> sizes(static_cast<size_t>(lengths[0]));
  for (int64_t t = 0; t < lengths[0]; ++t)
    sizes[t] = std::count_if(lengths.begin(), lengths.end(), [&](int64_t l) { return l > t; });
  return sizes;
}

// The input as [T, B, *].
Tensor timeMajor(const Tensor& x, bool batchFirst) { return batchFirst ? x.transpose(0, 1) : x; }

}  // namespace

PackedSequence packPaddedSequence(const Tensor& input, const Tensor& lengths, bool batchFirst) {
  USER_CHECK(input.defined() && input.dim() >= 2, "_pack_padded_sequence: the input must be [T, B, *], not {}",
             input.defined() ? shapeStr(input.sizes()) : "undefined");
  Tensor x = timeMajor(input, batchFirst);
  std::vector<int64_t> lens = hostInts(lengths, "_pack_padded_sequence");
  USER_CHECK(static_cast<int64_t>(lens.size()) == x.size(1) && lengths.dim() == 1,
             "_pack_padded_sequence: {} lengths for a batch of {}", lens.size(), x.size(1));
  std::vector<int64_t> sizes = batchSizesOf(lens, x.size(0));
  Shape dataSizes = x.sizes();
  dataSizes.erase(dataSizes.begin());
  dataSizes[0] = std::accumulate(lens.begin(), lens.end(), int64_t{0});
  Tensor data = Tensor::empty(dataSizes, x.dtype(), x.device());
  int64_t offset = 0;
  for (size_t t = 0; t < sizes.size(); ++t) {
    data.narrow(0, offset, sizes[t]).copyFrom(x.select(0, static_cast<int64_t>(t)).narrow(0, 0, sizes[t]));
    offset += sizes[t];
  }
  std::vector<double> bs(sizes.begin(), sizes.end());
  return {data, Tensor::fromVector({static_cast<int64_t>(bs.size())}, bs, DType::Int64)};
}

Tensor packPaddedSequenceBackward(const Tensor& g, std::span<const int64_t> inputSizes, const Tensor& batchSizes,
                                  bool batchFirst) {
  USER_CHECK(g.defined() && inputSizes.size() >= 2, "_pack_padded_sequence_backward: expected a gradient and the "
             "input's sizes [T, B, *]");
  std::vector<int64_t> sizes = hostInts(batchSizes, "_pack_padded_sequence_backward");
  Tensor out = Tensor::zeros(Shape(inputSizes.begin(), inputSizes.end()), g.dtype(), g.device());
  Tensor x = timeMajor(out, batchFirst);
  const int64_t total = std::accumulate(sizes.begin(), sizes.end(), int64_t{0});
  USER_CHECK(g.dim() == x.dim() - 1 && g.size(0) == total && static_cast<int64_t>(sizes.size()) <= x.size(0),
             "_pack_padded_sequence_backward: a gradient of {} for {} packed rows of an input {}", shapeStr(g.sizes()),
             total, shapeStr(inputSizes));
  int64_t offset = 0;
  for (size_t t = 0; t < sizes.size(); ++t) {
    USER_CHECK(sizes[t] >= 0 && sizes[t] <= x.size(1), "_pack_padded_sequence_backward: batch size {} at step {} "
               "exceeds the batch of {}", sizes[t], t, x.size(1));
    x.select(0, static_cast<int64_t>(t)).narrow(0, 0, sizes[t]).copyFrom(g.narrow(0, offset, sizes[t]));
    offset += sizes[t];
  }
  return out;
}

}  // namespace gj::ops
