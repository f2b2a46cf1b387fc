#include "passes/cse.h"

#include "passes/util.h"

#include <map>
#include <tuple>

namespace gj {

namespace {

// What makes two nodes equal: op, inputs, constant value and output types (for constants).
struct Key {
  OpKind kind;
  std::vector<Value*> inputs;
  ConstantValue constant;
  std::vector<TypeKind> outputKinds;
  bool operator<(const Key& o) const {
    return std::tie(kind, inputs, outputKinds) < std::tie(o.kind, o.inputs, o.outputKinds) ||
           (std::tie(kind, inputs, outputKinds) == std::tie(o.kind, o.inputs, o.outputKinds) && constant < o.constant);
  }
};

class Cse {
 public:
  bool run(Block* b) {
    size_t mark = undo_.size();
    for (Node* n : b->nodesList()) {
      for (Block* inner : n->blocks()) run(inner);
      if (!n->blocks().empty() || n->subgraph()) continue;
      Key k = keyOf(n);
      // A NaN constant never equals itself; leave it alone.
      if (n->kind() == OpKind::Constant && n->constant().index() == 2 &&
          std::get<double>(n->constant()) != std::get<double>(n->constant()))
        continue;
      auto it = seen_.find(k);
      if (it == seen_.end()) {
        seen_.emplace(k, n);
        undo_.push_back(k);
        continue;
      }
      for (size_t i = 0; i < n->outputs().size(); ++i) {
        b->graph()->replaceValue(n->output(i), it->second->output(i));
      }
      b->graph()->erase(n);
      changed_ = true;
    }
    // Leaving the block: its nodes are not visible to the code after it.
    for (size_t i = mark; i < undo_.size(); ++i) seen_.erase(undo_[i]);
    undo_.resize(mark);
    return changed_;
  }

 private:
  static Key keyOf(const Node* n) {
    Key k{n->kind(), {n->inputs().begin(), n->inputs().end()}, n->constant(), {}};
    for (const Value* v : n->outputs()) k.outputKinds.push_back(v->type().kind);
    return k;
  }
  std::map<Key, Node*> seen_;
  std::vector<Key> undo_;
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
