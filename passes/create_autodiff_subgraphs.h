#pragma once
#include "ir/graph.h"

namespace gj {

/// Wraps regions of differentiable nodes that need gradients into prim::DifferentiableGraph nodes,
/// in every block (so a kept loop's body gets one per iteration). A region grows while no value
/// computed outside it from its outputs flows back into it; constants are copied into the subgraph.
/// List and control-flow ops stay outside: gradients flow through them at run time.
/// An op that needs a gradient but has no formula (hasGradientFormula) left outside every region is a
/// gj::Error naming it. Pre: propagateRequiresGrad(g). Returns true if g changed.
bool createAutodiffSubgraphs(Graph& g);

}  // namespace gj
