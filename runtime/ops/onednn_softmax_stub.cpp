// Builds without oneDNN (GJ_WITH_ONEDNN=OFF): softmax runs on reduce.cpp's and grad.cpp's own loops.
#include "runtime/ops/onednn_softmax.h"

namespace gj::ops {

bool onednnSoftmax(const Tensor&, int64_t, bool, const Tensor&) { return false; }
bool onednnSoftmaxBackward(const Tensor&, const Tensor&, int64_t, bool, const Tensor&) { return false; }

}  // namespace gj::ops
