#pragma once
// Growing regions of nodes into subgraph nodes: shared by create-autodiff-subgraphs and the fusers.
#include "ir/graph.h"

#include <functional>
#include <unordered_set>
#include <vector>

namespace gj {

/// The region growRegions is growing: its nodes in program order, the values they compute, and the
/// distinct tensors they read from outside (the inputs a subgraph of them would take), kept as nodes
/// join, so that asking costs no walk over the region.
struct Region {
  std::vector<Node*> nodes;
  std::unordered_set<const Value*> computed;
  std::unordered_set<const Value*> tensorsFromOutside;
  bool computes(const Value* v) const { return computed.count(v) > 0; }
};

/// Scans `b` in order and grows one region at a time: a node joins the current region when
/// `canJoin(node, region)` says so and it uses no value that was computed outside the region from the
/// region's outputs (which would need the region finished first); otherwise the region is closed.
/// `close(nodes, dependents)` is called with the region's nodes and the nodes between them that depend
/// on them; it may build a subgraph node from them (mergeIntoSubgraph) or leave them. Nested blocks are
/// not entered: call again for them. A node that cannot join but uses the region, and that
/// `beginsRegion` (when given) accepts, closes the region and begins the next one (a step's product,
/// which reads the step before it, heads the group of its own step).
void growRegions(Block* b, const std::function<bool(const Node*, const Region&)>& canJoin,
                 const std::function<void(std::vector<Node*>&, std::vector<Node*>&)>& close,
                 const std::function<bool(const Node*)>& beginsRegion = {});

/// Replaces `region` (nodes of one block, in order) by one node of `kind` whose subgraph holds them,
/// placed after the last of them: values they use become its inputs (constants are copied in instead),
/// values used after them become its outputs, and `dependents` move after it. Returns the new node.
Node* mergeIntoSubgraph(const std::vector<Node*>& region, OpKind kind, const std::vector<Node*>& dependents);

/// Puts a subgraph node's body (one block, no nested blocks) in a canonical order: its nodes in the
/// order a walk from the body's outputs meets them, operands first and in operand order, and its inputs
/// (the node's and the body's alike) in the order that walk reaches them. Two groups that compute the
/// same expression then print alike, whatever order growRegions found their nodes in, and share one
/// compiled kernel. Nodes no output depends on keep their place at the end.
void canonicalizeSubgraph(Node* group);

/// The values `region` computes that are used outside it.
std::vector<Value*> regionOutputs(const std::vector<Node*>& region);

}  // namespace gj
