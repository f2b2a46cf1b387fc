#pragma once
#include "ir/graph.h"

namespace gj {

/// Removes nodes whose outputs are unused, also in nested blocks and subgraphs. Every op is free of side
/// effects but those without outputs (prim::RaiseIf; TorchScript's raise and warn), which stay. Pre: verify(g). Post: verify(g). Returns true if g changed.
///
/// Given:  %a = aten::sigmoid(%x) ; %b = aten::tanh(%a) ; return (%a)
/// Result: %a = aten::sigmoid(%x) ; return (%a)
bool eliminateDeadCode(Graph& g);

}  // namespace gj
