// The persistent kernel's view of a chain of steps: each group input's and output's role, the cell's shape,
// and whether the kernel can run the chain at all (fusers/recurrence_layout.h).
#include "fusers/recurrence_layout.h"

#include "fusers/fuser.h"
#include "fusers/group_rules.h"
#include "passes/util.h"
#include "runtime/tensor.h"
#include "support/error.h"

#include <fmt/format.h>

#include <span>
#include <unordered_set>

namespace gj::recurrence {

namespace {

// The parts of aten::cat(prim::ListConstruct(parts...), dim) at `dim` (1 also as -1: the values are
// matrices); nullopt for any other node.
std::optional<std::span<Value* const>> concatenated(const Node* n, int64_t dim) {
  auto d = n->kind() == OpKind::Cat ? constantInt(n->input(1)) : std::nullopt;
  if (!d || (*d != dim && !(dim == 1 && *d == -1)) || n->input(0)->node()->kind() != OpKind::ListConstruct)
    return std::nullopt;
  return n->input(0)->node()->inputs();
}

// The product's uses in the group's subgraph read element (b, j) at columns c H + j only: chunks along
// dim 1 into [B, H] pieces, or the product itself when G = H, read by elementwise ops.
std::string productReadsElementwise(const Graph& sub, size_t slot, const Layout& l) {
  const Value* p = sub.inputs()[slot];
  for (const Use& u : p->uses()) {
    const Node* n = u.user;
    if (n->kind() == OpKind::Chunk) {
      auto chunks = constantInt(n->input(1)), dim = constantInt(n->input(2));
      if (!chunks || !dim || (*dim != 1 && *dim != -1) || *chunks * l.units != l.width)
        return "the group splits the product other than into chunks of the hidden size along its columns";
      continue;
    }
    if (!fusion::isPointwise(n) || l.width != l.units)
      return "the group reads the product other than element by element";
  }
  return "";
}

// A sum over the batch of [B, H] values: sum_to_size(v, [H]), or cat(sum_to_size(v_c, [H])..., 0); its v's.
std::optional<std::vector<const Value*>> batchSum(const Value* o, const Layout& l) {
  auto single = [&](const Node* n) -> const Value* {
    if (n->kind() != OpKind::SumToSize || staticSizes(n->input(0)) != l.cell) return nullptr;
    auto to = constantInts(n->input(1));
    return to && *to == std::vector<int64_t>{l.units} ? n->input(0) : nullptr;
  };
  const Node* n = o->node();
  if (const Value* v = single(n)) return std::vector<const Value*>{v};
  auto sums = concatenated(n, 0);
  if (!sums) return std::nullopt;
  std::vector<const Value*> parts;
  for (const Value* part : *sums) {
    const Value* v = single(part->node());
    if (!v) return std::nullopt;
    parts.push_back(v);
  }
  return parts;
}

// A concatenation along dim 1 of [B, H] values; its parts.
std::optional<std::vector<const Value*>> columnConcatenation(const Value* o, const Layout& l) {
  auto columns = concatenated(o->node(), 1);
  if (!columns) return std::nullopt;
  std::vector<const Value*> parts;
  for (const Value* part : *columns) {
    if (staticSizes(part) != l.cell) return std::nullopt;
    parts.push_back(part);
  }
  return parts;
}

// Whether the group's nodes are elementwise ops, chunks, concatenations and sums over the batch (which
// classifyCell then checks at its outputs).
std::string elementwiseNodes(const Graph& sub) {
  for (const Node* n : *sub.block()) {
    const OpKind k = n->kind();
    if (k == OpKind::Constant || k == OpKind::Chunk || k == OpKind::ListUnpack || k == OpKind::ListConstruct ||
        k == OpKind::Cat || k == OpKind::SumToSize || fusion::isPointwise(n))
      continue;  // a cat and a sum are checked as outputs
    return fmt::format("its cell is not elementwise ({}): a block owns a slice of the hidden size and cannot read "
                       "across it", n->info().name);
  }
  return "";
}

// Whether the group computes each element of [B, H] from the same element of its operands alone, but for
// concatenations of such elements and sums of them over the batch at its outputs; fills l.roles.
std::string classifyCell(const Graph& sub, Layout& l) {
  for (const Node* n : *sub.block())
    if (n->kind() == OpKind::Cat || n->kind() == OpKind::SumToSize)
      for (const Value* o : n->outputs())
        for (const Use& u : o->uses())
          if (u.user->kind() != OpKind::Return && u.user->kind() != OpKind::ListConstruct)
            return fmt::format("its cell reads the result of {} (a block owns a slice of the hidden size)", n->info().name);
  l.roles.assign(sub.outputs().size(), {});
  std::vector<std::optional<std::vector<const Value*>>> sums(sub.outputs().size());
  for (size_t k = 0; k < sub.outputs().size(); ++k) {
    const Value* o = sub.outputs()[k];
    OutputRole& r = l.roles[k];
    if (o->type().dtype != l.dtype) return "the cell's outputs differ in dtype";
    if (staticSizes(o) == l.cell) {
      r.index = l.cellWidths.size();
      l.cellWidths.push_back(1);
    } else if (auto parts = columnConcatenation(o, l)) {
      r.index = l.cellWidths.size();
      r.width = static_cast<int64_t>(parts->size());
      l.cellWidths.push_back(r.width);
    } else if ((sums[k] = batchSum(o, l))) {
      r.sum = true;
      r.index = l.sums++;
    } else {
      return fmt::format("its output {} is neither elementwise over {}, a concatenation of such along dim 1, nor a "
                         "sum of such over the batch", k, shapeStr(l.cell));
    }
  }
  // Each summand, where the cell stores it: an output, or a slice of a concatenation.
  for (size_t k = 0; k < sub.outputs().size(); ++k) {
    if (!sums[k]) continue;
    for (const Value* v : *sums[k]) {
      std::optional<std::pair<size_t, int64_t>> at;
      for (size_t o = 0; o < sub.outputs().size() && !at; ++o) {
        const OutputRole& r = l.roles[o];
        if (r.sum) continue;
        if (sub.outputs()[o] == v) at = {r.index, 0};
        else if (auto parts = columnConcatenation(sub.outputs()[o], l))
          for (size_t c = 0; c < parts->size() && !at; ++c)
            if ((*parts)[c] == v) at = {r.index, static_cast<int64_t>(c)};
      }
      if (!at) return "its cell sums over the batch a value it does not output";
      l.roles[k].parts.push_back(*at);
    }
  }
  return "";
}

}  // namespace

std::vector<const Node*> catsOfOutputs(const Node* g) {
  std::vector<const Node*> cats;
  for (const Value* o : g->outputs())
    for (const Use& u : o->uses()) {
      const Node* list = u.user;
      // each list once: found through its first element
      if (list->kind() != OpKind::ListConstruct || list->output()->uses().size() != 1 || u.index != 0) continue;
      const Node* cat = list->output()->uses()[0].user;
      if (!concatenated(cat, 1)) continue;
      bool ofG = true;
      for (const Value* part : list->inputs()) ofG = ofG && part->node() == g;
      if (ofG) cats.push_back(cat);
    }
  return cats;
}

void truncate(Chain& c, size_t steps) {
  c.products.resize(steps);
  c.groups.resize(steps);
  if (c.cats.size() > steps) {
    c.lists.resize(steps);
    c.cats.resize(steps);
  }
}

std::string analyze(const Chain& c, Layout& l) {
  const size_t steps = c.products.size();
  l.steps = static_cast<int64_t>(steps);
  const std::vector<const Node*> nodes = c.nodes();
  std::unordered_set<const Node*> inChain(nodes.begin(), nodes.end());
  auto outside = [&](const Value* v) { return !inChain.count(v->node()); };

  const Node* p0 = c.products[0];
  const Value* w = p0->input(1);
  auto ws = staticSizes(w), hs = staticSizes(p0->input(0)), ps = staticSizes(p0->output());
  if (!ws || !hs || !ps || ws->size() != 2 || hs->size() != 2 || ps->size() != 2)
    return "the product's sizes are not known";
  const std::optional<DType> dtype = p0->output()->type().dtype;
  if (dtype != DType::Float32 && dtype != DType::Float64) return "the product is not float32 or float64";
  l.dtype = *dtype;
  if (w->type().dtype != l.dtype || p0->input(0)->type().dtype != l.dtype) return "the product mixes dtypes";
  l.batch = (*hs)[0];
  l.inner = (*ws)[0];
  l.width = (*ws)[1];

  const Graph& sub = *c.groups[0]->subgraph();
  if (std::string why = elementwiseNodes(sub); !why.empty()) return why;
  for (size_t t = 1; t < steps; ++t)
    if (!structurallyEqual(sub, *c.groups[t]->subgraph())) return fmt::format("step {} computes another cell", t);
  const Node* g0 = c.groups[0];
  if (!outside(p0->input(0))) return "the first product reads a step";

  // Each group input's role, from step 1, held in every step.
  const size_t nin = g0->inputs().size();
  l.slots.assign(nin, {});
  size_t products = 0, productSlot = 0;
  for (size_t j = 0; j < nin; ++j) {
    const Value* v1 = c.groups[1]->input(j);
    Slot& s = l.slots[j];
    if (v1 == c.products[1]->output()) s.role = Role::Product, ++products, productSlot = j;
    else if (v1->node() == c.groups[0]) s = {Role::Carried, v1->offset()};
    else if (v1 == g0->input(j)) s.role = Role::Invariant;
    else s.role = Role::PerStep;
    for (size_t t = 0; t < steps; ++t) {
      const Value* v = c.groups[t]->input(j);
      if (v->type().dtype != l.dtype || !staticSizes(v)) return "a step's group reads a value of another dtype or unknown sizes";
      bool ok = true;
      switch (s.role) {
        case Role::Product: ok = v == c.products[t]->output(); break;
        case Role::Carried: ok = t == 0 ? outside(v) : v == c.groups[t - 1]->output(s.from); break;
        case Role::Invariant: ok = v == g0->input(j) && outside(v); break;
        case Role::PerStep: ok = outside(v) && staticSizes(v) == staticSizes(g0->input(j)); break;
      }
      if (!ok) return fmt::format("step {}'s group reads its input {} in another way than step 1's", t, j);
    }
  }
  if (products != 1) return "a step's group reads its product at more than one input";

  // The cell's elements: the product's chunks (the gates), or the product.
  l.cell = {l.batch, l.width};
  for (const Use& u : sub.inputs()[productSlot]->uses())
    if (u.user->kind() == OpKind::Chunk)
      if (auto chunks = constantInt(u.user->input(1)); chunks && *chunks > 0 && l.width % *chunks == 0)
        l.cell = {l.batch, l.width / *chunks};
  l.units = l.cell[1];
  l.chunks = l.width / l.units;
  if (std::string why = productReadsElementwise(sub, productSlot, l); !why.empty()) return why;
  if (std::string why = classifyCell(sub, l); !why.empty()) return why;
  for (const Slot& s : l.slots)
    if (s.role == Role::Carried && (l.roles[s.from].sum || l.roles[s.from].width != 1))
      return "a step reads a sum or a concatenation of the step before";

  // The hidden state: the outputs of step t - 1 that step t's product reads (concatenated, or one), the
  // same every step.
  int64_t hiddenWidth = 1;
  if (!c.cats.empty()) {
    for (const Value* part : c.lists[0]->inputs()) {
      const OutputRole& r = l.roles[part->offset()];
      if (r.sum || r.width != 1) return "the steps concatenate a sum or a concatenation";
      l.catParts.push_back(r.index);
    }
    hiddenWidth = static_cast<int64_t>(l.catParts.size());
    for (size_t t = 0; t < c.cats.size(); ++t) {
      std::vector<size_t> parts;
      for (const Value* part : c.lists[t]->inputs()) parts.push_back(l.roles[part->offset()].index);
      if (parts != l.catParts) return "the steps concatenate different outputs";
      if (t + 1 < steps && c.products[t + 1]->input(0) != c.cats[t]->output())
        return "a product does not read the step before";
    }
  } else {
    size_t output = 0;
    for (size_t t = 1; t < steps; ++t) {
      const Value* h = c.products[t]->input(0);
      if (h->node() != c.groups[t - 1]) return "a product does not read the step before";
      if (t == 1) output = h->offset();
      if (h->offset() != output) return "the steps' products read different outputs of the step before";
    }
    if (l.roles[output].sum) return "a product reads a sum over the batch";
    l.hidden = l.roles[output].index;
    hiddenWidth = l.roles[output].width;
  }
  if (l.units * hiddenWidth != l.inner)
    return fmt::format("the product's inner size {} is not the hidden state's ({} x {})", l.inner, hiddenWidth, l.units);
  return "";
}

Chain chainOf(const Graph& sub) {
  Chain c;
  for (const Node* n : *sub.block()) {
    if (n->kind() == OpKind::Mm) c.products.push_back(n);
    else if (isFusionGroupOp(n->kind())) c.groups.push_back(n);
    else if (n->kind() == OpKind::ListConstruct) c.lists.push_back(n);
    else if (n->kind() == OpKind::Cat) c.cats.push_back(n);
  }
  USER_CHECK(c.products.size() == c.groups.size() && c.products.size() >= 2,
             "persistent recurrence: the subgraph holds {} products and {} groups", c.products.size(), c.groups.size());
  return c;
}

}  // namespace gj::recurrence
