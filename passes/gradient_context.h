#pragma once
// What a gradient formula sees: the forward node, its output gradients, and a builder for the backward.
// Internal to passes/autodiff.
#include "ir/builder.h"

#include <optional>
#include <unordered_map>

namespace gj {

class GradientContext {
 public:
  GradientContext(Graph& backward, GraphBuilder& b) : bwd_(backward), b_(b) {}
  GraphBuilder& b() { return b_; }

  /// The forward value `v` as seen by the backward graph: a copy of a constant, or a saved value.
  Value* F(Value* v);
  /// The gradient flowing into forward value `v` (an output of the node being differentiated);
  /// zeros when nothing reached it. nullptr when v cannot carry a gradient.
  Value* gradOf(Value* v);
  bool hasGrad(const Value* v) const { return grads_.count(v) > 0; }
  /// Adds `g` to the gradient of forward value `v` when v requires grad.
  void accumulate(Value* v, Value* g);
  static bool requiresGrad(const Value* v) { return v->type().requiresGrad.value_or(false); }

  /// The sizes of forward tensor `v` as an int[] value: a constant when static, else aten::size(v).
  Value* sizesOf(Value* v);
  /// g summed back to the sizes of `v` when `result` (the value g is the gradient of) broadcast it.
  Value* reduceTo(Value* g, Value* v, Value* result);

  const std::vector<Value*>& saved() const { return saved_; }
  Value* gradEntry(const Value* v) const { return grads_.count(v) ? grads_.at(v) : nullptr; }

 private:
  Graph& bwd_;
  GraphBuilder& b_;
  std::unordered_map<const Value*, Value*> grads_;
  std::unordered_map<const Value*, Value*> fwdMap_;
  std::vector<Value*> saved_;  // forward values, in the order of backward's saved inputs
};

/// Emits the gradient of `n` (some of whose outputs have gradients in ctx) into the backward graph.
/// Throws gj::Error when n's op has no formula.
void emitGradient(GradientContext& ctx, Node* n);

}  // namespace gj
