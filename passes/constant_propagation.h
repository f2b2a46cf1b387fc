#pragma once
#include "ir/graph.h"

namespace gj {

/// Folds what is known before running: aten::size / aten::len of statically sized values, int
/// arithmetic and comparisons on constants, int lists of constants, list indexing by constants, prim::If on
/// a constant condition (the taken branch is inlined), a prim::RaiseIf that never raises and loops that run
/// zero times. Returns true if g changed.
///
/// Given:  %x : Float(7, 3) ; %n : int = aten::size(%x, %zero)
/// Result: %n : int = prim::Constant[value=7]()
bool propagateConstants(Graph& g);

/// The int `v` holds before running, as far as the pass above knows it: a constant, or what folding v's
/// node gives (aten::size of a known dimension, aten::len of a list construct or of unbind, int
/// arithmetic on constants), without changing the graph. nullopt otherwise.
std::optional<int64_t> knownInt(const Value* v);

}  // namespace gj
