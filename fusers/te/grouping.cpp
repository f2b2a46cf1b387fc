// The TE fuser's grouping (fuseTensorExprGroups): which nodes join a prim::TensorExprGroup (canJoin), when a
// region is worth a kernel (worthFusing), why a node stays out (fusionBlocker), and the rewrites before
// the scan (chunks moved up, sums pushed through cats).
#include "fusers/te/te_fuser.h"

#include "fusers/group_rules.h"
#include "fusers/te/lowering.h"
#include "passes/subgraph_regions.h"
#include "passes/util.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_set>

namespace gj::te {

using namespace gj::fusion;

namespace {

// A static float tensor, float16 and bfloat16 too: the nest loads them widened to float32, accumulates and
// normalizes in float32 and rounds once as it stores, as PyTorch's kernels do.
bool storageFloat(const Value* v) { return floatTensor(v, SizeRule::Static, /*storage=*/true); }

// sum_to_size(x, constant sizes), sum or mean over constant dims, or mean of everything, over static float x.
bool fusibleReduction(const Node* n) {
  const OpKind k = n->kind();
  if (k == OpKind::SumToSize) return storageFloat(n->input(0)) && constantInts(n->input(1)) && staticSizes(n->output());
  if (k == OpKind::SumDim || k == OpKind::MeanDim)
    return storageFloat(n->input(0)) && constantInts(n->input(1)) && constantBool(n->input(2)) &&
           staticSizes(n->output());
  if (k == OpKind::Mean) return storageFloat(n->input(0)) && staticSizes(n->output());
  return false;
}

bool isReduction(OpKind k) {
  return k == OpKind::SumToSize || k == OpKind::SumDim || k == OpKind::MeanDim || k == OpKind::Mean;
}

// softmax / log_softmax(x, constant dim) over static float x.
bool fusibleSoftmax(const Node* n) {
  return (n->kind() == OpKind::Softmax || n->kind() == OpKind::LogSoftmax) && storageFloat(n->input(0)) &&
         constantInt(n->input(1)) && staticSizes(n->output());
}

// cat(prim::ListConstruct(parts...), constant dim) of static float tensors of one dtype, the list used
// only here. In a group it is output partitioning: each part is stored straight into its slice.
bool fusibleCat(const Node* n) {
  if (n->kind() != OpKind::Cat || !storageFloat(n->output()) || !constantInt(n->input(1))) return false;
  const Node* list = n->input(0)->node();
  if (list->kind() != OpKind::ListConstruct || list->output()->uses().size() != 1 || list->inputs().empty())
    return false;
  for (const Value* part : list->inputs())
    if (!storageFloat(part) || part->type().dtype != n->output()->type().dtype) return false;
  return true;
}

// A product the TE fuser computes inside a group (lowering/products.cpp): on the CPU, one row by
// a weight that stays in this machine's L2 (1 MB of float32), the right operand row-major
// (contiguous-operands' copy of a shared weight, or a graph input, which a launch copies only when it is
// not contiguous). A batch-1 LSTM step is then one kernel, h W^T and the cell together, instead of a
// library call, a [1, 4H] tensor and a kernel launch. That pays while the weight stays in one core's L2
// and the product is one row; from two rows on, or once the weight outgrows L2 (hidden 512: 4 MB, which
// oneDNN's product reads on both threads), the library's product is faster (bench/results/, small batch).
constexpr int64_t kProductMaxRows = 1;
constexpr int64_t kProductMaxWeights = 1 << 18;

bool fusibleProduct(const Node* n) {
  if (n->kind() != OpKind::Mm || !floatTensor(n->output())) return false;
  auto a = staticSizes(n->input(0)), b = staticSizes(n->input(1));
  if (!a || !b || a->size() != 2 || b->size() != 2 || (*a)[0] > kProductMaxRows ||
      (*b)[0] * (*b)[1] > kProductMaxWeights)
    return false;
  for (const Value* v : n->inputs())
    if (v->type().dtype != n->output()->type().dtype) return false;
  const OpKind right = n->input(1)->node()->kind();
  if (right != OpKind::Contiguous && right != OpKind::Param) return false;
  // Read by pointwise ops (through a chunk, or not): a row op's group (a layer-norm LSTM's gates) keeps
  // its loop over rows, which the product would have to run inside.
  for (const Use& u : n->output()->uses()) {
    const Node* user = u.user;
    if (user->kind() == OpKind::Chunk ? !fusibleChunk(user) : !fusiblePointwise(user, /*mixedDtypes=*/true))
      return false;
  }
  return true;
}

// Drops from the region every product whose result is also read outside it: a group hands out only
// pointwise results (worthFusing), and the product stays a library call then.
void trimProducts(std::vector<Node*>& region) {
  std::unordered_set<const Node*> drop;
  for (const Value* v : regionOutputs(region))
    if (v->node()->kind() == OpKind::Mm) drop.insert(v->node());
  std::erase_if(region, [&](const Node* n) { return drop.count(n) > 0; });
}

// Nodes whose result is a group output only: a group computes them from its values but reads nothing
// back from them (a reduction or softmax needs all of its operand first; a cat is stored in slices).
// A row op (lowering.h) is not terminal: the group reads its result.
bool terminal(const Node* n) {
  return (fusibleReduction(n) && !rowOp(n)) || fusibleSoftmax(n) || n->kind() == OpKind::Cat;
}

// A softmax, or a reduction that is not a row op: lowered to a nest of its own (not in a row group).
bool loopsOnItsOwn(const Node* n) { return fusibleSoftmax(n) || (fusibleReduction(n) && !rowOp(n)); }

// The shape of the group's elements: its pointwise results' and its row ops' rows.
std::optional<std::vector<int64_t>> groupShape(const std::vector<Node*>& region) {
  for (const Node* n : region) {
    if (isPointwise(n)) return staticSizes(n->output());
    if (auto r = rowOp(n)) return staticSizes(r->input);
  }
  return std::nullopt;
}

// The region's first row op (they all span as many dims, over rows of one outer shape).
std::optional<RowOp> firstRowOp(const std::vector<Node*>& region) {
  for (const Node* m : region)
    if (auto r = rowOp(m)) return r;
  return std::nullopt;
}

// Whether elements of `shape` fit the region: its shape; or, once it has row ops, the rows' outer dims and as
// many more as a row spans (a layer norm's [B, 4H] rows and its chunks' [B, H] in one loop over B).
bool fitsRegion(const std::vector<Node*>& region, const std::vector<int64_t>& shape) {
  if (auto r = firstRowOp(region)) {
    auto rows = *staticSizes(r->input);
    const auto outer = static_cast<long>(rows.size()) - r->dims;
    return shape.size() == rows.size() && std::equal(rows.begin(), rows.begin() + outer, shape.begin());
  }
  auto g = groupShape(region);
  return !g || *g == shape;
}

// Whether v is computed in the region from a row op's result (which only the loop over the rows can read).
// `seen` holds the region's nodes already found not to: each is walked once.
bool readsRowOp(const Value* v, const std::unordered_set<const Node*>& region,
                std::unordered_set<const Node*>& seen) {
  const Node* n = v->node();
  if (!region.count(n) || seen.count(n)) return false;
  if (rowOp(n)) return true;
  for (const Value* in : n->inputs())
    if (readsRowOp(in, region, seen)) return true;
  seen.insert(n);
  return false;
}

bool hasProduct(const std::vector<Node*>& region) {
  return std::any_of(region.begin(), region.end(), [](const Node* m) { return m->kind() == OpKind::Mm; });
}

// `products`: the group runs on the CPU, where it may take products (fusibleProduct).
bool canJoin(const Node* n, const Region& r, bool products) {
  const std::vector<Node*>& region = r.nodes;
  auto inRegion = [&](const Value* v) { return r.computes(v); };
  // A product reads group inputs only (it heads its group: growRegions' beginsRegion), and not beside
  // row ops, whose loop over rows it would have to run inside.
  if (n->kind() == OpKind::Mm)
    return products && fusibleProduct(n) && !inRegion(n->input(0)) && !inRegion(n->input(1)) && !firstRowOp(region);
  if (!(n->info().flags & kOpFusedByTe)) return false;  // ops.def's flags column says which ops are ours
  if (n->kind() == OpKind::ListUnpack) return inRegion(n->input(0));
  if (n->kind() == OpKind::Chunk) {
    if (!fusibleChunk(n)) return false;
    // A chunk of a value the group computes splits a row (a row group's pieces are read at an offset),
    // or a product (read at an offset like an input).
    if (inRegion(n->input(0)) && n->input(0)->node()->kind() != OpKind::Mm) {
      const int64_t rank = static_cast<int64_t>(staticSizes(n->input(0))->size());
      int64_t d = *constantInt(n->input(2));
      if (d < 0) d += rank;
      auto rows = firstRowOp(region);
      if (!rows || d < rank - rows->dims || terminal(n->input(0)->node())) return false;
    }
    for (const Value* piece : n->output()->uses()[0].user->outputs())
      for (const Use& u : piece->uses())
        if (!fusiblePointwise(u.user, /*mixedDtypes=*/true)) return false;
    return true;
  }
  // A row op joins when its rows have the group's shape, and span as many dims as the other row ops' do.
  if (auto r = rowOp(n)) {
    for (const Value* v : n->inputs())
      if (inRegion(v) && terminal(v->node())) return false;
    if (!fitsRegion(region, *staticSizes(r->input)) || hasProduct(region)) return false;
    for (const Node* m : region) {
      if (auto other = rowOp(m); other && other->dims != r->dims) return false;
      if (loopsOnItsOwn(m)) return false;
    }
    return true;
  }
  // A softmax or a reduction over other dims has nests of its own, which a loop over rows does not take.
  if (loopsOnItsOwn(n))
    for (const Node* m : region)
      if (rowOp(m)) return false;
  // A reduction joins when it reduces a value of the region (its result leaves the group).
  if (fusibleReduction(n)) return inRegion(n->input(0)) && isPointwise(n->input(0)->node());
  // A softmax reads a value of the region, or a group input.
  if (fusibleSoftmax(n)) return !inRegion(n->input(0)) || isPointwise(n->input(0)->node());
  // A cat's list joins when at least one part is computed by the region (pointwise or reduced).
  if (n->kind() == OpKind::ListConstruct) {
    const Node* cat = n->output()->uses().size() == 1 ? n->output()->uses()[0].user : nullptr;
    if (!cat || !fusibleCat(cat)) return false;
    bool any = false;
    for (const Value* part : n->inputs()) {
      if (!inRegion(part)) continue;
      if (!isPointwise(part->node()) && !fusibleReduction(part->node())) return false;
      any = true;
    }
    return any;
  }
  if (n->kind() == OpKind::Cat) return inRegion(n->input(0));
  // float16 and bfloat16 join too (the nest loads and stores them as 16 bits), and integer ops, computed in
  // int64 with the narrow integers truncated (lowering/pointwise.cpp)
  if (!fusiblePointwise(n, /*mixedDtypes=*/true, SizeRule::Static, Admit::Integers)) return false;
  for (const Value* v : n->inputs())  // nothing may consume a terminal node inside the group
    if (inRegion(v) && terminal(v->node())) return false;
  return fitsRegion(region, *staticSizes(n->output()));
}

// A region is worth a kernel from two ops on; a row op, a softmax or a dropout is worth one alone (a
// dropout's kernel draws its numbers with the host's vector instructions, which the runtime's cannot assume).
bool worthFusing(const std::vector<Node*>& region) {
  size_t ops = 0;
  for (const Node* n : region)
    ops += rowOp(n) || fusibleSoftmax(n) || n->kind() == OpKind::PhiloxDropout ? 2
           : isPointwise(n) || fusibleReduction(n)                            ? 1
                                                                               : 0;
  if (ops < 2) return false;
  const std::unordered_set<const Node*> in(region.begin(), region.end());
  std::unordered_set<const Node*> withoutRowOps;
  for (const Value* v : regionOutputs(region)) {
    if (terminal(v->node())) continue;
    if (rowOp(v->node())) {
      // A weight or bias gradient of a layer norm's backward is summed over the rows in a nest of its own,
      // which cannot read the rows' statistics.
      const Node* n = v->node();
      if (n->kind() == OpKind::NativeLayerNormBackward && v->offset() > 0)
        for (size_t i : {0, 1, 3, 4})
          if (readsRowOp(n->input(i), in, withoutRowOps)) return false;
      continue;
    }
    if (!isPointwise(v->node()) || !fitsRegion(region, *staticSizes(v))) return false;
  }
  return true;
}

int64_t fuseInBlock(gj::Block* b, bool products, GroupBodies& bodies) {
  int64_t groups = 0;
  for (Node* n : b->nodesList())
    for (gj::Block* inner : n->blocks()) groups += fuseInBlock(inner, products, bodies);
  sinkChunks(b);
  // The nodes after a region of another shape (a layer norm's [B, 4H] gates, then their [B, H] chunks)
  // are taken by growRegions' later rounds (Note [Rounds of region growth]).
  auto joins = [products](const Node* n, const Region& r) { return canJoin(n, r, products); };
  growRegions(
      b, joins,
      [&](std::vector<Node*>& region, std::vector<Node*>& dependents) {
        trimChunks(region);
        trimProducts(region);
        if (!worthFusing(region)) return false;
        bodies.merge(region, OpKind::TensorExprGroup, dependents);
        ++groups;
        return true;
      },
      [&](const Node* n) { return n->kind() == OpKind::Mm && joins(n, Region{}); });
  return groups;
}

// sum_to_size(cat([a, b, ...], d), sizes) that keeps dimension d whole becomes
// cat([sum_to_size(a, sizes_a), sum_to_size(b, sizes_b), ...], d'), so each sum can join the group that
// computes its operand. This is how a backward's bias gradients (summed over the batch from the
// concatenated gate gradients) stay in the group of the gate gradients.
bool pushSumsThroughCat(gj::Block* b) {
  bool changed = false;
  for (Node* n : b->nodesList()) {
    for (gj::Block* inner : n->blocks()) changed |= pushSumsThroughCat(inner);
    if (n->kind() != OpKind::SumToSize) continue;
    Node* cat = n->input(0)->node();
    auto sizes = constantInts(n->input(1));
    auto catSizes = staticSizes(n->input(0));
    if (cat->kind() != OpKind::Cat || !sizes || !catSizes || cat->input(0)->node()->kind() != OpKind::ListConstruct)
      continue;
    auto d = constantInt(cat->input(1));
    const int64_t rank = static_cast<int64_t>(catSizes->size());
    const int64_t lead = rank - static_cast<int64_t>(sizes->size());
    if (!d) continue;
    int64_t dd = *d < 0 ? *d + rank : *d;
    if (dd < lead || (*sizes)[dd - lead] != (*catSizes)[dd]) continue;  // d itself is summed
    Graph* g = b->graph();
    std::vector<Value*> parts;
    bool ok = true;
    for (Value* a : cat->input(0)->node()->inputs()) {
      auto as = staticSizes(a);
      if (!as || static_cast<int64_t>(as->size()) != rank) ok = false;
      if (!ok) break;
      std::vector<int64_t> s = *sizes;
      s[dd - lead] = (*as)[dd];
      Node* c = g->createConstant(s);
      c->insertBefore(n);
      Node* sum = g->create(OpKind::SumToSize, {a, c->output()});
      sum->output()->setType(Type::tensor(*n->output()->type().dtype, s, n->output()->type().device));
      sum->insertBefore(n);
      parts.push_back(sum->output());
    }
    if (!ok) continue;
    Node* list = g->create(OpKind::ListConstruct, parts);
    list->output()->setType(Type::of(TypeKind::TensorList));
    list->insertBefore(n);
    Node* dim = g->createConstant(dd - lead);
    dim->insertBefore(n);
    Node* joined = g->create(OpKind::Cat, {list->output(), dim->output()});
    joined->output()->setType(n->output()->type());
    joined->insertBefore(n);
    g->replaceAllUsesWith(n->output(), joined->output());
    g->erase(n);
    changed = true;
  }
  return changed;
}

}  // namespace

// canJoin's and worthFusing's rules, said.
std::string fusionBlocker(const Node* n, bool products) {
  const OpKind k = n->kind();
  if (k == OpKind::Mm && !products) return "a product joins TE groups on the CPU only (on CUDA it is cuBLAS's)";
  if (k == OpKind::Mm && !fusibleProduct(n))
    return fmt::format("a product joins a TE group from {} row by a weight of at most {} elements, of one float "
                       "dtype, the weight row-major (a graph input or contiguous-operands' copy)",
                       kProductMaxRows, kProductMaxWeights);
  if (k == OpKind::Mm) return "a product joins the group that reads it, when that group has no row op and two ops";
  if (!(n->info().flags & kOpFusedByTe))
    return fmt::format("not fused by the TE fuser (a {} op; it fuses pointwise ops, sums and means, softmax, cat and "
                       "chunks)", opGroupName(n->info().group));
  if (k == OpKind::ListUnpack) return "unpacks a list no group holds";
  if (k == OpKind::Chunk)
    return fusibleChunk(n) ? "a chunk joins only when every piece feeds a fusible pointwise op"
                           : "a chunk needs constant arguments, an evenly divisible static input and one unpack";
  if (k == OpKind::LayerNorm || k == OpKind::NativeLayerNorm || k == OpKind::NativeLayerNormBackward ||
      k == OpKind::Var || k == OpKind::Std || k == OpKind::VarBackward)
    return rowOp(n) ? "fusible, but nothing of its rows' shape is next to it (a group needs two ops)"
                    : "a row op needs static float tensors, constant arguments, and dims that are the input's "
                      "trailing ones (kept, for var and std)";
  if (isReduction(k))
    return fusibleReduction(n) ? "a reduction joins a TE group only when it reduces a pointwise value the group "
                                 "computes"
                               : "a reduction needs a static float input, constant dims and static output sizes";
  if (k == OpKind::Softmax || k == OpKind::LogSoftmax)
    return fusibleSoftmax(n) ? "fusible, but a softmax alone is one op (a group needs two, or a softmax over a value "
                               "the group computes)"
                             : "a softmax needs a static float input and a constant dim";
  if (k == OpKind::ListConstruct || k == OpKind::Cat)
    return "a cat joins when it has a constant dim, parts of one float dtype, its own list, and a part the group "
           "computes";
  std::string why = pointwiseBlocker(n, /*mixedDtypes=*/true, SizeRule::Static, Admit::Integers);
  return why.empty() ? "fusible, but no other fusible op of its shape is next to it (a group needs two)" : why;
}

int64_t fuseTensorExprGroups(Graph& g, DeviceKind device) {
  moveChunksUp(g);
  pushSumsThroughCat(g.block());
  GroupBodies bodies;  // Note [Shared group bodies]
  return fuseInBlock(g.block(), device == DeviceKind::Cpu, bodies);
}

}  // namespace gj::te
