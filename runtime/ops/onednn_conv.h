#pragma once
// conv2d on oneDNN's convolution primitives (float32, plain NCHW / OIHW / GOIHW layouts): the host's
// convolution where oneDNN is built in (GJ_WITH_ONEDNN); nn.cpp and grad.cpp fall back to im2col and GEMMs
// for float64 and for builds without it. oneDNN keeps its own cache of primitives by shape.
#include "runtime/ops/ops.h"

namespace gj::ops {

/// out = conv(x, w) + bias; x, w contiguous float32, bias undefined (none) or contiguous float32 [Cout], out
/// contiguous [N, Cout, outH, outW]. oneDNN adds the bias as it writes each result, not in a pass of its
/// own. False when oneDNN is not in this build (out untouched).
bool onednnConv2d(const Tensor& x, const Tensor& w, const Tensor& bias, const Tensor& out, const Conv2dParams& p);
/// The gradients of x and w for the output gradient g (contiguous float32), written to gx and gw (of x's
/// and w's sizes), and the bias's to gb ([Cout]) unless it is undefined: the weight gradient's primitive
/// sums it as it reads g. An undefined gx skips the data gradient's primitive (a network's first
/// convolution, whose input is the data). False when oneDNN is not in this build.
bool onednnConv2dBackward(const Tensor& g, const Tensor& x, const Tensor& w, const Conv2dParams& p, const Tensor& gx,
                          const Tensor& gw, const Tensor& gb = Tensor());

}  // namespace gj::ops
