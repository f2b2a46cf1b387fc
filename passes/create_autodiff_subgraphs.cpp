#include "passes/create_autodiff_subgraphs.h"

#include "passes/autodiff.h"
#include "passes/subgraph_regions.h"
#include "passes/util.h"
#include "support/error.h"

#include <algorithm>

namespace gj {

static bool requiresGrad(const Value* v) { return v->type().requiresGrad.value_or(false); }

// A differentiable node that needs gradients; a ListUnpack joins the region of the list it unpacks.
static bool canJoin(const Node* n, const Region& region) {
  if (!n->blocks().empty() || n->subgraph() || !hasGradientFormula(n->kind())) return false;
  if (n->kind() == OpKind::ListUnpack) return region.computes(n->input(0));
  for (const Value* v : n->outputs())
    if (requiresGrad(v)) return true;
  return false;
}

static bool createInBlock(Block* b) {
  bool changed = false;
  for (Node* n : b->nodesList())
    for (Block* inner : n->blocks()) changed |= createInBlock(inner);
  growRegions(b, canJoin, [&](std::vector<Node*>& region, std::vector<Node*>& dependents) {
    mergeIntoSubgraph(region, OpKind::DifferentiableGraph, dependents);
    changed = true;
    return true;
  });
  return changed;
}

bool createAutodiffSubgraphs(Graph& g) {
  bool changed = createInBlock(g.block());
  // Every op left outside a DifferentiableGraph that sees a value requiring grad must only move it, read
  // no more than its shape, or compare it (a bool result, which takes no gradient).
  // An op whose results are all integers or bools (a cast to int8, say) takes none either.
  auto integral = [](const Value* v) { return v->type().isTensor() && v->type().dtype && !isFloating(*v->type().dtype); };
  forEachNode(g.block(), [&](Node* n) {
    if (passesNoGradient(n->kind())) return;
    if (!n->outputs().empty() && std::all_of(n->outputs().begin(), n->outputs().end(), integral)) return;
    for (const Value* v : n->inputs())
      if (v->type().requiresGrad.value_or(false))
        throw Error(fmt::format("autodiff: no gradient formula for {}", n->info().name), n->describe(),
                    "the op is not in the formula table (passes/gradient_formulas.cpp); keep it off the gradient "
                    "path or add a formula");
  });
  return changed;
}

}  // namespace gj
