// Kernels of the ops that gradient formulas emit.
#include "runtime/ops/im2col.h"
#include "runtime/ops/loops.h"
#include "runtime/ops/ops.h"
#include "runtime/ops/onednn_conv.h"
#include "runtime/ops/onednn_softmax.h"
#include "runtime/cuda/ops.h"
#include "runtime/gemm.h"
#include "support/error.h"

#include <algorithm>
#include <cmath>

namespace gj::ops {

Tensor sumToSize(const Tensor& g, std::span<const int64_t> sizes) {
  USER_CHECK(static_cast<int64_t>(sizes.size()) <= g.dim(), "sum_to_size: {} has fewer dimensions than {}",
             shapeStr(sizes), shapeStr(g.sizes()));
  const int64_t lead = g.dim() - static_cast<int64_t>(sizes.size());
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < g.dim(); ++d) {
    if (d < lead) {
      dims.push_back(d);
      continue;
    }
    int64_t want = sizes[d - lead];
    USER_CHECK(want == g.size(d) || want == 1, "sum_to_size: {} is not expandable to {}", shapeStr(sizes),
               shapeStr(g.sizes()));
    if (want == 1 && g.size(d) != 1) dims.push_back(d);
  }
  if (dims.empty()) return g;
  return sum(g, dims, true).view(Shape(sizes.begin(), sizes.end()));
}

// `code` and `scalar`: the op as a device tensor's kernel runs it (cuda::map).
template <typename F>
static Tensor zipFloat(const char* op, PointwiseOp code, double scalar, const Tensor& a, const Tensor& b, F f) {
  USER_CHECK(a.defined() && b.defined() && isFloating(a.dtype()) && isFloating(b.dtype()),
             "{}: expected two float tensors", op);
  if (a.dtype() != b.dtype()) {  // type promotion, as for the forward ops
    DType t = resultType({promotionOperand(a), promotionOperand(b)});
    return zipFloat(op, code, scalar, a.to(t), b.to(t), f);
  }
  USER_CHECK(a.sizes() == b.sizes(), "{}: shapes {} and {} differ", op, shapeStr(a.sizes()), shapeStr(b.sizes()));
  if (onCuda(a, b)) return cuda::map(code, a, b, scalar);
  Tensor out = Tensor::empty(a.sizes(), a.dtype());
  auto run = [&](auto tag) {
    using T = decltype(tag);
    T* o = out.data<T>();
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    forEachOffset<3>(a.sizes(), {out.strides().data(), a.strides().data(), b.strides().data()},
                     [&](const std::array<int64_t, 3>& off) { o[off[0]] = f(pa[off[1]], pb[off[2]]); });
  };
  if (a.dtype() == DType::Float32)
    run(float{});
  else
    run(double{});
  return out;
}

Tensor sigmoidBackward(const Tensor& g, const Tensor& y) {
  return zipFloat("sigmoid_backward", PointwiseOp::SigmoidBackward, 0.0, g, y,
                  [](auto gv, auto yv) { return gv * yv * (decltype(yv)(1) - yv); });
}

Tensor tanhBackward(const Tensor& g, const Tensor& y) {
  return zipFloat("tanh_backward", PointwiseOp::TanhBackward, 0.0, g, y,
                  [](auto gv, auto yv) { return gv * (decltype(yv)(1) - yv * yv); });
}

Tensor thresholdBackward(const Tensor& g, const Tensor& x, double threshold) {
  return zipFloat("threshold_backward", PointwiseOp::ThresholdBackward, threshold, g, x,
                  [threshold](auto gv, auto xv) { return xv <= decltype(xv)(threshold) ? decltype(gv)(0) : gv; });
}

Tensor selectBackward(const Tensor& g, std::span<const int64_t> sizes, int64_t dim, int64_t index) {
  Tensor out = Tensor::zeros(Shape(sizes.begin(), sizes.end()), g.dtype(), g.device());
  out.select(dim, index).copyFrom(g);
  return out;
}

Tensor sliceBackward(const Tensor& g, std::span<const int64_t> sizes, int64_t dim, int64_t start, int64_t end,
                     int64_t step) {
  Shape full(sizes.begin(), sizes.end());
  if (g.sizes() == full) return g;  // the slice was the whole tensor
  Tensor out = Tensor::zeros(full, g.dtype(), g.device());
  out.slice(dim, start, end, step).copyFrom(g);
  return out;
}

Tensor embeddingBackward(const Tensor& g, const Tensor& indices, int64_t numWeights) {
  Tensor idx = indices.contiguous();
  const int64_t d = g.size(-1), n = idx.numel();
  Tensor gin = g.reshape({n, d}).contiguous();
  if (onCuda(g)) {
    Tensor out = Tensor::zeros({numWeights, d}, g.dtype(), DeviceKind::Cuda);
    cuda::scatterAdd(out, gin, d, idx, d, 0, numWeights, 1.0, "embedding backward");
    return out;
  }
  Tensor out = Tensor::zeros({numWeights, d}, g.dtype());
  const int64_t* ip = idx.data<int64_t>();
  auto run = [&](auto tag) {
    using T = decltype(tag);
    const T* src = gin.data<T>();
    T* dst = out.data<T>();
    for (int64_t i = 0; i < n; ++i) {
      USER_CHECK(ip[i] >= 0 && ip[i] < numWeights, "embedding backward: index {} out of range [0, {})", ip[i],
                 numWeights);
      for (int64_t j = 0; j < d; ++j) dst[ip[i] * d + j] += src[i * d + j];
    }
  };
  if (g.dtype() == DType::Float32)
    run(float{});
  else
    run(double{});
  return out;
}

// oneDNN's primitive (one pass over a row, no temporaries) for float32 on the host; else from the primitives.
static Tensor onednnSoftmaxGradient(const Tensor& g, const Tensor& y, int64_t dim, bool log) {
  if (onCuda(y) || y.dtype() != DType::Float32 || g.dtype() != DType::Float32 || g.sizes() != y.sizes())
    return Tensor();
  Tensor gx = Tensor::empty(y.sizes(), y.dtype());
  if (!onednnSoftmaxBackward(g.contiguous(), y.contiguous(), wrapDim(dim, y.dim()), log, gx)) return Tensor();
  return gx;
}

Tensor softmaxBackward(const Tensor& g, const Tensor& y, int64_t dim) {
  if (onCuda(g, y)) return cuda::softmaxBackward(g, y, dim, false);
  if (Tensor gx = onednnSoftmaxGradient(g, y, dim, false); gx.defined()) return gx;
  std::vector<int64_t> dims = {dim};
  Tensor dot = sum(mul(g, y), dims, true);
  return mul(y, sub(g, dot));
}

Tensor logSoftmaxBackward(const Tensor& g, const Tensor& y, int64_t dim) {
  if (onCuda(g, y)) return cuda::softmaxBackward(g, y, dim, true);
  if (Tensor gx = onednnSoftmaxGradient(g, y, dim, true); gx.defined()) return gx;
  std::vector<int64_t> dims = {dim};
  return sub(g, mul(exp(y), sum(g, dims, true)));
}

Tensor nllLossBackward(const Tensor& g, const Tensor& logp, const Tensor& target) {
  USER_CHECK(logp.dim() == 2 && target.dim() == 1 && target.dtype() == DType::Int64,
             "nll_loss_backward: expected logp [N, C] and int64 target [N]");
  const int64_t n = logp.size(0), c = logp.size(1);
  if (onCuda(logp)) {  // -g / n at each row's target
    Tensor out = Tensor::zeros({n, c}, logp.dtype(), DeviceKind::Cuda);
    cuda::scatterAdd(out, g, 0, target, 1, c, c, -1.0 / static_cast<double>(std::max<int64_t>(n, 1)),
                     "nll_loss_backward");
    return out;
  }
  Tensor out = Tensor::zeros({n, c}, logp.dtype());
  Tensor t = target.contiguous();
  const double scale = -g.item() / static_cast<double>(std::max<int64_t>(n, 1));
  for (int64_t i = 0; i < n; ++i) {
    int64_t k = t.data<int64_t>()[i];
    USER_CHECK(k >= 0 && k < c, "nll_loss_backward: target {} out of range [0, {})", k, c);
    if (out.dtype() == DType::Float32)
      out.data<float>()[i * c + k] = static_cast<float>(scale);
    else
      out.data<double>()[i * c + k] = scale;
  }
  return out;
}


template <typename T>
static void gemmT(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b, int64_t ldb,
                  T beta, T* c, int64_t ldc) {
  if constexpr (std::is_same_v<T, float>)
    sgemm(ta, tb, m, n, k, 1.f, a, lda, b, ldb, beta, c, ldc);
  else
    dgemm(ta, tb, m, n, k, 1.0, a, lda, b, ldb, beta, c, ldc);
}

template <typename T>
static void conv2dBackwardTyped(const Tensor& g, const Tensor& x, const Tensor& w, const Conv2dParams& p,
                                Conv2dGrads& out) {
  const int64_t n = x.size(0), cin = x.size(1), h = x.size(2), wd = x.size(3);
  const int64_t cout = w.size(0), kh = w.size(2), kw = w.size(3), groups = p.groups;
  const int64_t outH = g.size(2), outW = g.size(3), pix = outH * outW;
  const int64_t cinG = cin / groups, coutG = cout / groups, kdim = cinG * kh * kw;
  Tensor col = Tensor::empty({kdim, pix}, x.dtype());
  const T* xp = x.data<T>();
  const T* wp = w.data<T>();
  const T* gp = g.data<T>();
  T* gx = out.input.data<T>();
  T* gw = out.weight.data<T>();
  for (int64_t b = 0; b < n; ++b)
    for (int64_t gi = 0; gi < groups; ++gi) {
      const T* gout = gp + (b * cout + gi * coutG) * pix;
      // dW_g += dY_g [coutG, pix] x col^T [pix, kdim]
      im2col<T>(xp + (b * cin + gi * cinG) * h * wd, cinG, h, wd, kh, kw, outH, outW, p, col.data<T>());
      gemmT<T>(false, true, coutG, kdim, pix, gout, pix, col.data<T>(), pix, T(1), gw + gi * coutG * kdim, kdim);
      // dcol = W_g^T [kdim, coutG] x dY_g [coutG, pix], then fold back into the image.
      gemmT<T>(true, false, kdim, pix, coutG, wp + gi * coutG * kdim, kdim, gout, pix, T(0), col.data<T>(), pix);
      col2im<T>(col.data<T>(), cinG, h, wd, kh, kw, outH, outW, p, gx + (b * cin + gi * cinG) * h * wd);
    }
}

Conv2dGrads conv2dBackward(const Tensor& gin, const Tensor& xin, const Tensor& win, const Conv2dParams& p,
                           bool withBias, bool withInput) {
  USER_CHECK(gin.dim() == 4 && xin.dim() == 4 && win.dim() == 4, "convolution_backward: expected 4-d tensors");
  Conv2dGrads out;
  if (onCuda(gin) || onCuda(xin) || onCuda(win)) {
    std::tie(out.input, out.weight) = cuda::conv2dBackward(gin, xin, win, p);
  } else {
    Tensor g = gin.contiguous(), x = xin.contiguous(), w = win.contiguous();
    // oneDNN writes every element; the loops below accumulate into zeros.
    bool onednn = false;
    if (x.dtype() == DType::Float32) {
      if (withInput) out.input = Tensor::empty(x.sizes(), x.dtype());
      out.weight = Tensor::empty(w.sizes(), w.dtype());
      // The bias's gradient too, summed by the weight gradient's primitive as it reads g.
      if (withBias) out.bias = Tensor::empty({w.size(0)}, x.dtype());
      onednn = onednnConv2dBackward(g, x, w, p, out.input, out.weight, out.bias);
    }
    if (!onednn) {
      out.input = Tensor::zeros(x.sizes(), x.dtype());
      out.weight = Tensor::zeros(w.sizes(), w.dtype());
      out.bias = Tensor();  // summed below
      if (x.dtype() == DType::Float64)
        conv2dBackwardTyped<double>(g, x, w, p, out);
      else
        conv2dBackwardTyped<float>(g, x, w, p, out);
    }
  }
  if (withBias && !out.bias.defined()) {
    std::vector<int64_t> dims = {0, 2, 3};
    out.bias = sum(gin, dims, false);
  }
  if (!withInput) out.input = Tensor();  // the loops' and the device's make it anyway
  return out;
}

std::vector<Tensor> splitWithSizes(const Tensor& x, std::span<const int64_t> sizes, int64_t dim) {
  dim = wrapDim(dim, x.dim());
  int64_t total = 0;
  for (int64_t s : sizes) total += s;
  USER_CHECK(total == x.size(dim), "split_with_sizes: sizes {} add up to {}, but dimension {} has {}",
             shapeStr(sizes), total, dim, x.size(dim));
  std::vector<Tensor> out;
  int64_t at = 0;
  for (int64_t s : sizes) {
    out.push_back(x.narrow(dim, at, s));
    at += s;
  }
  return out;
}

Tensor sumBackward(const Tensor& g, std::span<const int64_t> sizes, std::span<const int64_t> dims, bool keepdim) {
  const int64_t rank = static_cast<int64_t>(sizes.size());
  if (rank == 0) return g.reshape({});  // a 0-d input's dims -1 and 0 are the tensor itself
  Tensor e = g;
  if (!dims.empty() && !keepdim) {
    std::vector<int64_t> ds;
    for (int64_t d : dims) ds.push_back(wrapDim(d, rank));
    std::sort(ds.begin(), ds.end());
    for (int64_t d : ds) e = e.unsqueeze(d);
  } else if (dims.empty()) {
    e = g.reshape(Shape(static_cast<size_t>(rank), 1));
  }
  return e.expand(sizes);
}

Tensor meanBackward(const Tensor& g, std::span<const int64_t> sizes, std::span<const int64_t> dims, bool keepdim) {
  int64_t count = 1;
  if (dims.empty() || sizes.empty()) {  // all of it (a 0-d input's dims -1 and 0 too)
    count = numelOf(sizes);
  } else {
    for (int64_t d : dims) count *= sizes[wrapDim(d, static_cast<int64_t>(sizes.size()))];
  }
  Tensor scaled = div(g, Tensor::scalar(static_cast<double>(count), g.dtype()));
  return sumBackward(scaled, sizes, dims, keepdim);
}

Tensor autogradAdd(const Tensor& a, const Tensor& b) {
  if (!a.defined()) return b;
  if (!b.defined()) return a;
  return add(a, b);
}

}  // namespace gj::ops
