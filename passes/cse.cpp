#include "passes/cse.h"

#include "passes/util.h"
#include "support/hash.h"

#include <algorithm>
#include <bit>
#include <vector>

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

// Note [CSE's tables]: one open-addressing table a block, sized for it when the walk enters it, holding each
// node with its hash: a probe compares hashes before it reads a node, nothing is allocated per node, and
// leaving a block drops its table whole. A lookup tries the block's own table, then those of the blocks
// around it (their nodes are visible in it), innermost first.
class Table {
 public:
  Table(size_t nodes, const Table* outer) : outer_(outer) {
    size_t capacity = 16;
    while (capacity < 2 * nodes) capacity *= 2;
    slots_.assign(capacity, Slot{0, nullptr});
    shift_ = 64 - std::countr_zero(capacity);
  }

  // An earlier node computing what n computes, visible here; or nullptr, and n is entered.
  Node* findOrAdd(Node* n) {
    const size_t h = SameComputation{}(n);
    for (const Table* t = outer_; t; t = t->outer_)
      if (Node* m = t->slots_[t->probe(n, h)].node) return m;
    Slot& s = slots_[probe(n, h)];
    if (s.node) return s.node;
    s = {h, n};
    return nullptr;
  }

 private:
  struct Slot {
    size_t hash;
    Node* node;
  };
  // The slot holding a node that computes what n computes (n's hash is h), or the empty one it would take.
  size_t probe(const Node* n, size_t h) const {
    for (size_t i = (h * 0x9E3779B97F4A7C15ULL) >> shift_;; i = (i + 1) & (slots_.size() - 1)) {
      const Slot& s = slots_[i];
      if (!s.node || (s.hash == h && SameComputation{}(s.node, n))) return i;
    }
  }

  const Table* outer_;
  std::vector<Slot> slots_;
  int shift_ = 0;
};

bool cseBlock(Block* b, const Table* outer) {
  bool changed = false;
  std::vector<Node*> nodes = b->nodesList();
  Table table(nodes.size(), outer);
  for (Node* n : nodes) {
    for (Block* inner : n->blocks()) changed |= cseBlock(inner, &table);
    if (!n->blocks().empty() || n->subgraph()) continue;
    Node* earlier = table.findOrAdd(n);
    if (!earlier) continue;
    for (size_t i = 0; i < n->outputs().size(); ++i) b->graph()->replaceValue(n->output(i), earlier->output(i));
    b->graph()->erase(n);
    changed = true;
  }
  return changed;
}

}  // namespace

bool eliminateCommonSubexpressions(Graph& g) {
  bool changed = cseBlock(g.block(), nullptr);
  forEachNode(g.block(), [&](Node* n) {
    if (optimizesInto(n)) changed |= eliminateCommonSubexpressions(*n->subgraph());
  });
  return changed;
}

}  // namespace gj
