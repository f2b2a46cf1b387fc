#include "runtime/ops/loops.h"
#include "runtime/ops/onednn_softmax.h"
#include "runtime/ops/ops.h"
#include "runtime/cuda/ops.h"
#include "support/error.h"

#include <cmath>
#include <limits>

namespace gj::ops {

ReducePlan planReduce(const Tensor& x, std::span<const int64_t> dims, bool keepdim) {
  ReducePlan p;
  std::vector<bool> reduced(x.dim(), dims.empty());
  for (int64_t d : dims) {
    int64_t w = wrapDim(d, x.dim());
    USER_CHECK(x.dim() == 0 || !reduced[w] || dims.empty(), "sum: dimension {} listed twice", d);
    if (x.dim() > 0) reduced[w] = true;
  }
  for (int64_t d = 0; d < x.dim(); ++d) {
    p.keptSizes.push_back(reduced[d] ? 1 : x.size(d));
    if (reduced[d]) p.count *= x.size(d);
    if (!reduced[d] || keepdim) p.outSizes.push_back(reduced[d] ? 1 : x.size(d));
  }
  return p;
}

template <typename T>
static Tensor sumTyped(const Tensor& x, const ReducePlan& p, double scale) {
  Tensor acc = Tensor::zeros(p.keptSizes, DType::Float64);
  Tensor accView = acc.expand(x.sizes());
  double* a = acc.data<double>();
  const T* in = x.data<T>();
  forEachOffset<2>(x.sizes(), {accView.strides().data(), x.strides().data()},
                   [&](const std::array<int64_t, 2>& o) { a[o[0]] += static_cast<double>(in[o[1]]); });
  Tensor out = Tensor::empty(p.outSizes, x.dtype());
  T* po = out.data<T>();
  for (int64_t i = 0, n = out.numel(); i < n; ++i) po[i] = static_cast<T>(a[i] * scale);
  return out;
}

// The same over the trailing dims of a contiguous tensor: one row of p.count elements per output.
template <typename T>
static Tensor sumRowsTyped(const Tensor& x, const ReducePlan& p, double scale) {
  Tensor out = Tensor::empty(p.outSizes, x.dtype());
  const T* in = x.data<T>();
  T* po = out.data<T>();
  const int64_t rows = out.numel(), n = p.count;
  parallelFor(rows, rows * n, [&](int64_t i) {
    const T* row = in + i * n;
    po[i] = static_cast<T>(sumInLanes(n, [row](int64_t j) { return static_cast<double>(row[j]); }) * scale);
  });
  return out;
}

bool reducesTrailingDims(const Tensor& x, const ReducePlan& p) {
  int64_t d = x.dim();
  while (d > 0 && p.keptSizes[d - 1] == 1) --d;  // the trailing run of kept-as-1 dims
  for (int64_t e = 0; e < d; ++e)
    if (p.keptSizes[e] != x.size(e)) return false;  // a reduced dim ahead of the run
  return true;
}

// A sum of integers or bools, in int64 as PyTorch's: exact, wrapping on overflow. On the host for a device
// tensor too (a double accumulator would round past 2^53).
static Tensor integerSum(const Tensor& x, const ReducePlan& p) {
  if (onCuda(x)) return integerSum(x.to(DeviceKind::Cpu), p).to(DeviceKind::Cuda);
  const Tensor xi = x.to(DType::Int64);
  Tensor acc = Tensor::zeros(p.keptSizes, DType::Int64);
  Tensor accView = acc.expand(xi.sizes());
  auto* a = reinterpret_cast<uint64_t*>(acc.data<int64_t>());
  const int64_t* in = xi.data<int64_t>();
  forEachOffset<2>(xi.sizes(), {accView.strides().data(), xi.strides().data()},
                   [&](const std::array<int64_t, 2>& o) { a[o[0]] += static_cast<uint64_t>(in[o[1]]); });
  return acc.view(p.outSizes);
}

static Tensor reduceSum(const char* op, const Tensor& x, std::span<const int64_t> dims, bool keepdim, bool isMean) {
  USER_CHECK(x.defined(), "{}: undefined tensor argument", op);
  USER_CHECK(isFloating(x.dtype()) || !isMean, "{}: a {} tensor has no mean (PyTorch refuses it too); hint: "
             "convert it with .float() first", op, dtypeName(x.dtype()));
  ReducePlan p = planReduce(x, dims, keepdim);
  if (!isFloating(x.dtype())) return integerSum(x, p);
  double scale = isMean ? (p.count ? 1.0 / static_cast<double>(p.count) : std::numeric_limits<double>::quiet_NaN())
                        : 1.0;
  if (onCuda(x)) return cuda::sum(x, p.keptSizes, p.outSizes, scale);
  if (x.isContiguous() && p.count > 0 && x.numel() > 0 && reducesTrailingDims(x, p))
    return x.dtype() == DType::Float32 ? sumRowsTyped<float>(x, p, scale) : sumRowsTyped<double>(x, p, scale);
  if (x.dtype() == DType::Float32) return sumTyped<float>(x, p, scale);
  return sumTyped<double>(x, p, scale);
}

Tensor sum(const Tensor& x, std::span<const int64_t> dims, bool keepdim) {
  return reduceSum("sum", x, dims, keepdim, false);
}

Tensor mean(const Tensor& x, std::span<const int64_t> dims, bool keepdim) {
  return reduceSum("mean", x, dims, keepdim, true);
}

// The largest (or smallest) element of x over the plan's dims: NaN when any is, -inf (inf) of none.
template <typename T>
static Tensor extremumTyped(const Tensor& x, const ReducePlan& p, bool smallest) {
  const T none = smallest ? std::numeric_limits<T>::infinity() : -std::numeric_limits<T>::infinity();
  Tensor out = Tensor::full(p.keptSizes, x.dtype(), static_cast<double>(none));
  Tensor outView = out.expand(x.sizes());
  T* o = out.data<T>();
  const T* in = x.data<T>();
  forEachOffset<2>(x.sizes(), {outView.strides().data(), x.strides().data()}, [&](const std::array<int64_t, 2>& off) {
    const T v = in[off[1]];
    T& m = o[off[0]];
    if (std::isnan(v) || (smallest ? v < m : v > m)) m = std::isnan(m) ? m : v;
  });
  return out.view(p.outSizes);
}

// The same for int64 (bools go through int64 and back), on the host.
static Tensor integerExtremum(const Tensor& x, const ReducePlan& p, bool smallest) {
  if (onCuda(x)) return integerExtremum(x.to(DeviceKind::Cpu), p, smallest).to(DeviceKind::Cuda);
  const Tensor xi = x.to(DType::Int64);
  Tensor out = Tensor::empty(p.keptSizes, DType::Int64);
  int64_t* o = out.data<int64_t>();
  std::fill(o, o + out.numel(), smallest ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min());
  Tensor outView = out.expand(xi.sizes());
  const int64_t* in = xi.data<int64_t>();
  forEachOffset<2>(xi.sizes(), {outView.strides().data(), xi.strides().data()}, [&](const std::array<int64_t, 2>& off) {
    int64_t& m = o[off[0]];
    m = smallest ? std::min(m, in[off[1]]) : std::max(m, in[off[1]]);
  });
  return out.view(p.outSizes).to(x.dtype());
}

static Tensor extremum(const char* op, const Tensor& x, std::span<const int64_t> dims, bool keepdim, bool smallest) {
  USER_CHECK(x.defined(), "{}: undefined tensor argument", op);
  ReducePlan p = planReduce(x, dims, keepdim);
  USER_CHECK(x.numel() > 0, "{}: the tensor {} is empty, so it has no {}", op, shapeStr(x.sizes()),
             smallest ? "minimum" : "maximum");
  if (!isFloating(x.dtype())) return integerExtremum(x, p, smallest);
  if (onCuda(x)) {
    if (!smallest) return cuda::amax(x, p.keptSizes, p.outSizes);
    Tensor negated = cuda::map(PointwiseOp::Neg, x, Tensor());
    return cuda::map(PointwiseOp::Neg, cuda::amax(negated, p.keptSizes, p.outSizes), Tensor());
  }
  return x.dtype() == DType::Float32 ? extremumTyped<float>(x, p, smallest) : extremumTyped<double>(x, p, smallest);
}

Tensor amax(const Tensor& x, std::span<const int64_t> dims, bool keepdim) {
  return extremum("amax", x, dims, keepdim, false);
}

Tensor amin(const Tensor& x, std::span<const int64_t> dims, bool keepdim) {
  return extremum("amin", x, dims, keepdim, true);
}

// The order that moves dim d of a rank-r tensor last, the others keeping theirs; and its inverse.
static std::vector<int64_t> lastPermutation(int64_t d, int64_t rank) {
  std::vector<int64_t> p;
  for (int64_t e = 0; e < rank; ++e)
    if (e != d) p.push_back(e);
  p.push_back(d);
  return p;
}
static std::vector<int64_t> fromLastPermutation(int64_t d, int64_t rank) {
  std::vector<int64_t> p;
  for (int64_t e = 0; e < rank; ++e) p.push_back(e < d ? e : e == d ? rank - 1 : e - 1);
  return p;
}

template <typename T>
static void extremeRowsTyped(const Tensor& rows, int64_t n, bool min, Tensor& values, Tensor& indices) {
  const T* in = rows.data<T>();
  T* v = values.data<T>();
  int64_t* idx = indices.data<int64_t>();
  for (int64_t r = 0; r < values.numel(); ++r) {
    const T* row = in + r * n;
    int64_t best = 0;
    for (int64_t j = 1; j < n && !std::isnan(row[best]); ++j)
      if (std::isnan(row[j]) || (min ? row[j] < row[best] : row[j] > row[best])) best = j;
    v[r] = row[best];
    idx[r] = best;
  }
}

ExtremeResult extremeAlong(const Tensor& x, int64_t dim, bool keepdim, bool min) {
  const char* op = min ? "aten::min" : "aten::max";
  USER_CHECK(x.defined() && isFloating(x.dtype()), "{}: expected a float tensor", op);
  const int64_t rank = x.dim();
  const int64_t d = wrapDim(dim, std::max<int64_t>(rank, 1));
  const int64_t n = rank == 0 ? 1 : x.size(d);
  USER_CHECK(n > 0, "{}: dim {} of {} is empty, so it has no {}", op, dim, shapeStr(x.sizes()), min ? "minimum" : "maximum");
  Shape kept(x.sizes().begin(), x.sizes().end());
  if (rank > 0) {
    if (keepdim) kept[d] = 1;
    else kept.erase(kept.begin() + d);
  }
  // rows of the dim's elements, in the order of the other dims: that of the result
  const Tensor rows = rank == 0 ? x.reshape({1}) : x.permute(lastPermutation(d, rank)).contiguous();
  const int64_t count = rows.numel() / n;
  if (onCuda(x)) {
    auto [values, indices] = cuda::extremeRows(rows, count, n, min);
    return {values.view(kept), indices.view(kept)};
  }
  Tensor values = Tensor::empty({count}, x.dtype()), indices = Tensor::empty({count}, DType::Int64);
  if (x.dtype() == DType::Float32) extremeRowsTyped<float>(rows, n, min, values, indices);
  else extremeRowsTyped<double>(rows, n, min, values, indices);
  return {values.view(kept), indices.view(kept)};
}

Tensor valueSelectingBackward(const Tensor& grad, int64_t dim, const Tensor& indices, std::span<const int64_t> sizes,
                              bool keepdim) {
  const char* op = "aten::value_selecting_reduction_backward";
  USER_CHECK(grad.defined() && isFloating(grad.dtype()) && indices.defined() && indices.dtype() == DType::Int64,
             "{}: a float gradient and int64 indices expected", op);
  const int64_t rank = static_cast<int64_t>(sizes.size());
  const int64_t d = wrapDim(dim, std::max<int64_t>(rank, 1));
  const int64_t n = rank == 0 ? 1 : sizes[d];
  const int64_t count = n ? numelOf(sizes) / n : 0;
  USER_CHECK(grad.numel() == count && indices.numel() == count, "{}: {} gradients and {} indices for {} rows of {}", op,
             grad.numel(), indices.numel(), count, shapeStr(sizes));
  (void)keepdim;  // with or without the size-1 dim, the rows come in the same order
  Shape moved = {1};  // a 0-d input: one row of one
  if (rank > 0) {
    moved.clear();
    for (int64_t p : lastPermutation(d, rank)) moved.push_back(sizes[p]);
  }
  Tensor out;
  if (onCuda(grad, indices)) {
    out = Tensor::zeros({count, n}, grad.dtype(), DeviceKind::Cuda);
    cuda::scatterAdd(out, grad.reshape({count, 1}), 1, indices.reshape({count}), 1, n, n, 1.0, op);
  } else {
    out = Tensor::zeros({count, n}, grad.dtype());
    const Tensor g = grad.contiguous(), idx = indices.contiguous();
    auto put = [&](auto zero) {
      using T = decltype(zero);
      T* o = out.data<T>();
      const T* pg = g.data<T>();
      for (int64_t r = 0; r < count; ++r) {
        const int64_t j = idx.data<int64_t>()[r];
        USER_CHECK(j >= 0 && j < n, "{}: index {} outside [0, {})", op, j, n);
        o[r * n + j] = pg[r];
      }
    };
    if (grad.dtype() == DType::Float32) put(float{});
    else put(double{});
  }
  if (rank == 0) return out.reshape({});
  return out.view(moved).permute(fromLastPermutation(d, rank)).contiguous();
}

// softmax and log_softmax along `dim` of a contiguous copy: rows of n elements, `inner` apart.
template <typename T>
static Tensor softmaxTyped(const Tensor& xin, int64_t dim, bool log) {
  Tensor x = xin.contiguous();
  Tensor out = Tensor::empty(x.sizes(), x.dtype());
  int64_t n = x.dim() == 0 ? 1 : x.size(dim);
  int64_t inner = 1, outer = 1;
  for (int64_t d = dim + 1; d < x.dim(); ++d) inner *= x.size(d);
  for (int64_t d = 0; d < dim; ++d) outer *= x.size(d);
  const T* in = x.data<T>();
  T* o = out.data<T>();
  parallelFor(outer * inner, outer * inner * n, [&](int64_t r) {
    const int64_t b = r / inner, j = r % inner;
    const T* row = in + b * n * inner + j;
    T* orow = o + b * n * inner + j;
    double mx = -std::numeric_limits<double>::infinity();
    for (int64_t i = 0; i < n; ++i) mx = std::max<double>(mx, row[i * inner]);
    if (std::isinf(mx) && mx < 0) mx = 0;  // a row of -inf: keep exp finite
    double s = 0;
    for (int64_t i = 0; i < n; ++i) s += std::exp(static_cast<double>(row[i * inner]) - mx);
    double lse = std::log(s);
    for (int64_t i = 0; i < n; ++i) {
      double z = static_cast<double>(row[i * inner]) - mx;
      orow[i * inner] = static_cast<T>(log ? z - lse : std::exp(z - lse));
    }
  });
  return out;
}

static Tensor softmaxImpl(const char* op, const Tensor& x, int64_t dim, bool log) {
  USER_CHECK(x.defined() && isFloating(x.dtype()), "{}: expected a float tensor", op);
  dim = wrapDim(dim, x.dim());
  if (onCuda(x)) return cuda::softmax(x, dim, log);  // one kernel, the same formulas in double
  if (x.dtype() == DType::Float32) {
    Tensor xc = x.contiguous();
    Tensor out = Tensor::empty(x.sizes(), x.dtype());
    if (onednnSoftmax(xc, dim, log, out)) return out;
    return softmaxTyped<float>(xc, dim, log);
  }
  return softmaxTyped<double>(x, dim, log);
}

Tensor softmax(const Tensor& x, int64_t dim) { return softmaxImpl("softmax", x, dim, false); }
Tensor logSoftmax(const Tensor& x, int64_t dim) { return softmaxImpl("log_softmax", x, dim, true); }

template <typename T>
static Tensor nllTyped(const Tensor& logp, const Tensor& target) {
  Tensor t = target.contiguous();
  const int64_t* tp = t.data<int64_t>();
  const T* lp = logp.data<T>();
  const int64_t n = logp.size(0), c = logp.size(1);
  double s = 0;
  for (int64_t i = 0; i < n; ++i) {
    USER_CHECK(tp[i] >= 0 && tp[i] < c, "nll_loss: target {} at position {} is out of range [0, {})", tp[i], i, c);
    s -= static_cast<double>(lp[i * logp.stride(0) + tp[i] * logp.stride(1)]);
  }
  return Tensor::scalar(n ? s / static_cast<double>(n) : std::numeric_limits<double>::quiet_NaN(), logp.dtype());
}

Tensor nllLoss(const Tensor& logp, const Tensor& target) {
  USER_CHECK(logp.defined() && isFloating(logp.dtype()) && logp.dim() == 2,
             "nll_loss: expected float log-probabilities [N, C], got {}",
             logp.defined() ? shapeStr(logp.sizes()) : "undefined");
  USER_CHECK(target.defined() && target.dtype() == DType::Int64 && target.dim() == 1 && target.size(0) == logp.size(0),
             "nll_loss: expected int64 targets [{}], got {} {}", logp.size(0),
             target.defined() ? dtypeName(target.dtype()) : "undefined",
             target.defined() ? shapeStr(target.sizes()) : "");
  if (onCuda(logp)) {  // the picked log-probabilities, then their negated mean
    const int64_t n = logp.size(0), c = logp.size(1);
    Tensor picked = cuda::gather(logp, target, 1, c, c, "nll_loss");
    const Shape kept = {1, 1};
    return cuda::sum(picked, kept, Shape{}, n ? -1.0 / static_cast<double>(n) : std::numeric_limits<double>::quiet_NaN());
  }
  if (logp.dtype() == DType::Float32) return nllTyped<float>(logp, target);
  return nllTyped<double>(logp, target);
}

Tensor crossEntropy(const Tensor& logits, const Tensor& target) { return nllLoss(logSoftmax(logits, 1), target); }

}  // namespace gj::ops
