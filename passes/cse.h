#pragma once
#include "ir/graph.h"

namespace gj {

/// Replaces a node by an earlier identical one (same op, inputs and constant value) that is visible
/// from it, constants included. Nodes with blocks or subgraphs stay. Returns true if g changed.
///
/// Given:  %a = aten::tanh(%x) ; %b = aten::tanh(%x) ; %c = aten::mul(%a, %b)
/// Result: %a = aten::tanh(%x) ; %c = aten::mul(%a, %a)
bool eliminateCommonSubexpressions(Graph& g);

}  // namespace gj
