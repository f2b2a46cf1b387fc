#include "passes/shape_propagation.h"

#include "passes/shapes/rules.h"
#include "passes/util.h"
#include "support/window.h"

#include <algorithm>

namespace gj {

namespace {

using namespace shapes;

// The type of output `k` of n from its inputs' types, by its op's rule (passes/shapes/).
Type outputType(const Node* n, size_t k) { return shapes::ruleFor(n->kind())(n, k, shapes::Args{n}); }

// ---- strict mode (checkShapes): what the types already show cannot run ----

std::string shapeStr(const Sizes& s) {
  std::vector<std::string> dims;
  for (int64_t d : s) dims.push_back(knownDim(d) ? std::to_string(d) : "*");
  return fmt::format("[{}]", fmt::join(dims, ", "));
}

// Sizes a and b broadcast; "" when they can, else why not.
std::string broadcastError(const Sizes& a, const Sizes& b) {
  for (size_t i = 1; i <= std::min(a.size(), b.size()); ++i) {
    int64_t da = a[a.size() - i], db = b[b.size() - i];
    if (knownDim(da) && knownDim(db) && da != db && da != 1 && db != 1)
      return fmt::format("sizes {} and {} do not broadcast: {} against {} in the dimension {} from the end",
                         shapeStr(a), shapeStr(b), da, db, i);
  }
  return {};
}

// The inner sizes of a matrix product a @ b (their last and next-to-last dimensions) agree, where known.
std::string productError(const Sizes& a, const Sizes& b, const char* op) {
  int64_t k1 = a.back(), k2 = b.size() == 1 ? b[0] : b[b.size() - 2];
  if (knownDim(k1) && knownDim(k2) && k1 != k2)
    return fmt::format("{} of {} and {}: the first operand's {} columns do not match the second's {} rows", op,
                       shapeStr(a), shapeStr(b), k1, k2);
  return {};
}

std::string rankError(const Sizes& s, size_t rank, const char* op, const char* what) {
  if (s.size() == rank) return {};
  return fmt::format("{} takes a {}-dimensional {}, not {}", op, rank, what, shapeStr(s));
}

// Why n's inputs cannot be what its op takes, from their known sizes ("" when they can or it is unknown):
// a GEMM's rank and inner sizes, linear's features and bias, a pointwise op's broadcast.
std::string staticShapeError(const Node* n) {
  auto sz = [&](size_t i) { return n->input(i)->type().isTensor() ? n->input(i)->type().sizes : std::nullopt; };
  const OpKind k = n->kind();
  if (k == OpKind::Mm || k == OpKind::Bmm) {
    const size_t rank = k == OpKind::Mm ? 2 : 3;
    const char* op = k == OpKind::Mm ? "aten::mm" : "aten::bmm";
    auto a = sz(0), b = sz(1);
    if (!a || !b) return {};
    if (auto e = rankError(*a, rank, op, "first operand"); !e.empty()) return e;
    if (auto e = rankError(*b, rank, op, "second operand"); !e.empty()) return e;
    if (rank == 3 && knownDim((*a)[0]) && knownDim((*b)[0]) && (*a)[0] != (*b)[0])
      return fmt::format("aten::bmm of {} and {}: batch sizes {} and {} differ", shapeStr(*a), shapeStr(*b), (*a)[0],
                         (*b)[0]);
    return productError(*a, *b, op);
  }
  if (k == OpKind::Matmul) {
    auto a = sz(0), b = sz(1);
    if (!a || !b) return {};
    if (a->empty() || b->empty()) return "aten::matmul takes operands of at least one dimension";
    return productError(*a, *b, "aten::matmul");
  }
  if (k == OpKind::Addmm) {
    auto self = sz(0), a = sz(1), b = sz(2);
    if (!a || !b) return {};
    if (auto e = rankError(*a, 2, "aten::addmm", "mat1"); !e.empty()) return e;
    if (auto e = rankError(*b, 2, "aten::addmm", "mat2"); !e.empty()) return e;
    if (auto e = productError(*a, *b, "aten::addmm"); !e.empty()) return e;
    return self ? broadcastError(*self, Sizes{(*a)[0], (*b)[1]}) : std::string();
  }
  if (k == OpKind::Linear) {
    auto x = sz(0), w = sz(1);
    if (!x || !w) return {};
    if (auto e = rankError(*w, 2, "aten::linear", "weight"); !e.empty()) return e;
    if (x->empty()) return "aten::linear takes an input of at least one dimension";
    if (knownDim(x->back()) && knownDim((*w)[1]) && x->back() != (*w)[1])
      return fmt::format("aten::linear of an input {} and a weight {}: the input has {} features, the weight takes {}",
                         shapeStr(*x), shapeStr(*w), x->back(), (*w)[1]);
    auto b = n->input(2)->type().kind == TypeKind::None ? std::nullopt : sz(2);
    if (b && (b->size() != 1 || (knownDim((*b)[0]) && knownDim((*w)[0]) && (*b)[0] != (*w)[0])))
      return fmt::format("aten::linear's bias {} must be [{}], the weight's output features", shapeStr(*b), (*w)[0]);
    return {};
  }
  if (k == OpKind::PhiloxDropout) {  // rng is the generator's state: int64 [seed, offset]
    const Type& rng = n->input(3)->type();
    if ((rng.dtype && *rng.dtype != DType::Int64) || (rng.sizes && *rng.sizes != Sizes{2} &&
                                                      !(rng.sizes->size() == 1 && !knownDim((*rng.sizes)[0]))))
      return fmt::format("prim::philox_dropout's rng must be an int64 tensor [2] (seed, offset), not {}", rng.str());
    return {};
  }
  if (int c = conditionOperand(k); c >= 0) {
    const Type& t = n->input(c)->type();
    if (t.isTensor() && t.dtype && *t.dtype != DType::Bool)
      return fmt::format("{}'s {} must be a bool tensor, not {} (compare, e.g. aten::gt, to make one)", n->info().name,
                         opSignature(k).inputNames[c], dtypeName(*t.dtype));
  }
  if (n->info().group == OpGroupKind::Pointwise) {  // every tensor operand broadcasts with the others
    std::optional<Sizes> first;
    for (size_t i = 0; i < n->inputs().size(); ++i) {
      auto s = sz(i);
      if (!s) continue;
      if (first)
        if (auto e = broadcastError(*first, *s); !e.empty()) return e;
      if (!first) first = s;
    }
  }
  return {};
}

// Why a value declared `declared` cannot hold what its op makes, of type `made` ("" when it can): another
// kind, or a dtype, rank or size that both know and that differ.
std::string contradiction(const Type& declared, const Type& made) {
  auto differ = [&] { return fmt::format("it is declared {} but the op makes {}", declared.str(), made.str()); };
  if (declared.kind != made.kind) return differ();
  if (!declared.isTensor()) return {};
  if (declared.dtype && made.dtype && *declared.dtype != *made.dtype) return differ();
  if (!declared.sizes || !made.sizes) return {};
  if (declared.sizes->size() != made.sizes->size()) return differ();
  for (size_t d = 0; d < made.sizes->size(); ++d)
    if (knownDim((*declared.sizes)[d]) && knownDim((*made.sizes)[d]) && (*declared.sizes)[d] != (*made.sizes)[d])
      return differ();
  return {};
}

[[noreturn]] void typeError(const Node* n, const std::string& what) {
  // describe() already names the Python source
  throw Error(what, n->loc().known() ? n->where() : n->describe(),
              "fix the operands' types, or the declared type, so that they agree");
}

class ShapePropagator {
 public:
  explicit ShapePropagator(bool strict = false) : strict_(strict) {}
  bool changed = false;

  void block(Block* b) {
    for (Node* n : *b) node(n);
  }
  void range(Node* first, Node* last) {
    for (Node* n = first;; n = n->next()) {
      node(n);
      if (n == last) break;
    }
  }

 private:
  void set(Value* v, Type t) {
    if (strict_)
      if (std::string why = contradiction(v->type(), t); !why.empty())
        typeError(v->node(), fmt::format("%{}: {}", v->name(), why));
    t.requiresGrad = v->type().requiresGrad;  // owned by the requires-grad pass
    if (v->type() != t) {
      v->setType(std::move(t));
      changed = true;
    }
  }

  void node(Node* n) {
    if (strict_)
      if (std::string why = staticShapeError(n); !why.empty()) typeError(n, why);
    if (n->kind() == OpKind::Loop) return loop(n);
    if (n->kind() == OpKind::If) return ifNode(n);
    if (n->kind() == OpKind::DifferentiableGraph) return subgraph(n);
    for (size_t k = 0; k < n->outputs().size(); ++k) set(n->output(k), outputType(n, k));
  }

  void loop(Node* n) {
    Block* body = n->block(0);
    size_t carried = n->inputs().size() - 2;
    std::vector<Type> types;
    for (size_t k = 0; k < carried; ++k) types.push_back(n->input(k + 2)->type());
    // Merging only loses information, so this reaches a fixed point in a few rounds.
    for (int round = 0; round < 8; ++round) {
      for (size_t k = 0; k < carried; ++k) set(body->inputs()[k + 1], types[k]);
      block(body);
      bool stable = true;
      for (size_t k = 0; k < carried; ++k) {
        Type m = mergeTypes(types[k], body->outputs()[k + 1]->type());
        if (m != types[k]) stable = false;
        types[k] = m;
      }
      if (stable) break;
    }
    for (size_t k = 0; k < carried; ++k) set(n->output(k), types[k]);
  }

  void ifNode(Node* n) {
    block(n->block(0));
    block(n->block(1));
    for (size_t k = 0; k < n->outputs().size(); ++k)
      set(n->output(k), mergeTypes(n->block(0)->outputs()[k]->type(), n->block(1)->outputs()[k]->type()));
  }

  void subgraph(Node* n) {
    Graph& sub = *n->subgraph();
    for (size_t i = 0; i < sub.inputs().size(); ++i) {
      Type t = n->input(i)->type();
      t.requiresGrad = sub.inputs()[i]->type().requiresGrad;
      if (sub.inputs()[i]->type() != t) sub.inputs()[i]->setType(t);
    }
    ShapePropagator inner(strict_);
    inner.block(sub.block());
    changed |= inner.changed;
    for (size_t k = 0; k < n->outputs().size(); ++k) set(n->output(k), sub.outputs()[k]->type());
  }

  bool strict_;
};

}  // namespace

bool propagateShapes(Graph& g) {
  ShapePropagator p;
  p.block(g.block());
  return p.changed;
}

bool propagateShapes(Node* first, Node* last) {
  ShapePropagator p;
  p.range(first, last);
  return p.changed;
}

void checkShapes(const Graph& g) {
  std::unique_ptr<Graph> copy = g.clone();
  ShapePropagator(true).block(copy->block());
}

std::vector<Type> outputTypesFor(const Node* n, std::span<const Type> operandTypes,
                                 std::span<const std::vector<Type>> listElementTypes, std::optional<DType>* promoted) {
  IR_CHECK(operandTypes.size() == n->inputs().size() && listElementTypes.size() == operandTypes.size())
      << "outputTypesFor: " << operandTypes.size() << " types for " << n->inputs().size() << " operands";
  // n again in a graph of its own, over inputs of these types; constants (dims, flags, dtype codes) come
  // along, since the rules read them, and a tensor list is a list of inputs of its elements' types.
  Graph scratch;
  ValueMap env;
  for (size_t i = 0; i < operandTypes.size(); ++i) {
    const Value* v = n->input(i);
    if (env.contains(v)) continue;
    if (v->node()->kind() == OpKind::Constant) {
      env[v] = scratch.block()->append(cloneNode(v->node(), scratch, env))->output();
    } else if (operandTypes[i].kind == TypeKind::TensorList) {
      std::vector<Value*> elements;
      for (const Type& t : listElementTypes[i]) elements.push_back(scratch.addInput(t));
      Node* list = scratch.block()->append(scratch.create(OpKind::ListConstruct, elements));
      list->output()->setType(operandTypes[i]);
      env[v] = list->output();
    } else {
      env[v] = scratch.addInput(operandTypes[i]);
    }
  }
  const Node* c = scratch.block()->append(cloneNode(n, scratch, env));
  if (promoted) *promoted = c->info().pointwiseOp() ? pointwiseOperandDtype(c) : std::nullopt;
  std::vector<Type> types;
  for (size_t k = 0; k < c->outputs().size(); ++k) types.push_back(outputType(c, k));
  return types;
}

}  // namespace gj
