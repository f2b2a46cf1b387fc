// Run plans (Note [Run plans], executors/interpreter/plan.h): a graph's values given frame slots, its blocks
// made flat arrays of instructions.
#include "executors/interpreter/plan.h"

#include "executors/interpreter/kernels.h"
#include "passes/util.h"

#include <algorithm>
#include <optional>
#include <unordered_set>

namespace gj::interp {

namespace {

// The values of `b` (its params and its nodes' results) by the index of the node after which nothing
// reads them, nested blocks included; a result nothing reads goes right after its node.
std::vector<std::vector<const Value*>> lastUses(const Block* b) {
  std::unordered_map<const Node*, size_t> position;
  for (const Node* n : *b) position.emplace(n, position.size());
  std::vector<std::vector<const Value*>> drops(position.size());
  auto plan = [&](const Value* v, std::optional<size_t> definedAt) {
    std::optional<size_t> last = definedAt;
    for (const Use& u : v->uses()) {
      const Node* user = u.user;
      while (user->owningBlock() != b) user = user->owningBlock()->owningNode();
      if (user == b->returnNode()) return;
      last = std::max(last.value_or(0), position.at(user));
    }
    if (last) drops[*last].push_back(v);
  };
  for (const Value* v : b->inputs()) plan(v, std::nullopt);
  for (const Node* n : *b)
    for (const Value* v : n->outputs()) plan(v, position.at(n));
  return drops;
}

// Whether aten::mm n's right operand is the right operand of other products too (an unrolled RNN's
// weight, 100 steps), or comes from outside a loop whose body n is in: then packing it once pays.
bool sharesRightOperand(const Node* n) {
  const Value* b = n->input(1);
  int products = 0;
  for (const Use& u : b->uses()) products += u.user->kind() == OpKind::Mm && u.index == 1;
  return products >= 2 || inLoopBelow(n, b->node()->owningBlock());
}

}  // namespace

GraphPlan makeGraphPlan(const Graph& g) {
  GraphPlan p;
  p.slotOf.assign(g.numValueIds(), kNoSlot);
  // The top block's values share slots whose lifetimes do not overlap: a slot freed by a node's drops
  // goes to a later node's results (an unrolled 100-step forward: about 700 slots, not 5000, which the
  // frame makes and destroys on every run). The values of nested blocks, which run many times, each get a
  // slot of their own.
  std::vector<uint32_t> freed;
  auto reuse = [&](const Value* v) {
    uint32_t s = p.numSlots;
    if (freed.empty()) ++p.numSlots;
    else s = freed.back(), freed.pop_back();
    p.slotOf[v->id()] = s;
  };
  auto own = [&](const Value* v) { p.slotOf[v->id()] = p.numSlots++; };
  std::vector<const Block*> blocks;
  auto nested = [&](auto&& self, const Block* b) -> void {
    blocks.push_back(b);
    for (const Value* v : b->inputs()) own(v);
    for (const Node* n : *b) {
      for (const Value* v : n->outputs()) own(v);
      for (const Block* inner : n->blocks()) self(self, inner);
    }
  };
  const Block* top = g.block();
  blocks.push_back(top);
  const auto topDrops = lastUses(top);
  std::unordered_set<const Value*> distinct(g.outputs().begin(), g.outputs().end());
  p.outputsFirst = !g.outputs().empty() && distinct.size() == g.outputs().size() &&
                   std::all_of(g.outputs().begin(), g.outputs().end(),
                               [&](const Value* v) { return v->node()->owningBlock() == top; });
  if (p.outputsFirst)
    for (const Value* v : g.outputs()) own(v);  // never dropped: the return node reads them
  for (const Value* v : top->inputs())
    if (p.slotOf[v->id()] == kNoSlot) reuse(v);  // an input returned as it is has its output's slot
  for (size_t i = 0; const Node* n : *top) {
    for (const Value* v : n->outputs())  // before the node's drops: its operands are still read
      if (p.slotOf[v->id()] == kNoSlot) reuse(v);
    for (const Block* inner : n->blocks()) nested(nested, inner);
    for (const Value* v : topDrops[i++]) freed.push_back(p.slotOf[v->id()]);
  }
  for (const Value* v : g.inputs()) {
    p.inputSlots.push_back(p.slotOf[v->id()]);
    p.inputTypes.push_back(v->type());
  }
  for (const Value* v : g.outputs()) p.outputSlots.push_back(p.slotOf[v->id()]);
  std::unordered_set<uint32_t> later;
  p.outputMoves.resize(p.outputSlots.size());
  for (size_t i = p.outputSlots.size(); i-- > 0;) p.outputMoves[i] = later.insert(p.outputSlots[i]).second;
  for (const Block* b : blocks) {
    BlockPlan& bp = p.blocks[b];
    std::vector<std::vector<const Value*>> nestedDrops;
    const auto& blockDrops = b == top ? topDrops : (nestedDrops = lastUses(b));
    struct Ranges { size_t ins, outs, drops; };
    std::vector<Ranges> at;
    for (size_t i = 0; const Node* n : *b) {
      at.push_back({bp.slots.size(), 0, 0});
      for (const Value* v : n->inputs()) bp.slots.push_back(p.slotOf[v->id()]);
      at.back().outs = bp.slots.size();
      for (const Value* v : n->outputs()) bp.slots.push_back(p.slotOf[v->id()]);
      at.back().drops = bp.slots.size();
      for (const Value* v : blockDrops[i++]) bp.slots.push_back(p.slotOf[v->id()]);
      bool shared = false;
      if (n->kind() == OpKind::Mm) shared = sharesRightOperand(n);
      if (n->kind() == OpKind::Contiguous) {
        shared = !n->output()->uses().empty();
        for (const Use& u : n->output()->uses())
          shared = shared && u.user->kind() == OpKind::Mm && u.index == 1 && sharesRightOperand(u.user);
      }
      auto count = [](size_t k) { return static_cast<uint32_t>(k); };
      bp.instrs.push_back({n, n->kind(), kernelFor(n->kind()), shared, nullptr, nullptr, nullptr,
                           count(n->inputs().size()), count(n->outputs().size()), count(blockDrops[i - 1].size())});
    }
    for (size_t i = 0; i < bp.instrs.size(); ++i) {  // slots is complete: point into it
      bp.instrs[i].ins = bp.slots.data() + at[i].ins;
      bp.instrs[i].outs = bp.slots.data() + at[i].outs;
      bp.instrs[i].drops = bp.slots.data() + at[i].drops;
    }
  }
  return p;
}

}  // namespace gj::interp

namespace gj {

const interp::GraphPlan& RunPlanCache::Impl::plan(const Graph& g) {
  std::lock_guard<std::mutex> lock(mu);
  auto [it, added] = plans.try_emplace(&g);
  if (added) it->second = std::make_unique<interp::GraphPlan>(interp::makeGraphPlan(g));
  return *it->second;
}

RunPlanCache::RunPlanCache() : impl_(std::make_unique<Impl>()) {}
RunPlanCache::~RunPlanCache() = default;

}  // namespace gj
