#include "passes/create_autodiff_subgraphs.h"

#include "passes/autodiff.h"
#include "passes/util.h"

#include <unordered_set>

namespace gj {

namespace {

bool requiresGrad(const Value* v) { return v->type().requiresGrad.value_or(false); }

class Grouper {
 public:
  bool changed = false;

  void block(Block* b) {
    for (Node* n : b->nodesList()) {
      for (Block* inner : n->blocks()) Grouper::nested(inner, changed);
      bool uses = usesGroup(n);
      if (groupable(n)) {
        if (usesTainted(n)) close(b);
        add(n);
      } else if (uses) {
        for (Value* v : n->outputs()) tainted_.insert(v);
        pendingTainted_.push_back(n);
      }
    }
    close(b);
  }

 private:
  static void nested(Block* b, bool& changed) {
    Grouper g;
    g.block(b);
    changed |= g.changed;
  }

  bool groupable(const Node* n) const {
    if (!n->blocks().empty() || n->subgraph() || !hasGradientFormula(n->kind())) return false;
    if (n->kind() == OpKind::ListUnpack) return produced_.count(n->input(0)) > 0;
    bool any = false;
    for (const Value* v : n->outputs()) any = any || requiresGrad(v);
    return any;
  }
  bool usesGroup(const Node* n) const {
    for (Value* v : allUses(n))
      if (produced_.count(v) || tainted_.count(v)) return true;
    return false;
  }
  bool usesTainted(const Node* n) const {
    for (Value* v : allUses(n))
      if (tainted_.count(v)) return true;
    return false;
  }
  void add(Node* n) {
    group_.push_back(n);
    for (Value* v : n->outputs()) produced_.insert(v);
  }

  // Replaces the current group by one prim::DifferentiableGraph node placed after its last node; the
  // nodes that depend on the group but sat between its nodes move after it.
  void close(Block* b) {
    if (!group_.empty()) {
      build(b);
      changed = true;
    }
    group_.clear();
    produced_.clear();
    tainted_.clear();
    pendingTainted_.clear();
  }

  void build(Block* b) {
    Graph* g = b->graph();
    auto sub = std::make_shared<Graph>();
    ValueMap env;
    std::vector<Value*> inputs;
    for (Node* n : group_) {
      for (Value* v : n->inputs()) {
        if (produced_.count(v) || env.count(v)) continue;
        if (v->node()->kind() == OpKind::Constant) {
          env[v] = sub->block()->append(cloneNode(v->node(), *sub, env))->output();
          continue;
        }
        env[v] = sub->addInput(v->type(), v->name());
        inputs.push_back(v);
      }
      sub->block()->append(cloneNode(n, *sub, env));
    }
    std::unordered_set<const Node*> inGroup(group_.begin(), group_.end());
    std::vector<Value*> outputs;
    for (Node* n : group_)
      for (Value* v : n->outputs()) {
        bool usedOutside = false;
        for (const Use& u : v->uses()) usedOutside = usedOutside || !inGroup.count(u.user);
        if (usedOutside) outputs.push_back(v);
      }
    for (Value* v : outputs) sub->registerOutput(env.at(v));
    Node* dg = g->create(OpKind::DifferentiableGraph, inputs, 0);
    dg->setSubgraph(sub);
    dg->insertAfter(group_.back());
    for (Value* v : outputs) {
      Value* o = dg->addOutput(v->type());
      std::string name = v->name();
      g->replaceAllUsesWith(v, o);
      if (!name.empty()) {
        v->setName("");
        o->setName(name);
      }
    }
    Node* cursor = dg;
    for (Node* t : pendingTainted_) {
      if (dg->isBefore(t)) break;  // this one and the rest already follow the group
      t->moveBefore(cursor->next());
      cursor = t;
    }
    for (auto it = group_.rbegin(); it != group_.rend(); ++it) g->erase(*it);
  }

  std::vector<Node*> group_;
  std::unordered_set<const Value*> produced_;
  std::unordered_set<const Value*> tainted_;
  std::vector<Node*> pendingTainted_;
};

}  // namespace

bool createAutodiffSubgraphs(Graph& g) {
  Grouper grouper;
  grouper.block(g.block());
  return grouper.changed;
}

}  // namespace gj
