#pragma once
#include "ir/graph.h"

namespace gj {

/// Replaces each subgraph node (prim::DifferentiableGraph) by a copy of its subgraph.
/// Returns true if g changed.
bool inlineSubgraphs(Graph& g);

}  // namespace gj
