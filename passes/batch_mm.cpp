#include "passes/batch_mm.h"

#include "passes/util.h"

#include <algorithm>
#include <unordered_map>

namespace gj {

namespace {

// Dependencies inside one block: ancestors[i] holds the positions of the nodes that node i depends on.
class Reachability {
 public:
  explicit Reachability(Block* b) {
    for (Node* n : *b) {
      pos_[n] = nodes_.size();
      nodes_.push_back(n);
    }
    words_ = (nodes_.size() + 63) / 64;
    bits_.assign(nodes_.size() * words_, 0);
    for (size_t i = 0; i < nodes_.size(); ++i)
      for (Value* v : allUses(nodes_[i])) {
        Node* def = ancestorIn(v->node(), b);
        if (!def || !pos_.count(def)) continue;
        size_t j = pos_.at(def);
        bits_[i * words_ + j / 64] |= uint64_t{1} << (j % 64);
        for (size_t w = 0; w < words_; ++w) bits_[i * words_ + w] |= bits_[j * words_ + w];
      }
  }
  bool dependsOn(Node* a, Node* b) const {
    size_t i = pos_.at(a), j = pos_.at(b);
    return bits_[i * words_ + j / 64] >> (j % 64) & 1;
  }
  size_t position(Node* n) const { return pos_.at(n); }

 private:
  std::vector<Node*> nodes_;
  std::unordered_map<Node*, size_t> pos_;
  size_t words_ = 0;
  std::vector<uint64_t> bits_;
};

Value* emit(Node* before, OpKind k, std::vector<Value*> ins, Type t = Type::tensor()) {
  Node* n = before->graph()->create(k, ins);
  n->output()->setType(std::move(t));
  n->insertBefore(before);
  return n->output();
}

Value* constant(Node* before, ConstantValue v) {
  Node* c = before->graph()->createConstant(std::move(v));
  c->insertBefore(before);
  return c->output();
}

// Moves the nodes `v` depends on that sit at or after `point` (in b) in front of `point`.
void hoistCone(Value* v, Node* point, Block* b, const Reachability& r) {
  Node* def = ancestorIn(v->node(), b);
  if (!def || def->kind() == OpKind::Param || (!point->isBefore(def) && def != point)) return;
  for (Value* in : allUses(def)) hoistCone(in, point, b, r);
  def->moveBefore(point);
}

// Merges mm nodes that share operand `shared` (side 1: the right operand) and are independent.
bool batchSide(Block* b, std::vector<Node*> group, int sharedSide, const Reachability& r) {
  std::vector<Node*> chosen;
  for (Node* n : group) {
    bool independent = true;
    // Both ways: an earlier merge in this block may have moved nodes, so `group` (in the order the block
    // had when it was scanned) need not be in program order any more.
    for (Node* c : chosen) independent = independent && !r.dependsOn(n, c) && !r.dependsOn(c, n);
    if (independent && staticSizes(n->input(1 - sharedSide))) chosen.push_back(n);
  }
  if (chosen.size() < 2) return false;
  // Insert before the first use of any chosen output (or the last chosen node when they are unused).
  Node* point = *std::max_element(chosen.begin(), chosen.end(),
                                  [&](Node* a, Node* c) { return r.position(a) < r.position(c); });
  for (Node* n : chosen)
    for (const Use& u : n->output()->uses()) {
      Node* user = ancestorIn(u.user, b);
      if (user && user->kind() != OpKind::Return && r.position(user) < r.position(point)) point = user;
    }
  for (Node* n : chosen) hoistCone(n->input(1 - sharedSide), point, b, r);
  Graph* g = b->graph();
  const int catDim = sharedSide == 1 ? 0 : 1;
  std::vector<Value*> parts;
  std::vector<int64_t> splits;
  for (Node* n : chosen) {
    parts.push_back(n->input(1 - sharedSide));
    splits.push_back((*staticSizes(n->input(1 - sharedSide)))[catDim]);
  }
  Value* list = emit(point, OpKind::ListConstruct, parts, Type::of(TypeKind::TensorList));
  Value* merged = emit(point, OpKind::Cat, {list, constant(point, int64_t{catDim})});
  Value* prod = sharedSide == 1 ? emit(point, OpKind::Mm, {merged, chosen[0]->input(1)})
                                : emit(point, OpKind::Mm, {chosen[0]->input(0), merged});
  Value* pieces = emit(point, OpKind::SplitWithSizes, {prod, constant(point, splits), constant(point, int64_t{catDim})},
                       Type::of(TypeKind::TensorList));
  Node* unpack = g->create(OpKind::ListUnpack, {pieces}, chosen.size());
  unpack->insertBefore(point);
  for (size_t i = 0; i < chosen.size(); ++i) {
    unpack->output(i)->setType(chosen[i]->output()->type());
    g->replaceAllUsesWith(chosen[i]->output(), unpack->output(i));
    g->erase(chosen[i]);
  }
  return true;
}

// The mm leaves of the sum rooted at `n`: aten::add nodes with alpha 1 (below the root, each used once)
// down to aten::mm nodes used once whose results all have the same static `sizes` (set by the first).
// False when a leaf is anything else.
bool collectMmSum(Node* n, std::optional<std::vector<int64_t>>& sizes, bool root, std::vector<Node*>& adds,
                  std::vector<Node*>& mms) {
  if (!root && n->output()->uses().size() != 1) return false;
  if (n->kind() == OpKind::Add && isConstantEqual(n->input(2), 1.0)) {
    adds.push_back(n);
    return collectMmSum(n->input(0)->node(), sizes, false, adds, mms) &&
           collectMmSum(n->input(1)->node(), sizes, false, adds, mms);
  }
  if (n->kind() != OpKind::Mm) return false;
  auto s = staticSizes(n->output());
  if (!s || (sizes && *s != *sizes)) return false;
  sizes = s;
  mms.push_back(n);
  return true;
}

bool isSumOperand(const Node* n) {
  const auto& uses = n->output()->uses();
  return uses.size() == 1 && uses[0].user->kind() == OpKind::Add && isConstantEqual(uses[0].user->input(2), 1.0);
}

// A stack along a new first dimension, in `b`, of exactly the (distinct, 2-D) values `xs` in some order,
// or null. A backward stacks the per-step gate gradients for the input's gradient; its weight gradients
// multiply the same tensors.
Node* stackOfPermutation(const std::vector<Value*>& xs, Block* b) {
  std::unordered_map<Value*, int> want;
  for (Value* x : xs) {
    auto s = staticSizes(x);
    if (!s || s->size() != 2 || ++want[x] > 1) return nullptr;
  }
  for (const Use& u : xs[0]->uses()) {
    Node* list = u.user;
    if (list->kind() != OpKind::ListConstruct || list->owningBlock() != b || list->inputs().size() != xs.size())
      continue;
    if (!std::all_of(list->inputs().begin(), list->inputs().end(), [&](Value* v) { return want.count(v) != 0; }))
      continue;
    for (const Use& lu : list->output()->uses())
      if (lu.user->kind() == OpKind::Stack && lu.user->owningBlock() == b && constantInt(lu.user->input(1)) == 0)
        return lu.user;
  }
  return nullptr;
}

// The right operand of the batched product when those operands are stacked already: the terms are put in
// the stack's order and the stack, viewed as [steps * rows, columns], is the operand, instead of a second
// copy of the same tensors. A stack after `root` is recreated at `root` (its inputs are the products'
// operands, defined before it), taking over its uses.
Value* stackedOperand(Node* root, std::vector<Value*>& lefts, std::vector<Value*>& rights) {
  Node* stack = stackOfPermutation(rights, root->owningBlock());
  if (!stack) return nullptr;
  Node* list = stack->input(0)->node();
  std::unordered_map<Value*, Value*> leftOf;
  for (size_t i = 0; i < rights.size(); ++i) leftOf[rights[i]] = lefts[i];
  for (size_t i = 0; i < rights.size(); ++i) {
    rights[i] = list->input(i);
    lefts[i] = leftOf.at(rights[i]);
  }
  Value* stacked = stack->output();
  if (root->isBefore(stack)) {
    Value* fresh = emit(root, OpKind::Stack, {emit(root, OpKind::ListConstruct, rights, list->output()->type()),
                                              constant(root, int64_t{0})},
                        stacked->type());
    root->graph()->replaceAllUsesWith(stacked, fresh);  // the old stack is left to dce: the caller's walk
    stacked = fresh;                                      // over the block still holds it
  }
  const auto cols = (*staticSizes(rights[0]))[1];
  return emit(root, OpKind::Reshape, {stacked, constant(root, std::vector<int64_t>{-1, cols})});
}

// A sum of products, mm(a1, b1) + mm(a2, b2) + ... (any tree of adds with alpha 1, equal static result
// sizes), becomes one product mm(cat([a1, a2, ...], 1), cat([b1, b2, ...], 0)); when every a_i is t(x_i),
// the left operand is t(cat([x1, x2, ...], 0)), a contiguous copy. This is how a backward's weight
// gradient, accumulated over time steps from one small GEMM per step, becomes one large GEMM.
bool batchTree(Node* root) {
  if (root->kind() != OpKind::Add || isSumOperand(root)) return false;
  std::optional<std::vector<int64_t>> sizes;
  std::vector<Node*> adds, mms;
  if (!collectMmSum(root, sizes, true, adds, mms) || mms.size() < 2) return false;
  Type list = Type::of(TypeKind::TensorList);
  bool transposed = std::all_of(mms.begin(), mms.end(), [](Node* m) {
    const Node* a = m->input(0)->node();
    return a->kind() == OpKind::T && staticSizes(a->input(0)) && staticSizes(a->input(0))->size() == 2;
  });
  std::vector<Value*> lefts, rights;
  for (Node* m : mms) {
    lefts.push_back(transposed ? m->input(0)->node()->input(0) : m->input(0));
    rights.push_back(m->input(1));
  }
  Value* rhs = stackedOperand(root, lefts, rights);
  Value* lhs = emit(root, OpKind::Cat, {emit(root, OpKind::ListConstruct, lefts, list),
                                        constant(root, int64_t{transposed ? 0 : 1})});
  if (transposed) lhs = emit(root, OpKind::T, {lhs});
  if (!rhs)
    rhs = emit(root, OpKind::Cat, {emit(root, OpKind::ListConstruct, rights, list), constant(root, int64_t{0})});
  Value* mm = emit(root, OpKind::Mm, {lhs, rhs}, root->output()->type());
  Graph* g = root->graph();
  if (!root->output()->name().empty()) {
    std::string name = root->output()->name();
    root->output()->setName("");
    mm->setName(name);
  }
  g->replaceAllUsesWith(root->output(), mm);
  for (Node* a : adds) g->erase(a);  // pre-order: each add's one use (its parent) is gone before it
  for (Node* m : mms) g->erase(m);
  return true;
}

bool batchBlock(Block* b) {
  bool changed = false;
  for (Node* n : b->nodesList())
    for (Block* inner : n->blocks()) changed |= batchBlock(inner);
  // Side: group mm by shared right operand, then by shared left operand.
  for (int side : {1, 0}) {
    Reachability r(b);
    std::unordered_map<Value*, std::vector<Node*>> groups;
    std::vector<Value*> order;
    for (Node* n : *b)
      if (n->kind() == OpKind::Mm) {
        auto& grp = groups[n->input(side)];
        if (grp.empty()) order.push_back(n->input(side));
        grp.push_back(n);
      }
    for (Value* shared : order)
      if (groups[shared].size() >= 2 && batchSide(b, groups[shared], side, r)) {
        changed = true;
        r = Reachability(b);
      }
  }
  for (Node* n : b->nodesList()) changed |= batchTree(n);
  return changed;
}

}  // namespace

bool batchMatmuls(Graph& g) {
  bool changed = batchBlock(g.block());
  forEachNode(g.block(), [&](Node* n) {
    if (optimizesInto(n)) changed |= batchMatmuls(*n->subgraph());
  });
  return changed;
}

}  // namespace gj
