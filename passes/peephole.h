#pragma once
#include "ir/graph.h"

namespace gj {

/// Local simplifications, each a small rewrite:
///   x * 1, x / 1, x + 0, x - 0 (scalar constants)  -> x
///   t(t(x)), transpose(transpose(x, a, b), a, b)   -> x
///   expand / view / reshape to x's own static sizes -> x
///   __getitem__(ListConstruct(xs), k), ListUnpack(ListConstruct(xs)) -> the elements
///   __getitem__(unbind(x, d), i)                   -> select(x, d, i)
///   ListAppend(ListConstruct(xs), y)  (list used once) -> ListConstruct(xs, y)
///   len(ListConstruct(xs))                         -> a constant
/// Returns true if g changed.
bool peephole(Graph& g);

}  // namespace gj
