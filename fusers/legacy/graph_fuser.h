#pragma once
// The legacy fuser's graph pass: pointwise groups become prim::FusionGroup nodes.
#include "ir/graph.h"

namespace gj::legacy {

/// The most tensors one kernel takes (inputs and outputs together).
constexpr size_t kMaxKernelArgs = 128;

/// Moves aten::chunk above the pointwise ops that produce its input, so that chunks apply to tensors
/// computed outside any group (and a group partitions them as it loads them):
/// Given:  %g = aten::add(%a, %b, %one) ; %l = aten::chunk(%g, %4, %1) ; %x, %y = prim::ListUnpack(%l)
/// Result: %x = aten::add(%a0, %b0, %one) ; %y = aten::add(%a1, %b1, %one)   (%a0, %a1 chunks of %a ...)
/// An input that broadcasts along the chunked dimension is used whole. Returns true if g changed.
bool moveChunksUp(Graph& g);

/// Groups pointwise ops over tensors of one static shape and float dtype (inputs may broadcast to it,
/// and may be chunks of an outside tensor) into prim::FusionGroup nodes, in every block. A group never
/// takes more than kMaxKernelArgs tensors. Pre: complete types (shape propagation). Returns the number of
/// groups made.
int64_t fusePointwiseGroups(Graph& g);

/// Why the legacy fuser leaves `n` out of every group ("" when n could be fused), for graphir explain.
std::string fusionBlocker(const Node* n);

}  // namespace gj::legacy
