// functionalize-lists: TorchScript mutates lists in place; graphjit's lists are values. Each read of a
// mutated list is given the version current at that point, and a list mutated inside a loop or an if is
// carried out of it.
#include "passes/frontend.h"
#include "passes/util.h"

#include <algorithm>
#include <unordered_map>

namespace gj {

namespace {

bool mutates(const Node* n) { return n->kind() == OpKind::ListAppendInPlace || n->kind() == OpKind::ListExtendInPlace; }

// The list a value names: an in-place op's result is its operand's list.
Value* listOf(Value* v) {
  while (mutates(v->node())) v = v->node()->input(0);
  return v;
}

// True when v is defined by n or inside one of n's blocks.
bool definedInside(const Value* v, const Node* n) {
  for (const Node* m = v->node(); m; m = m->owningBlock() ? m->owningBlock()->owningNode() : nullptr)
    if (m == n) return true;
  return false;
}

class Functionalizer {
 public:
  explicit Functionalizer(Graph& g) : g_(g) {}

  bool run() {
    walk(g_.block());
    for (auto it = mutations_.rbegin(); it != mutations_.rend(); ++it) g_.erase(*it);
    // aten::list copies a list so that appends to the copy leave the original alone; with every version a
    // value of its own, the copy is the version it read
    for (Node* n : copies_) {
      g_.replaceAllUsesWith(n->output(), n->input(0));
      g_.erase(n);
    }
    return changed_ || !copies_.empty();
  }

 private:
  Value* now(Value* v) {
    auto it = current_.find(listOf(v));
    return it == current_.end() ? v : it->second;
  }

  void readCurrent(Node* n) {
    for (size_t i = 0; i < n->inputs().size(); ++i)
      if (Value* v = now(n->input(i)); v != n->input(i)) n->replaceInput(i, v);
  }

  // list + [x, y] as appends; any other list as one aten::add.
  Value* extend(Value* list, Value* other, Node* before) {
    if (other->node()->kind() != OpKind::ListConstruct) {
      Node* cat = g_.create(OpKind::ListConcat, {list, other}, 0);
      cat->addOutput(list->type());
      cat->insertBefore(before);
      return cat->output();
    }
    for (Value* x : other->node()->inputs()) list = append(list, x, before);
    return list;
  }

  Value* append(Value* list, Value* x, Node* before) {
    Node* a = g_.create(OpKind::ListAppend, {list, x}, 0);
    a->addOutput(list->type());
    a->setPositionsOf(before);
    a->insertBefore(before);
    return a->output();
  }

  // The lists that n's blocks mutate but n does not define, in order of first mutation.
  static std::vector<Value*> mutatedWithin(Node* n) {
    std::vector<Value*> lists;
    for (Block* b : n->blocks())
      forEachNode(b, [&](Node* m) {
        if (!mutates(m)) return;
        Value* list = listOf(m->input(0));
        if (!definedInside(list, n) && std::find(lists.begin(), lists.end(), list) == lists.end())
          lists.push_back(list);
      });
    return lists;
  }

  void loop(Node* n, const std::vector<Value*>& lists) {
    Block* body = n->block(0);
    for (Value* list : lists) {
      n->addInput(now(list));
      current_[list] = body->addInput(list->type());
    }
    walk(body);
    for (Value* list : lists) {
      body->registerOutput(now(list));
      current_[list] = n->addOutput(list->type());
    }
  }

  void branches(Node* n, const std::vector<Value*>& lists) {
    std::vector<Value*> before;
    for (Value* list : lists) before.push_back(now(list));
    for (Block* b : n->blocks()) {
      for (size_t i = 0; i < lists.size(); ++i) current_[lists[i]] = before[i];
      walk(b);
      for (Value* list : lists) b->registerOutput(now(list));
    }
    for (Value* list : lists) current_[list] = n->addOutput(list->type());
  }

  void walk(Block* b) {
    for (Node* n : b->nodesList()) {
      Value* list = mutates(n) ? listOf(n->input(0)) : nullptr;
      readCurrent(n);
      if (n->kind() == OpKind::ListAppendInPlace) {
        current_[list] = append(n->input(0), n->input(1), n);
      } else if (n->kind() == OpKind::ListExtendInPlace) {
        current_[list] = extend(n->input(0), n->input(1), n);
      } else if (n->kind() == OpKind::ListConcat && n->input(1)->node()->kind() == OpKind::ListConstruct) {
        g_.replaceAllUsesWith(n->output(), extend(n->input(0), n->input(1), n));
        mutations_.push_back(n);
        changed_ = true;
        continue;
      } else if (!n->blocks().empty()) {
        const std::vector<Value*> lists = mutatedWithin(n);
        changed_ |= !lists.empty();
        if (n->kind() == OpKind::Loop) loop(n, lists);
        else if (n->kind() == OpKind::If) branches(n, lists);
        else
          for (Block* inner : n->blocks()) walk(inner);
        continue;
      } else {
        if (n->kind() == OpKind::ListCopy) copies_.push_back(n);  // read the current version above
        continue;
      }
      mutations_.push_back(n);  // its result's readers now read the functional version
      changed_ = true;
    }
    readCurrent(b->returnNode());
  }

  Graph& g_;
  std::unordered_map<Value*, Value*> current_;  // a list -> its current version
  std::vector<Node*> mutations_;                // the in-place ops, erased at the end
  std::vector<Node*> copies_;                   // the aten::list copies, their operand's version at the end
  bool changed_ = false;
};

}  // namespace

bool functionalizeLists(Graph& g) { return Functionalizer(g).run(); }

}  // namespace gj
