// Persistent recurrences: finding the steps of an unrolled recurrence, and the one cooperative kernel that
// runs them all (fusers/recurrence.h).
#include "fusers/recurrence.h"

#include "fusers/group_rules.h"
#include "passes/subgraph_regions.h"
#include "passes/util.h"
#include "runtime/cuda/device.h"
#include "support/error.h"

#include <fmt/format.h>

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

struct Layout {
  std::vector<Slot> slots;  // one per group input
  size_t hidden = 0;        // the group output the next step's product reads (no concatenation)
  std::vector<size_t> catParts;  // else the outputs the next product reads concatenated along dim 1, in order
  int64_t steps = 0;
  int64_t batch = 0, inner = 0, width = 0, units = 0, chunks = 1;  // B, K, G, H, C (G = C H, K = H)
  DType dtype = DType::Float32;
  size_t outputs = 0;  // the group's outputs, each [B, H]
  std::vector<int64_t> cell;  // the group's shape, [B, H]
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

// Whether the group's subgraph computes each element from the same element of its operands alone.
std::string elementwiseGroup(const Graph& sub) {
  for (const Node* n : *sub.block()) {
    const OpKind k = n->kind();
    if (k == OpKind::Constant || k == OpKind::Chunk || k == OpKind::ListUnpack || k == OpKind::ListConstruct ||
        fusion::isPointwise(n))
      continue;  // a list is a chunk's or a cat's, which the cat names
    return fmt::format("its cell is not elementwise ({}): a block owns a slice of the hidden size and cannot read "
                       "across it", n->info().name);
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
  if (std::string why = elementwiseGroup(sub); !why.empty()) return why;
  for (size_t t = 1; t < steps; ++t)
    if (!structurallyEqual(sub, *c.groups[t]->subgraph())) return fmt::format("step {} computes another cell", t);
  l.outputs = c.groups[0]->outputs().size();
  for (const Value* o : c.groups[0]->outputs()) {
    auto s = sizesOf(o);
    if (!s || s->size() != 2) return "the cell's outputs are not matrices of known sizes";
    if (l.cell.empty()) l.cell = *s;
    if (*s != l.cell || o->type().dtype != l.dtype) return "the cell's outputs differ in sizes or dtype";
  }
  l.units = l.cell[1];
  // The hidden state: the outputs of step t - 1 that step t's product reads (concatenated, or one), the
  // same every step.
  if (!c.cats.empty()) {
    for (const Value* part : c.lists[0]->inputs()) l.catParts.push_back(part->offset());
    for (size_t t = 0; t < c.cats.size(); ++t) {
      std::vector<size_t> parts;
      for (const Value* part : c.lists[t]->inputs()) parts.push_back(part->offset());
      if (parts != l.catParts) return "the steps concatenate different outputs";
      if (t + 1 < steps && c.products[t + 1]->input(0) != c.cats[t]->output())
        return "a product does not read the step before";
    }
  } else {
    for (size_t t = 1; t < steps; ++t) {
      const Value* h = c.products[t]->input(0);
      if (h->node() != c.groups[t - 1]) return "a product does not read the step before";
      if (t == 1) l.hidden = h->offset();
      if (h->offset() != l.hidden) return "the steps' products read different outputs of the step before";
    }
  }
  const int64_t hiddenSize = l.units * static_cast<int64_t>(std::max<size_t>(l.catParts.size(), 1));
  if (l.cell[0] != l.batch || hiddenSize != l.inner)
    return fmt::format("the cell's elements {} are not the product's rows by its inner size", shapeStr(l.cell));
  if (l.width % l.units != 0) return "the product's columns are not a multiple of the hidden size";
  l.chunks = l.width / l.units;
  const Node* g0 = c.groups[0];
  if (!outside(p0->input(0))) return "the first product reads a step";

  // Each group input's role, from step 1, held in every step.
  const size_t nin = g0->inputs().size();
  l.slots.assign(nin, {});
  size_t products = 0;
  for (size_t j = 0; j < nin; ++j) {
    const Value* v1 = c.groups[1]->input(j);
    Slot& s = l.slots[j];
    if (v1 == c.products[1]->output()) s.role = Role::Product, ++products;
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
  if (auto why = productReadsElementwise(sub, [&] {
        for (size_t j = 0; j < nin; ++j)
          if (l.slots[j].role == Role::Product) return j;
        return size_t{0};
      }(), l); !why.empty())
    return why;
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
// A block's weight columns in shared memory up to the most any device gives a block without opting in.
constexpr int64_t kSharedBytesMost = 48 * 1024;

// The kernel: see recurrence.h. Parameters: the weight, h0, the gates' scratch, then per group input its
// pointer (a carried one's first value; a per-step one's first step and its stride in elements), then the
// stacks of the outputs, the steps, the units a block owns and whether the weight is in shared memory.
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
        args += fmt::format("t == 0 ? in{} : out{} + (t - 1) * N", j, s.from);
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
  for (size_t k = 0; k < l.outputs; ++k) {
    params += fmt::format(", {}* out{}", T, k);
    args += fmt::format(", out{} + t * N", k);
  }
  // The hidden state the next product reads: an output's stack, or a stack of the concatenation, into which
  // each thread copies the pieces of its element that it has just written.
  std::string hidden = fmt::format("out{} + (t - 1) * N", l.hidden), concatenate;
  if (!l.catParts.empty()) {
    params += fmt::format(", {}* cat", T);
    hidden = "cat + (t - 1) * B * K";
    for (size_t c = 0; c < l.catParts.size(); ++c)
      concatenate += fmt::format("\n        cat[t * B * K + b * K + {}LL * H + j0 + u] = out{}[t * N + b * H + j0 + u];",
                                 c, l.catParts[c]);
  }
  return fmt::format(
      R"(#include <cooperative_groups.h>
{cell}
// generated by graphjit: a persistent recurrence of {B} x {H} cells, product width {G}
extern "C" __global__ void __launch_bounds__({threads}) {name}({params}, long long steps, long long units, int wShared) {{
  extern __shared__ {T} gj_w[];
  const long long B = {B}LL, K = {K}LL, G = {G}LL, H = {H}LL, C = {C}LL, N = B * H;
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
    for (long long e = threadIdx.x; e < B * cols; e += blockDim.x) {{
      const long long b = e / cols, col = e % cols, c = col / units, u = col % units;
      if (u >= mine) continue;
      const {T}* row = a + b * K;
      {T} acc = 0;
      if (wShared) {{
        for (long long k = 0; k < K; ++k) acc += row[k] * gj_w[k * cols + col];
      }} else {{
        const {T}* wc = w + c * H + j0 + u;
        for (long long k = 0; k < K; ++k) acc += row[k] * wc[k * G];
      }}
      gates[b * G + c * H + j0 + u] = acc;
    }}
    __syncthreads();
    for (long long e = threadIdx.x; e < B * units; e += blockDim.x) {{
      const long long b = e / units, u = e % units;
      if (u >= mine) continue;
      {name}_cell(b * H + j0 + u, {args});{concatenate}
    }}
    cooperative_groups::this_grid().sync();
  }}
}}
)",
      fmt::arg("cell", cell), fmt::arg("B", l.batch), fmt::arg("H", l.units), fmt::arg("G", l.width),
      fmt::arg("K", l.inner), fmt::arg("C", l.chunks), fmt::arg("threads", kThreads), fmt::arg("name", name),
      fmt::arg("params", params), fmt::arg("T", T), fmt::arg("hidden", hidden), fmt::arg("args", args),
      fmt::arg("concatenate", concatenate));
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
  for (const Value* o : sub.outputs()) {
    auto it = stepOf.find(o->node());
    USER_CHECK(it != stepOf.end(), "persistent recurrence: an output is neither a step's cell output nor its concatenation");
    b.outputs.emplace_back(it->second, o->node()->kind() == OpKind::Cat ? l.outputs : o->offset());
  }
  return b;
}

class RecurrenceKernel final : public CompiledKernel {
 public:
  RecurrenceKernel(Layout l, Binding b, cuda::Kernel kernel) : l_(std::move(l)), b_(std::move(b)), kernel_(std::move(kernel)) {
    const int sms = cuda::requireDevice().multiprocessors;
    const int64_t elt = static_cast<int64_t>(dtypeSize(l_.dtype));
    for (int64_t u = 1; u <= l_.units; ++u) {
      const int64_t blocks = (l_.units + u - 1) / u, bytes = l_.inner * l_.chunks * u * elt;
      const bool shared = bytes <= kSharedBytesMost;
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
    std::vector<Tensor> stacks;
    for (size_t k = 0; k < l_.outputs; ++k)
      stacks.push_back(Tensor::empty({T, l_.batch, l_.units}, l_.dtype, DeviceKind::Cuda));
    // Parameter values, each at a stable address (reserved up front), then a pointer to each.
    std::vector<const void*> pointers;
    std::vector<long long> numbers;
    pointers.reserve(4 + l_.slots.size() + l_.outputs);  // w, h0, gates, the slots, the stacks, the concatenation
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
    for (const Tensor& s : stacks) addPointer(s.rawData());
    if (!l_.catParts.empty()) {
      const auto parts = static_cast<int64_t>(l_.catParts.size());
      stacks.push_back(Tensor::empty({T, l_.batch, parts * l_.units}, l_.dtype, DeviceKind::Cuda));
      addPointer(stacks.back().rawData());
    }
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
    for (const auto& [t, k] : b_.outputs) outs.push_back(stacks[k].select(0, static_cast<int64_t>(t)));
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
                  const Node* cellGroup = c.groups[0];
                  std::string key = fmt::format("{} {} {}\n{}", fuser.name(), l.steps, sub.inputs().size(),
                                                kernelSource(l, fuser.emitElementFunction(cellGroup, "CELL"), "NAME"));
                  for (const auto& [t, k] : b.outputs) key += fmt::format(" {}:{}", t, k);
                  for (const auto& s : b.slots) key += fmt::format(" [{}]", fmt::join(s, ","));
                  key += fmt::format(" w{} h{}", b.weight, b.h0);
                  return {std::move(key), [&fuser, c, l, b](const std::string& name) -> std::shared_ptr<const CompiledKernel> {
                            std::string source = kernelSource(l, fuser.emitElementFunction(c.groups[0], name + "_cell"), name);
                            auto kernel = cuda::compileKernel(source, name);
                            if (!kernel) throw kernel.error();
                            return std::make_shared<RecurrenceKernel>(l, b, kernel.value());
                          }};
                });
}

}  // namespace gj
