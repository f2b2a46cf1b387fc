#include "runtime/ops/onednn_conv.h"

#include "runtime/gemm.h"
#include "runtime/ops/onednn_memory.h"

#include "support/error.h"

#include <dnnl.hpp>

#include <unordered_map>

namespace gj::ops {

namespace {

using dnnl::memory;
using tag = memory::format_tag;
constexpr auto f32 = memory::data_type::f32;

using onednn::engine;
using onednn::run;
using onednn::Scratch;

// The descriptors of one convolution: plain layouts, oneDNN's dilation (0 for none) and right padding.
struct ConvDescs {
  memory::desc src, weights, dst;
  memory::dims strides, dilates, padL, padR;

  ConvDescs(const Tensor& x, const Tensor& w, const Shape& outSizes, const Conv2dParams& p) {
    const int64_t g = p.groups;
    src = memory::desc({x.size(0), x.size(1), x.size(2), x.size(3)}, f32, tag::nchw);
    dst = memory::desc({outSizes[0], outSizes[1], outSizes[2], outSizes[3]}, f32, tag::nchw);
    weights = g == 1 ? memory::desc({w.size(0), w.size(1), w.size(2), w.size(3)}, f32, tag::oihw)
                     : memory::desc({g, w.size(0) / g, w.size(1), w.size(2), w.size(3)}, f32, tag::goihw);
    strides = {p.strideH, p.strideW};
    dilates = {p.dilationH - 1, p.dilationW - 1};
    padL = {p.padH, p.padW};
    // What the last window reaches past the input on the right (or bottom).
    auto right = [](int64_t in, int64_t out, int64_t k, int64_t s, int64_t d, int64_t pad) {
      return (out - 1) * s + (k - 1) * d + 1 - in - pad;
    };
    padR = {right(x.size(2), outSizes[2], w.size(2), p.strideH, p.dilationH, p.padH),
            right(x.size(3), outSizes[3], w.size(3), p.strideW, p.dilationW, p.padW)};
  }

  // Layouts of oneDNN's choosing (blocked channels: its direct convolutions) for the primitives.
  memory::desc any(const memory::desc& d) const { return memory::desc(d.dims(), f32, tag::any); }
  // A bias, or its gradient: one number an output channel.
  memory::desc bias() const { return memory::desc({dst.dims()[1]}, f32, tag::x); }

  // With a bias: oneDNN adds it as it stores each result.
  dnnl::convolution_forward::primitive_desc forward(bool withBias = false) const {
    if (withBias) {
      dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct,
                                        any(src), any(weights), bias(), any(dst), strides, dilates, padL, padR);
      return {d, engine()};
    }
    dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_training, dnnl::algorithm::convolution_direct,
                                      any(src), any(weights), any(dst), strides, dilates, padL, padR);
    return {d, engine()};
  }
};

memory wrap(const memory::desc& d, const Tensor& t) { return onednn::wrap(d, engine(), t); }

// For a benchmark's floor (GemmRecording).
void record(bool backward, bool bias, bool input, const Tensor& x, const Tensor& w, const Conv2dParams& p) {
  recordConvolution({backward,
                     bias,
                     input,
                     {x.size(0), x.size(1), x.size(2), x.size(3)},
                     {w.size(0), w.size(1), w.size(2), w.size(3)},
                     {p.strideH, p.strideW, p.padH, p.padW, p.dilationH, p.dilationW, p.groups}});
}

// A result in the primitive's layout, and its copy back into the user's tensor.
struct Output {
  memory user, prim;
  Output(const memory& u, const memory::desc& want, Scratch& scratch)
      : user(u), prim(u.get_desc() == want ? u : scratch.make(want)) {}
  void finish(dnnl::stream& s) {
    if (prim.get(true) != user.get(true)) dnnl::reorder(prim, user).execute(s, prim, user);
  }
};

}  // namespace

bool onednnConv2d(const Tensor& x, const Tensor& w, const Tensor& bias, const Tensor& out, const Conv2dParams& p) {
  record(false, bias.defined(), true, x, w, p);
  run("convolution", [&] {
    ConvDescs c(x, w, out.sizes(), p);
    auto pd = c.forward(bias.defined());
    dnnl::stream s(engine());
    Scratch scratch(engine());
    Output dst(wrap(c.dst, out), pd.dst_desc(), scratch);
    const memory src = scratch.inLayout(wrap(c.src, x), pd.src_desc(), s);
    const memory weights = scratch.inLayout(wrap(c.weights, w), pd.weights_desc(), s);
    std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst.prim}};
    if (bias.defined()) args.emplace(DNNL_ARG_BIAS, wrap(pd.bias_desc(), bias));
    dnnl::convolution_forward(pd).execute(s, args);
    dst.finish(s);
    s.wait();
  });
  return true;
}

bool onednnConv2dBackward(const Tensor& g, const Tensor& x, const Tensor& w, const Conv2dParams& p, const Tensor& gx,
                          const Tensor& gw, const Tensor& gb) {
  record(true, gb.defined(), gx.defined(), x, w, p);
  run("convolution backward", [&] {
    ConvDescs c(x, w, g.sizes(), p);
    auto fwd = c.forward();
    dnnl::stream s(engine());
    Scratch scratch(engine());
    memory gData = wrap(c.dst, g);
    if (gx.defined()) {
      dnnl::convolution_backward_data::desc dd(dnnl::algorithm::convolution_direct, c.any(c.src),
                                               c.any(c.weights), c.any(c.dst), c.strides, c.dilates, c.padL, c.padR);
      dnnl::convolution_backward_data::primitive_desc dpd(dd, engine(), fwd);
      Output diffSrc(wrap(c.src, gx), dpd.diff_src_desc(), scratch);
      gData = scratch.inLayout(gData, dpd.diff_dst_desc(), s);
      dnnl::convolution_backward_data(dpd).execute(
          s, {{DNNL_ARG_DIFF_DST, gData},
              {DNNL_ARG_WEIGHTS, scratch.inLayout(wrap(c.weights, w), dpd.weights_desc(), s)},
              {DNNL_ARG_DIFF_SRC, diffSrc.prim}});
      diffSrc.finish(s);
    }
    const auto wd = gb.defined() ? dnnl::convolution_backward_weights::desc(
                                       dnnl::algorithm::convolution_direct, c.any(c.src), c.any(c.weights), c.bias(),
                                       c.any(c.dst), c.strides, c.dilates, c.padL, c.padR)
                                 : dnnl::convolution_backward_weights::desc(
                                       dnnl::algorithm::convolution_direct, c.any(c.src), c.any(c.weights),
                                       c.any(c.dst), c.strides, c.dilates, c.padL, c.padR);
    dnnl::convolution_backward_weights::primitive_desc wpd(wd, engine(), fwd);
    Output diffWeights(wrap(c.weights, gw), wpd.diff_weights_desc(), scratch);
    std::unordered_map<int, memory> args = {
        {DNNL_ARG_SRC, scratch.inLayout(wrap(c.src, x), wpd.src_desc(), s)},
        {DNNL_ARG_DIFF_DST, scratch.inLayout(gData, wpd.diff_dst_desc(), s)},  // reordered once when they agree
        {DNNL_ARG_DIFF_WEIGHTS, diffWeights.prim}};
    if (gb.defined()) args.emplace(DNNL_ARG_DIFF_BIAS, wrap(c.bias(), gb));
    dnnl::convolution_backward_weights(wpd).execute(s, args);
    diffWeights.finish(s);
    s.wait();
  });
  return true;
}

}  // namespace gj::ops
