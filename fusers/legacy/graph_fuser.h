#pragma once
// The legacy fuser's graph pass: pointwise groups become prim::FusionGroup nodes.
#include "ir/graph.h"

namespace gj::legacy {

/// The most tensors one kernel takes (inputs and outputs together).
constexpr size_t kMaxKernelArgs = 128;

/// Groups pointwise ops over tensors of one static shape and float dtype (inputs may broadcast to it,
/// and may be chunks of an outside tensor) into prim::FusionGroup nodes, in every block. A group never
/// takes more than kMaxKernelArgs tensors. Pre: complete types (shape propagation). Returns the number of
/// groups made.
int64_t fusePointwiseGroups(Graph& g);

/// Why the legacy fuser leaves `n` out of every group ("" when n could be fused), for graphir explain.
std::string fusionBlocker(const Node* n);

}  // namespace gj::legacy
