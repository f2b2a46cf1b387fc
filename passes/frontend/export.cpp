// export-torchscript: graphjit's forms written as PyTorch's, so that torch._C.parse_ir reads the printed
// graph and torch._C._create_function_from_graph runs it. The frontend passes read the result back.
#include "passes/frontend.h"
#include "passes/frontend/overloads.h"
#include "passes/util.h"
#include "support/error.h"

#include <fmt/format.h>

#include <algorithm>

namespace gj {

namespace {

using frontend::Default;

ConstantValue constantOf(const Default& d) {
  switch (d.kind) {
    case Default::Kind::None: return {};
    case Default::Kind::Int: return static_cast<int64_t>(d.number);
    case Default::Kind::Float: return d.number;
    case Default::Kind::Bool: return d.number != 0;
    case Default::Kind::Str: return std::string(d.text);
  }
  return {};
}

// n replaced by a `kind` node on `inputs` with n's outputs (their types and names).
void replaceWith(Node* n, OpKind kind, const std::vector<Value*>& inputs) {
  emitReplacement(n, kind, inputs, n->outputs().size());
  n->graph()->erase(n);
}

// n's inputs followed by constants for `tail` (one constant for equal values).
std::vector<Value*> withTail(Node* n, std::span<const Default> tail) {
  std::vector<Value*> inputs(n->inputs().begin(), n->inputs().end());
  std::vector<std::pair<ConstantValue, Value*>> made;
  for (const Default& d : tail) {
    ConstantValue c = constantOf(d);
    auto same = std::find_if(made.begin(), made.end(), [&](const auto& m) { return sameConstant(m.first, c); });
    if (same == made.end()) same = made.insert(made.end(), {c, constantBefore(n, c)});
    inputs.push_back(same->second);
  }
  return inputs;
}

// The PyTorch row a graphjit row is printed as, with the trailing arguments PyTorch's schema has at their
// defaults; false when n's row is PyTorch's as it is.
bool writeOverload(Node* n) {
  for (auto [overload, plain] : frontend::kDTypeOverloads)
    if (plain == n->kind()) return replaceWith(n, overload, withTail(n, std::span(&frontend::kNone, 1))), true;
  for (const frontend::Factory& f : frontend::kFactories)
    if (f.plain == n->kind()) {
      const std::vector<Default> nones(static_cast<size_t>(opInfo(f.overload).numInputs) - n->inputs().size());
      return replaceWith(n, f.overload, withTail(n, nones)), true;
    }
  for (const frontend::DefaultsOverload& o : frontend::kDefaultsOverloads)
    if (o.plain == n->kind()) return replaceWith(n, o.overload, withTail(n, o.defaults)), true;
  return false;
}

// Whether a node of this kind makes a new list (an appended list is its operand, which nothing else reads).
bool makesList(OpKind k) {
  static constexpr OpKind kMakers[] = {OpKind::ListConstruct, OpKind::ListAppendInPlace, OpKind::ListAppend,
                                       OpKind::ListConcat,    OpKind::ListCopy,          OpKind::Unbind,
                                       OpKind::Chunk,         OpKind::SplitWithSizes};
  return std::find(std::begin(kMakers), std::end(kMakers), k) != std::end(kMakers);
}

// Whether nothing reads `list` once an append has changed it in place: the append is its one use, and it
// is a list of its own, or a loop's carried list whose first value is one too (read by the loop alone) and
// whose next value each iteration makes anew.
bool owned(const Value* list) {
  if (list->uses().size() != 1) return false;
  const Node* def = list->node();
  if (makesList(def->kind())) return true;
  const Block* body = def->owningBlock();
  const Node* loop = body ? body->owningNode() : nullptr;
  if (def->kind() != OpKind::Param || !loop || loop->kind() != OpKind::Loop || list->offset() == 0) return false;
  const Value* first = loop->input(list->offset() + 1);  // (trip count, cond, carried...)
  const Value* next = body->outputs()[list->offset()];   // (cond, carried...)
  return owned(first) && next->uses().size() == 1 && makesList(next->node()->kind()) &&
         next->node()->owningBlock() == body;
}

// prim::ListAppend(list, x) is a new list; PyTorch's aten::append changes its list. The list is appended
// to in place where nothing reads it afterwards, else to a copy (aten::list).
void writeAppend(Node* n) {
  Value* list = n->input(0);
  if (!owned(list)) list = emitBefore(n, OpKind::ListCopy, {list}, list->type());
  replaceWith(n, OpKind::ListAppendInPlace, {list, n->input(1)});
}

// prim::RaiseIf(cond) as TorchScript writes `if cond: raise Exception(message)`.
void writeRaise(Node* n) {
  Graph& g = *n->graph();
  Node* branch = g.create(OpKind::If, {n->input(0)}, 0);
  branch->setPositionsOf(n);
  branch->insertBefore(n);
  Block* raises = branch->addBlock();
  branch->addBlock();
  Node* message = raises->append(g.createConstant(std::get<std::string>(n->constant())));
  Node* cls = raises->append(g.createConstant(ConstantValue{}));
  Node* raise = raises->append(g.create(OpKind::RaiseException, {message->output(), cls->output()}, 0));
  raise->setPositionsOf(n);
  g.erase(n);
}

// PyTorch's ScalarType for graphjit's dtype code, a constant before n.
Value* scalarTypeBefore(Node* n, int64_t code) {
  const auto d = dtypeFromCode(code);
  if (!d)
    throw Error(fmt::format("{} with dtype code {}, which names no dtype", n->info().name, code), n->where(),
                "graphjit's codes are 0 to 9, support/dtype.h's DType in order");
  return constantBefore(n, frontend::scalarTypeOf(*d));
}

// aten::to(self, code): graphjit's dtype code becomes PyTorch's ScalarType, with non_blocking, copy and
// memory_format at their defaults.
void writeTo(Node* n) {
  Value* dtype = n->input(1);
  if (auto code = constantInt(dtype)) dtype = scalarTypeBefore(n, *code);
  replaceWith(n, OpKind::ToDTypeOptions,
              {n->input(0), dtype, constantBefore(n, false), constantBefore(n, false), constantBefore(n, ConstantValue{})});
}

// The functional batch norm as PyTorch's in-place one on copies of the running statistics, which then
// stand for the updated statistics.
void writeBatchNorm(Node* n) {
  std::vector<Value*> inputs(n->inputs().begin(), n->inputs().end());
  Value* updated[2] = {nullptr, nullptr};
  for (size_t s = 0; s < 2; ++s) {
    Value*& statistic = inputs[3 + s];
    if (statistic->type().kind == TypeKind::None) {
      if (n->output(3 + s)->hasUses())
        throw Error("a running statistic of aten::_native_batch_norm_legit_functional without one is read",
                    n->where(), "read the running statistics only where the batch norm has them");
      continue;
    }
    statistic = updated[s] = emitBefore(n, OpKind::Clone, {statistic, constantBefore(n, ConstantValue{})},
                                        statistic->type());
  }
  Graph& g = *n->graph();
  for (size_t s = 0; s < 2; ++s)
    if (updated[s]) g.replaceValue(n->output(3 + s), updated[s]);
  emitReplacement(n, OpKind::NativeBatchNormInPlace, inputs, 3);
  g.erase(n);
}

// Writes n, one of graphjit's own ops, as PyTorch's; false for any other op.
bool writeOwnOp(Node* n) {
  const OpKind k = n->kind();
  if (k == OpKind::ListAppend) {
    writeAppend(n);
  } else if (k == OpKind::RaiseIf) {
    writeRaise(n);
  } else if (k == OpKind::ToDType) {
    writeTo(n);
  } else if (k == OpKind::NativeBatchNorm) {
    writeBatchNorm(n);
  } else if (k == OpKind::Gelu) {  // the exact form: approximate="none"
    replaceWith(n, OpKind::GeluApproximate, {n->input(0), constantBefore(n, std::string(frontend::kGeluExact))});
  } else if (k == OpKind::DivFloor || k == OpKind::DivTrunc) {
    replaceWith(n, OpKind::DivMode,
                {n->input(0), n->input(1), constantBefore(n, std::string(k == OpKind::DivFloor ? "floor" : "trunc"))});
  } else if (k == OpKind::PhiloxDropout) {  // PyTorch draws its own mask
    replaceWith(n, OpKind::Dropout, {n->input(0), n->input(1), n->input(2)});
  } else if (k == OpKind::PhiloxUniform) {  // and its own numbers
    Value* none = constantBefore(n, ConstantValue{});
    replaceWith(n, OpKind::RandLike, {n->input(0), none, none, none, none, none});
  } else if (k == OpKind::Full) {  // the dtype as a ScalarType code
    const auto code = constantInt(n->input(2));
    if (!code) throw Error("prim::full's dtype is not a constant", n->where(), "write the dtype as a constant");
    Value* none = constantBefore(n, ConstantValue{});
    replaceWith(n, OpKind::FullSized, {n->input(0), n->input(1), scalarTypeBefore(n, *code), none, none, none});
  } else {
    return false;
  }
  return true;
}

// Whether PyTorch has n's op as graphjit writes it (after the rewrites above).
bool pytorchHas(const Node* n) {
  if (n->subgraph()) return false;
  if (n->info().frontendOnly() || !n->info().name.starts_with("prim::")) return true;
  static constexpr OpKind kPrinted[] = {OpKind::Constant, OpKind::ListConstruct, OpKind::ListUnpack,
                                        OpKind::Loop,     OpKind::If,            OpKind::DTypeOf};
  return std::find(std::begin(kPrinted), std::end(kPrinted), n->kind()) != std::end(kPrinted);
}

}  // namespace

void exportTorchScript(Graph& g) {
  if (g.outputs().size() != 1) {  // a function returns one value: several as a tuple
    std::vector<Type> types;
    for (const Value* v : g.outputs()) types.push_back(v->type());
    Node* tuple = g.block()->append(g.create(OpKind::TupleConstruct, g.outputs(), 0));
    tuple->addOutput(Type::tuple(std::move(types)));
    while (!g.outputs().empty()) g.block()->eraseOutput(0);
    g.registerOutput(tuple->output());
  }
  std::vector<Node*> nodes;
  forEachNode(g.block(), [&](Node* n) { nodes.push_back(n); });
  for (Node* n : nodes) {
    if (writeOwnOp(n) || writeOverload(n)) continue;
    if (!pytorchHas(n))
      throw Error(fmt::format("{} has no TorchScript form", n->info().name), n->where(),
                  "export the graph as written or built, before the executors' passes (autodiff, fusion, "
                  "profiling) add graphjit's own ops");
  }
}

}  // namespace gj
