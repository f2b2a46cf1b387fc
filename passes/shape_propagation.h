#pragma once
#include "ir/graph.h"

namespace gj {

/// Computes the types of every value from the graph inputs' types: dtype, sizes (per dimension where
/// known) and device, through each op's shape rule; loop-carried values are merged to a fixed point,
/// if-outputs over both branches. requires_grad is left as it is. Returns true if any type changed.
///
/// Given:  %x : Float(3, 4), %w : Float(4, 5) ; %y : Tensor = aten::mm(%x, %w)
/// Result: %y : Float(3, 5) = aten::mm(%x, %w)
bool propagateShapes(Graph& g);

}  // namespace gj
