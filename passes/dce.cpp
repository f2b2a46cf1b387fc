#include "passes/dce.h"

#include "passes/util.h"


namespace gj {

static bool dceBlock(Block* b) {
  bool changed = false;
  const std::vector<Node*> nodes = b->nodesList();
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {  // users first (no views::reverse: clang's fuzz build)
    Node* n = *it;
    for (Block* inner : n->blocks()) changed |= dceBlock(inner);
    if (optimizesInto(n)) changed |= eliminateDeadCode(*n->subgraph());
    bool used = hasEffects(n);
    for (Value* v : n->outputs()) used |= v->hasUses();
    if (used) continue;
    b->graph()->erase(n);
    changed = true;
  }
  return changed;
}

bool eliminateDeadCode(Graph& g) { return dceBlock(g.block()); }

}  // namespace gj
