// Persistent recurrences: finding the steps of an unrolled recurrence, and the one cooperative kernel that
// runs them all (fusers/recurrence.h).
#include "fusers/recurrence.h"

#include "fusers/group_rules.h"
#include "passes/dce.h"
#include "passes/subgraph_regions.h"
#include "passes/util.h"
#include "runtime/cuda/device.h"
#include "support/error.h"

#include <fmt/format.h>

#include <fstream>
#include <unordered_map>
#include <unordered_set>

namespace gj {

namespace {

// What a step's group reads at one of its inputs.
enum class Role : uint8_t {
  Product,    // the step's product h_{t-1} W
  Carried,    // output `from` of the step before; an outside value in the first step
  Invariant,  // one outside value for every step
  PerStep,    // an outside value of the step's own (x_t)
};

struct Slot {
  Role role = Role::Invariant;
  size_t from = 0;
};

// The steps, in order: step t is products[t] (aten::mm) and the group groups[t] that reads it, and where the
// next product reads a concatenation of the group's outputs (the backward's gate gradients, which the
// legacy fuser leaves outside its groups) the prim::ListConstruct lists[t] and aten::cat cats[t] of it
// (every step but possibly the last).
struct Chain {
  std::vector<const Node*> products, groups, lists, cats;
  /// Every node, in program order.
  std::vector<const Node*> nodes() const {
    std::vector<const Node*> all;
    for (size_t t = 0; t < products.size(); ++t) {
      all.push_back(products[t]);
      all.push_back(groups[t]);
      if (t < cats.size()) {
        all.push_back(lists[t]);
        all.push_back(cats[t]);
      }
    }
    return all;
  }
};

// The aten::cat along dim 1 of a list of g's outputs alone, through which g's output `o` is read; null
// where there is none.
const Node* catOfOutputs(const Node* g) {
  for (const Value* o : g->outputs())
    for (const Use& u : o->uses()) {
      const Node* list = u.user;
      if (list->kind() != OpKind::ListConstruct || list->output()->uses().size() != 1) continue;
      const Node* cat = list->output()->uses()[0].user;
      auto dim = cat->kind() == OpKind::Cat ? constantInt(cat->input(1)) : std::nullopt;
      if (!dim || (*dim != 1 && *dim != -1)) continue;
      bool ofG = true;
      for (const Value* part : list->inputs()) ofG = ofG && part->node() == g;
      if (ofG) return cat;
    }
  return nullptr;
}

// What one of the group's outputs is to the kernel: an output of the cell (the element function), [B, w H]
// (w > 1: a concatenation along dim 1, which the element function stores in slices), or a sum over the
// batch ([m H]: sum_to_size to [H] of a [B, H] value, or a concatenation of such along dim 0: the
// backward's bias gradients), which the kernel folds from the cell's outputs after they are written.
struct OutputRole {
  bool sum = false;
  size_t index = 0;   // the cell output's, or the sum's
  int64_t width = 1;  // a cell output's columns, in units of H
  std::vector<std::pair<size_t, int64_t>> parts;  // a sum's: per H of its result, (cell output, column block)
};

// Binding::outputs' group output index for the step's concatenation (Chain::cats).
constexpr size_t kConcatenation = ~size_t{0};

struct Layout {
  std::vector<Slot> slots;  // one per group input
  std::vector<OutputRole> roles;  // one per group output
  std::vector<int64_t> cellWidths;  // one per cell output
  size_t sums = 0;
  size_t hidden = 0;             // the cell output the next step's product reads (no concatenation)
  std::vector<size_t> catParts;  // else the cell outputs it reads concatenated along dim 1, in order
  int64_t steps = 0;
  int64_t batch = 0, inner = 0, width = 0, units = 0, chunks = 1;  // B, K, G, H, C (G = C H)
  DType dtype = DType::Float32;
  std::vector<int64_t> cell;  // the cell's elements, [B, H]
};

std::optional<std::vector<int64_t>> sizesOf(const Value* v) { return staticSizes(v); }

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
    if (n->kind() != OpKind::SumToSize || sizesOf(n->input(0)) != l.cell) return nullptr;
    auto to = constantInts(n->input(1));
    return to && *to == std::vector<int64_t>{l.units} ? n->input(0) : nullptr;
  };
  const Node* n = o->node();
  if (const Value* v = single(n)) return std::vector<const Value*>{v};
  auto dim = n->kind() == OpKind::Cat ? constantInt(n->input(1)) : std::nullopt;
  if (!dim || *dim != 0 || n->input(0)->node()->kind() != OpKind::ListConstruct) return std::nullopt;
  std::vector<const Value*> parts;
  for (const Value* part : n->input(0)->node()->inputs()) {
    const Value* v = single(part->node());
    if (!v) return std::nullopt;
    parts.push_back(v);
  }
  return parts;
}

// A concatenation along dim 1 of [B, H] values; its parts.
std::optional<std::vector<const Value*>> columnConcatenation(const Value* o, const Layout& l) {
  const Node* n = o->node();
  auto dim = n->kind() == OpKind::Cat ? constantInt(n->input(1)) : std::nullopt;
  if (!dim || (*dim != 1 && *dim != -1) || n->input(0)->node()->kind() != OpKind::ListConstruct) return std::nullopt;
  std::vector<const Value*> parts;
  for (const Value* part : n->input(0)->node()->inputs()) {
    if (sizesOf(part) != l.cell) return std::nullopt;
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
    if (sizesOf(o) == l.cell) {
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

// Fills `l` from the chain; "" when the persistent kernel can run it, else why not.
std::string analyze(const Chain& c, Layout& l) {
  const size_t steps = c.products.size();
  l.steps = static_cast<int64_t>(steps);
  const std::vector<const Node*> nodes = c.nodes();
  std::unordered_set<const Node*> inChain(nodes.begin(), nodes.end());
  auto outside = [&](const Value* v) { return !inChain.count(v->node()); };

  const Node* p0 = c.products[0];
  const Value* w = p0->input(1);
  auto ws = sizesOf(w), hs = sizesOf(p0->input(0)), ps = sizesOf(p0->output());
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
      if (v->type().dtype != l.dtype || !sizesOf(v)) return "a step's group reads a value of another dtype or unknown sizes";
      bool ok = true;
      switch (s.role) {
        case Role::Product: ok = v == c.products[t]->output(); break;
        case Role::Carried: ok = t == 0 ? outside(v) : v == c.groups[t - 1]->output(s.from); break;
        case Role::Invariant: ok = v == g0->input(j) && outside(v); break;
        case Role::PerStep: ok = outside(v) && sizesOf(v) == sizesOf(g0->input(j)); break;
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
    // Through a concatenation of g's outputs (every step's, once the first step's product read one); the
    // last step's concatenation, read after the steps, joins the chain too.
    if (!next && c.cats.size() + 1 == c.groups.size())
      if (const Node* cat = catOfOutputs(g)) {
        next = nextProduct(cat->output());
        if (next || !c.cats.empty()) {
          c.lists.push_back(cat->input(0)->node());
          c.cats.push_back(cat);
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

// The chain of a prim::RecurrenceGroup's subgraph: its products and groups in order.
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

constexpr int64_t kThreads = 256;
// Dynamic shared memory a block may have without opting in (Kernel::allowSharedBytes).
constexpr int64_t kSharedBytesDefault = 48 * 1024;

// The kernel: see recurrence.h. Parameters: the weight, h0, the gates' scratch, then per group input its
// pointer (a carried one's first value; a per-step one's first step and its stride in elements), then the
// stacks of the cell's outputs, of the concatenation the next product reads (Chain::cats) and of the sums
// over the batch, the steps, the units a block owns and whether the weight is in shared memory.
std::string kernelSource(const Layout& l, const std::string& cell, const std::string& name) {
  const char* T = l.dtype == DType::Float64 ? "double" : "float";
  std::string params = fmt::format("const {0}* __restrict__ w, const {0}* h0, {0}* gates", T), args;
  for (size_t j = 0; j < l.slots.size(); ++j) {
    const Slot& s = l.slots[j];
    args += j ? ", " : "";
    switch (s.role) {
      case Role::Product: args += "gates"; break;
      case Role::Carried:
        params += fmt::format(", const {}* in{}", T, j);
        args += fmt::format("t == 0 ? in{} : out{} + (t - 1) * N", j, l.roles[s.from].index);
        break;
      case Role::Invariant:
        params += fmt::format(", const {}* in{}", T, j);
        args += fmt::format("in{}", j);
        break;
      case Role::PerStep:
        params += fmt::format(", const {}* in{}, long long stride{}", T, j, j);
        args += fmt::format("in{} + t * stride{}", j, j);
        break;
    }
  }
  for (size_t k = 0; k < l.cellWidths.size(); ++k) {  // [B, w H] each step
    params += fmt::format(", {}* out{}", T, k);
    args += fmt::format(", out{} + t * N * {}LL", k, l.cellWidths[k]);
  }
  // The hidden state the next product reads: an output's stack, or a stack of the concatenation, into which
  // each thread copies the pieces of its element that it has just written.
  std::string hidden = fmt::format("out{} + (t - 1) * B * K", l.hidden), concatenate, sums;
  if (!l.catParts.empty()) {
    params += fmt::format(", {}* cat", T);
    hidden = "cat + (t - 1) * B * K";
    for (size_t c = 0; c < l.catParts.size(); ++c)
      concatenate += fmt::format("\n      cat[t * B * K + b * K + {}LL * H + j0 + u] = out{}[t * N + b * H + j0 + u];",
                                 c, l.catParts[c]);
  }
  // The sums over the batch of the block's columns, once its threads have written every row of them.
  for (size_t k = 0; k < l.roles.size(); ++k) {
    const OutputRole& r = l.roles[k];
    if (!r.sum) continue;
    params += fmt::format(", {}* sum{}", T, r.index);
    const auto parts = static_cast<int64_t>(r.parts.size());
    for (int64_t p = 0; p < parts; ++p) {
      const auto [from, column] = r.parts[static_cast<size_t>(p)];
      const int64_t w = l.cellWidths[from];
      sums += fmt::format(
          "    for (long long u = threadIdx.x; u < mine; u += blockDim.x) {{\n"
          "      {T} acc = 0;\n"
          "      for (long long b = 0; b < B; ++b) acc += out{from}[t * N * {w}LL + b * {w}LL * H + {column}LL * H + j0 + u];\n"
          "      sum{sum}[t * {parts}LL * H + {p}LL * H + j0 + u] = acc;\n"
          "    }}\n",
          fmt::arg("T", T), fmt::arg("from", from), fmt::arg("w", w), fmt::arg("column", column),
          fmt::arg("sum", r.index), fmt::arg("parts", parts), fmt::arg("p", p));
    }
  }
  if (!sums.empty()) sums = "    __syncthreads();\n" + sums;
  return fmt::format(
      R"(#include <cooperative_groups.h>
{cell}
// generated by graphjit: a persistent recurrence of {B} x {H} cells, product width {G}
extern "C" __global__ void __launch_bounds__({threads}) {name}({params}, long long steps, long long units, int wShared) {{
  extern __shared__ {T} gj_w[];
  const long long B = {B}LL, K = {K}LL, G = {G}LL, H = {H}LL, C = {C}LL, N = B * H;
  const int R = {R};  // rows of the product a thread computes: each weight element read once for R of them
  const long long j0 = (long long)blockIdx.x * units;
  const long long mine = H - j0 < units ? H - j0 : units;
  const long long cols = C * units;
  if (wShared)
    for (long long e = threadIdx.x; e < K * cols; e += blockDim.x) {{
      const long long k = e / cols, col = e % cols, u = col % units;
      gj_w[e] = u < mine ? w[k * G + (col / units) * H + j0 + u] : ({T})0;
    }}
  __syncthreads();
  for (long long t = 0; t < steps; ++t) {{
    const {T}* a = t == 0 ? h0 : {hidden};
    for (long long e = threadIdx.x; e < (B / R) * cols; e += blockDim.x) {{
      const long long b = (e / cols) * R, col = e % cols, c = col / units, u = col % units;
      if (u >= mine) continue;
      const {T}* row = a + b * K;
      {T} acc[R];
#pragma unroll
      for (int r = 0; r < R; ++r) acc[r] = 0;
      if (wShared) {{
        for (long long k = 0; k < K; ++k) {{
          const {T} wk = gj_w[k * cols + col];
#pragma unroll
          for (int r = 0; r < R; ++r) acc[r] += row[r * K + k] * wk;
        }}
      }} else {{
        const {T}* wc = w + c * H + j0 + u;
        for (long long k = 0; k < K; ++k) {{
          const {T} wk = wc[k * G];
#pragma unroll
          for (int r = 0; r < R; ++r) acc[r] += row[r * K + k] * wk;
        }}
      }}
#pragma unroll
      for (int r = 0; r < R; ++r) gates[(b + r) * G + c * H + j0 + u] = acc[r];
    }}
    __syncthreads();
    for (long long e = threadIdx.x; e < B * units; e += blockDim.x) {{
      const long long b = e / units, u = e % units;
      if (u >= mine) continue;
      {name}_cell(b * H + j0 + u, {args});{concatenate}
    }}
{sums}    cooperative_groups::this_grid().sync();
  }}
}}
)",
      fmt::arg("R", l.batch % 4 == 0 && l.batch >= 32 ? 4 : 1), fmt::arg("cell", cell), fmt::arg("B", l.batch), fmt::arg("H", l.units), fmt::arg("G", l.width),
      fmt::arg("K", l.inner), fmt::arg("C", l.chunks), fmt::arg("threads", kThreads), fmt::arg("name", name),
      fmt::arg("params", params), fmt::arg("T", T), fmt::arg("hidden", hidden), fmt::arg("args", args),
      fmt::arg("concatenate", concatenate), fmt::arg("sums", sums));
}

// Where the node's inputs go: indices into the subgraph's inputs.
struct Binding {
  size_t weight = 0, h0 = 0;
  std::vector<std::vector<size_t>> slots;  // per group input: one index (per step for PerStep; none for Product)
  /// Per node output: (step, group output), the group output Layout::outputs standing for the step's
  /// concatenation.
  std::vector<std::pair<size_t, size_t>> outputs;
  std::vector<Shape> inputSizes;                   // every node input's static sizes
};

Binding bind(const Graph& sub, const Chain& c, const Layout& l) {
  std::unordered_map<const Value*, size_t> index;
  Binding b;
  for (size_t i = 0; i < sub.inputs().size(); ++i) {
    index[sub.inputs()[i]] = i;
    auto s = staticSizes(sub.inputs()[i]);
    USER_CHECK(s.has_value(), "persistent recurrence: input {} has unknown sizes", i);
    b.inputSizes.emplace_back(*s);
  }
  auto at = [&](const Value* v) {
    auto it = index.find(v);
    USER_CHECK(it != index.end(), "persistent recurrence: a value from outside is not an input of the subgraph");
    return it->second;
  };
  b.weight = at(c.products[0]->input(1));
  b.h0 = at(c.products[0]->input(0));
  for (size_t j = 0; j < l.slots.size(); ++j) {
    std::vector<size_t>& s = b.slots.emplace_back();
    if (l.slots[j].role == Role::PerStep)
      for (const Node* g : c.groups) s.push_back(at(g->input(j)));
    else if (l.slots[j].role != Role::Product)
      s.push_back(at(c.groups[0]->input(j)));
  }
  std::unordered_map<const Node*, size_t> stepOf;
  for (size_t t = 0; t < c.groups.size(); ++t) stepOf[c.groups[t]] = t;
  for (size_t t = 0; t < c.cats.size(); ++t) stepOf[c.cats[t]] = t;
  const std::unordered_set<const Node*> inCats(c.cats.begin(), c.cats.end());
  for (const Value* o : sub.outputs()) {
    auto it = stepOf.find(o->node());
    USER_CHECK(it != stepOf.end(), "persistent recurrence: an output is neither a step's cell output nor its concatenation");
    b.outputs.emplace_back(it->second, o->node()->kind() == OpKind::Cat && inCats.count(o->node()) ? kConcatenation
                                                                                                    : o->offset());
  }
  return b;
}

// The group whose element function the kernel runs: the step's group, or, where it sums over the batch, a
// copy without those outputs (the kernel folds them itself).
struct CellGroup {
  CellGroup(const Node& group, const Layout& l) {
    if (l.sums == 0) {
      node = &group;
      return;
    }
    std::shared_ptr<Graph> sub(group.subgraph()->clone());
    for (size_t k = l.roles.size(); k-- > 0;)
      if (l.roles[k].sum) sub->block()->eraseOutput(k);
    eliminateDeadCode(*sub);
    Node* n = holder.create(group.kind(), {}, 0);
    n->setSubgraph(std::move(sub));
    node = n;
  }
  Graph holder;
  const Node* node = nullptr;
};

class RecurrenceKernel final : public CompiledKernel {
 public:
  RecurrenceKernel(Layout l, Binding b, cuda::Kernel kernel) : l_(std::move(l)), b_(std::move(b)), kernel_(std::move(kernel)) {
    // The fewest units a block that let every block be resident, its weight columns in shared memory where
    // they fit a block's (opting in past 48 KB), else read from L2.
    const cuda::DeviceInfo& device = cuda::requireDevice();
    const int sms = device.multiprocessors;
    const int64_t elt = static_cast<int64_t>(dtypeSize(l_.dtype));
    for (int64_t u = 1; u <= l_.units; ++u) {
      const int64_t blocks = (l_.units + u - 1) / u, bytes = l_.inner * l_.chunks * u * elt;
      const bool shared = bytes <= static_cast<int64_t>(device.sharedPerBlockOptIn);
      if (shared && bytes > kSharedBytesDefault) kernel_.allowSharedBytes(static_cast<size_t>(bytes));
      const int64_t resident =
          int64_t{kernel_.blocksPerMultiprocessor(static_cast<int>(kThreads), shared ? static_cast<size_t>(bytes) : 0)} * sms;
      if (blocks <= resident) {
        units_ = u;
        blocks_ = blocks;
        shared_ = shared;
        sharedBytes_ = shared ? static_cast<unsigned>(bytes) : 0;
        return;
      }
    }
    throw Error(fmt::format("persistent recurrence: {} hidden units do not fit the device's resident blocks", l_.units));
  }

  std::vector<Tensor> run(std::span<const Tensor* const> inputs) const override {
    USER_CHECK(inputs.size() == b_.inputSizes.size(), "persistent recurrence: {} inputs where {} were expected",
               inputs.size(), b_.inputSizes.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Tensor& x = *inputs[i];
      USER_CHECK(x.defined() && x.device() == DeviceKind::Cuda && x.dtype() == l_.dtype && x.sizes() == b_.inputSizes[i],
                 "persistent recurrence: input {} is not the {} {} tensor on the device it was built for", i,
                 dtypeName(l_.dtype), shapeStr(b_.inputSizes[i]));
    }
    std::vector<Tensor> keep;  // contiguous copies, where an input was not
    auto pointer = [&](const Tensor& x) -> const void* {
      if (x.isContiguous()) return x.rawData();
      keep.push_back(x.contiguous());
      return keep.back().rawData();
    };
    const int64_t T = l_.steps;
    Tensor gates = Tensor::empty({l_.batch, l_.width}, l_.dtype, DeviceKind::Cuda);
    // The cell's outputs' stacks, the concatenation's, the sums'.
    std::vector<Tensor> cells, sums;
    Tensor cat;
    for (int64_t w : l_.cellWidths) cells.push_back(Tensor::empty({T, l_.batch, w * l_.units}, l_.dtype, DeviceKind::Cuda));
    if (!l_.catParts.empty())
      cat = Tensor::empty({T, l_.batch, static_cast<int64_t>(l_.catParts.size()) * l_.units}, l_.dtype, DeviceKind::Cuda);
    sums.resize(l_.sums);
    for (const OutputRole& r : l_.roles)
      if (r.sum)
        sums[r.index] = Tensor::empty({T, static_cast<int64_t>(r.parts.size()) * l_.units}, l_.dtype, DeviceKind::Cuda);
    // Parameter values, each at a stable address (reserved up front), then a pointer to each.
    std::vector<const void*> pointers;
    std::vector<long long> numbers;
    pointers.reserve(4 + l_.slots.size() + cells.size() + sums.size());  // w, h0, gates, the slots, the stacks
    numbers.reserve(3 + l_.slots.size());
    std::vector<void*> params;
    auto addPointer = [&](const void* p) { params.push_back(&pointers.emplace_back(p)); };
    auto addNumber = [&](long long v) { params.push_back(&numbers.emplace_back(v)); };
    addPointer(pointer(*inputs[b_.weight]));
    addPointer(pointer(*inputs[b_.h0]));
    addPointer(gates.rawData());
    for (size_t j = 0; j < l_.slots.size(); ++j) {
      const std::vector<size_t>& at = b_.slots[j];
      switch (l_.slots[j].role) {
        case Role::Product: break;
        case Role::Carried:
        case Role::Invariant: addPointer(pointer(*inputs[at[0]])); break;
        case Role::PerStep: {
          auto [base, stride] = perStep(inputs, at, keep);
          addPointer(base);
          addNumber(stride);
          break;
        }
      }
    }
    for (const Tensor& s : cells) addPointer(s.rawData());
    if (cat.defined()) addPointer(cat.rawData());
    for (const Tensor& s : sums) addPointer(s.rawData());
    addNumber(T);
    addNumber(units_);
    int wShared = shared_ ? 1 : 0;
    params.push_back(&wShared);
    kernel_.launch({.grid = {static_cast<unsigned>(blocks_), 1, 1},
                    .block = {static_cast<unsigned>(kThreads), 1, 1},
                    .sharedBytes = sharedBytes_,
                    .cooperative = true},
                   params.data());
    std::vector<Tensor> outs;
    for (const auto& [t, k] : b_.outputs) {
      const Tensor& stack = k == kConcatenation ? cat : l_.roles[k].sum ? sums[l_.roles[k].index] : cells[l_.roles[k].index];
      outs.push_back(stack.select(0, static_cast<int64_t>(t)));
    }
    return outs;
  }

 private:
  // A per-step input's first element and the elements from one step's to the next: the steps' own tensors
  // where they are contiguous slices of one storage equally far apart (a select or split of one tensor),
  // else a stack copied together here.
  std::pair<const void*, long long> perStep(std::span<const Tensor* const> inputs, const std::vector<size_t>& at,
                                            std::vector<Tensor>& keep) const {
    const Tensor& first = *inputs[at[0]];
    const int64_t stride = inputs[at[1]]->offset() - first.offset();
    bool even = true;
    for (size_t t = 0; t < at.size(); ++t) {
      const Tensor& x = *inputs[at[t]];
      even = even && x.isContiguous() && x.storage() == first.storage() &&
             x.offset() == first.offset() + static_cast<int64_t>(t) * stride;
    }
    if (even) return {first.rawData(), stride};
    const Shape& sizes = first.sizes();
    Shape stacked = {static_cast<int64_t>(at.size())};
    stacked.insert(stacked.end(), sizes.begin(), sizes.end());
    Tensor s = Tensor::empty(stacked, l_.dtype, DeviceKind::Cuda);
    for (size_t t = 0; t < at.size(); ++t) s.select(0, static_cast<int64_t>(t)).copyFrom(*inputs[at[t]]);
    keep.push_back(s);
    return {s.rawData(), static_cast<long long>(first.numel())};
  }

  Layout l_;
  Binding b_;
  cuda::Kernel kernel_;
  int64_t units_ = 1, blocks_ = 1;
  bool shared_ = false;
  unsigned sharedBytes_ = 0;
};

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

std::string emitRecurrence(const Node* group, const Fuser& fuser, const std::string& name) {
  const Graph& sub = *group->subgraph();
  Chain c = chainOf(sub);
  Layout l;
  if (std::string why = analyze(c, l); !why.empty()) throw Error("persistent recurrence: " + why);
  CellGroup cell(*c.groups[0], l);
  return kernelSource(l, fuser.emitElementFunction(cell.node, name + "_cell"), name);
}

void compileRecurrences(const Graph& g, Fuser& fuser, const FuserOptions& opts, KernelTable& kernels,
                        FusionReport& report) {
  forEachNode(g.block(), [&](Node* n) {
    if (n->kind() == OpKind::RecurrenceGroup) fuser.compile(*n->subgraph(), kernels, report);
  });
  compileGroups(g, OpKind::RecurrenceGroup, opts, "persistent recurrence", "gj_rnn", kernels, report,
                [&](const Graph& sub) -> PreparedGroup {
                  Chain c = chainOf(sub);
                  Layout l;
                  if (std::string why = analyze(c, l); !why.empty()) throw Error("persistent recurrence: " + why);
                  Binding b = bind(sub, c, l);
                  auto cell = std::make_shared<CellGroup>(*c.groups[0], l);
                  std::string key = fmt::format("{} {} {}\n{}", fuser.name(), l.steps, sub.inputs().size(),
                                                kernelSource(l, fuser.emitElementFunction(cell->node, "CELL"), "NAME"));
                  for (const auto& [t, k] : b.outputs) key += fmt::format(" {}:{}", t, k);
                  for (const auto& s : b.slots) key += fmt::format(" [{}]", fmt::join(s, ","));
                  key += fmt::format(" w{} h{}", b.weight, b.h0);
                  return {std::move(key), [&fuser, cell, l, b, dumpDir = opts.dumpDir](const std::string& name)
                              -> std::shared_ptr<const CompiledKernel> {
                            std::string source = kernelSource(l, fuser.emitElementFunction(cell->node, name + "_cell"), name);
                            if (!dumpDir.empty()) std::ofstream(dumpDir + "/" + name + ".cu") << source;
                            auto kernel = cuda::compileKernel(source, name);
                            if (!kernel) throw kernel.error();
                            return std::make_shared<RecurrenceKernel>(l, b, kernel.value());
                          }};
                });
}

}  // namespace gj
