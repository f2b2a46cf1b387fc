#include "passes/subgraph_regions.h"

#include "passes/util.h"
#include "support/hash.h"

#include <algorithm>
#include <optional>
#include <unordered_set>
#include <utility>

namespace gj {

void Region::stamp(std::vector<uint32_t>& marks, const Value* v) {
  if (v->id() >= marks.size()) marks.resize(std::max<size_t>(2 * v->id(), 64), 0);
  marks[v->id()] = stamp_;
}

void Region::add(Node* n) {
  nodes.push_back(n);
  for (const Value* v : n->inputs())
    if (!computes(v) && v->type().isTensor() && !stamped(read_, v)) {
      stamp(read_, v);
      ++outside_;
    }
  for (const Value* v : n->outputs()) stamp(computed_, v);
}

void Region::clear() {
  nodes.clear();
  outside_ = 0;
  if (++stamp_ == 0) {  // the stamps wrapped: no old mark may equal a new one
    std::fill(computed_.begin(), computed_.end(), 0);
    std::fill(read_.begin(), read_.end(), 0);
    stamp_ = 1;
  }
}

void growRegions(Block* b, const std::function<bool(const Node*, const Region&)>& canJoin,
                 const std::function<bool(std::vector<Node*>&, std::vector<Node*>&)>& close,
                 const std::function<bool(const Node*)>& beginsRegion) {
  Region region;
  std::vector<Node*> dependents;
  // Values computed outside the region from its outputs, marked with the region's number.
  std::vector<uint32_t> tainted;
  uint32_t number = 1;
  // Nodes of regions that closed and were left as they are: later rounds pass them by.
  std::unordered_set<const Node*> settled;
  size_t closed = 0;
  auto isTainted = [&](const Value* v) { return v->id() < tainted.size() && tainted[v->id()] == number; };
  auto finish = [&] {
    if (!region.nodes.empty()) {
      std::vector<Node*> nodes = region.nodes;
      if (!close(region.nodes, dependents)) settled.insert(nodes.begin(), nodes.end());
      ++closed;
    }
    region.clear();
    dependents.clear();
    if (++number == 0) {  // wrapped: no old mark may equal a new one
      std::fill(tainted.begin(), tainted.end(), 0);
      number = 1;
    }
  };
  // Note [Rounds of region growth]: one region grows at a time, so a node that could begin a region of
  // its own but neither joins the open one (another shape) nor follows it unrelated (it reads the region's
  // results through a node that could not join: a convolution) is deferred. A deferred node is taken by
  // the next round, which scans the block again past the nodes already placed. Each round closes at
  // least one region, fused (its nodes gone) or settled (passed by from then on), so rounds end.
  for (bool deferred = true; deferred;) {
    deferred = false;
    const size_t closedBefore = closed;
    for (Node* n : b->nodesList()) {
      bool usesRegion = false, usesTainted = false;
      auto read = [&](const Value* v) {
        usesRegion = usesRegion || region.computes(v) || isTainted(v);
        usesTainted = usesTainted || isTainted(v);
      };
      if (n->blocks().empty()) {
        for (const Value* v : n->inputs()) read(v);
      } else {
        for (const Value* v : allUses(n)) read(v);
      }
      const bool free = !settled.count(n);
      const bool joins = free && canJoin(n, region);
      const bool begins = free && !joins && usesRegion && beginsRegion && beginsRegion(n);
      if (joins || begins) {
        if (usesTainted || begins) finish();
        region.add(n);
        continue;
      }
      if (usesRegion) {
        for (const Value* v : n->outputs()) {
          if (v->id() >= tainted.size()) tainted.resize(std::max<size_t>(2 * v->id(), 64), 0);
          tainted[v->id()] = number;
        }
        dependents.push_back(n);
      }
      if (free && !region.nodes.empty() && !deferred) deferred = canJoin(n, Region{});
    }
    finish();
    deferred = deferred && closed > closedBefore;
  }
}

// The values the nodes of `region` (also in `in`) compute that are used outside it.
static std::vector<Value*> outputsOf(const std::vector<Node*>& region, const std::unordered_set<const Node*>& in) {
  std::vector<Value*> outputs;
  for (Node* n : region)
    for (Value* v : n->outputs()) {
      bool outside = false;
      for (const Use& u : v->uses()) outside = outside || !in.count(u.user);
      if (outside) outputs.push_back(v);
    }
  return outputs;
}

std::vector<Value*> regionOutputs(const std::vector<Node*>& region) {
  return outputsOf(region, std::unordered_set<const Node*>(region.begin(), region.end()));
}

// The group node on `body` in place of `region`: it reads `inputs` (the outer values of the body's
// inputs) and hands out `outputs` (the region's values its body returns, in order).
static Node* replaceRegion(const std::vector<Node*>& region, OpKind kind, std::shared_ptr<Graph> body,
                           std::span<Value* const> inputs, const std::vector<Value*>& outputs,
                           const std::vector<Node*>& dependents) {
  Graph* g = region.front()->graph();
  Node* node = g->create(kind, inputs, 0);
  node->setSubgraph(std::move(body));
  node->insertAfter(region.back());
  for (Value* v : outputs) {
    Value* o = node->addOutput(v->type());
    std::string name = v->name();
    g->replaceAllUsesWith(v, o);
    if (!name.empty()) {
      v->setName("");
      o->setName(name);
    }
  }
  Node* cursor = node;
  for (Node* t : dependents) {
    if (node->isBefore(t)) break;  // this one and the rest already follow the new node
    t->moveBefore(cursor->next());
    cursor = t;
  }
  for (auto it = region.rbegin(); it != region.rend(); ++it) g->erase(*it);
  return node;
}

// Whether merging copies `v` into the body (a constant, or a list of int constants) rather than taking it
// as an input.
static bool copiedIn(const Value* v) {
  const OpKind k = v->node()->kind();
  return k == OpKind::Constant || (k == OpKind::ListConstruct && constantInts(v));
}

// A region with at least 1/kDenseRegionShare as many nodes as its graph has values is copied through a
// dense ValueMap.
constexpr size_t kDenseRegionShare = 16;

// mergeIntoSubgraph, given the region's outputs.
static Node* copyIntoSubgraph(const std::vector<Node*>& region, OpKind kind, const std::vector<Node*>& dependents,
                              const std::vector<Value*>& outputs) {
  std::unordered_set<const Value*> produced;
  for (Node* n : region)
    for (Value* v : n->outputs()) produced.insert(v);
  auto sub = std::make_shared<Graph>();
  // A region of most of its block (an unrolled graph's one differentiable graph) maps through an array
  // over the graph's values; a small one (a fusion group's) through a hash table (Note [Dense value maps]).
  const Graph& source = *region.front()->graph();
  const bool dense = region.size() * kDenseRegionShare >= source.numValueIds();
  ValueMap env = dense ? ValueMap(source) : ValueMap();
  if (!dense) env.reserve(3 * region.size());
  std::vector<Value*> inputs;
  for (Node* n : region) {
    for (Value* v : n->inputs()) {
      if (produced.count(v) || env.contains(v)) continue;
      // A constant is copied in, and a list of int constants (permute's dims, a view's sizes) comes along
      // too, so that the formulas and rules inside read it as the constant it is (constantInts), as where
      // constant propagation folded it.
      if (copiedIn(v)) {
        for (const Value* e : v->node()->inputs())
          if (!env.contains(e)) env[e] = sub->block()->append(cloneNode(e->node(), *sub, env))->output();
        env[v] = sub->block()->append(cloneNode(v->node(), *sub, env))->output();
        continue;
      }
      env[v] = sub->addInput(v->type(), v->name());
      inputs.push_back(v);
    }
    sub->block()->append(cloneNode(n, *sub, env));
  }
  for (Value* v : outputs) sub->registerOutput(env.at(v));
  return replaceRegion(region, kind, std::move(sub), inputs, outputs, dependents);
}

Node* mergeIntoSubgraph(const std::vector<Node*>& region, OpKind kind, const std::vector<Node*>& dependents) {
  return copyIntoSubgraph(region, kind, dependents, regionOutputs(region));
}

namespace {

// Note [Shared group bodies]: pairs a kept body's values with a region's, from the outputs back. Each
// body value pairs with one outer value: a body input with a value the region reads from outside, a
// copied-in constant with an outer one of the same value, a body node's output with the output at the
// same offset of a region node of the same kind, constant and arity, whose operands pair in turn.
class BodyMatch {
 public:
  BodyMatch(const Graph& body, const std::unordered_set<const Node*>& region)
      : body_(body), region_(region), outer_(body.numValueIds(), nullptr), inputs_(body.inputs().size(), nullptr) {}

  // The outer values of the body's inputs, or nothing when the region computes something else.
  std::optional<std::vector<Value*>> inputsFor(const std::vector<Value*>& outputs) {
    if (outputs.size() != body_.outputs().size()) return std::nullopt;
    for (size_t i = 0; i < outputs.size(); ++i) pending_.emplace_back(body_.outputs()[i], outputs[i]);
    while (!pending_.empty()) {
      auto [b, v] = pending_.back();
      pending_.pop_back();
      if (!pair(b, v)) return std::nullopt;
    }
    for (Value* v : inputs_)
      if (!v) return std::nullopt;  // an input nothing reads: not a canonical body
    return std::move(inputs_);
  }

 private:
  bool pair(const Value* b, Value* v) {
    if (const Value* seen = outer_[b->id()]) return seen == v;
    if (b->type() != v->type()) return false;
    outer_[b->id()] = v;
    const Node* bn = b->node();
    const Node* vn = v->node();
    if (bn == body_.block()->paramNode()) {
      if (region_.count(vn) || copiedIn(v)) return false;
      inputs_[b->offset()] = v;
      return true;
    }
    if (b->offset() != v->offset() || !alike(bn, vn)) return false;
    if (region_.count(vn)) {
      for (size_t k = 0; k < bn->outputs().size(); ++k)
        if (bn->output(k) != b) pending_.emplace_back(bn->output(k), vn->output(k));
    } else if (!copiedIn(v)) {
      return false;  // a body node stands for a region node or a copied-in constant
    }
    for (size_t k = 0; k < bn->inputs().size(); ++k) pending_.emplace_back(bn->input(k), vn->input(k));
    return true;
  }

  static bool alike(const Node* a, const Node* b) {
    return a->kind() == b->kind() && a->inputs().size() == b->inputs().size() &&
           a->outputs().size() == b->outputs().size() && a->blocks().empty() && b->blocks().empty() &&
           !a->subgraph() && !b->subgraph() && sameConstant(a->constant(), b->constant());
  }

  const Graph& body_;
  const std::unordered_set<const Node*>& region_;
  std::vector<Value*> outer_;   // by body value id
  std::vector<Value*> inputs_;  // by body input
  std::vector<std::pair<const Value*, Value*>> pending_;
};

// What any two regions that merge into equal bodies share: their sizes and outputs' types, and the kinds
// they hold and the constants they read (summed, so the order the nodes were found in does not count).
// Regions that differ only in a constant (a step number) thus seldom meet in one list of candidates.
size_t regionSignature(const std::vector<Node*>& region, const std::vector<Value*>& outputs) {
  size_t h = region.size(), parts = 0;
  for (const Value* v : outputs) hashType(h, v->type());
  for (const Node* n : region) {
    size_t k = static_cast<size_t>(n->kind());
    hashMix(k, n->inputs().size());
    hashMix(k, constantHash(n->constant()));
    parts += k;
    for (const Value* v : n->inputs())
      if (v->node()->kind() == OpKind::Constant) parts += constantHash(v->node()->constant());
  }
  hashMix(h, parts);
  return h;
}

// The kept bodies of one signature a region is tried against, the latest first: a bound on the work a
// region that pairs with none of them costs.
constexpr size_t kBodiesTried = 8;

}  // namespace

Node* GroupBodies::merge(const std::vector<Node*>& region, OpKind kind, const std::vector<Node*>& dependents) {
  const std::unordered_set<const Node*> members(region.begin(), region.end());
  const std::vector<Value*> outputs = outputsOf(region, members);
  std::vector<std::shared_ptr<Graph>>& alike = bodies_[regionSignature(region, outputs)];
  for (size_t i = alike.size(); i-- > 0 && alike.size() - i <= kBodiesTried;)
    if (auto inputs = BodyMatch(*alike[i], members).inputsFor(outputs)) {
      ++shared_;
      return replaceRegion(region, kind, alike[i], *inputs, outputs, dependents);
    }
  Node* group = copyIntoSubgraph(region, kind, dependents, outputs);
  canonicalizeSubgraph(group);
  alike.push_back(group->subgraph());
  return group;
}

void canonicalizeSubgraph(Node* group) {
  Block* b = group->subgraph()->block();
  std::vector<Node*> order;
  std::vector<size_t> inputOrder;
  std::vector<bool> inputReached(b->inputs().size(), false);
  std::unordered_set<const Node*> visited;
  // Iterative post-order (a long pointwise chain must not exhaust the stack): a node is emitted once
  // every operand's producer has been.
  std::vector<std::pair<Node*, size_t>> stack;
  auto reach = [&](Value* v) {
    Node* producer = v->node();
    if (producer == b->paramNode()) {
      if (!inputReached[v->offset()]) inputOrder.push_back(v->offset());
      inputReached[v->offset()] = true;
    } else if (visited.insert(producer).second) {
      stack.emplace_back(producer, 0);
    }
  };
  for (Value* out : b->outputs()) {
    reach(out);
    while (!stack.empty()) {
      auto& [n, next] = stack.back();
      if (next < n->inputs().size()) {
        reach(n->input(next++));  // may push: `n` and `next` are not used after this
        continue;
      }
      order.push_back(n);
      stack.pop_back();
    }
  }
  for (Node* n : order) n->moveBefore(b->returnNode());
  for (Node* n : b->nodesList())
    if (!visited.count(n)) n->moveBefore(b->returnNode());  // unused by any output: after the rest, in order
  for (size_t i = 0; i < inputReached.size(); ++i)
    if (!inputReached[i]) inputOrder.push_back(i);

  bool identity = true;
  for (size_t i = 0; i < inputOrder.size(); ++i) identity = identity && inputOrder[i] == i;
  if (identity) return;
  std::vector<Value*> outer(group->inputs().begin(), group->inputs().end());
  std::vector<Value*> inner(b->inputs().begin(), b->inputs().end());
  group->removeAllInputs();
  Graph* sub = group->subgraph().get();
  for (size_t i : inputOrder) {
    group->addInput(outer[i]);
    std::string name = inner[i]->name();
    inner[i]->setName("");
    Value* fresh = b->addInput(inner[i]->type(), name);
    sub->replaceAllUsesWith(inner[i], fresh);
  }
  for (size_t i = inner.size(); i-- > 0;) b->eraseInput(i);
}

}  // namespace gj
