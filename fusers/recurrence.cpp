// The persistent-recurrences step: finding the chains of steps of an unrolled recurrence in a fused graph
// and making each a prim::RecurrenceGroup (fusers/recurrence.h).
#include "fusers/recurrence.h"

#include "fusers/recurrence_layout.h"
#include "passes/subgraph_regions.h"
#include "runtime/cuda/device.h"
#include "support/error.h"

#include <fmt/format.h>

#include <unordered_set>

namespace gj {

using namespace recurrence;

namespace {

// Whether n, or a node of its blocks, reads one of `values`.
bool readsAny(const Node* n, const std::unordered_set<const Value*>& values) {
  for (const Value* v : n->inputs())
    if (values.count(v)) return true;
  for (const Block* b : n->blocks())
    for (const Node* m : *b)
      if (readsAny(m, values)) return true;
  return false;
}

// The steps that follow the product `head` in its block: each product's only reader a group of `groupOp`,
// one of whose outputs the next product by the same weight reads.
Chain follow(const Node* head, OpKind groupOp) {
  Chain c;
  const Node* p = head;
  while (p) {
    const auto& uses = p->output()->uses();
    if (uses.size() != 1 || uses[0].user->kind() != groupOp || uses[0].user->owningBlock() != p->owningBlock()) break;
    const Node* g = uses[0].user;
    c.products.push_back(p);
    c.groups.push_back(g);
    auto nextProduct = [&](const Value* v) -> const Node* {
      for (const Use& u : v->uses())
        if (u.user->kind() == OpKind::Mm && u.index == 0 && u.user->input(1) == p->input(1) &&
            u.user->owningBlock() == p->owningBlock())
          return u.user;
      return nullptr;
    };
    const Node* next = nullptr;
    if (c.cats.empty())
      for (const Value* o : g->outputs())
        if (!next) next = nextProduct(o);
    // Through a concatenation of g's outputs (every step's, once the first step's product read one, of the
    // same outputs); the last step's concatenation, read after the steps, joins the chain too.
    if (!next && c.cats.size() + 1 == c.groups.size()) {
      auto pieces = [](const Node* cat) {
        std::vector<size_t> at;
        for (const Value* part : cat->input(0)->node()->inputs()) at.push_back(part->offset());
        return at;
      };
      const Node* taken = nullptr;
      for (const Node* cat : catsOfOutputs(g)) {
        if (!c.cats.empty() && pieces(cat) != pieces(c.cats.back())) continue;
        if (const Node* product = nextProduct(cat->output())) {
          next = product;
          taken = cat;
          break;
        }
        if (!c.cats.empty() && !taken) taken = cat;
      }
      if (taken) {
        c.lists.push_back(taken->input(0)->node());
        c.cats.push_back(taken);
      }
    }
    p = next;
  }
  return c;
}

// The nodes between the chain's first and last that read what it computes (they move after the new node),
// or nullopt when a step reads one of them (the steps could not run as one node).
std::optional<std::vector<Node*>> dependentsOf(const Chain& c) {
  const std::vector<const Node*> nodes = c.nodes();
  std::unordered_set<const Node*> inChain(nodes.begin(), nodes.end());
  std::unordered_set<const Value*> computed;
  std::vector<Node*> dependents;
  for (Node* n = const_cast<Node*>(c.products.front()); n; n = n->next()) {
    if (inChain.count(n)) {
      for (const Value* v : n->inputs())
        if (computed.count(v) && !inChain.count(v->node())) return std::nullopt;
    } else if (readsAny(n, computed)) {
      dependents.push_back(n);
    } else {
      continue;  // never the chain's last node
    }
    for (const Value* v : n->outputs()) computed.insert(v);
    if (n == nodes.back()) break;
  }
  return dependents;
}

void formIn(Block* b, OpKind groupOp, int64_t maxWeightBytes, RecurrenceReport& report) {
  for (Node* n : *b)
    for (Block* inner : n->blocks()) formIn(inner, groupOp, maxWeightBytes, report);
  std::vector<Chain> chains;
  std::unordered_set<const Node*> taken;
  for (Node* n : *b) {
    if (n->kind() != OpKind::Mm || taken.count(n)) continue;
    Chain c = follow(n, groupOp);
    taken.insert(c.products.begin(), c.products.end());
    // The steps alike from the first (a backward's last step may compute more: the initial state's gradient).
    size_t alike = 1;
    while (alike < c.groups.size() && structurallyEqual(*c.groups[0]->subgraph(), *c.groups[alike]->subgraph())) ++alike;
    if (alike >= 2 && alike < c.groups.size()) truncate(c, alike);
    if (c.products.size() >= 2) chains.push_back(std::move(c));
  }
  for (const Chain& c : chains) {
    const auto steps = static_cast<int64_t>(c.products.size());
    auto refuse = [&](std::string why) {
      report.lines.push_back(fmt::format("not a persistent recurrence: {} steps from {}: {}", steps,
                                         c.products[0]->describe(), why));
      report.refused.push_back({c.products[0], steps, std::move(why)});
    };
    Layout l;
    if (std::string why = analyze(c, l); !why.empty()) {
      refuse(std::move(why));
      continue;
    }
    const int64_t weightBytes = l.inner * l.width * static_cast<int64_t>(dtypeSize(l.dtype));
    if (weightBytes > maxWeightBytes) {
      refuse(fmt::format("its weight ({} MiB) does not fit the device ({} MiB)", weightBytes >> 20, maxWeightBytes >> 20));
      continue;
    }
    auto dependents = dependentsOf(c);
    if (!dependents) {
      refuse("a step reads a value computed outside the steps from an earlier step");
      continue;
    }
    std::vector<Node*> region;
    for (const Node* n : c.nodes()) region.push_back(const_cast<Node*>(n));
    report.lines.push_back(fmt::format("persistent recurrence: {} steps from {}, {} x {} cells, weight {} x {}",
                                       steps, c.products[0]->describe(), l.batch, l.units, l.inner, l.width));
    mergeIntoSubgraph(region, OpKind::RecurrenceGroup, *dependents)->setPositionsOf(c.products[0]);
    ++report.formed;
  }
}

}  // namespace

int64_t recurrenceWeightBudget() {
  auto d = cuda::device();
  if (d && d.value()->l2Bytes > 0) return static_cast<int64_t>(d.value()->l2Bytes);
  return int64_t{32} << 20;
}

RecurrenceReport formRecurrences(Graph& g, OpKind groupOp, int64_t maxWeightBytes) {
  RecurrenceReport report;
  formIn(g.block(), groupOp, maxWeightBytes, report);
  return report;
}

}  // namespace gj
