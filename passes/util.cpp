#include "passes/util.h"

#include <algorithm>

namespace gj {

static const ConstantValue* constantOf(const Value* v) {
  if (v->node()->kind() != OpKind::Constant) return nullptr;
  return &v->node()->constant();
}

std::optional<int64_t> constantInt(const Value* v) {
  const ConstantValue* c = constantOf(v);
  if (!c || c->index() != 1) return std::nullopt;
  return std::get<int64_t>(*c);
}

std::optional<double> constantDouble(const Value* v) {
  const ConstantValue* c = constantOf(v);
  if (!c) return std::nullopt;
  if (c->index() == 1) return static_cast<double>(std::get<int64_t>(*c));
  if (c->index() == 2) return std::get<double>(*c);
  return std::nullopt;
}

std::optional<bool> constantBool(const Value* v) {
  const ConstantValue* c = constantOf(v);
  if (!c || c->index() != 3) return std::nullopt;
  return std::get<bool>(*c);
}

std::optional<std::vector<int64_t>> constantInts(const Value* v) {
  const Node* list = v->node();
  if (list->kind() == OpKind::ListConstruct && v->type().kind == TypeKind::IntList) {  // of constants, never appended to
    for (const Use& u : v->uses())
      if (u.user->kind() == OpKind::ListAppend) return std::nullopt;
    std::vector<int64_t> xs;
    for (const Value* e : list->inputs()) {
      const std::optional<int64_t> x = constantInt(e);
      if (!x) return std::nullopt;
      xs.push_back(*x);
    }
    return xs;
  }
  const ConstantValue* c = constantOf(v);
  if (!c || c->index() != 4) return std::nullopt;
  return std::get<std::vector<int64_t>>(*c);
}

std::optional<std::string> constantString(const Value* v) {
  const ConstantValue* c = constantOf(v);
  if (!c || c->index() != 5) return std::nullopt;
  return std::get<std::string>(*c);
}

bool isConstant(const Value* v) { return v->node()->kind() == OpKind::Constant; }

bool isConstantEqual(const Value* v, double x) {
  if (auto d = constantDouble(v)) return *d == x;
  return false;
}

void forEachNode(const Block* b, const std::function<void(Node*)>& f) {
  for (Node* n : b->nodesList()) {
    f(n);
    for (const Block* inner : n->blocks()) forEachNode(inner, f);
  }
}

static void collectFree(const Block* b, const Node* owner, std::unordered_set<const Value*>& defined,
                        std::vector<Value*>& out, std::unordered_set<Value*>& seen) {
  for (Value* v : b->inputs()) defined.insert(v);
  auto use = [&](Value* v) {
    if (!defined.count(v) && seen.insert(v).second) out.push_back(v);
  };
  for (Node* n : *b) {
    for (Value* v : n->inputs()) use(v);
    for (const Block* inner : n->blocks()) collectFree(inner, owner, defined, out, seen);
    for (Value* v : n->outputs()) defined.insert(v);
  }
  for (Value* v : b->outputs()) use(v);
}

std::vector<Value*> freeVariables(const Node* n) {
  std::unordered_set<const Value*> defined;
  std::vector<Value*> out;
  std::unordered_set<Value*> seen;
  for (const Block* b : n->blocks()) collectFree(b, n, defined, out, seen);
  return out;
}

std::vector<Value*> allUses(const Node* n) {
  std::vector<Value*> vs(n->inputs().begin(), n->inputs().end());
  for (Value* v : freeVariables(n)) vs.push_back(v);
  return vs;
}

Node* ancestorIn(Node* n, const Block* b) {
  while (n && n->owningBlock() != b) {
    Block* ob = n->owningBlock();
    n = ob ? ob->owningNode() : nullptr;
  }
  return n;
}

bool inLoopBelow(const Node* n, const Block* home) {
  for (const Block* b = n->owningBlock(); b && b != home;) {
    const Node* owner = b->owningNode();
    if (!owner) return false;
    if (owner->kind() == OpKind::Loop) return true;
    b = owner->owningBlock();
  }
  return false;
}

Value* emitBefore(Node* at, OpKind kind, const std::vector<Value*>& inputs, Type out) {
  Node* n = at->graph()->create(kind, inputs);
  n->output()->setType(std::move(out));
  n->insertBefore(at);
  return n->output();
}

Node* emitReplacement(Node* n, OpKind kind, const std::vector<Value*>& inputs, size_t numOutputs) {
  Graph& g = *n->graph();
  Node* m = g.create(kind, inputs, numOutputs);
  m->setPositionsOf(n);
  m->insertBefore(n);
  for (size_t i = 0; i < std::min(numOutputs, n->outputs().size()); ++i) {
    m->output(i)->setType(n->output(i)->type());
    g.replaceValue(n->output(i), m->output(i));
  }
  return m;
}

Value* constantBefore(Node* at, ConstantValue v) {
  Node* c = at->graph()->createConstant(std::move(v));
  c->insertBefore(at);
  return c->output();
}

std::optional<std::vector<int64_t>> staticSizes(const Value* v) {
  const Type& t = v->type();
  if (!t.isTensor() || !t.sizes) return std::nullopt;
  for (int64_t d : *t.sizes)
    if (d == kUnknownDim) return std::nullopt;
  return *t.sizes;
}

bool isPlumbing(OpKind k) { return opInfo(k).plumbing(); }

bool hasEffects(const Node* n) {
  if (n->outputs().empty()) return true;
  for (const Block* b : n->blocks())
    for (const Node* inner : *b)
      if (hasEffects(inner)) return true;
  return false;
}

bool readsOnlyMetadata(OpKind k) { return opInfo(k).readsOnlyMetadata(); }
bool resultTakesNoGradient(OpKind k) {
  return readsOnlyMetadata(k) || isComparison(k) || k == OpKind::Detach || k == OpKind::PhiloxUniform;
}
bool passesNoGradient(OpKind k) { return isPlumbing(k) || resultTakesNoGradient(k); }

}  // namespace gj
