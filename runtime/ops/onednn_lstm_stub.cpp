// oneDNN's LSTM for builds without oneDNN (GJ_WITH_ONEDNN=OFF): the baseline row says it is missing.
#include "runtime/ops/onednn_lstm.h"

#include "support/error.h"

namespace gj::ops {

struct OnednnLstm::Impl {};

OnednnLstm::OnednnLstm(int64_t, int64_t, int64_t, int64_t, int64_t) {
  throw Error("oneDNN's LSTM (the CPU cudnn row) is not in this build (configured with GJ_WITH_ONEDNN=OFF)");
}

OnednnLstm::~OnednnLstm() = default;

std::vector<Tensor> OnednnLstm::forward(const Tensor&, const Tensor&, const Tensor&, const std::vector<Tensor>&) {
  return {};
}

std::vector<Tensor> OnednnLstm::backward(const Tensor&, const Tensor&, const Tensor&) { return {}; }

}  // namespace gj::ops
