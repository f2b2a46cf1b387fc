#include "passes/inline.h"


namespace gj {

static bool inlineBlock(Block* b) {
  bool changed = false;
  for (Node* n : b->nodesList()) {
    for (Block* inner : n->blocks()) changed |= inlineBlock(inner);
    if (n->kind() != OpKind::DifferentiableGraph) continue;
    Graph& sub = *n->subgraph();
    inlineSubgraphs(sub);
    ValueMap env(sub);
    for (size_t i = 0; i < sub.inputs().size(); ++i) env[sub.inputs()[i]] = n->input(i);
    cloneNodesBefore(sub.block(), n, env);
    for (size_t i = 0; i < n->outputs().size(); ++i) {
      b->graph()->replaceValue(n->output(i), env.at(sub.outputs()[i]));
    }
    b->graph()->erase(n);
    changed = true;
  }
  return changed;
}

bool inlineSubgraphs(Graph& g) { return inlineBlock(g.block()); }

}  // namespace gj
