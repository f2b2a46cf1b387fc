#pragma once
// Growing regions of nodes into subgraph nodes: shared by create-autodiff-subgraphs and the fusers.
#include "ir/graph.h"

#include <functional>
#include <memory>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace gj {

/// The region growRegions is growing: its nodes in program order, the values they compute, and the
/// distinct tensors they read from outside (the inputs a subgraph of them would take), kept as nodes
/// join, so that asking costs no walk over the region.
class Region {
 public:
  std::vector<Node*> nodes;
  bool computes(const Value* v) const { return stamped(computed_, v); }
  /// How many distinct tensors the nodes read from outside.
  size_t tensorsFromOutside() const { return outside_; }
  /// Appends n (after the nodes already in).
  void add(Node* n);
  /// Empties the region (in O(1): the marks of the next region are another stamp).
  void clear();

 private:
  // Per value id, the stamp of the region that computes (reads from outside) it: no set to clear or hash.
  bool stamped(const std::vector<uint32_t>& marks, const Value* v) const {
    return v->id() < marks.size() && marks[v->id()] == stamp_;
  }
  void stamp(std::vector<uint32_t>& marks, const Value* v);
  std::vector<uint32_t> computed_, read_;
  uint32_t stamp_ = 1;
  size_t outside_ = 0;
};

/// Scans `b` in order and grows one region at a time: a node joins the current region when
/// `canJoin(node, region)` says so and it uses no value that was computed outside the region from the
/// region's outputs (which would need the region finished first); otherwise the region is closed.
/// `close(nodes, dependents)` is called with the region's nodes and the nodes between them that depend
/// on them; it may build a subgraph node from them (mergeIntoSubgraph) and return true, or leave them and
/// return false. Nested blocks are not entered: call again for them. A node that cannot join but uses the
/// region, and that `beginsRegion` (when given) accepts, closes the region and begins the next one (a
/// step's product, which reads the step before it, heads the group of its own step). A node that could
/// begin a region but was passed by (another shape than the open region's) is taken by another round
/// over the block (Note [Rounds of region growth]).
void growRegions(Block* b, const std::function<bool(const Node*, const Region&)>& canJoin,
                 const std::function<bool(std::vector<Node*>&, std::vector<Node*>&)>& close,
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

/// Note [Shared group bodies]: a fuser's groups by structure. An unrolled loop makes thousands of alike
/// groups (one per step and layer); copying each region into a body of its own made the fuse pass the
/// pipeline's largest cost and most of its memory. merge() first tries the bodies it keeps (the latest few
/// of the region's signature: its size, kinds, constants and output types, in any order): a region whose
/// outputs, walked back through its nodes, pair node for node with a kept body's (same kinds, constants,
/// types and operand positions; the body's inputs pairing with the values the region reads, its constants
/// with constants of the same value) computes what that body computes, and becomes a node on it with no
/// copy made. Otherwise the region is merged and canonicalized as before and its body is kept. A pairing
/// found is sound whatever order the region's nodes are in; one missed only costs a copy. The bodies are
/// shared read-only: no pass edits a fusion group's body after fusion (the passes enter only
/// prim::DifferentiableGraph's, whose bodies are never shared); one that did would copy it first.
class GroupBodies {
 public:
  /// mergeIntoSubgraph then canonicalizeSubgraph, with a kept body when one computes the region.
  Node* merge(const std::vector<Node*>& region, OpKind kind, const std::vector<Node*>& dependents);
  /// How many merges took a kept body.
  size_t shared() const { return shared_; }

 private:
  std::unordered_map<size_t, std::vector<std::shared_ptr<Graph>>> bodies_;  // by regionSignature
  size_t shared_ = 0;
};

/// The values `region` computes that are used outside it.
std::vector<Value*> regionOutputs(const std::vector<Node*>& region);

}  // namespace gj
