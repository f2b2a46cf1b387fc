#include "passes/cse.h"

#include "passes/util.h"
#include "support/hash.h"

#include <algorithm>
#include <unordered_set>

namespace gj {

namespace {

// What makes two nodes compute the same: op, inputs, constant value and output kinds (for constants),
// read from the nodes themselves (no key is built per node). A node in the table keeps its inputs while
// the walk goes on: only nodes after it are rewritten.
struct SameComputation {
  size_t operator()(const Node* n) const {
    size_t h = constantHash(n->constant());
    hashMix(h, static_cast<size_t>(n->kind()));
    for (const Value* v : n->inputs()) hashMix(h, reinterpret_cast<uintptr_t>(v));  // no load: the pointer itself
    for (const Value* v : n->outputs()) hashMix(h, static_cast<size_t>(v->type().kind));
    return h;
  }
  bool operator()(const Node* a, const Node* b) const {
    auto kind = [](const Value* x, const Value* y) { return x->type().kind == y->type().kind; };
    return a->kind() == b->kind() && std::ranges::equal(a->inputs(), b->inputs()) &&
           std::ranges::equal(a->outputs(), b->outputs(), kind) && sameConstant(a->constant(), b->constant());
  }
};

class Cse {
 public:
  bool run(Block* b) {
    size_t mark = undo_.size();
    for (Node* n : b->nodesList()) {
      for (Block* inner : n->blocks()) run(inner);
      if (!n->blocks().empty() || n->subgraph()) continue;
      auto [it, fresh] = seen_.insert(n);
      if (fresh) {
        undo_.push_back(n);
        continue;
      }
      for (size_t i = 0; i < n->outputs().size(); ++i) b->graph()->replaceValue(n->output(i), (*it)->output(i));
      b->graph()->erase(n);
      changed_ = true;
    }
    // Leaving the block: its nodes are not visible to the code after it.
    for (size_t i = mark; i < undo_.size(); ++i) seen_.erase(undo_[i]);
    undo_.resize(mark);
    return changed_;
  }

 private:
  std::unordered_set<Node*, SameComputation, SameComputation> seen_;
  std::vector<Node*> undo_;  // the nodes seen_ gained in the blocks being walked, innermost last
  bool changed_ = false;
};

}  // namespace

bool eliminateCommonSubexpressions(Graph& g) {
  bool changed = Cse().run(g.block());
  forEachNode(g.block(), [&](Node* n) {
    if (optimizesInto(n)) changed |= eliminateCommonSubexpressions(*n->subgraph());
  });
  return changed;
}

}  // namespace gj
