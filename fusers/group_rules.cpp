#include "fusers/group_rules.h"

#include <fmt/format.h>

#include "passes/shape_propagation.h"
#include "passes/util.h"
#include "runtime/tensor.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <unordered_set>

namespace gj::fusion {

bool isPointwise(const Node* n) {
  return n->info().group == OpGroupKind::Pointwise || n->kind() == OpKind::PhiloxDropout;
}

bool hasGroupSizes(const Value* v, SizeRule rule) {
  const Type& t = v->type();
  if (!t.isTensor() || !t.sizes) return false;
  const std::vector<int64_t>& s = *t.sizes;
  for (size_t d = 0; d < s.size(); ++d)
    if (s[d] == kUnknownDim && !(rule == SizeRule::DynamicRows && d == 0 && s.size() >= 2)) return false;
  return true;
}

std::optional<std::vector<int64_t>> groupSizes(const Value* v, SizeRule rule) {
  if (!hasGroupSizes(v, rule)) return std::nullopt;
  return *v->type().sizes;
}

// float32 or float64: the fusers' kernels compute in them; float16 and bfloat16 are storage dtypes, which a
// fuser that converts at its loads and stores (`storage`) computes in float32, and the others leave to the
// interpreter (support/dtype.h).
static bool computesInFloat(DType t, bool storage) { return isFloating(t) && (storage || !isStorageOnly(t)); }

bool floatTensor(const Value* v, SizeRule rule, bool storage) {
  const Type& t = v->type();
  return t.isTensor() && t.dtype && computesInFloat(*t.dtype, storage) && hasGroupSizes(v, rule);
}

bool broadcastsTo(const std::vector<int64_t>& from, const std::vector<int64_t>& to) {
  if (from.size() > to.size()) return false;
  for (size_t i = 0; i < from.size(); ++i) {
    int64_t f = from[from.size() - 1 - i], t = to[to.size() - 1 - i];
    if (f != t && f != 1) return false;
  }
  return true;
}

// prim::philox_dropout over a static float tensor, its generator state a static int64 [2] tensor, the rest constant.
static std::string dropoutBlocker(const Node* n) {
  if (!floatTensor(n->input(0)) || !floatTensor(n->output()))
    return "the input has no static sizes or is not float (run shape propagation on a specialized graph)";
  const Type& rng = n->input(3)->type();
  if (!rng.isTensor() || rng.dtype != DType::Int64 || staticSizes(n->input(3)) != std::vector<int64_t>{2})
    return fmt::format("its generator state %{} is not a static int64 [2] tensor", n->input(3)->name());
  for (size_t i : {1, 2, 4})
    if (!isConstant(n->input(i))) return fmt::format("operand %{} is not a constant", n->input(i)->name());
  return "";
}

bool integerOp(OpKind k) {
  static constexpr OpKind kIntegerOps[] = {
      OpKind::Add,     OpKind::Sub,      OpKind::Rsub,       OpKind::Mul,             OpKind::Neg,
      OpKind::Abs,     OpKind::Sign,     OpKind::Relu,       OpKind::Clamp,           OpKind::ClampMin,
      OpKind::ClampMax, OpKind::Hardtanh, OpKind::Maximum,   OpKind::Minimum,         OpKind::Where,
      OpKind::MaskedFill, OpKind::DivTrunc, OpKind::DivFloor, OpKind::TensorRemainder, OpKind::Fmod};
  return isComparison(k) || std::find(std::begin(kIntegerOps), std::end(kIntegerOps), k) != std::end(kIntegerOps);
}

std::optional<DType> computeDtype(const Node* n, Admit admit) {
  const bool comparison = isComparison(n->kind());
  const std::optional<DType> t = comparison ? pointwiseOperandDtype(n) : n->output()->type().dtype;
  if (!t) return std::nullopt;
  if (computesInFloat(*t, admit >= Admit::Storage)) return computeDType(*t);
  if (admit == Admit::Integers && integerOp(n->kind()) && (isIntegral(*t) || (comparison && *t == DType::Bool)))
    return DType::Int64;
  return std::nullopt;
}

// A number an int64 kernel holds exactly in its double constants: integral, at most 2^53 in magnitude.
static bool exactIntegerNumber(double d) { return std::trunc(d) == d && std::abs(d) <= 9007199254740992.0; }

// A pointwise node over static tensors of the admitted dtypes, scalar operands constant, inputs broadcasting
// to its output.
std::string pointwiseBlocker(const Node* n, bool mixedDtypes, SizeRule rule, Admit admit) {
  if (!isPointwise(n)) return "not pointwise";
  if (n->kind() == OpKind::PhiloxDropout) return dropoutBlocker(n);
  const bool storage = admit >= Admit::Storage;
  const bool boolResult = isComparison(n->kind());
  const auto compute = computeDtype(n, admit);
  const bool integer = compute == DType::Int64;
  auto sizesOk = [&](const Value* v) { return hasGroupSizes(v, rule); };
  auto integerTensor = [&](const Value* v) {
    const Type& t = v->type();
    return t.isTensor() && t.dtype && (isIntegral(*t.dtype) || *t.dtype == DType::Bool) && sizesOk(v);
  };
  const std::optional<DType> outDtype = n->outputs().size() == 1 ? n->output()->type().dtype : std::nullopt;
  if (n->outputs().size() != 1 || !sizesOk(n->output()) ||
      !(boolResult ? outDtype == DType::Bool
                   : integer ? outDtype && isIntegral(*outDtype) : floatTensor(n->output(), rule, storage))) {
    const char* what = admit == Admit::Integers ? "float or integer" : "float";
    return rule == SizeRule::Static
               ? fmt::format("the output has no static sizes or is not {} (run shape propagation on a specialized "
                             "graph)", what)
               : fmt::format("the output is not {}, or a size other than the leading one is unknown (run shape "
                             "propagation on a specialized graph)", what);
  }
  if (!compute)
    return admit == Admit::Integers && !integerOp(n->kind())
               ? fmt::format("it computes in an integer dtype, and {} is not one of the ops integer groups take "
                             "(their rules must be exact in int64)", n->info().name)
               : "it compares operands that are not float";
  // An integer division's divisor: a constant other than 0 (PyTorch's error, which a kernel cannot raise) and -1
  // (INT64_MIN / -1 overflows, a trap on the CPU).
  const OpKind k = n->kind();
  if (integer && (k == OpKind::DivTrunc || k == OpKind::DivFloor || k == OpKind::TensorRemainder || k == OpKind::Fmod)) {
    const Value* divisor = n->input(1);
    const auto d = divisor->type().isTensor() ? std::nullopt : constantDouble(divisor);
    if (!d || *d == 0 || *d == -1)
      return fmt::format("an integer {} fuses by a constant divisor other than 0 and -1, not %{} (a zero divisor is "
                         "PyTorch's error, raised unfused)", n->info().name, divisor->name());
  }
  auto out = *groupSizes(n->output(), rule);
  for (size_t i = 0; i < n->inputs().size(); ++i) {
    const Value* v = n->input(i);
    if (!v->type().isTensor()) {
      const auto number = constantDouble(v);
      if (!number) return fmt::format("scalar operand %{} is not a constant number", v->name());
      if (integer && !exactIntegerNumber(*number))
        return fmt::format("scalar operand %{} of an integer op is not an integer of at most 2^53 in magnitude",
                           v->name());
      continue;
    }
    if (static_cast<int>(i) == conditionOperand(n->kind())) {
      if (v->type().dtype != DType::Bool || !sizesOk(v))
        return fmt::format("condition %{} is not a bool tensor of static sizes", v->name());
    } else if (integer) {  // integers and bools, read as int64
      if (!integerTensor(v)) return fmt::format("input %{} has no static sizes or is not an integer", v->name());
    } else {
      if (!floatTensor(v, rule, storage)) return fmt::format("input %{} has no static sizes or is not float", v->name());
      if (!mixedDtypes && computeDType(*v->type().dtype) != compute)
        return fmt::format("input %{} has another dtype", v->name());
    }
    if (!broadcastsTo(*groupSizes(v, rule), out)) return fmt::format("input %{} does not broadcast to the output", v->name());
  }
  return "";
}

std::optional<double> roundedNumber(const Node* n, size_t i) {
  const auto number = constantDouble(n->input(i));
  if (!number || n->input(i)->type().isTensor()) return std::nullopt;
  const std::optional<DType> meets = pointwiseOperandDtype(n);
  if (!meets || !isStorageOnly(*meets)) return std::nullopt;
  return Tensor::scalar(*number, *meets).item();
}

bool fusiblePointwise(const Node* n, bool mixedDtypes, SizeRule rule, Admit admit) {
  return pointwiseBlocker(n, mixedDtypes, rule, admit).empty();
}

bool fusibleChunk(const Node* n, SizeRule rule, Admit admit) {
  const bool storage = admit >= Admit::Storage;
  if (n->kind() != OpKind::Chunk) return false;
  auto chunks = constantInt(n->input(1));
  auto dim = constantInt(n->input(2));
  auto sizes = groupSizes(n->input(0), rule);
  if (!chunks || !dim || !sizes || *chunks <= 0 || !floatTensor(n->input(0), rule, storage)) return false;
  int64_t rank = static_cast<int64_t>(sizes->size());
  if (*dim < -rank || *dim >= rank) return false;
  int64_t d = *dim < 0 ? *dim + rank : *dim;
  const auto& uses = n->output()->uses();
  return (*sizes)[d] != kUnknownDim && (*sizes)[d] % *chunks == 0 && uses.size() == 1 &&
         uses[0].user->kind() == OpKind::ListUnpack && static_cast<int64_t>(uses[0].user->outputs().size()) == *chunks;
}

// ---- moving chunks above pointwise producers ----

namespace {

bool moveOne(Node* unpack, SizeRule rule, std::vector<Node*>& made) {
  Node* chunk = unpack->input(0)->node();
  if (chunk->kind() != OpKind::Chunk || !fusibleChunk(chunk, rule)) return false;
  Node* p = chunk->input(0)->node();
  // Only a pointwise op proper: dropout's numbers follow the element's index in its own output.
  if (p->info().group != OpGroupKind::Pointwise || !fusiblePointwise(p, false, rule) ||
      chunk->input(0)->uses().size() != 1)
    return false;
  Graph* g = unpack->graph();
  const int64_t n = *constantInt(chunk->input(1));
  const int64_t rankY = static_cast<int64_t>(groupSizes(chunk->input(0), rule)->size());
  int64_t d = *constantInt(chunk->input(2));
  if (d < 0) d += rankY;
  // The k-th chunk of each tensor input (or the input itself where it broadcasts along d).
  std::vector<std::vector<Value*>> parts(p->inputs().size());
  Node* const before = unpack->prev();  // what the move makes goes between it and the unpack
  for (size_t i = 0; i < p->inputs().size(); ++i) {
    Value* a = p->input(i);
    auto sa = groupSizes(a, rule);
    int64_t da = sa ? d - (rankY - static_cast<int64_t>(sa->size())) : -1;
    if (!a->type().isTensor() || da < 0 || (*sa)[da] == 1) {
      parts[i].assign(n, a);
      continue;
    }
    // The chunk's own dim where it is the same number (an operand of the same rank), rather than a new
    // constant per operand: an unrolled loop moves a chunk this way at every step.
    Value* dim = chunk->input(2);
    if (*constantInt(dim) != da) {
      Node* k = g->createConstant(da);
      k->insertBefore(unpack);
      dim = k->output();
    }
    Node* c = g->create(OpKind::Chunk, {a, chunk->input(1), dim});
    c->output()->setType(Type::of(TypeKind::TensorList));
    c->insertBefore(unpack);
    Node* u = g->create(OpKind::ListUnpack, {c->output()}, n);
    u->insertBefore(unpack);
    made.push_back(u);
    parts[i].assign(u->outputs().begin(), u->outputs().end());
  }
  for (int64_t k = 0; k < n; ++k) {
    std::vector<Value*> ins;
    for (auto& part : parts) ins.push_back(part[k]);
    Node* copy = g->create(p->kind(), ins);
    copy->output()->setType(unpack->output(k)->type());
    copy->insertBefore(unpack);
    g->replaceAllUsesWith(unpack->output(k), copy->output());
  }
  // The new chunks' pieces, before a later move reads them; nothing else changes type.
  propagateShapes(before->next(), unpack->prev());
  g->erase(unpack);
  g->erase(chunk);
  g->erase(p);
  return true;
}

// One walk: the unpacks a move makes (of the moved op's operands) are tried at once, so a chunk climbs
// a chain of pointwise ops without a walk of the block per op.
bool moveInBlock(Block* b, SizeRule rule) {
  bool changed = false;
  std::vector<Node*> pending;
  for (Node* n : b->nodesList()) {
    for (Block* inner : n->blocks()) changed |= moveInBlock(inner, rule);
    if (n->kind() != OpKind::ListUnpack || n->inputs().size() != 1) continue;
    pending.push_back(n);
    while (!pending.empty()) {
      Node* u = pending.back();
      pending.pop_back();
      changed |= moveOne(u, rule, pending);
    }
  }
  return changed;
}

}  // namespace

// Moves each chunk (and its unpack) down to just before the first use of its pieces, so that the scan
// meets it next to its consumers rather than inside an earlier group. Chunks of later values go first:
// a chunk of a value computed from the previous group (a recurrent h) then closes that group before
// the chunks of older values (the input GEMM's rows) join the next one.
void sinkChunks(Block* b, SizeRule rule) {
  std::vector<std::pair<const Node*, Node*>> chunks;  // (the node of b defining the chunked value, or null; the chunk)
  for (Node* n : b->nodesList())
    if (fusibleChunk(n, rule)) {
      const Node* def = ancestorIn(n->input(0)->node(), b);
      chunks.emplace_back(def == b->paramNode() ? nullptr : def, n);
    }
  // Latest definition first; chunks of b's inputs and of outer values last.
  std::stable_sort(chunks.begin(), chunks.end(), [](const auto& x, const auto& y) {
    return x.first && (!y.first || y.first->isBefore(x.first));
  });
  for (auto [defined, n] : chunks) {
    Node* unpack = n->output()->uses()[0].user;
    if (unpack->owningBlock() != b) continue;
    Node* first = nullptr;
    for (Value* piece : unpack->outputs())
      for (const Use& u : piece->uses()) {
        Node* user = ancestorIn(u.user, b);
        if (user && user->kind() != OpKind::Return && (!first || user->isBefore(first))) first = user;
      }
    if (!first || first == unpack->next()) continue;
    n->moveBefore(first);
    unpack->moveBefore(first);
  }
}

// Drops from the region every chunk whose pieces are also read outside it: the pieces stay ordinary
// (strided) inputs then. A group hands out only pointwise results.
void trimChunks(std::vector<Node*>& region) {
  std::unordered_set<const Node*> in(region.begin(), region.end());
  std::unordered_set<const Node*> drop;
  for (const Node* n : region) {
    if (n->kind() != OpKind::ListUnpack) continue;
    for (const Value* piece : n->outputs())
      for (const Use& u : piece->uses())
        if (!in.count(u.user)) {
          drop.insert(n);
          drop.insert(n->input(0)->node());
        }
  }
  if (drop.empty()) return;
  region.erase(std::remove_if(region.begin(), region.end(), [&](Node* n) { return drop.count(n) > 0; }),
               region.end());
}

bool moveChunksUp(Graph& g, SizeRule rule) { return moveInBlock(g.block(), rule); }

}  // namespace gj::fusion
