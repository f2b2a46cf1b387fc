// conv2d on the device: cuDNN's convolution (the legacy cuDNN API, still in cuDNN 9), or im2col and a
// cuBLAS GEMM per image and group (kernels.cuh's gj_im2col and gj_col2im; the emulated driver's path).
#include "runtime/ops/ops.h"
#include "runtime/context.h"
#include "runtime/cuda/cudnn_api.h"
#include "runtime/cuda/cudnn_lstm.h"
#include "runtime/cuda/device.h"
#include "runtime/cuda/ops.h"
#include "support/error.h"

#include <fmt/format.h>

#include <atomic>
#include <cstdlib>
#include <string_view>

namespace gj::cuda {
namespace {

// The sizes of a convolution, as ops::conv2d has checked them.
struct ConvShape {
  int64_t n, cin, h, w, cout, kh, kw, outH, outW, groups;
  int64_t cinG() const { return cin / groups; }
  int64_t coutG() const { return cout / groups; }
  int64_t kdim() const { return cinG() * kh * kw; }  ///< rows of one group's columns
  int64_t pix() const { return outH * outW; }
};

ConvShape shapeOf(const Tensor& x, const Tensor& w, const ops::Conv2dParams& p) {
  USER_CHECK(x.device() == DeviceKind::Cuda && w.device() == DeviceKind::Cuda,
             "conv2d: input and weight must both be on the device");
  ConvShape s{x.size(0), x.size(1), x.size(2), x.size(3), w.size(0), w.size(2), w.size(3), 0, 0, p.groups};
  s.outH = ops::convOutputSize(s.h, s.kh, p.strideH, p.padH, p.dilationH);
  s.outW = ops::convOutputSize(s.w, s.kw, p.strideW, p.padW, p.dilationW);
  return s;
}

// ---- im2col and GEMMs ----

// The address of t's element `elements` (t contiguous).
char* at(const Tensor& t, int64_t elements) {
  return static_cast<char*>(t.rawData()) + elements * dtypeSize(t.dtype());
}

Tensor forwardGemm(const Tensor& x, const Tensor& w, const ops::Conv2dParams& p, const ConvShape& s) {
  const DType dt = x.dtype();
  Tensor out = Tensor::empty({s.n, s.cout, s.outH, s.outW}, dt, DeviceKind::Cuda);
  Tensor col = Tensor::empty({s.cin * s.kh * s.kw, s.pix()}, dt, DeviceKind::Cuda);  // all groups' rows
  for (int64_t b = 0; b < s.n; ++b) {
    im2col(dt, at(x, b * s.cin * s.h * s.w), s.cin, s.h, s.w, s.kh, s.kw, s.outH, s.outW, p, col.rawData());
    for (int64_t g = 0; g < s.groups; ++g)  // out_g [coutG, pix] = w_g [coutG, kdim] x col_g [kdim, pix]
      gemm(dt, false, false, s.coutG(), s.pix(), s.kdim(), 1.0, at(w, g * s.coutG() * s.kdim()), s.kdim(),
           at(col, g * s.kdim() * s.pix()), s.pix(), 0.0, at(out, (b * s.cout + g * s.coutG()) * s.pix()), s.pix());
  }
  return out;
}

std::pair<Tensor, Tensor> backwardGemm(const Tensor& g, const Tensor& x, const Tensor& w,
                                       const ops::Conv2dParams& p, const ConvShape& s) {
  const DType dt = x.dtype();
  Tensor gx = Tensor::empty(x.sizes(), dt, DeviceKind::Cuda);
  Tensor gw = Tensor::empty(w.sizes(), dt, DeviceKind::Cuda);
  if (s.n == 0) fill(gw, 0.0);
  Tensor col = Tensor::empty({s.cin * s.kh * s.kw, s.pix()}, dt, DeviceKind::Cuda);
  for (int64_t b = 0; b < s.n; ++b) {
    im2col(dt, at(x, b * s.cin * s.h * s.w), s.cin, s.h, s.w, s.kh, s.kw, s.outH, s.outW, p, col.rawData());
    for (int64_t k = 0; k < s.groups; ++k) {
      const char* gOut = at(g, (b * s.cout + k * s.coutG()) * s.pix());
      // gw_k (+)= g_k [coutG, pix] x col_k^T [pix, kdim]
      gemm(dt, false, true, s.coutG(), s.kdim(), s.pix(), 1.0, gOut, s.pix(), at(col, k * s.kdim() * s.pix()),
           s.pix(), b == 0 ? 0.0 : 1.0, at(gw, k * s.coutG() * s.kdim()), s.kdim());
      // col_k = w_k^T [kdim, coutG] x g_k [coutG, pix] (the stream runs it after the GEMM above read col_k)
      gemm(dt, true, false, s.kdim(), s.pix(), s.coutG(), 1.0, at(w, k * s.coutG() * s.kdim()), s.kdim(), gOut,
           s.pix(), 0.0, at(col, k * s.kdim() * s.pix()), s.pix());
    }
    col2im(dt, col.rawData(), s.cin, s.h, s.w, s.kh, s.kw, s.outH, s.outW, p, at(gx, b * s.cin * s.h * s.w));
  }
  return {gx, gw};
}

// ---- cuDNN ----

using detail::check;
using detail::cudnn;

// The descriptors of one convolution, NCHW, FMA math (no TF32: float32 results compare with the CPU's).
struct ConvDescriptors {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnDataType_t type;

  ConvDescriptors(DType dt, const ops::Conv2dParams& p, const ConvShape& s)
      : type(dt == DType::Float32 ? CUDNN_DATA_FLOAT : CUDNN_DATA_DOUBLE) {
    const auto& c = cudnn();
    auto i = [](int64_t v, const char* what) { return detail::cudnnInt(v, "cuDNN conv2d", what); };
    check(c.cudnnCreateTensorDescriptor(&x), "cudnnCreateTensorDescriptor");
    check(c.cudnnCreateTensorDescriptor(&y), "cudnnCreateTensorDescriptor");
    check(c.cudnnCreateFilterDescriptor(&w), "cudnnCreateFilterDescriptor");
    check(c.cudnnCreateConvolutionDescriptor(&conv), "cudnnCreateConvolutionDescriptor");
    check(c.cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, type, i(s.n, "batch"), i(s.cin, "channels"),
                                       i(s.h, "height"), i(s.w, "width")),
          "cudnnSetTensor4dDescriptor");
    check(c.cudnnSetTensor4dDescriptor(y, CUDNN_TENSOR_NCHW, type, i(s.n, "batch"), i(s.cout, "output channels"),
                                       i(s.outH, "output height"), i(s.outW, "output width")),
          "cudnnSetTensor4dDescriptor");
    check(c.cudnnSetFilter4dDescriptor(w, type, CUDNN_TENSOR_NCHW, i(s.cout, "output channels"),
                                       i(s.cinG(), "channels per group"), i(s.kh, "kernel height"),
                                       i(s.kw, "kernel width")),
          "cudnnSetFilter4dDescriptor");
    auto nonNegative = [&](int64_t v, const char* what) { return v == 0 ? 0 : i(v, what); };
    check(c.cudnnSetConvolution2dDescriptor(conv, nonNegative(p.padH, "padding"), nonNegative(p.padW, "padding"),
                                            i(p.strideH, "stride"), i(p.strideW, "stride"),
                                            i(p.dilationH, "dilation"), i(p.dilationW, "dilation"),
                                            CUDNN_CROSS_CORRELATION, type),
          "cudnnSetConvolution2dDescriptor");
    check(c.cudnnSetConvolutionGroupCount(conv, i(s.groups, "groups")), "cudnnSetConvolutionGroupCount");
    check(c.cudnnSetConvolutionMathType(conv, CUDNN_FMA_MATH), "cudnnSetConvolutionMathType");
  }
  ~ConvDescriptors() {
    const auto& c = cudnn();
    if (x) c.cudnnDestroyTensorDescriptor(x);
    if (y) c.cudnnDestroyTensorDescriptor(y);
    if (w) c.cudnnDestroyFilterDescriptor(w);
    if (conv) c.cudnnDestroyConvolutionDescriptor(conv);
  }
  ConvDescriptors(const ConvDescriptors&) = delete;
  ConvDescriptors& operator=(const ConvDescriptors&) = delete;

  // alpha = 1 and beta = 0 in the data's type, as cuDNN reads them.
  const void* one() const { return type == CUDNN_DATA_FLOAT ? static_cast<const void*>(&kOneF) : &kOne; }
  const void* zero() const { return type == CUDNN_DATA_FLOAT ? static_cast<const void*>(&kZeroF) : &kZero; }
  static constexpr float kOneF = 1.f, kZeroF = 0.f;
  static constexpr double kOne = 1.0, kZero = 0.0;
};

// The algorithm that cuDNN's heuristics rank first among those that run with FMA math; with
// the current context's deterministicConvolutions, the first of those that is deterministic (the weight gradient's fastest
// algorithms often sum with atomics: on an H100, ResNet-50's eager run and its graph's, the same kernels,
// differed by up to 6.8e-3 in a weight gradient whose largest value was 838). Should no deterministic one
// run, the first is taken.
template <typename Perf, typename Query>
auto pickAlgorithm(const char* what, Query query) {
  const bool deterministic = Context::current().deterministicConvolutions;
  Perf perf[16];
  int count = 0;
  check(query(16, &count, perf), what);
  const Perf* first = nullptr;
  for (int k = 0; k < count; ++k) {
    const Perf& a = perf[k];
    if (a.status != CUDNN_STATUS_SUCCESS || a.mathType == CUDNN_TENSOR_OP_MATH ||
        a.mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION)
      continue;
    if (!deterministic || a.determinism == CUDNN_DETERMINISTIC) return a.algo;
    if (!first) first = &a;
  }
  if (first) return first->algo;
  throw Error(fmt::format("cuDNN conv2d: {} found no algorithm without tensor-op math for this shape", what));
}

Tensor workspace(size_t bytes) {
  return Tensor::empty({static_cast<int64_t>(std::max<size_t>((bytes + 7) / 8, 1))}, DType::Float64,
                       DeviceKind::Cuda);
}

Tensor forwardCudnn(const Tensor& x, const Tensor& w, const ops::Conv2dParams& p, const ConvShape& s) {
  const auto& c = cudnn();
  cudnnHandle_t h = detail::cudnnHandle();
  ConvDescriptors d(x.dtype(), p, s);
  auto algo = pickAlgorithm<cudnnConvolutionFwdAlgoPerf_t>("cudnnGetConvolutionForwardAlgorithm_v7",
                                                            [&](int n, int* got, cudnnConvolutionFwdAlgoPerf_t* perf) {
    return c.cudnnGetConvolutionForwardAlgorithm_v7(h, d.x, d.w, d.conv, d.y, n, got, perf);
  });
  size_t bytes = 0;
  check(c.cudnnGetConvolutionForwardWorkspaceSize(h, d.x, d.w, d.conv, d.y, algo, &bytes),
        "cudnnGetConvolutionForwardWorkspaceSize");
  Tensor ws = workspace(bytes);
  Tensor out = Tensor::empty({s.n, s.cout, s.outH, s.outW}, x.dtype(), DeviceKind::Cuda);
  check(c.cudnnConvolutionForward(h, d.one(), d.x, x.rawData(), d.w, w.rawData(), d.conv, algo, ws.rawData(), bytes,
                                  d.zero(), d.y, out.rawData()),
        "cudnnConvolutionForward");
  return out;
}

std::pair<Tensor, Tensor> backwardCudnn(const Tensor& g, const Tensor& x, const Tensor& w,
                                        const ops::Conv2dParams& p, const ConvShape& s) {
  const auto& c = cudnn();
  cudnnHandle_t h = detail::cudnnHandle();
  ConvDescriptors d(x.dtype(), p, s);
  Tensor gx = Tensor::empty(x.sizes(), x.dtype(), DeviceKind::Cuda);
  Tensor gw = Tensor::empty(w.sizes(), x.dtype(), DeviceKind::Cuda);

  auto dataAlgo = pickAlgorithm<cudnnConvolutionBwdDataAlgoPerf_t>(
      "cudnnGetConvolutionBackwardDataAlgorithm_v7", [&](int n, int* got, cudnnConvolutionBwdDataAlgoPerf_t* perf) {
        return c.cudnnGetConvolutionBackwardDataAlgorithm_v7(h, d.w, d.y, d.conv, d.x, n, got, perf);
      });
  size_t bytes = 0;
  check(c.cudnnGetConvolutionBackwardDataWorkspaceSize(h, d.w, d.y, d.conv, d.x, dataAlgo, &bytes),
        "cudnnGetConvolutionBackwardDataWorkspaceSize");
  Tensor ws = workspace(bytes);
  check(c.cudnnConvolutionBackwardData(h, d.one(), d.w, w.rawData(), d.y, g.rawData(), d.conv, dataAlgo, ws.rawData(),
                                       bytes, d.zero(), d.x, gx.rawData()),
        "cudnnConvolutionBackwardData");

  auto filterAlgo = pickAlgorithm<cudnnConvolutionBwdFilterAlgoPerf_t>(
      "cudnnGetConvolutionBackwardFilterAlgorithm_v7",
      [&](int n, int* got, cudnnConvolutionBwdFilterAlgoPerf_t* perf) {
        return c.cudnnGetConvolutionBackwardFilterAlgorithm_v7(h, d.x, d.y, d.conv, d.w, n, got, perf);
      });
  check(c.cudnnGetConvolutionBackwardFilterWorkspaceSize(h, d.x, d.y, d.conv, d.w, filterAlgo, &bytes),
        "cudnnGetConvolutionBackwardFilterWorkspaceSize");
  ws = workspace(bytes);
  check(c.cudnnConvolutionBackwardFilter(h, d.one(), d.x, x.rawData(), d.y, g.rawData(), d.conv, filterAlgo,
                                         ws.rawData(), bytes, d.zero(), d.w, gw.rawData()),
        "cudnnConvolutionBackwardFilter");
  return {gx, gw};
}

// Whether `path` takes cuDNN: Cudnn must, Auto does where it can.
bool useCudnn(ConvPath path) {
  if (path == ConvPath::Gemm) return false;
  std::string why = cudnnUnavailable();
  if (path == ConvPath::Cudnn && !why.empty()) throw Error(fmt::format("cuDNN conv2d: {}", why));
  return why.empty();
}

}  // namespace


Tensor conv2d(const Tensor& x0, const Tensor& w0, const ops::Conv2dParams& p, ConvPath path) {
  Tensor x = x0.contiguous(), w = w0.contiguous();
  const ConvShape s = shapeOf(x, w, p);
  if (s.n == 0) return Tensor::empty({0, s.cout, s.outH, s.outW}, x.dtype(), DeviceKind::Cuda);
  return useCudnn(path) ? forwardCudnn(x, w, p, s) : forwardGemm(x, w, p, s);
}

std::pair<Tensor, Tensor> conv2dBackward(const Tensor& g0, const Tensor& x0, const Tensor& w0,
                                         const ops::Conv2dParams& p, ConvPath path) {
  Tensor g = g0.contiguous(), x = x0.contiguous(), w = w0.contiguous();
  const ConvShape s = shapeOf(x, w, p);
  USER_CHECK(g.device() == DeviceKind::Cuda && g.sizes() == (Shape{s.n, s.cout, s.outH, s.outW}) &&
                 g.dtype() == x.dtype(),
             "convolution_backward: the output gradient must be a {} device tensor [{}, {}, {}, {}], got {} {}",
             dtypeName(x.dtype()), s.n, s.cout, s.outH, s.outW, dtypeName(g.dtype()), shapeStr(g.sizes()));
  if (s.n == 0) return backwardGemm(g, x, w, p, s);  // zeros for the weight, nothing for cuDNN to do
  return useCudnn(path) ? backwardCudnn(g, x, w, p, s) : backwardGemm(g, x, w, p, s);
}

}  // namespace gj::cuda
