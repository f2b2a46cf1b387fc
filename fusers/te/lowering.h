#pragma once
// Lowering a prim::TensorExprGroup's subgraph to a LoopNest: one loop nest storing every pointwise output
// (they share the group's shape, and their common subexpressions are one node), one nest per reduction.
#include "fusers/te/loopnest.h"
#include "ir/graph.h"

namespace gj::te {

/// Pre: the subgraph holds pointwise ops, chunks of its inputs and, at its outputs, sum_to_size / sum
/// reductions of its values, all over static float types. Throws gj::Error for anything else.
LoopNest lowerGroup(const Graph& sub);

}  // namespace gj::te
