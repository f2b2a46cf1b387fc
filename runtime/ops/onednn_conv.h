#pragma once
// conv2d on oneDNN's convolution primitives (float32, plain NCHW / OIHW / GOIHW layouts): the host's
// convolution where oneDNN is built in (GJ_WITH_ONEDNN); nn.cpp and grad.cpp fall back to im2col and GEMMs
// for float64 and for builds without it. oneDNN keeps its own cache of primitives by shape.
#include "runtime/ops/ops.h"

namespace gj::ops {

/// out = conv(x, w) without bias; x, w contiguous float32, out contiguous [N, Cout, outH, outW]. False when
/// oneDNN is not in this build (out untouched).
bool onednnConv2d(const Tensor& x, const Tensor& w, const Tensor& out, const Conv2dParams& p);
/// The gradients of x and w for the output gradient g (contiguous float32), written to gx and gw (of x's
/// and w's sizes). False when oneDNN is not in this build.
bool onednnConv2dBackward(const Tensor& g, const Tensor& x, const Tensor& w, const Conv2dParams& p, const Tensor& gx,
                          const Tensor& gw);

}  // namespace gj::ops
