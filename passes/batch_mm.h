#pragma once
#include "ir/graph.h"

namespace gj {

/// Turns many matrix multiplies into fewer, larger ones (the idea of PyTorch's BatchMM):
///   side: independent mm(x_i, W) sharing W  -> mm(cat(x_i, 0), W), split by rows
///         (and sharing the left operand: mm(X, w_i) -> mm(X, cat(w_i, 1)), split by columns);
///   tree: add(mm(a, b), mm(c, d))           -> mm(cat([a, c], 1), cat([b, d], 0)).
/// Needs static sizes on the operands (run shape propagation first). Returns true if g changed.
bool batchMatmuls(Graph& g);

}  // namespace gj
