// Variance, standard deviation and layer norm, with their gradients. On the host a layer norm is one pass
// per row (statistics accumulated in double); a device tensor's runs as a composition of the device's
// primitives, through the ops of this directory.
#include "runtime/ops/loops.h"
#include "runtime/ops/ops.h"
#include "support/error.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace gj::ops {

namespace {

Tensor scalarLike(double v, const Tensor& x) { return Tensor::scalar(v, x.dtype()); }

// 1 / (count - unbiased): NaN for no degrees of freedom, as PyTorch's var of one element unbiased.
double varianceScale(int64_t count, bool unbiased) {
  const int64_t dof = count - (unbiased ? 1 : 0);
  return dof > 0 ? 1.0 / static_cast<double>(dof) : std::numeric_limits<double>::quiet_NaN();
}

// x viewed as rows of the normalized shape: (rows, row length), after checking the shape against x's
// trailing sizes and the affine parameters against the shape.
std::pair<int64_t, int64_t> layerNormRows(const char* op, const Tensor& x, std::span<const int64_t> shape,
                                          const Tensor& w, const Tensor& b) {
  USER_CHECK(x.defined() && isFloating(x.dtype()), "{}: expected a float input", op);
  const int64_t k = static_cast<int64_t>(shape.size());
  USER_CHECK(k >= 1 && k <= x.dim(), "{}: normalized_shape {} must name 1 to {} trailing dims of the input {}", op,
             shapeStr(shape), x.dim(), shapeStr(x.sizes()));
  int64_t n = 1;
  for (int64_t d = 0; d < k; ++d) {
    USER_CHECK(x.size(x.dim() - k + d) == shape[d],
               "{}: normalized_shape {} does not match the input's trailing sizes ({})", op, shapeStr(shape),
               shapeStr(x.sizes()));
    n *= shape[d];
  }
  for (const Tensor* p : {&w, &b}) {
    if (!p->defined()) continue;
    USER_CHECK(p->sizes() == Shape(shape.begin(), shape.end()) && p->dtype() == x.dtype(),
               "{}: the {} is {} {}, but must be {} {} (the normalized shape)", op, p == &w ? "weight" : "bias",
               dtypeName(p->dtype()), shapeStr(p->sizes()), dtypeName(x.dtype()), shapeStr(shape));
  }
  return {n == 0 ? 0 : x.numel() / n, n};
}

Shape statSizes(const Tensor& x, size_t normalizedDims) {
  Shape s = x.sizes();
  std::fill(s.end() - static_cast<long>(normalizedDims), s.end(), 1);
  return s;
}

std::vector<int64_t> trailingDims(const Tensor& x, size_t k) {
  std::vector<int64_t> dims;
  for (int64_t d = x.dim() - static_cast<int64_t>(k); d < x.dim(); ++d) dims.push_back(d);
  return dims;
}

// A row's mean and its sum of squared deviations from it, in double (two passes: no cancellation).
template <typename T>
std::pair<double, double> rowMoments(const T* row, int64_t n) {
  const double mean = sumInLanes(n, [row](int64_t j) { return static_cast<double>(row[j]); }) / static_cast<double>(n);
  const double ss = sumInLanes(n, [row, mean](int64_t j) {
    const double d = static_cast<double>(row[j]) - mean;
    return d * d;
  });
  return {mean, ss};
}

template <typename T>
LayerNormResult layerNormTyped(const Tensor& xin, int64_t rows, int64_t n, const Tensor& win, const Tensor& bin,
                               double eps, size_t k) {
  Tensor x = xin.contiguous();
  Tensor w = win.defined() ? win.contiguous() : win, b = bin.defined() ? bin.contiguous() : bin;
  LayerNormResult r{Tensor::empty(x.sizes(), x.dtype()), Tensor::empty(statSizes(x, k), x.dtype()),
                    Tensor::empty(statSizes(x, k), x.dtype())};
  const T* px = x.data<T>();
  const T* pw = w.defined() ? w.data<T>() : nullptr;
  const T* pb = b.defined() ? b.data<T>() : nullptr;
  T *py = r.out.data<T>(), *pm = r.mean.data<T>(), *pr = r.rstd.data<T>();
  parallelFor(rows, rows * n, [&](int64_t i) {
    const T* row = px + i * n;
    const auto [mean, ss] = rowMoments(row, n);
    const double rstd = 1.0 / std::sqrt(ss / static_cast<double>(n) + eps);
    pm[i] = static_cast<T>(mean);
    pr[i] = static_cast<T>(rstd);
    for (int64_t j = 0; j < n; ++j) {
      double y = (row[j] - mean) * rstd;
      if (pw) y *= pw[j];
      if (pb) y += pb[j];
      py[i * n + j] = static_cast<T>(y);
    }
  });
  return r;
}

template <typename T>
LayerNormGrads layerNormBackwardTyped(const Tensor& gin, const Tensor& xin, int64_t rows, int64_t n,
                                      const Tensor& meanIn, const Tensor& rstdIn, const Tensor& win, const Shape& params,
                                      bool weightGrad, bool biasGrad) {
  Tensor g = gin.contiguous(), x = xin.contiguous(), mean = meanIn.contiguous(), rstd = rstdIn.contiguous();
  Tensor w = win.defined() ? win.contiguous() : win;
  LayerNormGrads r{Tensor::empty(x.sizes(), x.dtype()), {}, {}};
  const T *pg = g.data<T>(), *px = x.data<T>(), *pm = mean.data<T>(), *pr = rstd.data<T>();
  const T* pw = w.defined() ? w.data<T>() : nullptr;
  T* pdx = r.input.data<T>();
  parallelFor(rows, rows * n, [&](int64_t i) {
    const T *gr = pg + i * n, *xr = px + i * n;
    const double m = pm[i], rs = pr[i];
    double a = 0, c = 0;  // the row's sums of g*w and g*w*xhat
    for (int64_t j = 0; j < n; ++j) {
      const double gw = pw ? gr[j] * static_cast<double>(pw[j]) : gr[j];
      a += gw;
      c += gw * (xr[j] - m) * rs;
    }
    a /= static_cast<double>(n), c /= static_cast<double>(n);
    for (int64_t j = 0; j < n; ++j) {
      const double gw = pw ? gr[j] * static_cast<double>(pw[j]) : gr[j];
      pdx[i * n + j] = static_cast<T>(rs * (gw - a - (xr[j] - m) * rs * c));
    }
  });
  if (weightGrad || biasGrad) {  // column sums over the rows, in double
    std::vector<double> dw(n, 0.0), db(n, 0.0);
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < n; ++j) {
        dw[j] += pg[i * n + j] * (px[i * n + j] - static_cast<double>(pm[i])) * pr[i];
        db[j] += pg[i * n + j];
      }
    auto column = [&](const std::vector<double>& v) {
      Tensor t = Tensor::empty(params, x.dtype());
      for (int64_t j = 0; j < n; ++j) t.data<T>()[j] = static_cast<T>(v[j]);
      return t;
    };
    if (weightGrad) r.weight = column(dw);
    if (biasGrad) r.bias = column(db);
  }
  return r;
}

// var, or std (root), over the trailing dims of a host tensor: one pass per row for the mean, one for the
// squared deviations, in double.
template <typename T>
Tensor varianceRowsTyped(const Tensor& xin, int64_t rows, int64_t n, double scale, bool root, Shape sizes) {
  Tensor x = xin.contiguous();
  Tensor out = Tensor::empty(std::move(sizes), x.dtype());
  const T* px = x.data<T>();
  T* po = out.data<T>();
  parallelFor(rows, rows * n, [&](int64_t i) {
    const double ss = rowMoments(px + i * n, n).second;
    po[i] = static_cast<T>(root ? std::sqrt(ss * scale) : ss * scale);
  });
  return out;
}

// var or std (root) over dims: a row loop for the trailing dims of a contiguous host tensor, a composition
// of sums otherwise.
Tensor variance(const char* op, const Tensor& x, std::span<const int64_t> dims, bool unbiased, bool keepdim,
                bool root) {
  USER_CHECK(x.defined() && isFloating(x.dtype()), "{}: expected a float tensor", op);
  const ReducePlan p = planReduce(x, dims, keepdim);
  const double scale = varianceScale(p.count, unbiased);
  if (!onCuda(x) && x.numel() > 0 && reducesTrailingDims(x, p)) {
    if (x.dtype() == DType::Float32) return varianceRowsTyped<float>(x, x.numel() / p.count, p.count, scale, root, p.outSizes);
    return varianceRowsTyped<double>(x, x.numel() / p.count, p.count, scale, root, p.outSizes);
  }
  Tensor centered = sub(x, mean(x, dims, true));
  Tensor v = mul(sum(mul(centered, centered), dims, keepdim), scalarLike(scale, x));
  return root ? pointwise(PointwiseOp::Sqrt, v) : v;
}

// var's gradient over the trailing dims of a host tensor: per row, g's element times 2 (x - mean) scale.
template <typename T>
Tensor varBackwardRowsTyped(const Tensor& gin, const Tensor& xin, int64_t rows, int64_t n, double scale) {
  Tensor g = gin.contiguous(), x = xin.contiguous();
  Tensor out = Tensor::empty(x.sizes(), x.dtype());
  const T *pg = g.data<T>(), *px = x.data<T>();
  T* po = out.data<T>();
  parallelFor(rows, rows * n, [&](int64_t i) {
    const T* row = px + i * n;
    const double s = sumInLanes(n, [row](int64_t j) { return static_cast<double>(row[j]); });
    const double mean = s / static_cast<double>(n), factor = 2.0 * scale * static_cast<double>(pg[i]);
    for (int64_t j = 0; j < n; ++j) po[i * n + j] = static_cast<T>(factor * (row[j] - mean));
  });
  return out;
}

}  // namespace

Tensor var(const Tensor& x, std::span<const int64_t> dims, bool unbiased, bool keepdim) {
  return variance("var", x, dims, unbiased, keepdim, false);
}

Tensor stdDev(const Tensor& x, std::span<const int64_t> dims, bool unbiased, bool keepdim) {
  return variance("std", x, dims, unbiased, keepdim, true);
}

Tensor varBackward(const Tensor& g, const Tensor& x, std::span<const int64_t> dims, bool unbiased, bool keepdim) {
  USER_CHECK(x.defined() && isFloating(x.dtype()) && g.defined(), "var_backward: expected float tensors");
  const ReducePlan p = planReduce(x, dims, keepdim);
  // a 0-d x has no degree of freedom left when unbiased: PyTorch 1.13 gives g times infinity there
  if (x.dim() == 0 && unbiased) return mul(g, scalarLike(std::numeric_limits<double>::infinity(), x));
  const double scale = varianceScale(p.count, unbiased);
  if (!onCuda(x, g) && x.numel() > 0 && reducesTrailingDims(x, p) && g.dtype() == x.dtype() &&
      g.numel() * p.count == x.numel()) {
    if (x.dtype() == DType::Float32) return varBackwardRowsTyped<float>(g, x, x.numel() / p.count, p.count, scale);
    return varBackwardRowsTyped<double>(g, x, x.numel() / p.count, p.count, scale);
  }
  Tensor spread = sumBackward(g, x.sizes(), dims, keepdim);
  Tensor centered = sub(x, mean(x, dims, true));
  return mul(mul(spread, centered), scalarLike(2.0 * scale, x));
}

LayerNormResult layerNorm(const Tensor& x, std::span<const int64_t> shape, const Tensor& w, const Tensor& b,
                          double eps) {
  auto [rows, n] = layerNormRows("layer_norm", x, shape, w, b);
  if (onCuda(x)) {  // mean, centered values, 1 / sqrt(var + eps), then the affine map
    auto dims = trailingDims(x, shape.size());
    LayerNormResult r;
    r.mean = mean(x, dims, true);
    Tensor centered = sub(x, r.mean);
    r.rstd = pointwise(PointwiseOp::Rsqrt, add(mean(mul(centered, centered), dims, true), scalarLike(eps, x)));
    r.out = mul(centered, r.rstd);
    if (w.defined()) r.out = mul(r.out, w);
    if (b.defined()) r.out = add(r.out, b);
    return r;
  }
  if (x.dtype() == DType::Float32) return layerNormTyped<float>(x, rows, n, w, b, eps, shape.size());
  return layerNormTyped<double>(x, rows, n, w, b, eps, shape.size());
}

LayerNormGrads layerNormBackward(const Tensor& g, const Tensor& x, std::span<const int64_t> shape,
                                 const Tensor& mean, const Tensor& rstd, const Tensor& w, const Tensor& b) {
  auto [rows, n] = layerNormRows("native_layer_norm_backward", x, shape, w, b);
  Shape stats = statSizes(x, shape.size());
  USER_CHECK(g.defined() && g.sizes() == x.sizes() && g.dtype() == x.dtype(),
             "native_layer_norm_backward: the output gradient must be {} {}", dtypeName(x.dtype()),
             shapeStr(x.sizes()));
  for (const Tensor* s : {&mean, &rstd})
    USER_CHECK(s->defined() && s->sizes() == stats && s->dtype() == x.dtype(),
               "native_layer_norm_backward: the {} must be {} {} (the input with the normalized dims as 1)",
               s == &mean ? "mean" : "rstd", dtypeName(x.dtype()), shapeStr(stats));
  if (onCuda(x)) {
    auto dims = trailingDims(x, shape.size());
    Tensor xhat = mul(sub(x, mean), rstd);
    Tensor gw = w.defined() ? mul(g, w) : g;
    Tensor a = ops::mean(gw, dims, true), c = ops::mean(mul(gw, xhat), dims, true);
    LayerNormGrads r;
    r.input = mul(sub(sub(gw, a), mul(xhat, c)), rstd);
    if (w.defined()) r.weight = sumToSize(mul(g, xhat), w.sizes());
    if (b.defined()) r.bias = sumToSize(g, b.sizes());
    return r;
  }
  if (x.dtype() == DType::Float32)
    return layerNormBackwardTyped<float>(g, x, rows, n, mean, rstd, w, Shape(shape.begin(), shape.end()), w.defined(),
                                         b.defined());
  return layerNormBackwardTyped<double>(g, x, rows, n, mean, rstd, w, Shape(shape.begin(), shape.end()), w.defined(),
                                        b.defined());
}

}  // namespace gj::ops
