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

// add(mm(a, b), mm(c, d)) with alpha 1 and equal static result sizes -> mm(cat([a, c], 1), cat([b, d], 0)).
bool batchTree(Node* add) {
  if (add->kind() != OpKind::Add || !isConstantEqual(add->input(2), 1.0)) return false;
  Node* l = add->input(0)->node();
  Node* r = add->input(1)->node();
  if (l->kind() != OpKind::Mm || r->kind() != OpKind::Mm) return false;
  if (l->output()->uses().size() != 1 || r->output()->uses().size() != 1) return false;
  auto sl = staticSizes(l->output()), sr = staticSizes(r->output());
  if (!sl || !sr || *sl != *sr) return false;
  Value* lhs = emit(add, OpKind::Cat,
                    {emit(add, OpKind::ListConstruct, {l->input(0), r->input(0)}, Type::of(TypeKind::TensorList)),
                     constant(add, int64_t{1})});
  Value* rhs = emit(add, OpKind::Cat,
                    {emit(add, OpKind::ListConstruct, {l->input(1), r->input(1)}, Type::of(TypeKind::TensorList)),
                     constant(add, int64_t{0})});
  Value* mm = emit(add, OpKind::Mm, {lhs, rhs}, add->output()->type());
  Graph* g = add->graph();
  if (!add->output()->name().empty()) {
    std::string name = add->output()->name();
    add->output()->setName("");
    mm->setName(name);
  }
  g->replaceAllUsesWith(add->output(), mm);
  g->erase(add);
  g->erase(l);
  g->erase(r);
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
