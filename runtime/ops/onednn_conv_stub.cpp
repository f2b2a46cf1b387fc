// Builds without oneDNN (GJ_WITH_ONEDNN=OFF): conv2d runs on im2col and GEMMs.
#include "runtime/ops/onednn_conv.h"

namespace gj::ops {

bool onednnConv2d(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Conv2dParams&) { return false; }
bool onednnConv2dBackward(const Tensor&, const Tensor&, const Tensor&, const Conv2dParams&, const Tensor&,
                          const Tensor&, const Tensor&) {
  return false;
}

}  // namespace gj::ops
