#include "passes/subgraph_regions.h"

#include "passes/util.h"

#include <unordered_set>
#include <utility>

namespace gj {

void growRegions(Block* b, const std::function<bool(const Node*, const Region&)>& canJoin,
                 const std::function<void(std::vector<Node*>&, std::vector<Node*>&)>& close,
                 const std::function<bool(const Node*)>& beginsRegion) {
  Region region;
  std::vector<Node*> dependents;
  std::unordered_set<const Value*> tainted;
  auto finish = [&] {
    if (!region.nodes.empty()) close(region.nodes, dependents);
    region.nodes.clear();
    region.computed.clear();
    region.tensorsFromOutside.clear();
    dependents.clear();
    tainted.clear();
  };
  for (Node* n : b->nodesList()) {
    bool usesRegion = false, usesTainted = false;
    for (Value* v : allUses(n)) {
      usesRegion = usesRegion || region.computes(v) || tainted.count(v);
      usesTainted = usesTainted || tainted.count(v);
    }
    const bool joins = canJoin(n, region);
    const bool begins = !joins && usesRegion && beginsRegion && beginsRegion(n);
    if (joins || begins) {
      if (usesTainted || begins) finish();
      region.nodes.push_back(n);
      for (const Value* v : n->inputs())
        if (!region.computes(v) && v->type().isTensor()) region.tensorsFromOutside.insert(v);
      for (Value* v : n->outputs()) region.computed.insert(v);
    } else if (usesRegion) {
      for (Value* v : n->outputs()) tainted.insert(v);
      dependents.push_back(n);
    }
  }
  finish();
}

std::vector<Value*> regionOutputs(const std::vector<Node*>& region) {
  std::unordered_set<const Node*> in(region.begin(), region.end());
  std::vector<Value*> outputs;
  for (Node* n : region)
    for (Value* v : n->outputs()) {
      bool outside = false;
      for (const Use& u : v->uses()) outside = outside || !in.count(u.user);
      if (outside) outputs.push_back(v);
    }
  return outputs;
}

Node* mergeIntoSubgraph(const std::vector<Node*>& region, OpKind kind, const std::vector<Node*>& dependents) {
  Graph* g = region.front()->graph();
  std::unordered_set<const Value*> produced;
  for (Node* n : region)
    for (Value* v : n->outputs()) produced.insert(v);
  auto sub = std::make_shared<Graph>();
  ValueMap env;
  env.reserve(3 * region.size());
  std::vector<Value*> inputs;
  for (Node* n : region) {
    for (Value* v : n->inputs()) {
      if (produced.count(v) || env.count(v)) continue;
      if (v->node()->kind() == OpKind::Constant) {
        env[v] = sub->block()->append(cloneNode(v->node(), *sub, env))->output();
        continue;
      }
      // A list of int constants (permute's dims, a view's sizes) comes along too, so that the formulas and
      // rules inside read it as the constant it is (constantInts), as where constant propagation folded it.
      if (v->node()->kind() == OpKind::ListConstruct && constantInts(v)) {
        for (const Value* e : v->node()->inputs())
          if (!env.count(e)) env[e] = sub->block()->append(cloneNode(e->node(), *sub, env))->output();
        env[v] = sub->block()->append(cloneNode(v->node(), *sub, env))->output();
        continue;
      }
      env[v] = sub->addInput(v->type(), v->name());
      inputs.push_back(v);
    }
    sub->block()->append(cloneNode(n, *sub, env));
  }
  std::vector<Value*> outputs = regionOutputs(region);
  for (Value* v : outputs) sub->registerOutput(env.at(v));
  Node* node = g->create(kind, inputs, 0);
  node->setSubgraph(sub);
  node->insertAfter(region.back());
  for (Value* v : outputs) {
    Value* o = node->addOutput(v->type());
    std::string name = v->name();
    g->replaceAllUsesWith(v, o);
    if (!name.empty()) {
      v->setName("");
      o->setName(name);
    }
  }
  Node* cursor = node;
  for (Node* t : dependents) {
    if (node->isBefore(t)) break;  // this one and the rest already follow the new node
    t->moveBefore(cursor->next());
    cursor = t;
  }
  for (auto it = region.rbegin(); it != region.rend(); ++it) g->erase(*it);
  return node;
}

void canonicalizeSubgraph(Node* group) {
  Block* b = group->subgraph()->block();
  std::vector<Node*> order;
  std::vector<size_t> inputOrder;
  std::vector<bool> inputReached(b->inputs().size(), false);
  std::unordered_set<const Node*> visited;
  // Iterative post-order (a long pointwise chain must not exhaust the stack): a node is emitted once
  // every operand's producer has been.
  std::vector<std::pair<Node*, size_t>> stack;
  auto reach = [&](Value* v) {
    Node* producer = v->node();
    if (producer == b->paramNode()) {
      if (!inputReached[v->offset()]) inputOrder.push_back(v->offset());
      inputReached[v->offset()] = true;
    } else if (visited.insert(producer).second) {
      stack.emplace_back(producer, 0);
    }
  };
  for (Value* out : b->outputs()) {
    reach(out);
    while (!stack.empty()) {
      auto& [n, next] = stack.back();
      if (next < n->inputs().size()) {
        reach(n->input(next++));  // may push: `n` and `next` are not used after this
        continue;
      }
      order.push_back(n);
      stack.pop_back();
    }
  }
  for (Node* n : order) n->moveBefore(b->returnNode());
  for (Node* n : b->nodesList())
    if (!visited.count(n)) n->moveBefore(b->returnNode());  // unused by any output: after the rest, in order
  for (size_t i = 0; i < inputReached.size(); ++i)
    if (!inputReached[i]) inputOrder.push_back(i);

  bool identity = true;
  for (size_t i = 0; i < inputOrder.size(); ++i) identity = identity && inputOrder[i] == i;
  if (identity) return;
  std::vector<Value*> outer(group->inputs().begin(), group->inputs().end());
  std::vector<Value*> inner(b->inputs().begin(), b->inputs().end());
  group->removeAllInputs();
  Graph* sub = group->subgraph().get();
  for (size_t i : inputOrder) {
    group->addInput(outer[i]);
    std::string name = inner[i]->name();
    inner[i]->setName("");
    Value* fresh = b->addInput(inner[i]->type(), name);
    sub->replaceAllUsesWith(inner[i], fresh);
  }
  for (size_t i = inner.size(); i-- > 0;) b->eraseInput(i);
}

}  // namespace gj
