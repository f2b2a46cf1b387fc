#include "runtime/ops/im2col.h"
#include "runtime/ops/loops.h"
#include "runtime/ops/ops.h"
#include "runtime/ops/onednn_conv.h"
#include "runtime/cuda/ops.h"
#include "runtime/gemm.h"
#include "support/error.h"

#include <algorithm>
#include <cstring>

namespace gj::ops {

namespace {

// Every piece of `op` (cat, stack) of tensor 0's dtype and device.
void checkSameKind(std::span<const Tensor> xs, const char* op) {
  const Tensor& first = xs[0];
  for (size_t i = 1; i < xs.size(); ++i) {
    const Tensor& x = xs[i];
    USER_CHECK(x.dtype() == first.dtype(), "{}: tensor {} has dtype {}, tensor 0 has {}", op, i, dtypeName(x.dtype()),
               dtypeName(first.dtype()));
    USER_CHECK(x.device() == first.device(), "{}: tensor {} is on {}, tensor 0 on {}", op, i, deviceName(x.device()),
               deviceName(first.device()));
  }
}

bool allContiguous(std::span<const Tensor> xs) {
  return std::all_of(xs.begin(), xs.end(), [](const Tensor& x) { return x.isContiguous(); });
}

// Contiguous CPU pieces laid side by side along `dim` of the contiguous `out`, piece i `extent(xs[i])`
// wide there: `outer` runs of bytes each, straight into place. An unrolled RNN stacks a hundred [1, H]
// steps, and a view and a strided copy per piece cost several times the bytes.
template <typename Extent>
void copyPieces(std::span<const Tensor> xs, const Tensor& out, int64_t dim, Extent extent) {
  const Shape& sizes = out.sizes();
  const int64_t outer = numelOf(std::span(sizes.data(), static_cast<size_t>(dim)));
  const int64_t inner = numelOf(std::span(sizes.data() + dim + 1, sizes.size() - dim - 1)) *
                        static_cast<int64_t>(dtypeSize(out.dtype()));
  char* dst = static_cast<char*>(out.rawData());
  int64_t at = 0;
  for (const Tensor& x : xs) {
    const char* src = static_cast<const char*>(x.rawData());
    const int64_t run = extent(x) * inner;
    for (int64_t o = 0; o < outer && run > 0; ++o) std::memcpy(dst + (o * sizes[dim] + at) * inner, src + o * run, run);
    at += extent(x);
  }
}

}  // namespace

Tensor cat(std::span<const Tensor> xs, int64_t dim) {
  USER_CHECK(!xs.empty(), "cat: expected a non-empty list of tensors");
  const Tensor& first = xs[0];
  dim = wrapDim(dim, first.dim());
  checkSameKind(xs, "cat");
  Shape outSizes = first.sizes();
  outSizes[dim] = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    const Tensor& x = xs[i];
    USER_CHECK(x.dim() == first.dim(), "cat: tensor {} has rank {}, tensor 0 has rank {}", i, x.dim(), first.dim());
    for (int64_t d = 0; d < x.dim(); ++d)
      USER_CHECK(d == dim || x.size(d) == first.size(d), "cat: sizes {} and {} differ outside dimension {}",
                 shapeStr(x.sizes()), shapeStr(first.sizes()), dim);
    outSizes[dim] += x.size(dim);
  }
  Tensor out = Tensor::empty(outSizes, first.dtype(), first.device());
  if (out.device() == DeviceKind::Cpu && allContiguous(xs)) {
    copyPieces(xs, out, dim, [&](const Tensor& x) { return x.size(dim); });
    return out;
  }
  int64_t at = 0;
  for (const Tensor& x : xs) {
    out.narrow(dim, at, x.size(dim)).copyFrom(x);
    at += x.size(dim);
  }
  return out;
}

Tensor stack(std::span<const Tensor> xs, int64_t dim) {
  USER_CHECK(!xs.empty(), "stack: expected a non-empty list of tensors");
  dim = wrapDim(dim, xs[0].dim() + 1);
  const Tensor& first = xs[0];
  for (size_t i = 1; i < xs.size(); ++i)
    USER_CHECK(xs[i].sizes() == first.sizes(), "stack: tensor {} has shape {}, tensor 0 has {}", i,
               shapeStr(xs[i].sizes()), shapeStr(first.sizes()));
  if (first.device() == DeviceKind::Cpu && allContiguous(xs)) {
    checkSameKind(xs, "stack");
    Shape outSizes = first.sizes();
    outSizes.insert(outSizes.begin() + dim, static_cast<int64_t>(xs.size()));
    Tensor out = Tensor::empty(std::move(outSizes), first.dtype());
    copyPieces(xs, out, dim, [](const Tensor&) { return int64_t{1}; });
    return out;
  }
  std::vector<Tensor> us;
  us.reserve(xs.size());
  for (const Tensor& x : xs) us.push_back(x.unsqueeze(dim));
  return cat(us, dim);
}

Tensor embedding(const Tensor& weight, const Tensor& indices) {
  USER_CHECK(weight.defined() && weight.dim() == 2, "embedding: weight must be [num_embeddings, dim]");
  USER_CHECK(indices.defined() && indices.dtype() == DType::Int64, "embedding: indices must be int64, got {}",
             indices.defined() ? dtypeName(indices.dtype()) : "undefined");
  Shape outSizes = indices.sizes();
  outSizes.push_back(weight.size(1));
  if (onCuda(weight))
    return cuda::gather(weight, indices, weight.size(1), 0, weight.size(0), "embedding").reshape(outSizes);
  Tensor idx = indices.contiguous();
  Tensor w = weight.contiguous();
  Tensor out = Tensor::empty(outSizes, w.dtype());
  const int64_t* ip = idx.data<int64_t>();
  const size_t rowBytes = w.size(1) * dtypeSize(w.dtype());
  const char* src = static_cast<const char*>(w.rawData());
  char* dst = static_cast<char*>(out.rawData());
  for (int64_t i = 0, n = idx.numel(); i < n; ++i) {
    USER_CHECK(ip[i] >= 0 && ip[i] < w.size(0), "embedding: index {} at position {} is out of range [0, {})", ip[i], i,
               w.size(0));
    std::memcpy(dst + i * rowBytes, src + ip[i] * rowBytes, rowBytes);
  }
  return out;
}


template <typename T>
static void conv2dTyped(const Tensor& x, const Tensor& w, const Tensor& out, const Conv2dParams& p) {
  const int64_t n = x.size(0), cin = x.size(1), h = x.size(2), wd = x.size(3);
  const int64_t cout = w.size(0), kh = w.size(2), kw = w.size(3);
  const int64_t outH = out.size(2), outW = out.size(3), g = p.groups;
  const int64_t cinG = cin / g, coutG = cout / g, kdim = cinG * kh * kw, pix = outH * outW;
  Tensor col = Tensor::empty({kdim, pix}, x.dtype());
  const T* xp = x.data<T>();
  const T* wp = w.data<T>();
  T* op = out.data<T>();
  for (int64_t b = 0; b < n; ++b)
    for (int64_t gi = 0; gi < g; ++gi) {
      im2col<T>(xp + (b * cin + gi * cinG) * h * wd, cinG, h, wd, kh, kw, outH, outW, p, col.data<T>());
      const T* wg = wp + gi * coutG * kdim;
      T* og = op + (b * cout + gi * coutG) * pix;
      if constexpr (std::is_same_v<T, float>)
        sgemm(false, false, coutG, pix, kdim, 1.f, wg, kdim, col.data<float>(), pix, 0.f, og, pix);
      else
        dgemm(false, false, coutG, pix, kdim, 1.0, wg, kdim, col.data<double>(), pix, 0.0, og, pix);
    }
}

Tensor conv2d(const Tensor& xin, const Tensor& win, const Tensor& bias, const Conv2dParams& p) {
  USER_CHECK(xin.defined() && xin.dim() == 4, "conv2d: input must be [N, C, H, W], got {}",
             xin.defined() ? shapeStr(xin.sizes()) : "undefined");
  USER_CHECK(win.defined() && win.dim() == 4, "conv2d: weight must be [Cout, Cin/groups, kH, kW]");
  USER_CHECK(isFloating(xin.dtype()) && xin.dtype() == win.dtype(), "conv2d: input and weight must be float of one dtype");
  USER_CHECK(p.groups >= 1 && xin.size(1) % p.groups == 0 && win.size(0) % p.groups == 0,
             "conv2d: groups={} must divide the {} input and {} output channels", p.groups, xin.size(1), win.size(0));
  USER_CHECK(win.size(1) * p.groups == xin.size(1), "conv2d: weight {} expects {} input channels, input {} has {}",
             shapeStr(win.sizes()), win.size(1) * p.groups, shapeStr(xin.sizes()), xin.size(1));
  USER_CHECK(p.strideH > 0 && p.strideW > 0 && p.dilationH > 0 && p.dilationW > 0 && p.padH >= 0 && p.padW >= 0,
             "conv2d: stride and dilation must be positive and padding non-negative");
  const int64_t outH = convOutputSize(xin.size(2), win.size(2), p.strideH, p.padH, p.dilationH);
  const int64_t outW = convOutputSize(xin.size(3), win.size(3), p.strideW, p.padW, p.dilationW);
  USER_CHECK(outH > 0 && outW > 0, "conv2d: kernel {} is larger than the padded input {}", shapeStr(win.sizes()),
             shapeStr(xin.sizes()));
  USER_CHECK(!bias.defined() || (bias.dim() == 1 && bias.size(0) == win.size(0)), "conv2d: bias must be [{}], got {}",
             win.size(0), shapeStr(bias.sizes()));
  Tensor out;
  bool biasAdded = false;
  if (onCuda(xin) || onCuda(win)) {
    out = cuda::conv2d(xin, win, p);
  } else {
    Tensor x = xin.contiguous(), w = win.contiguous();
    out = Tensor::empty({x.size(0), w.size(0), outH, outW}, x.dtype());
    // oneDNN adds a host bias of the input's dtype as it writes the result; another (a float64 bias of a
    // float32 convolution, which promotes) is added below.
    const bool fuseBias = bias.defined() && !onCuda(bias) && bias.dtype() == x.dtype();
    if (x.dtype() == DType::Float64)
      conv2dTyped<double>(x, w, out, p);
    else if (onednnConv2d(x, w, fuseBias ? bias.contiguous() : Tensor(), out, p))
      biasAdded = fuseBias;
    else
      conv2dTyped<float>(x, w, out, p);
  }
  if (!bias.defined() || biasAdded) return out;
  return add(out, bias.view({1, -1, 1, 1}));
}

}  // namespace gj::ops
