#pragma once
#include "ir/graph.h"

namespace gj {

/// Sets requiresGrad on every tensor and tensor-list value: true when the value is computed from a
/// graph input whose type says requires_grad=1 by float ops; loops to a fixed point. Graph inputs
/// without the flag count as not requiring grad. Returns true if any type changed.
bool propagateRequiresGrad(Graph& g);

}  // namespace gj
