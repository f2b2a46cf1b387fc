#include "passes/requires_grad.h"

#include "passes/util.h"

namespace gj {

namespace {

bool differentiableType(const Type& t) {
  if (t.kind == TypeKind::TensorList) return true;
  return t.isTensor() && (!t.dtype || isFloating(*t.dtype));
}

class RequiresGrad {
 public:
  bool changed = false;

  void block(Block* b) {
    for (Node* n : *b) node(n);
  }

  void set(Value* v, bool rg) {
    if (v->type().kind != TypeKind::Tensor && v->type().kind != TypeKind::TensorList) return;
    rg = rg && differentiableType(v->type());
    if (v->type().requiresGrad != rg) {
      Type t = v->type();
      t.requiresGrad = rg;
      v->setType(t);
      changed = true;
    }
  }

 private:
  static bool rg(const Value* v) { return v->type().requiresGrad.value_or(false); }

  void node(Node* n) {
    const OpKind kind = n->kind();
    if (kind == OpKind::Loop) {
      Block* body = n->block(0);
      size_t carried = n->inputs().size() - 2;
      std::vector<bool> flags;
      for (size_t k = 0; k < carried; ++k) flags.push_back(rg(n->input(k + 2)));
      for (int round = 0; round < 4; ++round) {
        for (size_t k = 0; k < carried; ++k) set(body->inputs()[k + 1], flags[k]);
        block(body);
        bool stable = true;
        for (size_t k = 0; k < carried; ++k) {
          bool f = flags[k] || rg(body->outputs()[k + 1]);
          stable = stable && f == flags[k];
          flags[k] = f;
        }
        if (stable) break;
      }
      for (size_t k = 0; k < carried; ++k) set(n->output(k), flags[k]);
      return;
    }
    if (kind == OpKind::If) {
      block(n->block(0));
      block(n->block(1));
      for (size_t k = 0; k < n->outputs().size(); ++k)
        set(n->output(k), rg(n->block(0)->outputs()[k]) || rg(n->block(1)->outputs()[k]));
      return;
    }
    if (kind == OpKind::DifferentiableGraph) {
      Graph& sub = *n->subgraph();
      for (size_t i = 0; i < sub.inputs().size(); ++i) {
        Type t = sub.inputs()[i]->type();
        t.requiresGrad = rg(n->input(i));
        sub.inputs()[i]->setType(t);
      }
      changed |= propagateRequiresGrad(sub);
      for (size_t k = 0; k < n->outputs().size(); ++k) set(n->output(k), rg(sub.outputs()[k]));
      return;
    }
    if (kind == OpKind::TypeCheck || kind == OpKind::Profile) {
      for (size_t k = 0; k < n->inputs().size(); ++k) set(n->output(k), rg(n->input(k)));
      return;
    }
    bool any = false;
    for (Value* v : n->inputs()) any = any || rg(v);
    if (resultTakesNoGradient(kind)) any = false;
    // Index and size queries, and the targets of a loss, carry no gradient; nor do a batch norm's updated
    // running statistics (outputs 3 and 4), as in PyTorch, which updates them outside autograd.
    // aten::max's and aten::min's indices neither.
    const bool maxDim = kind == OpKind::MaxDim || kind == OpKind::MinDim;
    for (size_t k = 0; k < n->outputs().size(); ++k)
      set(n->output(k), any && !(kind == OpKind::NativeBatchNorm && k >= 3) && !(maxDim && k == 1));
  }
};

}  // namespace

bool propagateRequiresGrad(Graph& g) {
  RequiresGrad r;
  for (Value* in : g.inputs()) r.set(in, in->type().requiresGrad.value_or(false));
  r.block(g.block());
  return r.changed;
}

}  // namespace gj
