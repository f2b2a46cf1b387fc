// The CNN ops: batch norm (training and eval, with running statistics) and 2-d pooling, with their
// gradients. On the host, each is a loop over channels or planes (statistics accumulated in double); a
// device tensor's batch norm runs as per-channel sums in double (cuda::sumInDouble) and a few maps, and its
// pooling as kernels.cuh's window kernels (cuda/ops.h).
#include "runtime/ops/loops.h"
#include "runtime/ops/ops.h"
#include "runtime/cuda/ops.h"
#include "support/error.h"

#include <atomic>
#include <cmath>
#include <limits>
#include <tuple>
#include <utility>
#include <vector>

namespace gj::ops {

namespace {

// x [N, C, *] viewed as (N, C, inner): the sizes a per-channel loop walks.
struct ChannelShape {
  int64_t n, c, inner;
};

ChannelShape channelShape(const char* op, const Tensor& x) {
  USER_CHECK(x.defined() && isFloating(x.dtype()) && x.dim() >= 2, "{}: expected a float input [N, C, *], got {}",
             op, x.defined() ? shapeStr(x.sizes()) : "undefined");
  int64_t inner = 1;
  for (int64_t d = 2; d < x.dim(); ++d) inner *= x.size(d);
  return {x.size(0), x.size(1), inner};
}

void checkChannelVector(const char* op, const char* what, const Tensor& v, const Tensor& x) {
  if (!v.defined()) return;
  USER_CHECK(v.dim() == 1 && v.size(0) == x.size(1) && v.dtype() == x.dtype(),
             "{}: the {} is {} {}, but must be {} [{}] (one per channel of the input {})", op, what,
             dtypeName(v.dtype()), shapeStr(v.sizes()), dtypeName(x.dtype()), x.size(1), shapeStr(x.sizes()));
}

// x's sizes with every dimension but the channels' 1: what a per-channel sum keeps.
Shape channelKept(const Tensor& x) {
  Shape s(static_cast<size_t>(x.dim()), 1);
  s[1] = x.size(1);
  return s;
}

// [C] viewed as [1, C, 1, ...] against x.
Tensor perChannel(const Tensor& v, const Tensor& x) { return v.view(channelKept(x)); }

Tensor scalarLike(double v, const Tensor& x) { return Tensor::scalar(v, x.dtype()); }

// Channel c's mean and 1 / sqrt(biased variance + eps) over x [N, C, inner], in double, and its sum of
// squared deviations, for the unbiased running variance.
struct Moments {
  double mean, invstd, squares;
};

// Note [One pass for a channel's moments]
// Sums of deviations from a shift near the mean, d = x - shift, give the moments in one pass:
// mean = shift + sum(d) / count and squares = sum(d^2) - count (sum(d) / count)^2. The subtraction
// cancels only as far as the shift is from the mean against the spread: with the shift within a thousand
// deviations of the mean, it loses at most six of double's sixteen digits, where float needs seven.
// The forward shifts by the channel's first value, the backward by the mean the forward saved. Beyond
// that (a constant channel with an outlier first, a saved mean from elsewhere), two passes, the mean then the
// squares about it, make the moments exactly.
constexpr double kShiftDeviations = 1e3;

template <typename T>
Moments twoPassMoments(const T* xp, const ChannelShape& s, int64_t c, double eps) {
  const double count = static_cast<double>(s.n * s.inner);
  double sum = 0, ss = 0;
  for (int64_t i = 0; i < s.n; ++i) {
    const T* row = xp + (i * s.c + c) * s.inner;
    sum += sumInLanes(s.inner, [row](int64_t j) { return static_cast<double>(row[j]); });
  }
  const double mean = sum / count;
  for (int64_t i = 0; i < s.n; ++i) {
    const T* row = xp + (i * s.c + c) * s.inner;
    ss += sumInLanes(s.inner, [row, mean](int64_t j) {
      const double d = static_cast<double>(row[j]) - mean;
      return d * d;
    });
  }
  return {mean, 1.0 / std::sqrt(ss / count + eps), ss};
}

// The moments from sums of d = x - shift and d^2 over the channel (Note [One pass for a channel's
// moments]), or from two passes over it when the shift is too far from the mean for them.
template <typename T>
Moments momentsAbout(double shift, double sumD, double sumDD, const T* xp, const ChannelShape& s, int64_t c,
                     double eps) {
  const double count = static_cast<double>(s.n * s.inner);
  const double offset = sumD / count;
  const double squares = std::max(0.0, sumDD - offset * sumD);
  if (offset * offset * count > kShiftDeviations * kShiftDeviations * squares && offset != 0)
    return twoPassMoments(xp, s, c, eps);
  return {shift + offset, 1.0 / std::sqrt(squares / count + eps), squares};
}

template <typename T>
Moments channelMoments(const T* xp, const ChannelShape& s, int64_t c, double eps) {
  const double shift = static_cast<double>(xp[c * s.inner]);
  double sumD = 0, sumDD = 0;
  for (int64_t i = 0; i < s.n; ++i) {
    const T* row = xp + (i * s.c + c) * s.inner;
    const auto [d, dd] = sumsInLanes(
        s.inner, [row, shift](int64_t j) { return static_cast<double>(row[j]) - shift; },
        [row, shift](int64_t j) {
          const double d = static_cast<double>(row[j]) - shift;
          return d * d;
        });
    sumD += d, sumDD += dd;
  }
  return momentsAbout(shift, sumD, sumDD, xp, s, c, eps);
}

template <typename T>
void batchNormTyped(const Tensor& x, const ChannelShape& s, const Tensor& w, const Tensor& b, bool training,
                    double momentum, double eps, const Tensor& runningMean, const Tensor& runningVar,
                    BatchNormResult& r) {
  const T* xp = x.data<T>();
  T* op = r.out.data<T>();
  T* mp = r.mean.data<T>();
  T* ip = r.invstd.data<T>();
  const double count = static_cast<double>(s.n * s.inner);
  parallelFor(s.c, s.n * s.c * s.inner, [&](int64_t c) {
    double mean, invstd;
    if (training) {
      const Moments mo = channelMoments(xp, s, c, eps);
      const double ss = mo.squares;
      mean = mo.mean, invstd = mo.invstd;
      mp[c] = static_cast<T>(mean);
      ip[c] = static_cast<T>(invstd);
      if (runningMean.defined()) {  // the variance unbiased, as PyTorch keeps it
        const double rm = runningMean.data<T>()[c], rv = runningVar.data<T>()[c];
        r.runningMean.data<T>()[c] = static_cast<T>((1 - momentum) * rm + momentum * mean);
        r.runningVar.data<T>()[c] = static_cast<T>((1 - momentum) * rv + momentum * ss / (count - 1));
      }
    } else {
      mean = mp[c];
      invstd = ip[c];
    }
    // One multiply-add per element in T, as PyTorch's kernel does (its results, rounding included).
    const T scale = static_cast<T>(invstd * (w.defined() ? w.data<T>()[c] : 1.0));
    const T shift = static_cast<T>((b.defined() ? b.data<T>()[c] : 0.0) - mean * scale);
    for (int64_t i = 0; i < s.n; ++i)
      for (int64_t j = 0, at = (i * s.c + c) * s.inner; j < s.inner; ++j) op[at + j] = xp[at + j] * scale + shift;
  });
}

template <typename T>
void batchNormBackwardTyped(const Tensor& g, const Tensor& x, const ChannelShape& s, const Tensor& w,
                            const Tensor& mean, const Tensor& invstd, bool training, double eps, BatchNormGrads& r) {
  const T *gp = g.data<T>(), *xp = x.data<T>(), *mp = mean.data<T>(), *ip = invstd.data<T>();
  T* gx = r.input.data<T>();
  const double count = static_cast<double>(s.n * s.inner);
  parallelFor(s.c, s.n * s.c * s.inner, [&](int64_t c) {
    double m = mp[c], is = ip[c];
    const double wc = w.defined() ? w.data<T>()[c] : 1.0;
    // sum(g) and sum(g * xhat). In training the batch's statistics come again, in double: the saved ones
    // are rounded to T, and where a channel has few values (late layers' 1x1 planes) g - mean(g) -
    // xhat mean(g xhat) cancels to a few ulps of g, which that rounding would swamp. One pass over x and g
    // makes both, as sums of deviations from the saved mean (Note [One pass for a channel's moments]):
    // sum(g (x - mean)) = sum(g d) - (mean - shift) sum(g).
    double sumG = 0, sumGX = 0;
    if (training) {
      const double shift = std::isfinite(m) ? m : static_cast<double>(xp[c * s.inner]);
      double sumD = 0, sumDD = 0, sumGD = 0;
      for (int64_t i = 0; i < s.n; ++i) {
        const T *gr = gp + (i * s.c + c) * s.inner, *xr = xp + (i * s.c + c) * s.inner;
        const auto [d, dd, rowG, gd] = sumsInLanes(
            s.inner, [xr, shift](int64_t j) { return static_cast<double>(xr[j]) - shift; },
            [xr, shift](int64_t j) {
              const double d = static_cast<double>(xr[j]) - shift;
              return d * d;
            },
            [gr](int64_t j) { return static_cast<double>(gr[j]); },
            [gr, xr, shift](int64_t j) { return static_cast<double>(gr[j]) * (static_cast<double>(xr[j]) - shift); });
        sumD += d, sumDD += dd, sumG += rowG, sumGD += gd;
      }
      const Moments mo = momentsAbout(shift, sumD, sumDD, xp, s, c, eps);
      m = mo.mean, is = mo.invstd;
      sumGX = (sumGD - (m - shift) * sumG) * is;
    } else {
      for (int64_t i = 0; i < s.n; ++i) {
        const T *gr = gp + (i * s.c + c) * s.inner, *xr = xp + (i * s.c + c) * s.inner;
        const auto [rowG, rowGX] = sumsInLanes(
            s.inner, [gr](int64_t j) { return static_cast<double>(gr[j]); },
            [gr, xr, m, is](int64_t j) { return static_cast<double>(gr[j]) * (static_cast<double>(xr[j]) - m) * is; });
        sumG += rowG, sumGX += rowGX;
      }
    }
    if (w.defined()) {
      r.weight.data<T>()[c] = static_cast<T>(sumGX);
      r.bias.data<T>()[c] = static_cast<T>(sumG);
    }
    // training: dx = w * invstd * (g - mean(g) - xhat * mean(g * xhat)); eval: dx = w * invstd * g.
    const double a = training ? sumG / count : 0.0, k = training ? sumGX / count : 0.0;
    for (int64_t i = 0; i < s.n; ++i)
      for (int64_t j = 0, at = (i * s.c + c) * s.inner; j < s.inner; ++j)
        gx[at + j] = static_cast<T>(wc * is * (gp[at + j] - a - (xp[at + j] - m) * is * k));
  });
}

}  // namespace

BatchNormResult batchNorm(const Tensor& xin, const Tensor& w, const Tensor& b, const Tensor& runningMean,
                          const Tensor& runningVar, bool training, double momentum, double eps) {
  const char* op = "batch_norm";
  const ChannelShape s = channelShape(op, xin);
  checkChannelVector(op, "weight", w, xin);
  checkChannelVector(op, "bias", b, xin);
  checkChannelVector(op, "running_mean", runningMean, xin);
  checkChannelVector(op, "running_var", runningVar, xin);
  USER_CHECK(runningMean.defined() == runningVar.defined(), "{}: running_mean and running_var come together", op);
  USER_CHECK(training || runningMean.defined(),
             "{}: not training, the running mean and variance normalize, but none were given", op);
  const int64_t count = s.n * s.inner;
  USER_CHECK(!training || count > 1, "{}: training needs more than one value per channel, got input {}", op,
             shapeStr(xin.sizes()));
  BatchNormResult r;
  if (!training) {  // the running statistics normalize, and come out as they went in
    r.mean = runningMean.contiguous();
    r.invstd = pointwise(PointwiseOp::Rsqrt, add(runningVar, scalarLike(eps, xin)));
    r.runningMean = runningMean;
    r.runningVar = runningVar;
  }
  if (onCuda(xin)) {
    // Two sums over the input (its mean, then its centred squares, each a channel's in double) and one map
    // for the output, (x - mean) * (invstd * weight) + bias: the input read four times, written twice.
    const Shape kept = channelKept(xin), channels = {s.c};
    if (training) {
      r.mean = cuda::sumInDouble(xin, {}, kept, channels, 1.0 / static_cast<double>(count)).to(xin.dtype());
    }
    Tensor centred = sub(xin, perChannel(r.mean, xin));
    if (training) {
      Tensor var = cuda::sumInDouble(centred, centred, kept, channels, 1.0 / static_cast<double>(count));
      r.invstd = pointwise(PointwiseOp::Rsqrt, add(var, Tensor::scalar(eps, DType::Float64))).to(xin.dtype());
      if (runningMean.defined()) {
        const double unbias = static_cast<double>(count) / static_cast<double>(count - 1);
        r.runningMean = add(mul(runningMean, scalarLike(1 - momentum, xin)), mul(r.mean, scalarLike(momentum, xin)));
        r.runningVar = add(mul(runningVar, scalarLike(1 - momentum, xin)),
                           mul(var.to(xin.dtype()), scalarLike(momentum * unbias, xin)));
      }
    }
    Tensor scale = perChannel(w.defined() ? mul(r.invstd, w) : r.invstd, xin);
    r.out = b.defined() ? cuda::map(PointwiseOp::Add, perChannel(b, xin), centred, 1.0, scale) : mul(centred, scale);
    return r;
  }
  Tensor x = xin.contiguous();
  r.out = Tensor::empty(x.sizes(), x.dtype());
  Tensor rm = runningMean.defined() ? runningMean.contiguous() : runningMean;
  Tensor rv = runningVar.defined() ? runningVar.contiguous() : runningVar;
  if (training) {
    r.mean = Tensor::empty({s.c}, x.dtype());
    r.invstd = Tensor::empty({s.c}, x.dtype());
    if (rm.defined()) {
      r.runningMean = Tensor::empty({s.c}, x.dtype());
      r.runningVar = Tensor::empty({s.c}, x.dtype());
    }
  }
  Tensor wc = w.defined() ? w.contiguous() : w, bc = b.defined() ? b.contiguous() : b;
  if (x.dtype() == DType::Float32)
    batchNormTyped<float>(x, s, wc, bc, training, momentum, eps, rm, rv, r);
  else
    batchNormTyped<double>(x, s, wc, bc, training, momentum, eps, rm, rv, r);
  return r;
}

BatchNormGrads batchNormBackward(const Tensor& gin, const Tensor& xin, const Tensor& w, const Tensor& mean,
                                 const Tensor& invstd, bool training, double eps) {
  const char* op = "native_batch_norm_backward";
  const ChannelShape s = channelShape(op, xin);
  USER_CHECK(gin.defined() && gin.sizes() == xin.sizes() && gin.dtype() == xin.dtype(),
             "{}: the output gradient must be {} {}", op, dtypeName(xin.dtype()), shapeStr(xin.sizes()));
  checkChannelVector(op, "weight", w, xin);
  USER_CHECK(mean.defined() && invstd.defined(), "{}: needs the mean and invstd the forward normalized with", op);
  checkChannelVector(op, "mean", mean, xin);
  checkChannelVector(op, "invstd", invstd, xin);
  BatchNormGrads r;
  if (onCuda(xin, gin)) {
    // dx = a g + c + b (x - mean) a channel, from two sums over the gradient (of g, and of g (x - mean), in
    // double): with a = weight * invstd, in training c = -a mean(g) and b = -a invstd^2 mean(g (x - mean)),
    // and c = b = 0 in eval. Two maps make it; the inputs are read six times and three tensors written.
    const Shape kept = channelKept(xin), channels = {s.c};
    const DType dt = xin.dtype(), f64 = DType::Float64;
    const double count = static_cast<double>(s.n * s.inner);
    Tensor centred = sub(xin, perChannel(mean, xin));
    Tensor sumG = cuda::sumInDouble(gin, {}, kept, channels, 1.0);
    Tensor sumGC = cuda::sumInDouble(gin, centred, kept, channels, 1.0);
    Tensor is = invstd.to(f64);
    Tensor a = w.defined() ? mul(is, w.to(f64)) : is;
    if (training) {
      Tensor c = mul(a, mul(sumG, Tensor::scalar(-1.0 / count, f64)));
      Tensor b = mul(mul(a, mul(is, is)), mul(sumGC, Tensor::scalar(-1.0 / count, f64)));
      Tensor t = cuda::map(PointwiseOp::Add, perChannel(c.to(dt), xin), gin, 1.0, perChannel(a.to(dt), xin));
      r.input = cuda::map(PointwiseOp::Add, t, centred, 1.0, perChannel(b.to(dt), xin));
    } else {
      r.input = mul(gin, perChannel(a.to(dt), xin));
    }
    if (w.defined()) {
      r.weight = mul(sumGC, is).to(dt);
      r.bias = sumG.to(dt);
    }
    return r;
  }
  Tensor g = gin.contiguous(), x = xin.contiguous();
  r.input = Tensor::empty(x.sizes(), x.dtype());
  if (w.defined()) {
    r.weight = Tensor::empty({s.c}, x.dtype());
    r.bias = Tensor::empty({s.c}, x.dtype());
  }
  Tensor wc = w.defined() ? w.contiguous() : w;
  if (x.dtype() == DType::Float32)
    batchNormBackwardTyped<float>(g, x, s, wc, mean.contiguous(), invstd.contiguous(), training, eps, r);
  else
    batchNormBackwardTyped<double>(g, x, s, wc, mean.contiguous(), invstd.contiguous(), training, eps, r);
  return r;
}

// ---- pooling ----

Pool2dParams pool2dParams(const char* op, std::span<const int64_t> kernel, std::span<const int64_t> stride,
                          std::span<const int64_t> padding, std::span<const int64_t> dilation, bool ceilMode) {
  auto pair = [op](std::span<const int64_t> v, const char* what) {
    USER_CHECK(v.size() == 1 || v.size() == 2, "{}: {} must have 1 or 2 elements, got {}", op, what, v.size());
    return std::pair{v[0], v.size() == 2 ? v[1] : v[0]};
  };
  Pool2dParams p;
  std::tie(p.kH, p.kW) = pair(kernel, "kernel_size");
  std::tie(p.strideH, p.strideW) = stride.empty() ? std::pair{p.kH, p.kW} : pair(stride, "stride");
  std::tie(p.padH, p.padW) = pair(padding, "padding");
  std::tie(p.dilationH, p.dilationW) = pair(dilation, "dilation");
  p.ceilMode = ceilMode;
  return p;
}

namespace {

struct PoolShape {
  int64_t planes, h, w, outH, outW;
};

PoolShape poolShape(const char* op, const Tensor& x, const Pool2dParams& p) {
  USER_CHECK(x.defined() && isFloating(x.dtype()) && x.dim() == 4, "{}: expected a float input [N, C, H, W], got {}",
             op, x.defined() ? shapeStr(x.sizes()) : "undefined");
  USER_CHECK(p.kH > 0 && p.kW > 0 && p.strideH > 0 && p.strideW > 0 && p.dilationH > 0 && p.dilationW > 0,
             "{}: kernel size, stride and dilation must be positive", op);
  USER_CHECK(p.padH >= 0 && p.padW >= 0 && 2 * p.padH <= p.kH && 2 * p.padW <= p.kW,
             "{}: padding ({}, {}) must be non-negative and at most half the kernel ({}, {})", op, p.padH, p.padW, p.kH,
             p.kW);
  PoolShape s{x.size(0) * x.size(1), x.size(2), x.size(3),
              poolOutputSize(x.size(2), p.kH, p.strideH, p.padH, p.dilationH, p.ceilMode),
              poolOutputSize(x.size(3), p.kW, p.strideW, p.padW, p.dilationW, p.ceilMode)};
  USER_CHECK(s.outH > 0 && s.outW > 0, "{}: the window ({}, {}) is larger than the padded input {}", op, p.kH, p.kW,
             shapeStr(x.sizes()));
  return s;
}

template <typename T>
void maxPoolTyped(const T* x, const PoolShape& s, const Pool2dParams& p, T* out, int64_t* idx) {
  parallelFor(s.planes, s.planes * s.outH * s.outW * p.kH * p.kW, [&](int64_t q) {
    const T* plane = x + q * s.h * s.w;
    for (int64_t y = 0; y < s.outH; ++y)
      for (int64_t xo = 0; xo < s.outW; ++xo) {
        T best = -std::numeric_limits<T>::infinity();
        int64_t at = -1;
        for (int64_t i = 0; i < p.kH && !std::isnan(best); ++i) {  // a NaN wins: stop there
          const int64_t iy = y * p.strideH - p.padH + i * p.dilationH;
          if (iy < 0 || iy >= s.h) continue;
          for (int64_t j = 0; j < p.kW && !std::isnan(best); ++j) {
            const int64_t ix = xo * p.strideW - p.padW + j * p.dilationW;
            if (ix < 0 || ix >= s.w) continue;
            const T v = plane[iy * s.w + ix];
            if (at < 0 || v > best || std::isnan(v)) {
              best = v;
              at = iy * s.w + ix;
            }
          }
        }
        const int64_t o = (q * s.outH + y) * s.outW + xo;
        out[o] = best;
        idx[o] = at;
      }
  });
}

template <typename T>
void maxPoolBackwardTyped(const T* g, const int64_t* idx, int64_t planes, int64_t inPlane, int64_t outPlane, T* gx) {
  std::atomic<bool> bad = false;  // an index outside its plane (USER_CHECK cannot throw out of the parallel loop)
  parallelFor(planes, planes * outPlane, [&](int64_t q) {
    for (int64_t o = 0; o < outPlane; ++o) {
      const int64_t at = idx[q * outPlane + o];
      if (at < 0 || at >= inPlane) {
        bad.store(true, std::memory_order_relaxed);
        continue;
      }
      gx[q * inPlane + at] += g[q * outPlane + o];
    }
  });
  USER_CHECK(!bad, "max_pool2d_with_indices_backward: an index is outside its plane of {} elements", inPlane);
}

// Adaptive windows: [floor(i * in / out), ceil((i + 1) * in / out)).
int64_t windowStart(int64_t i, int64_t in, int64_t out) { return (i * in) / out; }
int64_t windowEnd(int64_t i, int64_t in, int64_t out) { return ((i + 1) * in + out - 1) / out; }

// Calls f(window, cell) for every output cell of `planes` planes pooled from h x w to oh x ow, planes on
// threads: `window` the input elements the cell averages (their plane offsets), `cell` the cell's index.
template <typename F>
void forEachAdaptiveWindow(int64_t planes, int64_t h, int64_t w, int64_t oh, int64_t ow, F&& f) {
  parallelFor(planes, planes * h * w, [&](int64_t q) {
    std::vector<int64_t> window;
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        window.clear();
        for (int64_t y = windowStart(i, h, oh); y < windowEnd(i, h, oh); ++y)
          for (int64_t x = windowStart(j, w, ow); x < windowEnd(j, w, ow); ++x) window.push_back((q * h + y) * w + x);
        f(window, (q * oh + i) * ow + j);
      }
  });
}

template <typename T>
void adaptiveAvgTyped(const T* x, int64_t planes, int64_t h, int64_t w, int64_t oh, int64_t ow, T* out) {
  forEachAdaptiveWindow(planes, h, w, oh, ow, [&](const std::vector<int64_t>& window, int64_t cell) {
    double acc = 0;
    for (int64_t at : window) acc += x[at];
    out[cell] = static_cast<T>(acc / static_cast<double>(window.size()));
  });
}

template <typename T>
void adaptiveAvgBackwardTyped(const T* g, int64_t planes, int64_t h, int64_t w, int64_t oh, int64_t ow, T* gx) {
  forEachAdaptiveWindow(planes, h, w, oh, ow, [&](const std::vector<int64_t>& window, int64_t cell) {
    const double share = g[cell] / static_cast<double>(window.size());
    for (int64_t at : window) gx[at] += static_cast<T>(share);
  });
}

}  // namespace

MaxPoolResult maxPool2d(const Tensor& xin, const Pool2dParams& p) {
  const PoolShape s = poolShape("max_pool2d", xin, p);
  const Shape outSizes = {xin.size(0), xin.size(1), s.outH, s.outW};
  if (onCuda(xin)) {
    auto [out, idx] = cuda::maxPool2d(xin.contiguous(), p, s.outH, s.outW);
    return {out, idx};
  }
  Tensor x = xin.contiguous();
  MaxPoolResult r{Tensor::empty(outSizes, x.dtype()), Tensor::empty(outSizes, DType::Int64)};
  if (x.dtype() == DType::Float32)
    maxPoolTyped<float>(x.data<float>(), s, p, r.out.data<float>(), r.indices.data<int64_t>());
  else
    maxPoolTyped<double>(x.data<double>(), s, p, r.out.data<double>(), r.indices.data<int64_t>());
  return r;
}

Tensor maxPool2dBackward(const Tensor& gin, const Tensor& x, const Tensor& indices, const Pool2dParams& p) {
  const char* op = "max_pool2d_with_indices_backward";
  USER_CHECK(x.defined() && x.dim() == 4 && isFloating(x.dtype()), "{}: expected a float input [N, C, H, W]", op);
  USER_CHECK(gin.defined() && gin.dim() == 4 && gin.size(0) == x.size(0) && gin.size(1) == x.size(1) &&
                 gin.dtype() == x.dtype(),
             "{}: the output gradient {} does not match the input {}", op, shapeStr(gin.sizes()), shapeStr(x.sizes()));
  USER_CHECK(indices.defined() && indices.dtype() == DType::Int64 && indices.sizes() == gin.sizes(),
             "{}: the indices must be int64 of the output's sizes {}", op, shapeStr(gin.sizes()));
  if (onCuda(gin) || onCuda(indices))
    return cuda::maxPool2dBackward(gin.contiguous(), x.sizes(), indices.contiguous(), p);
  Tensor g = gin.contiguous(), idx = indices.contiguous();
  Tensor gx = Tensor::zeros(x.sizes(), x.dtype());
  const int64_t planes = x.size(0) * x.size(1), inPlane = x.size(2) * x.size(3), outPlane = g.size(2) * g.size(3);
  if (x.dtype() == DType::Float32)
    maxPoolBackwardTyped<float>(g.data<float>(), idx.data<int64_t>(), planes, inPlane, outPlane, gx.data<float>());
  else
    maxPoolBackwardTyped<double>(g.data<double>(), idx.data<int64_t>(), planes, inPlane, outPlane, gx.data<double>());
  return gx;
}

Tensor flatten(const Tensor& x, int64_t start, int64_t end) {
  USER_CHECK(x.defined(), "flatten: expected a tensor");
  if (x.dim() == 0) return x.reshape({1});
  const int64_t rank = x.dim();
  const int64_t s = start < 0 ? start + rank : start, e = end < 0 ? end + rank : end;
  USER_CHECK(s >= 0 && e < rank && s <= e, "flatten: start_dim {} and end_dim {} must name dims in order of the "
             "{}-d input {}", start, end, rank, shapeStr(x.sizes()));
  Shape sizes(x.sizes().begin(), x.sizes().begin() + s);
  int64_t merged = 1;
  for (int64_t d = s; d <= e; ++d) merged *= x.size(d);
  sizes.push_back(merged);
  sizes.insert(sizes.end(), x.sizes().begin() + e + 1, x.sizes().end());
  return x.reshape(sizes);
}

Tensor adaptiveAvgPool2d(const Tensor& xin, int64_t oh, int64_t ow) {
  if (xin.defined() && xin.dim() == 3) return adaptiveAvgPool2d(xin.unsqueeze(0), oh, ow).squeeze(0);  // [C, H, W]
  USER_CHECK(xin.defined() && isFloating(xin.dtype()) && xin.dim() == 4,
             "adaptive_avg_pool2d: expected a float input [N, C, H, W] or [C, H, W], got {}",
             xin.defined() ? shapeStr(xin.sizes()) : "undefined");
  USER_CHECK(oh > 0 && ow > 0 && xin.size(2) > 0 && xin.size(3) > 0,
             "adaptive_avg_pool2d: output size ({}, {}) and the input's {} must be positive", oh, ow,
             shapeStr(xin.sizes()));
  if (onCuda(xin)) return cuda::adaptiveAvgPool2d(xin.contiguous(), oh, ow);
  Tensor x = xin.contiguous();
  Tensor out = Tensor::empty({x.size(0), x.size(1), oh, ow}, x.dtype());
  const int64_t planes = x.size(0) * x.size(1);
  if (x.dtype() == DType::Float32)
    adaptiveAvgTyped<float>(x.data<float>(), planes, x.size(2), x.size(3), oh, ow, out.data<float>());
  else
    adaptiveAvgTyped<double>(x.data<double>(), planes, x.size(2), x.size(3), oh, ow, out.data<double>());
  return out;
}

Tensor adaptiveAvgPool2dBackward(const Tensor& gin, const Tensor& x) {
  if (x.defined() && gin.defined() && x.dim() == 3 && gin.dim() == 3)
    return adaptiveAvgPool2dBackward(gin.unsqueeze(0), x.unsqueeze(0)).squeeze(0);
  USER_CHECK(x.defined() && x.dim() == 4 && isFloating(x.dtype()) && gin.defined() && gin.dim() == 4 &&
                 gin.size(0) == x.size(0) && gin.size(1) == x.size(1) && gin.dtype() == x.dtype(),
             "_adaptive_avg_pool2d_backward: the output gradient {} does not match the input {}",
             gin.defined() ? shapeStr(gin.sizes()) : "undefined", x.defined() ? shapeStr(x.sizes()) : "undefined");
  if (onCuda(gin)) return cuda::adaptiveAvgPool2dBackward(gin.contiguous(), x.sizes());
  Tensor g = gin.contiguous();
  Tensor gx = Tensor::zeros(x.sizes(), x.dtype());
  const int64_t planes = x.size(0) * x.size(1);
  if (x.dtype() == DType::Float32)
    adaptiveAvgBackwardTyped<float>(g.data<float>(), planes, x.size(2), x.size(3), g.size(2), g.size(3),
                                    gx.data<float>());
  else
    adaptiveAvgBackwardTyped<double>(g.data<double>(), planes, x.size(2), x.size(3), g.size(2), g.size(3),
                                     gx.data<double>());
  return gx;
}

}  // namespace gj::ops
