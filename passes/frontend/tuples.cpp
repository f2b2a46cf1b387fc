// lower-tuples: every tuple value becomes its elements (nested tuples depth-first).
#include "passes/frontend.h"
#include "passes/util.h"

#include <fmt/format.h>

#include <functional>

namespace gj {

namespace {

void leafTypes(const Type& t, std::vector<Type>& out) {
  if (t.kind != TypeKind::Tuple) {
    out.push_back(t);
    return;
  }
  for (const Type& e : t.elements) leafTypes(e, out);
}

std::vector<Type> leafTypes(const Type& t) {
  std::vector<Type> out;
  leafTypes(t, out);
  return out;
}

// v's elements, depth-first: a prim::TupleConstruct's operands, else those of a prim::TupleUnpack placed
// before `before` (which lowerTuples then folds into whatever made v).
void flatten(Value* v, Node* before, std::vector<Value*>& out) {
  if (v->type().kind != TypeKind::Tuple) {
    out.push_back(v);
    return;
  }
  if (v->node()->kind() == OpKind::TupleConstruct) {
    for (Value* e : v->node()->inputs()) flatten(e, before, out);
    return;
  }
  Graph* g = v->graph();
  Node* unpack = g->create(OpKind::TupleUnpack, {v}, 0);
  for (const Type& e : v->type().elements) unpack->addOutput(e);
  unpack->setLoc(v->node()->loc());
  unpack->insertBefore(before);
  for (Value* e : unpack->outputs()) flatten(e, before, out);
}

std::vector<Value*> flatten(Value* v, Node* before) {
  std::vector<Value*> out;
  flatten(v, before, out);
  return out;
}

// A tuple of type t rebuilt from leaves (consumed from `next` on) by prim::TupleConstruct nodes before
// `before`.
Value* construct(const Type& t, std::span<Value* const> leaves, size_t& next, Node* before) {
  if (t.kind != TypeKind::Tuple) return leaves[next++];
  std::vector<Value*> parts;
  for (const Type& e : t.elements) parts.push_back(construct(e, leaves, next, before));
  Node* c = before->graph()->create(OpKind::TupleConstruct, parts, 0);
  c->addOutput(t);
  c->insertBefore(before);
  return c->output();
}

Value* construct(const Type& t, std::span<Value* const> leaves, Node* before) {
  size_t next = 0;
  return construct(t, leaves, next, before);
}

// Graph inputs: %hidden.1 : (Tensor, Tensor) becomes %hidden_0 and %hidden_1 in its place.
bool flattenInputs(Graph& g) {
  bool changed = false;
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    Value* in = g.inputs()[i];
    if (in->type().kind != TypeKind::Tuple) continue;
    std::vector<Value*> leaves;
    const std::string base = baseName(in->name());
    std::function<void(const Type&, const std::string&)> add = [&](const Type& t, const std::string& name) {
      if (t.kind != TypeKind::Tuple) {
        leaves.push_back(g.block()->insertInput(i + leaves.size(), t, name));
        return;
      }
      for (size_t k = 0; k < t.elements.size(); ++k) add(t.elements[k], fmt::format("{}_{}", name, k));
    };
    add(in->type(), base);
    Node* first = *g.block()->begin();
    g.replaceAllUsesWith(in, construct(in->type(), leaves, first));
    g.block()->eraseInput(i + leaves.size());
    i += leaves.size() - 1;
    changed = true;
  }
  return changed;
}

// A block's outputs with each tuple replaced by its elements.
bool flattenOutputs(Block* b) {
  bool any = false;
  for (Value* v : b->outputs()) any |= v->type().kind == TypeKind::Tuple;
  if (!any) return false;
  std::vector<Value*> flat;
  for (Value* v : b->outputs()) flatten(v, b->returnNode(), flat);
  while (!b->outputs().empty()) b->eraseOutput(b->outputs().size() - 1);
  for (Value* v : flat) b->registerOutput(v);
  return true;
}

// n's output k (a tuple) replaced by one output per leaf, added at the end; its uses read a rebuilt tuple.
void splitOutput(Node* n, size_t k) {
  Value* out = n->output(k);
  std::vector<Value*> leaves;
  for (const Type& t : leafTypes(out->type())) leaves.push_back(n->addOutput(t));
  if (out->hasUses()) n->graph()->replaceAllUsesWith(out, construct(out->type(), leaves, n->next()));
  n->eraseOutput(k);
}

bool flattenLoop(Node* loop) {
  Block* body = loop->block(0);
  bool changed = false;
  for (size_t k = loop->outputs().size(); k-- > 0;) {
    Value* carried = loop->output(k);
    if (carried->type().kind != TypeKind::Tuple) continue;
    changed = true;
    const Type t = carried->type();
    for (Value* v : flatten(loop->input(k + 2), loop)) loop->addInput(v);
    Value* param = body->inputs()[k + 1];
    std::vector<Value*> params;
    for (const Type& e : leafTypes(t)) params.push_back(body->addInput(e));
    Node* first = body->begin() != body->end() ? *body->begin() : body->returnNode();
    body->graph()->replaceAllUsesWith(param, construct(t, params, first));
    for (Value* v : flatten(body->outputs()[k + 1], body->returnNode())) body->registerOutput(v);
    splitOutput(loop, k);
    loop->removeInput(k + 2);
    body->eraseInput(k + 1);
    body->eraseOutput(k + 1);
  }
  return changed;
}

bool flattenIf(Node* n) {
  bool changed = false;
  for (size_t k = n->outputs().size(); k-- > 0;) {
    if (n->output(k)->type().kind != TypeKind::Tuple) continue;
    changed = true;
    for (Block* b : n->blocks()) {
      for (Value* v : flatten(b->outputs()[k], b->returnNode())) b->registerOutput(v);
      b->eraseOutput(k);
    }
    splitOutput(n, k);
  }
  return changed;
}

bool flattenControl(Block* b) {
  bool changed = false;
  for (Node* n : b->nodesList()) {
    for (Block* inner : n->blocks()) changed |= flattenControl(inner);
    if (n->kind() == OpKind::Loop) changed |= flattenLoop(n);
    if (n->kind() == OpKind::If) changed |= flattenIf(n);
  }
  return changed;
}

// prim::TupleUnpack and prim::TupleIndex (by a constant) of a prim::TupleConstruct read its operands.
bool foldAccess(Block* b) {
  bool changed = false;
  for (Node* n : b->nodesList()) {
    for (Block* inner : n->blocks()) changed |= foldAccess(inner);
    Node* src = n->inputs().empty() ? nullptr : n->input(0)->node();
    if (!src || src->kind() != OpKind::TupleConstruct) continue;
    if (n->kind() == OpKind::TupleUnpack && n->outputs().size() == src->inputs().size()) {
      for (size_t i = 0; i < n->outputs().size(); ++i) b->graph()->replaceAllUsesWith(n->output(i), src->input(i));
    } else if (n->kind() == OpKind::TupleIndex) {
      auto i = constantInt(n->input(1));
      const auto size = static_cast<int64_t>(src->inputs().size());
      if (!i || *i < -size || *i >= size) continue;
      b->graph()->replaceAllUsesWith(n->output(), src->input(*i < 0 ? *i + size : *i));
    } else {
      continue;
    }
    b->graph()->erase(n);
    changed = true;
  }
  return changed;
}

}  // namespace

bool lowerTuples(Graph& g) {
  bool changed = flattenInputs(g);
  changed |= flattenControl(g.block());
  changed |= flattenOutputs(g.block());
  while (foldAccess(g.block())) changed = true;
  // The prim::TupleConstruct nodes nothing reads any more.
  std::vector<Node*> dead;
  forEachNode(g.block(), [&](Node* n) {
    if (n->kind() == OpKind::TupleConstruct) dead.push_back(n);
  });
  for (auto it = dead.rbegin(); it != dead.rend(); ++it)
    if (!(*it)->output()->hasUses()) {
      g.erase(*it);
      changed = true;
    }
  return changed;
}

}  // namespace gj
