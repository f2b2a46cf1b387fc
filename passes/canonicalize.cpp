#include "passes/canonicalize.h"

#include "ir/printer.h"
#include "passes/util.h"

#include <algorithm>
#include <unordered_set>

namespace gj {

bool canonicalize(Graph& g) {
  bool changed = false;
  // 1. Constants: one node per distinct (type, value), at the top, sorted.
  std::vector<Node*> constants;
  forEachNode(g.block(), [&](Node* n) {
    if (n->kind() == OpKind::Constant) constants.push_back(n);
  });
  auto key = [](const Node* n) {
    return std::pair{static_cast<int>(n->output()->type().kind), constantStr(n->constant())};
  };
  std::stable_sort(constants.begin(), constants.end(), [&](Node* a, Node* b) { return key(a) < key(b); });
  Node* anchor = g.block()->paramNode();
  Node* prev = nullptr;
  for (Node* c : constants) {
    if (prev && key(prev) == key(c)) {
      g.replaceAllUsesWith(c->output(), prev->output());
      g.erase(c);
      changed = true;
      continue;
    }
    if (anchor->next() != c) {
      c->moveBefore(anchor->next());
      changed = true;
    }
    anchor = c;
    prev = c;
  }
  // 2. Names: only graph inputs and outputs keep theirs.
  std::unordered_set<const Value*> keep(g.outputs().begin(), g.outputs().end());
  auto clear = [&](Value* v) {
    if (!v->name().empty() && !keep.count(v)) {
      v->setName("");
      changed = true;
    }
  };
  forEachNode(g.block(), [&](Node* n) {
    for (Value* v : n->outputs()) clear(v);
    for (Block* b : n->blocks())
      for (Value* v : b->inputs()) clear(v);
  });
  return changed;
}

}  // namespace gj
