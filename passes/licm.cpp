#include "passes/licm.h"

#include "passes/util.h"

#include <unordered_set>

namespace gj {

// Hoists invariant nodes of `loop`'s body in front of the loop; returns whether any moved.
static bool hoist(Node* loop) {
  Block* body = loop->block(0);
  std::unordered_set<const Value*> local(body->inputs().begin(), body->inputs().end());
  bool changed = false;
  for (Node* n : body->nodesList()) {
    bool invariant = n->blocks().empty() && !n->subgraph() && !hasEffects(n);  // a check runs where it was
    for (Value* v : n->inputs()) invariant = invariant && !local.count(v);
    if (!invariant) {
      for (Value* v : n->outputs()) local.insert(v);
      continue;
    }
    n->moveBefore(loop);
    changed = true;
  }
  return changed;
}

static bool licmBlock(Block* b) {
  bool changed = false;
  for (Node* n : b->nodesList()) {
    for (Block* inner : n->blocks()) changed |= licmBlock(inner);
    if (optimizesInto(n)) changed |= hoistLoopInvariants(*n->subgraph());
    if (n->kind() == OpKind::Loop) changed |= hoist(n);
  }
  return changed;
}

bool hoistLoopInvariants(Graph& g) { return licmBlock(g.block()); }

}  // namespace gj
