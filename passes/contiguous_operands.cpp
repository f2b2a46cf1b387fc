#include "passes/contiguous_operands.h"

#include "passes/util.h"

namespace gj {

namespace {

// Reroutes the products that share `v` (defined in `home`) as their right operand through one
// contiguous copy inserted before `at`. False when v is not shared.
bool makeContiguous(Value* v, const Block* home, Node* at) {
  if (!v->type().isTensor() || v->node()->kind() == OpKind::Contiguous) return false;
  std::vector<Node*> users;
  bool repeated = false;
  for (const Use& u : v->uses()) {
    if (u.user->kind() != OpKind::Mm || u.index != 1) continue;
    auto left = staticSizes(u.user->input(0));
    if (!left || (*left)[0] > kRowMajorOperandMaxRows) continue;
    users.push_back(u.user);
    repeated = repeated || inLoopBelow(u.user, home);
  }
  if (users.size() < 2 && !repeated) return false;
  Node* c = v->node()->graph()->create(OpKind::Contiguous, {v});
  c->output()->setType(v->type());
  c->insertBefore(at);
  for (Node* u : users) u->replaceInput(1, c->output());
  return true;
}

bool layoutGraph(Graph& g) {
  // Candidates first: the rewrite inserts nodes.
  struct Candidate {
    Value* v;
    const Block* home;
    Node* at;
  };
  std::vector<Candidate> candidates;
  Node* first = g.block()->paramNode()->next();
  for (Value* v : g.inputs()) candidates.push_back({v, g.block(), first});
  std::vector<Graph*> subgraphs;
  forEachNode(g.block(), [&](Node* n) {
    for (Value* v : n->outputs()) candidates.push_back({v, n->owningBlock(), n->next()});
    if (optimizesInto(n)) subgraphs.push_back(n->subgraph().get());
  });
  bool changed = false;
  for (const Candidate& c : candidates) changed |= makeContiguous(c.v, c.home, c.at);
  for (Graph* sub : subgraphs) changed |= layoutGraph(*sub);
  return changed;
}

}  // namespace

bool contiguousSharedOperands(Graph& g) { return layoutGraph(g); }

}  // namespace gj
