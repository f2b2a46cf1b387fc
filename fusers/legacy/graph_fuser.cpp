#include "fusers/legacy/graph_fuser.h"

#include "fusers/group_rules.h"

#include "passes/shape_propagation.h"
#include "passes/subgraph_regions.h"
#include "passes/util.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace gj::legacy {

using namespace gj::fusion;

namespace {

// ---- grouping ----

// The legacy fuser's kernels read their rows' count at run time (KernelSpec), so a group's leading size may be
// unknown.
constexpr SizeRule kSizes = SizeRule::DynamicRows;
// float16 and bfloat16 join groups (the kernels convert them at their loads and stores), and integer ops
// make groups of their own, computed in int64 (kernel_spec.h).
constexpr Admit kAdmit = Admit::Integers;

std::optional<std::vector<int64_t>> groupShape(const std::vector<Node*>& region) {
  for (const Node* n : region)
    if (isPointwise(n)) return groupSizes(n->output(), kSizes);
  return std::nullopt;
}

size_t externalTensors(const std::vector<Node*>& region) {
  std::unordered_set<const Value*> produced, inputs;
  for (const Node* n : region) {
    for (const Value* v : n->inputs())
      if (!produced.count(v) && v->type().isTensor()) inputs.insert(v);
    for (const Value* v : n->outputs()) produced.insert(v);
  }
  return inputs.size();
}

bool canJoin(const Node* n, const Region& r) {
  if (!(n->info().flags & kOpFusedByLegacy)) return false;  // ops.def's flags column says which ops are ours
  const std::vector<Node*>& region = r.nodes;
  if (n->kind() == OpKind::ListUnpack) return r.computes(n->input(0));
  if (n->kind() == OpKind::Chunk) {
    if (!fusibleChunk(n, kSizes, kAdmit) || r.computes(n->input(0))) return false;
    // Its pieces must feed pointwise ops (which then join too).
    for (const Value* piece : n->output()->uses()[0].user->outputs())
      for (const Use& u : piece->uses())
        if (!fusiblePointwise(u.user, false, kSizes, kAdmit)) return false;
    return true;
  }
  if (!fusiblePointwise(n, false, kSizes, kAdmit)) return false;
  auto shape = groupShape(region);
  if (shape && *shape != *groupSizes(n->output(), kSizes)) return false;
  if (!region.empty() && region.front()->kind() != OpKind::Chunk && isPointwise(region.front()) &&
      computeDtype(region.front(), kAdmit) != computeDtype(n, kAdmit))
    return false;
  return r.tensorsFromOutside() + n->inputs().size() + 8 <= kMaxKernelArgs;
}

// A region becomes a group when it holds two or more pointwise ops and every value it hands out is a
// pointwise result of the group's shape (chunk pieces are only ever read inside).
bool worthFusing(const std::vector<Node*>& region) {
  size_t pointwise = std::count_if(region.begin(), region.end(), [](const Node* n) { return isPointwise(n); });
  if (pointwise < 2) return false;
  auto shape = groupShape(region);
  std::vector<Value*> outs = regionOutputs(region);
  for (const Value* v : outs)
    if (!isPointwise(v->node()) || groupSizes(v, kSizes) != shape) return false;
  return externalTensors(region) + outs.size() <= kMaxKernelArgs;
}

int64_t fuseInBlock(Block* b, GroupBodies& bodies) {
  int64_t groups = 0;
  for (Node* n : b->nodesList())
    for (Block* inner : n->blocks()) groups += fuseInBlock(inner, bodies);
  sinkChunks(b, kSizes);
  growRegions(b, canJoin, [&](std::vector<Node*>& region, std::vector<Node*>& dependents) {
    trimChunks(region);
    if (!worthFusing(region)) return false;
    bodies.merge(region, OpKind::FusionGroup, dependents);
    ++groups;
    return true;
  });
  return groups;
}

}  // namespace

std::string fusionBlocker(const Node* n) {
  if (!(n->info().flags & kOpFusedByLegacy))
    return fmt::format("not pointwise (a {} op; the legacy fuser fuses pointwise ops and chunks of their inputs)",
                       opGroupName(n->info().group));
  if (n->kind() == OpKind::Chunk) return fusibleChunk(n, kSizes, kAdmit) ? "" : "a chunk needs constant arguments, an evenly divisible static input and one unpack";
  if (n->kind() == OpKind::ListUnpack) return "";
  return pointwiseBlocker(n, false, kSizes, kAdmit);
}

int64_t fusePointwiseGroups(Graph& g) {
  moveChunksUp(g, kSizes);
  GroupBodies bodies;  // Note [Shared group bodies]
  return fuseInBlock(g.block(), bodies);
}

}  // namespace gj::legacy
