#include "runtime/ops/onednn_softmax.h"

#include "runtime/ops/loops.h"
#include "runtime/ops/onednn_memory.h"

#include <dnnl.hpp>

#include <algorithm>
#include <atomic>
#include <optional>

namespace gj::ops {

namespace {

using dnnl::memory;

// A contiguous float32 tensor's descriptor, or none (rank 0, empty, past oneDNN's rank limit).
std::optional<memory::desc> plainDesc(const Tensor& t) {
  if (t.dim() == 0 || t.dim() > DNNL_MAX_NDIMS || t.numel() == 0) return std::nullopt;
  const Shape strides = contiguousStrides(t.sizes());
  return memory::desc(memory::dims(t.sizes().begin(), t.sizes().end()), memory::data_type::f32,
                      memory::dims(strides.begin(), strides.end()));
}

dnnl::algorithm algorithmOf(bool log) {
  return log ? dnnl::algorithm::softmax_log : dnnl::algorithm::softmax_accurate;
}

dnnl::softmax_v2_forward::primitive_desc forwardDesc(const memory::desc& d, int64_t dim, bool log) {
  dnnl::softmax_v2_forward::desc fd(dnnl::prop_kind::forward_training, algorithmOf(log), d, d,
                                    static_cast<int>(dim));
  return {fd, onednn::engine()};
}

// Whether any of t's elements is NaN (t contiguous float32).
bool anyNan(const Tensor& t) {
  const float* p = t.data<float>();
  const int64_t n = t.numel();
  constexpr int64_t kChunk = 1 << 14;
  std::atomic<bool> nan = false;
  parallelFor((n + kChunk - 1) / kChunk, n, [&](int64_t c) {
    int any = 0;  // an int and `|`, not `||`, so that the loop vectorizes
    for (int64_t i = c * kChunk, end = std::min(n, i + kChunk); i < end; ++i) any |= p[i] != p[i];
    if (any) nan.store(true, std::memory_order_relaxed);
  });
  return nan;
}

}  // namespace

bool onednnSoftmax(const Tensor& x, int64_t dim, bool log, const Tensor& out) {
  std::optional<memory::desc> d = plainDesc(x);
  if (!d) return false;
  onednn::run(log ? "log_softmax" : "softmax", [&] {
    dnnl::stream s(onednn::engine());
    dnnl::softmax_v2_forward(forwardDesc(*d, dim, log))
        .execute(s, {{DNNL_ARG_SRC, onednn::wrap(*d, onednn::engine(), x)},
                     {DNNL_ARG_DST, onednn::wrap(*d, onednn::engine(), out)}});
    s.wait();
  });
  // oneDNN's row maximum skips NaN and its exp of inf - inf is not NaN, so a row holding NaN or +inf comes
  // out partly finite, where PyTorch's is NaN throughout. Such a row leaves a NaN at that element: those
  // tensors go to the caller's exact loop.
  return !anyNan(out);
}

bool onednnSoftmaxBackward(const Tensor& g, const Tensor& y, int64_t dim, bool log, const Tensor& gx) {
  std::optional<memory::desc> d = plainDesc(y);
  if (!d) return false;
  onednn::run(log ? "log_softmax backward" : "softmax backward", [&] {
    dnnl::stream s(onednn::engine());
    dnnl::softmax_v2_backward::desc bd(algorithmOf(log), *d, *d, *d, static_cast<int>(dim));
    dnnl::softmax_v2_backward::primitive_desc pd(bd, onednn::engine(), forwardDesc(*d, dim, log));
    dnnl::softmax_v2_backward(pd).execute(s, {{DNNL_ARG_DST, onednn::wrap(*d, onednn::engine(), y)},
                                              {DNNL_ARG_DIFF_DST, onednn::wrap(*d, onednn::engine(), g)},
                                              {DNNL_ARG_DIFF_SRC, onednn::wrap(*d, onednn::engine(), gx)}});
    s.wait();
  });
  return true;
}

}  // namespace gj::ops
