#include "runtime/ops/onednn_lstm.h"

#include "runtime/ops/onednn_memory.h"

#include "runtime/ops/ops.h"
#include "support/error.h"

#include <dnnl.hpp>

#include <cstring>

namespace gj::ops {

namespace {

using dnnl::memory;
using onednn::Scratch;
using onednn::wrap;
using tag = memory::format_tag;
constexpr auto f32 = memory::data_type::f32;

}  // namespace

struct OnednnLstm::Impl {
  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  dnnl::stream strm{eng};
  int64_t T, N, I, H, L;

  struct Layer {
    int64_t C;  // input features
    memory::desc srcLayer, srcIter, wLayerUser, wIterUser, biasUser, dstLayer, dstIter;
    dnnl::lstm_forward::primitive_desc fwd;
    dnnl::lstm_backward::primitive_desc bwd;
    // Saved by forward for backward.
    Tensor src, h0, c0, dst, hy, cy, wih, whh, bias;
    memory workspace;
  };
  std::vector<Layer> layers;

  Impl(int64_t t, int64_t n, int64_t i, int64_t h, int64_t l) : T(t), N(n), I(i), H(h), L(l) {
    for (int64_t k = 0; k < L; ++k) {
      Layer ly;
      ly.C = k == 0 ? I : H;
      ly.srcLayer = memory::desc({T, N, ly.C}, f32, tag::tnc);
      ly.srcIter = memory::desc({1, 1, N, H}, f32, tag::ldnc);
      ly.wLayerUser = memory::desc({1, 1, ly.C, 4, H}, f32, tag::ldgoi);  // nn.LSTM's [4H, C]
      ly.wIterUser = memory::desc({1, 1, H, 4, H}, f32, tag::ldgoi);
      ly.biasUser = memory::desc({1, 1, 4, H}, f32, tag::ldgo);
      ly.dstLayer = memory::desc({T, N, H}, f32, tag::tnc);
      ly.dstIter = ly.srcIter;
      memory::desc wAny({1, 1, ly.C, 4, H}, f32, tag::any), wiAny({1, 1, H, 4, H}, f32, tag::any);
      dnnl::lstm_forward::desc fd(dnnl::prop_kind::forward_training, dnnl::rnn_direction::unidirectional_left2right,
                                  ly.srcLayer, ly.srcIter, ly.srcIter, wAny, wiAny, ly.biasUser, ly.dstLayer,
                                  ly.dstIter, ly.dstIter);
      ly.fwd = dnnl::lstm_forward::primitive_desc(fd, eng);
      dnnl::lstm_backward::desc bd(dnnl::prop_kind::backward, dnnl::rnn_direction::unidirectional_left2right,
                                   ly.srcLayer, ly.srcIter, ly.srcIter, wAny, wiAny, ly.biasUser, ly.dstLayer,
                                   ly.dstIter, ly.dstIter, ly.srcLayer, ly.srcIter, ly.srcIter, wAny, wiAny,
                                   ly.biasUser, ly.dstLayer, ly.dstIter, ly.dstIter);
      ly.bwd = dnnl::lstm_backward::primitive_desc(bd, eng, ly.fwd);
      layers.push_back(std::move(ly));
    }
  }
};

OnednnLstm::OnednnLstm(int64_t seqLength, int64_t miniBatch, int64_t inputSize, int64_t hiddenSize, int64_t numLayers) {
  USER_CHECK(seqLength > 0 && miniBatch > 0 && inputSize > 0 && hiddenSize > 0 && numLayers > 0,
             "oneDNN LSTM: sizes must be positive");
  try {
    impl_ = std::make_unique<Impl>(seqLength, miniBatch, inputSize, hiddenSize, numLayers);
  } catch (const dnnl::error& e) {
    throw Error(fmt::format("oneDNN LSTM: {}", e.what()));
  }
}

OnednnLstm::~OnednnLstm() = default;

std::vector<Tensor> OnednnLstm::forward(const Tensor& input, const Tensor& hx, const Tensor& cx,
                                        const std::vector<Tensor>& weights) {
  Impl& m = *impl_;
  USER_CHECK(input.dtype() == DType::Float32 && input.sizes() == (Shape{m.T, m.N, m.I}),
             "oneDNN LSTM: input must be float32 [{}, {}, {}], got {}", m.T, m.N, m.I, shapeStr(input.sizes()));
  USER_CHECK(hx.sizes() == (Shape{m.L, m.N, m.H}) && cx.sizes() == hx.sizes(), "oneDNN LSTM: hx, cx must be [{}, {}, {}]",
             m.L, m.N, m.H);
  USER_CHECK(static_cast<int64_t>(weights.size()) == 4 * m.L, "oneDNN LSTM: {} weights for {} layers", weights.size(), m.L);
  Tensor layerIn = input.contiguous();
  std::vector<Tensor> hys, cys;
  for (int64_t k = 0; k < m.L; ++k) {
    Impl::Layer& ly = m.layers[k];
    ly.src = layerIn;
    ly.h0 = hx.select(0, k).contiguous();
    ly.c0 = cx.select(0, k).contiguous();
    ly.wih = weights[4 * k].contiguous();
    ly.whh = weights[4 * k + 1].contiguous();
    ly.bias = add(weights[4 * k + 2], weights[4 * k + 3]);
    ly.dst = Tensor::empty({m.T, m.N, m.H}, DType::Float32);
    ly.hy = Tensor::empty({m.N, m.H}, DType::Float32);
    ly.cy = Tensor::empty({m.N, m.H}, DType::Float32);
    Scratch scratch(m.eng);
    memory wl = scratch.inLayout(wrap(ly.wLayerUser, m.eng, ly.wih), ly.fwd.weights_layer_desc(), m.strm);
    memory wi = scratch.inLayout(wrap(ly.wIterUser, m.eng, ly.whh), ly.fwd.weights_iter_desc(), m.strm);
    ly.workspace = memory(ly.fwd.workspace_desc(), m.eng);
    dnnl::lstm_forward(ly.fwd).execute(
        m.strm, {{DNNL_ARG_SRC_LAYER, wrap(ly.srcLayer, m.eng, ly.src)},
                 {DNNL_ARG_SRC_ITER, wrap(ly.srcIter, m.eng, ly.h0)},
                 {DNNL_ARG_SRC_ITER_C, wrap(ly.srcIter, m.eng, ly.c0)},
                 {DNNL_ARG_WEIGHTS_LAYER, wl},
                 {DNNL_ARG_WEIGHTS_ITER, wi},
                 {DNNL_ARG_BIAS, wrap(ly.biasUser, m.eng, ly.bias)},
                 {DNNL_ARG_DST_LAYER, wrap(ly.dstLayer, m.eng, ly.dst)},
                 {DNNL_ARG_DST_ITER, wrap(ly.dstIter, m.eng, ly.hy)},
                 {DNNL_ARG_DST_ITER_C, wrap(ly.dstIter, m.eng, ly.cy)},
                 {DNNL_ARG_WORKSPACE, ly.workspace}});
    m.strm.wait();
    hys.push_back(ly.hy);
    cys.push_back(ly.cy);
    layerIn = ly.dst;
  }
  return {layerIn, stack(hys, 0), stack(cys, 0)};
}

std::vector<Tensor> OnednnLstm::backward(const Tensor& gradOutput, const Tensor& gradHy, const Tensor& gradCy) {
  Impl& m = *impl_;
  USER_CHECK(m.layers[0].workspace, "oneDNN LSTM: backward before forward");
  USER_CHECK(gradOutput.sizes() == (Shape{m.T, m.N, m.H}) && gradHy.sizes() == (Shape{m.L, m.N, m.H}) &&
                 gradCy.sizes() == gradHy.sizes(),
             "oneDNN LSTM: gradient shapes do not match the outputs");
  std::vector<Tensor> grads(3 + 4 * m.L);
  Tensor dTop = gradOutput.contiguous();
  std::vector<Tensor> dh(m.L), dc(m.L);
  for (int64_t k = m.L - 1; k >= 0; --k) {
    Impl::Layer& ly = m.layers[k];
    Tensor dsrc = Tensor::empty({m.T, m.N, ly.C}, DType::Float32);
    dh[k] = Tensor::empty({m.N, m.H}, DType::Float32);
    dc[k] = Tensor::empty({m.N, m.H}, DType::Float32);
    Tensor dhy = gradHy.select(0, k).contiguous(), dcy = gradCy.select(0, k).contiguous();
    Tensor dwih = Tensor::zeros({4 * m.H, ly.C}, DType::Float32), dwhh = Tensor::zeros({4 * m.H, m.H}, DType::Float32);
    Tensor dbias = Tensor::zeros({4 * m.H}, DType::Float32);
    Scratch scratch(m.eng);
    memory wl = scratch.inLayout(wrap(ly.wLayerUser, m.eng, ly.wih), ly.bwd.weights_layer_desc(), m.strm);
    memory wi = scratch.inLayout(wrap(ly.wIterUser, m.eng, ly.whh), ly.bwd.weights_iter_desc(), m.strm);
    // The gradients of the weights accumulate into zeroed memories of the primitive's layout.
    memory dwl = scratch.make(ly.bwd.diff_weights_layer_desc()), dwi = scratch.make(ly.bwd.diff_weights_iter_desc());
    std::memset(dwl.get_data_handle(), 0, ly.bwd.diff_weights_layer_desc().get_size());
    std::memset(dwi.get_data_handle(), 0, ly.bwd.diff_weights_iter_desc().get_size());
    dnnl::lstm_backward(ly.bwd).execute(
        m.strm, {{DNNL_ARG_SRC_LAYER, wrap(ly.srcLayer, m.eng, ly.src)},
                 {DNNL_ARG_SRC_ITER, wrap(ly.srcIter, m.eng, ly.h0)},
                 {DNNL_ARG_SRC_ITER_C, wrap(ly.srcIter, m.eng, ly.c0)},
                 {DNNL_ARG_WEIGHTS_LAYER, wl},
                 {DNNL_ARG_WEIGHTS_ITER, wi},
                 {DNNL_ARG_BIAS, wrap(ly.biasUser, m.eng, ly.bias)},
                 {DNNL_ARG_DST_LAYER, wrap(ly.dstLayer, m.eng, ly.dst)},
                 {DNNL_ARG_DST_ITER, wrap(ly.dstIter, m.eng, ly.hy)},
                 {DNNL_ARG_DST_ITER_C, wrap(ly.dstIter, m.eng, ly.cy)},
                 {DNNL_ARG_WORKSPACE, ly.workspace},
                 {DNNL_ARG_DIFF_DST_LAYER, wrap(ly.dstLayer, m.eng, dTop)},
                 {DNNL_ARG_DIFF_DST_ITER, wrap(ly.dstIter, m.eng, dhy)},
                 {DNNL_ARG_DIFF_DST_ITER_C, wrap(ly.dstIter, m.eng, dcy)},
                 {DNNL_ARG_DIFF_SRC_LAYER, wrap(ly.srcLayer, m.eng, dsrc)},
                 {DNNL_ARG_DIFF_SRC_ITER, wrap(ly.srcIter, m.eng, dh[k])},
                 {DNNL_ARG_DIFF_SRC_ITER_C, wrap(ly.srcIter, m.eng, dc[k])},
                 {DNNL_ARG_DIFF_WEIGHTS_LAYER, dwl},
                 {DNNL_ARG_DIFF_WEIGHTS_ITER, dwi},
                 {DNNL_ARG_DIFF_BIAS, wrap(ly.biasUser, m.eng, dbias)}});
    memory uwl = wrap(ly.wLayerUser, m.eng, dwih), uwi = wrap(ly.wIterUser, m.eng, dwhh);
    dnnl::reorder(dwl, uwl).execute(m.strm, dwl, uwl);
    dnnl::reorder(dwi, uwi).execute(m.strm, dwi, uwi);
    m.strm.wait();
    grads[3 + 4 * k] = dwih;
    grads[4 + 4 * k] = dwhh;
    grads[5 + 4 * k] = dbias;          // the bias is b_ih + b_hh: both get its gradient
    grads[6 + 4 * k] = dbias.clone();
    dTop = dsrc;
  }
  grads[0] = dTop;
  grads[1] = stack(dh, 0);
  grads[2] = stack(dc, 0);
  return grads;
}

}  // namespace gj::ops
