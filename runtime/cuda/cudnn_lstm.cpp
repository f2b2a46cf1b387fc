// cuDNN's LSTM through the cuDNN 9 RNN API: one RNN descriptor for all layers, sequence-major unpacked
// data, nn.LSTM's weights copied into (and gradients out of) cuDNN's weight space by the addresses
// cudnnGetRNNWeightParams gives for each layer and gate.
#include "runtime/cuda/cudnn_lstm.h"

#include "runtime/cuda/cudnn_api.h"
#include "runtime/cuda/device.h"
#include "support/error.h"

#include <fmt/format.h>

namespace gj::cuda {
namespace {

using detail::check;
using detail::cudnn;
using detail::Cudnn;

cudnnHandle_t handle() { return detail::cudnnHandle(); }

int32_t narrow(int64_t v, const char* what) { return detail::cudnnInt(v, "cuDNN LSTM", what); }

}  // namespace

struct CudnnLstm::Impl {
  int32_t T, N, I, H, L;
  cudnnRNNDescriptor_t rnn = nullptr;
  cudnnDropoutDescriptor_t dropout = nullptr;
  cudnnRNNDataDescriptor_t xDesc = nullptr, yDesc = nullptr;
  cudnnTensorDescriptor_t hDesc = nullptr, mDesc = nullptr, bDesc = nullptr;
  size_t weightBytes = 0, workBytes = 0, reserveBytes = 0;
  Tensor weightSpace, seqLengths;  ///< seqLengths: T for each batch entry, int32 on the device
  // Saved by forward for backward.
  Tensor x, hx, cx, y, work, reserve;

  ~Impl() {
    const Cudnn& c = cudnn();
    if (xDesc) c.cudnnDestroyRNNDataDescriptor(xDesc);
    if (yDesc) c.cudnnDestroyRNNDataDescriptor(yDesc);
    for (cudnnTensorDescriptor_t d : {hDesc, mDesc, bDesc})
      if (d) c.cudnnDestroyTensorDescriptor(d);
    if (rnn) c.cudnnDestroyRNNDescriptor(rnn);
    if (dropout) c.cudnnDestroyDropoutDescriptor(dropout);
  }

  static Tensor bytes(size_t n) {
    return Tensor::empty({static_cast<int64_t>(std::max<size_t>((n + 3) / 4, 1))}, DType::Float32, DeviceKind::Cuda);
  }

  // The address and element count of `layer`'s matrix (or bias, when `bias`) `id` in `space`: ids 0-3 are
  // w_ih's gates i, f, g, o, ids 4-7 w_hh's (cuDNN's gate order is nn.LSTM's).
  std::pair<void*, int64_t> param(const Tensor& space, int32_t layer, int32_t id, bool bias) const {
    const Cudnn& c = cudnn();
    void* m = nullptr;
    void* b = nullptr;
    check(c.cudnnGetRNNWeightParams(handle(), rnn, layer, weightBytes, space.rawData(), id, mDesc, &m, bDesc, &b),
          "cudnnGetRNNWeightParams");
    cudnnDataType_t type;
    int dims = 0, sizes[3] = {}, strides[3] = {};
    check(c.cudnnGetTensorNdDescriptor(bias ? bDesc : mDesc, 3, &type, &dims, sizes, strides),
          "cudnnGetTensorNdDescriptor");
    int64_t n = 1;
    for (int k = 0; k < dims; ++k) n *= sizes[k];
    return {bias ? b : m, n};
  }

  // Copies between nn.LSTM's weights (4 per layer) and cuDNN's weight space, in the direction `in`.
  void transfer(const Tensor& space, const std::vector<Tensor>& weights, bool in) const {
    for (int32_t l = 0; l < L; ++l) {
      const int64_t C = l == 0 ? I : H;
      for (int32_t id = 0; id < 8; ++id) {
        const int64_t gate = id % 4;
        const Tensor& w = weights[4 * l + (id < 4 ? 0 : 1)];
        const Tensor& b = weights[4 * l + (id < 4 ? 2 : 3)];
        const int64_t cols = id < 4 ? C : H;
        for (bool bias : {false, true}) {
          auto [addr, n] = param(space, l, id, bias);
          const int64_t want = bias ? H : H * cols;
          IR_CHECK(addr && n == want) << "cuDNN's weight space has " << n << " elements where layer " << l
                                      << " gate " << id << " needs " << want;
          char* ours = static_cast<char*>((bias ? b : w).rawData()) + gate * want * sizeof(float);
          if (in)
            copyDeviceToDevice(addr, ours, want * sizeof(float));
          else
            copyDeviceToDevice(ours, addr, want * sizeof(float));
        }
      }
    }
  }
};

CudnnLstm::CudnnLstm(int64_t seqLength, int64_t miniBatch, int64_t inputSize, int64_t hiddenSize, int64_t numLayers) {
  if (std::string why = cudnnUnavailable(); !why.empty()) throw Error(fmt::format("cuDNN LSTM: {}", why));
  const Cudnn& c = cudnn();
  impl_ = std::make_unique<Impl>();
  Impl& m = *impl_;
  m.T = narrow(seqLength, "seqLength");
  m.N = narrow(miniBatch, "miniBatch");
  m.I = narrow(inputSize, "inputSize");
  m.H = narrow(hiddenSize, "hiddenSize");
  m.L = narrow(numLayers, "numLayers");
  cudnnHandle_t h = handle();
  check(c.cudnnCreateDropoutDescriptor(&m.dropout), "cudnnCreateDropoutDescriptor");
  check(c.cudnnSetDropoutDescriptor(m.dropout, h, 0.0f, nullptr, 0, 0), "cudnnSetDropoutDescriptor");
  check(c.cudnnCreateRNNDescriptor(&m.rnn), "cudnnCreateRNNDescriptor");
  check(c.cudnnSetRNNDescriptor_v8(m.rnn, CUDNN_RNN_ALGO_STANDARD, CUDNN_LSTM, CUDNN_RNN_DOUBLE_BIAS,
                                   CUDNN_UNIDIRECTIONAL, CUDNN_LINEAR_INPUT, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT,
                                   CUDNN_FMA_MATH, m.I, m.H, m.H, m.L, m.dropout, CUDNN_RNN_PADDED_IO_DISABLED),
        "cudnnSetRNNDescriptor_v8");
  std::vector<int> lengths(m.N, m.T);
  check(c.cudnnCreateRNNDataDescriptor(&m.xDesc), "cudnnCreateRNNDataDescriptor");
  check(c.cudnnSetRNNDataDescriptor(m.xDesc, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, m.T, m.N,
                                    m.I, lengths.data(), nullptr),
        "cudnnSetRNNDataDescriptor");
  check(c.cudnnCreateRNNDataDescriptor(&m.yDesc), "cudnnCreateRNNDataDescriptor");
  check(c.cudnnSetRNNDataDescriptor(m.yDesc, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, m.T, m.N,
                                    m.H, lengths.data(), nullptr),
        "cudnnSetRNNDataDescriptor");
  const int stateSizes[3] = {m.L, m.N, m.H}, stateStrides[3] = {m.N * m.H, m.H, 1};
  for (cudnnTensorDescriptor_t* d : {&m.hDesc, &m.mDesc, &m.bDesc})
    check(c.cudnnCreateTensorDescriptor(d), "cudnnCreateTensorDescriptor");
  check(c.cudnnSetTensorNdDescriptor(m.hDesc, CUDNN_DATA_FLOAT, 3, stateSizes, stateStrides),
        "cudnnSetTensorNdDescriptor");
  check(c.cudnnGetRNNWeightSpaceSize(h, m.rnn, &m.weightBytes), "cudnnGetRNNWeightSpaceSize");
  check(c.cudnnGetRNNTempSpaceSizes(h, m.rnn, CUDNN_FWD_MODE_TRAINING, m.xDesc, &m.workBytes, &m.reserveBytes),
        "cudnnGetRNNTempSpaceSizes");
  m.weightSpace = Impl::bytes(m.weightBytes);
  m.seqLengths = Impl::bytes(lengths.size() * sizeof(int32_t));
  std::vector<int32_t> devLengths(lengths.begin(), lengths.end());
  copyHostToDevice(m.seqLengths.rawData(), devLengths.data(), devLengths.size() * sizeof(int32_t));
}

CudnnLstm::~CudnnLstm() = default;

std::vector<Tensor> CudnnLstm::forward(const Tensor& input, const Tensor& hx, const Tensor& cx,
                                       const std::vector<Tensor>& weights) {
  Impl& m = *impl_;
  const Shape state{m.L, m.N, m.H};
  USER_CHECK(input.dtype() == DType::Float32 && input.sizes() == (Shape{m.T, m.N, m.I}),
             "cuDNN LSTM: input must be float32 [{}, {}, {}]", m.T, m.N, m.I);
  USER_CHECK(hx.sizes() == state && cx.sizes() == state, "cuDNN LSTM: hx, cx must be [{}, {}, {}]", m.L, m.N, m.H);
  USER_CHECK(static_cast<int64_t>(weights.size()) == 4 * m.L, "cuDNN LSTM: {} weights for {} layers", weights.size(),
             m.L);
  std::vector<Tensor> w;
  for (int32_t l = 0; l < m.L; ++l) {
    const int64_t C = l == 0 ? m.I : m.H;
    const Shape want[4] = {{4 * m.H, C}, {4 * m.H, m.H}, {4 * m.H}, {4 * m.H}};
    for (int k = 0; k < 4; ++k) {
      const Tensor& t = weights[4 * l + k];
      USER_CHECK(t.dtype() == DType::Float32 && t.sizes() == want[k], "cuDNN LSTM: weight {} of layer {} must be float32 "
                 "{}", k, l, fmt::join(want[k], "x"));
      w.push_back(t.to(DeviceKind::Cuda).contiguous());
    }
  }
  m.x = input.to(DeviceKind::Cuda).contiguous();
  m.hx = hx.to(DeviceKind::Cuda).contiguous();
  m.cx = cx.to(DeviceKind::Cuda).contiguous();
  m.transfer(m.weightSpace, w, true);
  m.y = Tensor::empty({m.T, m.N, m.H}, DType::Float32, DeviceKind::Cuda);
  Tensor hy = Tensor::empty(state, DType::Float32, DeviceKind::Cuda);
  Tensor cy = Tensor::empty(state, DType::Float32, DeviceKind::Cuda);
  m.work = Impl::bytes(m.workBytes);
  m.reserve = Impl::bytes(m.reserveBytes);
  check(cudnn().cudnnRNNForward(handle(), m.rnn, CUDNN_FWD_MODE_TRAINING, static_cast<int32_t*>(m.seqLengths.rawData()),
                                m.xDesc, m.x.rawData(), m.yDesc, m.y.rawData(), m.hDesc, m.hx.rawData(), hy.rawData(),
                                m.hDesc, m.cx.rawData(), cy.rawData(), m.weightBytes, m.weightSpace.rawData(),
                                m.workBytes, m.work.rawData(), m.reserveBytes, m.reserve.rawData()),
        "cudnnRNNForward");
  return {m.y, hy, cy};
}

std::vector<Tensor> CudnnLstm::backward(const Tensor& gradOutput, const Tensor& gradHy, const Tensor& gradCy) {
  Impl& m = *impl_;
  USER_CHECK(m.reserve.defined(), "cuDNN LSTM: backward before forward");
  const Shape state{m.L, m.N, m.H};
  USER_CHECK(gradOutput.sizes() == (Shape{m.T, m.N, m.H}) && gradHy.sizes() == state && gradCy.sizes() == state,
             "cuDNN LSTM: gradients of the wrong sizes");
  const Cudnn& c = cudnn();
  Tensor dy = gradOutput.to(DeviceKind::Cuda).contiguous(), dhy = gradHy.to(DeviceKind::Cuda).contiguous(),
         dcy = gradCy.to(DeviceKind::Cuda).contiguous();
  Tensor dx = Tensor::empty({m.T, m.N, m.I}, DType::Float32, DeviceKind::Cuda);
  Tensor dhx = Tensor::empty(state, DType::Float32, DeviceKind::Cuda);
  Tensor dcx = Tensor::empty(state, DType::Float32, DeviceKind::Cuda);
  auto* lengths = static_cast<int32_t*>(m.seqLengths.rawData());
  cudnnHandle_t h = handle();
  check(c.cudnnRNNBackwardData_v8(h, m.rnn, lengths, m.yDesc, m.y.rawData(), dy.rawData(), m.xDesc, dx.rawData(),
                                  m.hDesc, m.hx.rawData(), dhy.rawData(), dhx.rawData(), m.hDesc, m.cx.rawData(),
                                  dcy.rawData(), dcx.rawData(), m.weightBytes, m.weightSpace.rawData(), m.workBytes,
                                  m.work.rawData(), m.reserveBytes, m.reserve.rawData()),
        "cudnnRNNBackwardData_v8");
  Tensor dw = Impl::bytes(m.weightBytes);
  fillBytes(dw.rawData(), 0, m.weightBytes);  // the weight gradients are added to it
  check(c.cudnnRNNBackwardWeights_v8(h, m.rnn, CUDNN_WGRAD_MODE_ADD, lengths, m.xDesc, m.x.rawData(), m.hDesc,
                                     m.hx.rawData(), m.yDesc, m.y.rawData(), m.weightBytes, dw.rawData(), m.workBytes,
                                     m.work.rawData(), m.reserveBytes, m.reserve.rawData()),
        "cudnnRNNBackwardWeights_v8");
  std::vector<Tensor> grads = {dx, dhx, dcx};
  std::vector<Tensor> dweights;
  for (int32_t l = 0; l < m.L; ++l) {
    const int64_t C = l == 0 ? m.I : m.H;
    for (const Shape& s : {Shape{4 * m.H, C}, Shape{4 * m.H, m.H}, Shape{4 * m.H}, Shape{4 * m.H}})
      dweights.push_back(Tensor::empty(s, DType::Float32, DeviceKind::Cuda));
  }
  m.transfer(dw, dweights, false);
  grads.insert(grads.end(), dweights.begin(), dweights.end());
  return grads;
}

}  // namespace gj::cuda
