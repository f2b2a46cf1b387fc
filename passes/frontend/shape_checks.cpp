// fold-shape-checks: the checks TorchScript's Python code makes on its arguments (None checks, ranks,
// sizes, `raise`), folded where the types decide them and run-time checks (prim::RaiseIf) otherwise; ifs
// on constants (`if inplace:`) folded with them.
#include "ir/op.h"
#include "passes/constant_propagation.h"
#include "passes/frontend.h"
#include "passes/shape_propagation.h"
#include "passes/util.h"
#include "support/error.h"

#include <fmt/format.h>

namespace gj {

namespace {

// "ValueError: x must be a matrix" from prim::RaiseException(%message, %class); a message that
// aten::format builds keeps its {} unfilled.
std::string raiseMessage(const Node* raise) {
  std::string text = "an exception";
  if (!raise->inputs().empty()) {
    const Value* m = raise->input(0);
    if (auto s = constantString(m)) text = *s;
    else if (m->node()->kind() == OpKind::Format && !m->node()->inputs().empty())
      if (auto f = constantString(m->node()->input(0))) text = *f;
  }
  if (raise->inputs().size() > 1)
    if (auto cls = constantString(raise->input(1))) {
      std::string name = cls->rfind("builtins.", 0) == 0 ? cls->substr(9) : *cls;
      return name + ": " + text;
    }
  return text;
}

const Node* raiseIn(const Block* b) {
  for (const Node* n : *b)
    if (n->kind() == OpKind::RaiseException) return n;
  return nullptr;
}

// `if cond: raise E(...)` (either branch) becomes prim::RaiseIf(cond) and the other branch inlined.
bool lowerRaises(Block* b) {
  bool changed = false;
  Graph* g = b->graph();
  for (Node* n : b->nodesList()) {
    for (Block* inner : n->blocks()) changed |= lowerRaises(inner);
    if (n->kind() == OpKind::RaiseException && (!b->owningNode() || b->owningNode()->kind() != OpKind::If))
      throw Error(fmt::format("a raise outside an if ({})", raiseMessage(n)), n->where(),
                  "graphjit lowers `if cond: raise ...`; a graph that always raises has nothing to run");
    if (n->kind() != OpKind::If) continue;
    const Node* raises[2] = {raiseIn(n->block(0)), raiseIn(n->block(1))};
    if (!raises[0] && !raises[1]) continue;
    if (raises[0] && raises[1])
      throw Error(fmt::format("both branches of this if raise ({})", raiseMessage(raises[0])), n->where(),
                  "graphjit lowers an if with one raising branch; this one always raises");
    const Node* raise = raises[0] ? raises[0] : raises[1];
    Value* cond = n->input(0);
    if (!raises[0]) {
      Node* negate = g->create(OpKind::BoolNot, {cond}, 0);
      negate->addOutput(Type::of(TypeKind::Bool));
      negate->insertBefore(n);
      cond = negate->output();
    }
    Node* check = g->create(OpKind::RaiseIf, {cond}, 0);
    check->setConstant(raiseMessage(raise));
    check->setLoc(raise->loc());
    check->setPySource(raise->pySource().known() ? raise->pySource() : n->pySource());
    check->insertBefore(n);
    Block* runs = n->block(raises[0] ? 1 : 0);
    for (Node* m : runs->nodesList()) m->moveBefore(n);
    for (size_t i = 0; i < n->outputs().size(); ++i) g->replaceAllUsesWith(n->output(i), runs->outputs()[i]);
    g->erase(n);
    changed = true;
  }
  return changed;
}

// Whether a value is None: yes (NoneType), no (a type without None), or not known (an Optional).
std::optional<bool> isNone(const Value* v) {
  if (v->type().kind == TypeKind::None) return true;
  if (v->type().kind == TypeKind::Optional) return std::nullopt;
  return false;
}

// Python's `is` / `is not` on a None check, optional inputs taken as given; dim as the rank.
bool foldQueries(Graph& g) {
  std::vector<Node*> done;
  forEachNode(g.block(), [&](Node* n) {
    Value* replacement = nullptr;
    if (n->kind() == OpKind::UncheckedCast && n->input(0)->type().kind != TypeKind::Optional) {
      replacement = n->input(0);
    } else if (n->kind() == OpKind::Is || n->kind() == OpKind::IsNot) {
      auto a = isNone(n->input(0)), b = isNone(n->input(1));
      if (!a || !b || (!*a && !*b)) return;  // only a None check folds
      const bool same = *a && *b;
      Node* c = g.createConstant(n->kind() == OpKind::Is ? same : !same);
      c->insertBefore(n);
      replacement = c->output();
    } else if (n->kind() == OpKind::Dim) {
      const Type& t = n->input(0)->type();
      if (t.sizes) {
        Node* c = g.createConstant(static_cast<int64_t>(t.sizes->size()));
        c->insertBefore(n);
        replacement = c->output();
      } else {
        Node* sizes = g.create(OpKind::Sizes, {n->input(0)}, 0);
        sizes->addOutput(Type::of(TypeKind::IntList));
        sizes->insertBefore(n);
        Node* len = g.create(OpKind::Len, {sizes->output()}, 0);
        len->addOutput(Type::of(TypeKind::Int));
        len->insertBefore(n);
        replacement = len->output();
      }
    } else {
      return;
    }
    g.replaceAllUsesWith(n->output(), replacement);
    done.push_back(n);
  });
  for (auto it = done.rbegin(); it != done.rend(); ++it) g.erase(*it);
  return !done.empty();
}

// A {2} constant read as a tensor: prim::full of its declared sizes (0-d when they are not printed) and
// dtype (else its number's: int64, float32 or bool, as torch.tensor(2) makes it).
void tensorOfConstant(Graph& g, Node* n) {
  const Type& t = n->output()->type();
  const ConstantValue& c = n->constant();
  DType d = std::holds_alternative<int64_t>(c) ? DType::Int64 : std::holds_alternative<bool>(c) ? DType::Bool : DType::Float32;
  if (t.dtype) d = *t.dtype;
  std::vector<int64_t> sizes;
  if (t.sizes)
    for (int64_t s : *t.sizes) sizes.push_back(s == kUnknownDim ? 1 : s);
  Node* full = g.create(OpKind::Full, {constantBefore(n, sizes), constantBefore(n, c), constantBefore(n, static_cast<int64_t>(d))});
  full->output()->setType(Type::tensor(d, sizes));
  full->insertBefore(n);
  full->setPositionsOf(n);
  g.replaceAllUsesWith(n->output(), full->output());
}

// A trace's 0-dim tensors of a scalar (prim::NumToTensor, a {2} constant) read as the scalar where an op
// takes one: a pointwise op's Tensor|Scalar operand, aten::Int. A {2} constant read otherwise (`2 ** x`
// casts it first) is a prim::full.
bool scalarsOfTensors(Graph& g) {
  bool changed = false;
  forEachNode(g.block(), [&](Node* n) {
    const bool tensorConstant = n->kind() == OpKind::Constant && n->output()->type().isTensor();
    if (n->kind() != OpKind::NumToTensor && !tensorConstant) return;
    Value* scalar = n->kind() == OpKind::NumToTensor ? n->input(0) : nullptr;
    if (tensorConstant) {
      // A trace writes -2.0 as {-2}: the declared Double says it is a float, which promotes an integer tensor.
      ConstantValue value = n->constant();
      const std::optional<DType> declared = n->output()->type().dtype;
      if (declared && isFloating(*declared) && std::holds_alternative<int64_t>(value))
        value = static_cast<double>(std::get<int64_t>(value));
      Node* c = g.createConstant(value);
      c->insertBefore(n);
      scalar = c->output();
    }
    for (const Use& u : std::vector<Use>(n->output()->uses())) {
      const OpSignature& sig = opSignature(u.user->kind());
      if (u.index < sig.inputs.size() && sig.inputs[u.index] == ArgKind::TensorOrScalar) {
        u.user->replaceInput(u.index, scalar);
        changed = true;
      } else if (u.user->kind() == OpKind::IntOfTensor && scalar->type().kind == TypeKind::Int) {
        g.replaceAllUsesWith(u.user->output(), scalar);
        changed = true;
      }
    }
    if (tensorConstant && !n->output()->uses().empty()) {
      tensorOfConstant(g, n);
      changed = true;
    }
  });
  return changed;
}

// A prim::RaiseIf whose condition the types fixed at true fails on every input.
void refuseFailingChecks(const Block* b) {
  for (const Node* n : *b) {
    for (const Block* inner : n->blocks()) refuseFailingChecks(inner);
    if (n->kind() == OpKind::RaiseIf && constantBool(n->input(0)) == true)
      throw Error(fmt::format("this check fails for the graph's input types: {}", std::get<std::string>(n->constant())),
                  n->where(), "give the graph inputs of the shapes its Python code expects");
  }
}

// An if on a constant, such as torch.nn.functional's `if inplace:`: constant propagation below keeps the
// live branch only, so the dead one's in-place op (aten::relu_) never needs lowering.
bool hasConstantIf(const Block* b) {
  for (const Node* n : *b) {
    if (n->kind() == OpKind::If && constantBool(n->input(0))) return true;
    for (const Block* inner : n->blocks())
      if (hasConstantIf(inner)) return true;
  }
  return false;
}

}  // namespace

bool foldShapeChecks(Graph& g) {
  bool changed = false;
  for (Value* in : g.inputs())
    if (in->type().kind == TypeKind::Optional) {  // taken as given: graphir run reads it like any input
      Type element = in->type().elements.at(0);
      in->setType(std::move(element));
      changed = true;
    }
  changed |= lowerRaises(g.block());
  changed |= foldQueries(g);
  changed |= scalarsOfTensors(g);
  changed |= hasConstantIf(g.block());
  if (!changed) return false;
  propagateShapes(g);  // what the input types decide: ranks, sizes, and so the checks on them
  propagateConstants(g);
  refuseFailingChecks(g.block());
  return true;
}

}  // namespace gj
