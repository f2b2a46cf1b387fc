#include "passes/constant_propagation.h"

#include "passes/util.h"

namespace gj {

namespace {

// Replaces n's single output by a constant placed just before n, and erases n.
void replaceByConstant(Node* n, ConstantValue v) {
  Graph* g = n->graph();
  Node* c = g->createConstant(std::move(v));
  c->insertBefore(n);
  g->replaceAllUsesWith(n->output(), c->output());
  g->erase(n);
}

// Moves the nodes of block `b` in front of `before`, and returns the block's outputs.
std::vector<Value*> inlineBlock(Block* b, Node* before) {
  for (Node* inner : b->nodesList()) inner->moveBefore(before);
  return {b->outputs().begin(), b->outputs().end()};
}

std::optional<ConstantValue> fold(const Node* n) {
  const OpKind kind = n->kind();
  if (kind == OpKind::Size) {
    auto d = constantInt(n->input(1));
    const Type& t = n->input(0)->type();
    if (!d || !t.sizes) return std::nullopt;
    int64_t rank = static_cast<int64_t>(t.sizes->size());
    if (*d < -rank || *d >= rank) return std::nullopt;  // let the run report the error
    int64_t s = (*t.sizes)[*d < 0 ? *d + rank : *d];
    if (s == kUnknownDim) return std::nullopt;
    return s;
  }
  if (kind == OpKind::Sizes) {
    if (auto s = staticSizes(n->input(0))) return *s;
    return std::nullopt;
  }
  if (kind == OpKind::DTypeOf) {
    if (const auto& d = n->input(0)->type().dtype) return static_cast<int64_t>(*d);
    return std::nullopt;
  }
  if (kind == OpKind::Len) {
    const Node* src = n->input(0)->node();
    if (src->kind() == OpKind::ListConstruct) return static_cast<int64_t>(src->inputs().size());
    if (src->kind() == OpKind::Unbind) {
      auto d = constantInt(src->input(1));
      auto sizes = staticSizes(src->input(0));
      if (d && sizes && *d >= -static_cast<int64_t>(sizes->size()) && *d < static_cast<int64_t>(sizes->size()))
        return (*sizes)[*d < 0 ? *d + static_cast<int64_t>(sizes->size()) : *d];
    }
    if (auto xs = constantInts(n->input(0))) return static_cast<int64_t>(xs->size());
    return std::nullopt;
  }
  if (kind == OpKind::ListConstruct) {
    if (n->output()->type().kind != TypeKind::IntList) return std::nullopt;
    std::vector<int64_t> xs;
    for (Value* v : n->inputs()) {
      auto i = constantInt(v);
      if (!i) return std::nullopt;
      xs.push_back(*i);
    }
    return xs;
  }
  if (kind == OpKind::GetItem) {
    auto xs = constantInts(n->input(0));
    auto i = constantInt(n->input(1));
    if (!xs || !i) return std::nullopt;
    int64_t sz = static_cast<int64_t>(xs->size());
    if (*i < -sz || *i >= sz) return std::nullopt;
    return (*xs)[*i < 0 ? *i + sz : *i];
  }
  if (kind == OpKind::IntAdd) {
    auto a = constantInt(n->input(0)), b = constantInt(n->input(1));
    if (a && b) return *a + *b;
    return std::nullopt;
  }
  if (kind == OpKind::FloorDiv || kind == OpKind::Remainder) {
    auto a = constantInt(n->input(0)), b = constantInt(n->input(1));
    if (!a || !b || *b == 0) return std::nullopt;
    int64_t q = *a / *b;
    if ((*a % *b != 0) && ((*a < 0) != (*b < 0))) --q;
    return n->kind() == OpKind::FloorDiv ? q : *a - q * *b;
  }
  if (n->inputs().size() == 2) {  // a scalar comparison of constants: two ints exactly, else as doubles
    auto a = constantInt(n->input(0)), b = constantInt(n->input(1));
    if (a && b)
      if (auto r = compareScalars(kind, *a, *b)) return *r;
    auto x = constantDouble(n->input(0)), y = constantDouble(n->input(1));
    if (x && y && n->input(0)->type().kind != TypeKind::Tensor && n->input(1)->type().kind != TypeKind::Tensor)
      if (auto r = compareScalars(kind, *x, *y)) return *r;
  }
  if (kind == OpKind::BoolNot) {
    if (auto a = constantBool(n->input(0))) return !*a;
    return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

std::optional<int64_t> knownInt(const Value* v) {
  if (auto c = constantInt(v)) return c;
  if (v->node()->outputs().size() != 1) return std::nullopt;
  auto folded = fold(v->node());
  if (!folded) return std::nullopt;
  if (const int64_t* i = std::get_if<int64_t>(&*folded)) return *i;
  return std::nullopt;
}

namespace {

bool foldControl(Node* n) {
  Graph* g = n->graph();
  if (n->kind() == OpKind::If) {
    auto c = constantBool(n->input(0));
    if (!c) return false;
    auto outs = inlineBlock(n->block(*c ? 0 : 1), n);
    for (size_t i = 0; i < outs.size(); ++i) g->replaceAllUsesWith(n->output(i), outs[i]);
    g->erase(n);
    return true;
  }
  if (n->kind() == OpKind::RaiseIf && constantBool(n->input(0)) == false) {  // a check that always holds
    g->erase(n);
    return true;
  }
  if (n->kind() == OpKind::Loop) {
    auto trips = constantInt(n->input(0));
    auto cond = constantBool(n->input(1));
    if (!((trips && *trips <= 0) || (cond && !*cond))) return false;
    for (size_t i = 0; i < n->outputs().size(); ++i) g->replaceAllUsesWith(n->output(i), n->input(i + 2));
    g->erase(n);
    return true;
  }
  return false;
}

bool propagateBlock(Block* b) {
  bool changed = false;
  for (Node* n : b->nodesList()) {
    for (Block* inner : n->blocks()) changed |= propagateBlock(inner);
    if (optimizesInto(n)) changed |= propagateConstants(*n->subgraph());
    if (foldControl(n)) {
      changed = true;
      continue;
    }
    if (n->outputs().size() != 1 || n->kind() == OpKind::Constant) continue;
    if (auto v = fold(n)) {
      replaceByConstant(n, std::move(*v));
      changed = true;
    }
  }
  return changed;
}

}  // namespace

bool propagateConstants(Graph& g) {
  bool any = false;
  while (propagateBlock(g.block())) any = true;  // an inlined branch may expose more
  return any;
}

}  // namespace gj
