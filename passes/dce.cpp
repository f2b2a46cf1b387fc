#include "passes/dce.h"

#include "passes/util.h"

#include <ranges>

namespace gj {

static bool dceBlock(Block* b) {
  bool changed = false;
  for (Node* n : b->nodesList() | std::views::reverse) {
    for (Block* inner : n->blocks()) changed |= dceBlock(inner);
    if (optimizesInto(n)) changed |= eliminateDeadCode(*n->subgraph());
    bool used = false;
    for (Value* v : n->outputs()) used |= v->hasUses();
    if (used) continue;
    b->graph()->erase(n);
    changed = true;
  }
  return changed;
}

bool eliminateDeadCode(Graph& g) { return dceBlock(g.block()); }

}  // namespace gj
