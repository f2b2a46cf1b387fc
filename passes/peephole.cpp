#include "passes/peephole.h"

#include "passes/util.h"

namespace gj {

namespace {

// Each rewrite returns the value that replaces n's single output, or nullptr when it does not apply.
// Rewrites that replace several outputs (ListUnpack) do it themselves and return n's first output.

// x * 1, x / 1, x + 0 and x - 0 are x only where the op keeps x's dtype: a float tensor, or a long one
// with an int constant (a bool tensor becomes long, a long one divided or met with a float becomes float).
// Like PyTorch's peephole, x + 0 is x even where x holds -0.0.
bool keepsDType(const Node* n) {
  const std::optional<DType> dt = n->input(0)->type().dtype;
  if (!dt) return false;
  if (isFloating(*dt)) return true;
  return *dt == DType::Int64 && n->kind() != OpKind::Div && n->input(1)->type().kind == TypeKind::Int;
}

Value* identityArithmetic(Node* n) {
  const OpKind kind = n->kind();
  double identity;
  if (kind == OpKind::Mul || kind == OpKind::Div) {
    identity = 1.0;
  } else if (kind == OpKind::Add || kind == OpKind::Sub) {
    identity = 0.0;
  } else {
    return nullptr;
  }
  if (n->input(1)->type().isTensor() || !isConstantEqual(n->input(1), identity) || !keepsDType(n)) return nullptr;
  return n->input(0);
}

// clamp with a None bound: clamp_min or clamp_max (a fuser's rule needs both bounds as numbers), or
// its input with neither.
Value* openClamp(Node* n) {
  if (n->kind() != OpKind::Clamp) return nullptr;
  const bool noMin = n->input(1)->type().kind == TypeKind::None, noMax = n->input(2)->type().kind == TypeKind::None;
  if (!noMin && !noMax) return nullptr;
  if (noMin && noMax) return n->input(0);
  Value* m = emitBefore(n, noMin ? OpKind::ClampMax : OpKind::ClampMin, {n->input(0), n->input(noMin ? 2 : 1)},
                        n->output()->type());
  m->node()->setPositionsOf(n);
  return m;
}

Value* doubleTranspose(Node* n) {
  if (n->kind() != OpKind::T && n->kind() != OpKind::Transpose) return nullptr;
  Node* p = n->input(0)->node();
  if (n->kind() == OpKind::T && p->kind() == OpKind::T) return p->input(0);
  if (n->kind() == OpKind::Transpose && p->kind() == OpKind::Transpose) {
    auto a = constantInt(n->input(1)), b = constantInt(n->input(2));
    auto c = constantInt(p->input(1)), d = constantInt(p->input(2));
    if (a && b && c && d && ((*a == *c && *b == *d) || (*a == *d && *b == *c))) return p->input(0);
  }
  return nullptr;
}

Value* sameShapeView(Node* n) {
  if (n->kind() != OpKind::Expand && n->kind() != OpKind::View && n->kind() != OpKind::Reshape) return nullptr;
  auto from = staticSizes(n->input(0));
  auto to = constantInts(n->input(1));
  if (from && to && *from == *to) return n->input(0);
  return nullptr;
}

Value* listAccess(Node* n) {
  Graph* g = n->graph();
  if (n->kind() == OpKind::GetItem) {
    Node* src = n->input(0)->node();
    auto k = constantInt(n->input(1));
    if (src->kind() == OpKind::ListConstruct && k) {
      int64_t sz = static_cast<int64_t>(src->inputs().size());
      if (*k >= -sz && *k < sz) return src->input(*k < 0 ? *k + sz : *k);
    }
    if (src->kind() == OpKind::Unbind && n->output()->type().isTensor()) {
      return emitBefore(n, OpKind::Select, {src->input(0), src->input(1), n->input(1)}, n->output()->type());
    }
    return nullptr;
  }
  if (n->kind() == OpKind::ListUnpack) {
    Node* src = n->input(0)->node();
    if (src->kind() != OpKind::ListConstruct || src->inputs().size() != n->outputs().size()) return nullptr;
    for (size_t i = 0; i < n->outputs().size(); ++i) g->replaceAllUsesWith(n->output(i), src->input(i));
    return n->output(0);
  }
  if (n->kind() == OpKind::ListAppend) {
    // A chain of appends, each list read only by the next, folds at its last append into one list of
    // every element: folding append by append would copy the list each time (quadratic in a loop's steps).
    auto appendsTo = [](const Node* m) {
      const auto& uses = m->output()->uses();
      return uses.size() == 1 && uses[0].user->kind() == OpKind::ListAppend && uses[0].index == 0;
    };
    if (appendsTo(n) || !n->output()->hasUses()) return nullptr;  // the chain's last append folds it; a dead one, nothing
    std::vector<Value*> appended;
    const Node* src = n;
    for (; src->kind() == OpKind::ListAppend && src->input(0)->uses().size() == 1; src = src->input(0)->node())
      appended.push_back(src->input(1));
    if (src == n || src->kind() != OpKind::ListConstruct) return nullptr;
    std::vector<Value*> xs(src->inputs().begin(), src->inputs().end());
    xs.insert(xs.end(), appended.rbegin(), appended.rend());
    return emitBefore(n, OpKind::ListConstruct, xs, n->output()->type());
  }
  return nullptr;
}

bool peepholeBlock(Block* b) {
  bool changed = false;
  for (Node* n : b->nodesList()) {
    for (Block* inner : n->blocks()) changed |= peepholeBlock(inner);
    if (optimizesInto(n)) changed |= peephole(*n->subgraph());
    if (n->outputs().empty()) continue;
    Value* r = identityArithmetic(n);
    if (!r) r = doubleTranspose(n);
    if (!r) r = sameShapeView(n);
    if (!r) r = listAccess(n);
    if (!r) r = openClamp(n);
    if (!r) continue;
    if (r != n->output(0)) {
      if (r->name().empty() && !n->output()->name().empty() && r->node()->owningBlock() == b) {
        std::string name = n->output()->name();
        n->output()->setName("");
        r->setName(name);
      }
      b->graph()->replaceAllUsesWith(n->output(0), r);
    }
    bool used = false;
    for (Value* v : n->outputs()) used |= v->hasUses();
    if (!used) b->graph()->erase(n);
    changed = true;
  }
  return changed;
}

}  // namespace

bool peephole(Graph& g) {
  bool any = false;
  while (peepholeBlock(g.block())) any = true;
  return any;
}

}  // namespace gj
