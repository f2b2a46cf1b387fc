#pragma once
// What a gradient formula sees: the forward node, its output gradients, and a builder for the backward.
// Internal to passes/autodiff.
#include "ir/builder.h"

#include <optional>
#include <unordered_map>

namespace gj {

class GradientContext {
 public:
  /// Gradients of `forward`'s values, emitted into `backward` through `b`.
  GradientContext(const Graph& forward, Graph& backward, GraphBuilder& b)
      : savedSizes_(forward), savedDTypes_(forward), bwd_(backward), b_(b), grads_(forward), fwdMap_(forward) {}
  GraphBuilder& b() { return b_; }

  /// The forward value `v` as seen by the backward graph: a copy of a constant, or a saved value.
  Value* F(Value* v);
  /// The gradient flowing into forward value `v` (an output of the node being differentiated);
  /// zeros when nothing reached it. nullptr when v cannot carry a gradient.
  Value* gradOf(Value* v);
  bool hasGrad(const Value* v) const { return grads_.contains(v) || slices_.count(v) > 0; }
  /// Adds `g` to the gradient of forward value `v` when v requires grad.
  void accumulate(Value* v, Value* g);
  static bool requiresGrad(const Value* v) { return v->type().requiresGrad.value_or(false); }

  /// The sizes of forward tensor `v` as an int[] value: a constant when static, else aten::size(v)
  /// computed in the forward and saved (the int[], not the tensor: see Note [Save metadata, not tensors]).
  Value* sizesOf(Value* v);
  /// g converted to the dtype of forward tensor `v` (aten::to with v's dtype code: a constant when
  /// known, else prim::dtype(v) computed in the forward and saved).
  Value* castTo(Value* g, Value* v);
  /// g summed back to the sizes of `v` when `result` (the value g is the gradient of) broadcast it.
  Value* reduceTo(Value* g, Value* v, Value* result);

  const std::vector<Value*>& saved() const { return saved_; }
  /// The accumulated gradient of v, or nullptr when none reached it.
  Value* gradEntry(const Value* v);

  /// Adds g as the gradient of select(v, dim, index). Slices of one value along one dimension are
  /// collected and stacked once (see Note [Gradients of many selects]); anything else falls back to
  /// aten::select_backward.
  void accumulateSelect(Value* v, Value* g, Value* dim, Value* index);

 private:
  // Note [Gradients of many selects]: an unrolled loop reads step t of the input as select(x, 0, t).
  // Summing a full-size select_backward per step costs O(T^2) memory traffic; collecting the T slice
  // gradients and stacking them costs O(T).
  struct SliceGrads {
    int64_t dim;
    std::vector<Value*> byIndex;
  };
  void materialize(const Value* v);
  // Note [Save metadata, not tensors]: a formula that needs only a forward tensor's sizes or dtype (the
  // broadcast reductions and dtype casts of reduceTo, when types are not static) must not keep the
  // tensor alive until the backward: an interpreted LSTM step saved four 64x2048 gate sums that way.
  // The forward computes the metadata right after the tensor and the backward reads that instead.
  Value* savedMeta(OpKind k, Value* v, Type t);
  // Keyed by forward values, through arrays over the forward graph's values (Note [Dense value maps]).
  ValueMap savedSizes_, savedDTypes_;
  std::unordered_map<const Value*, SliceGrads> slices_;
  Graph& bwd_;
  GraphBuilder& b_;
  ValueMap grads_;
  ValueMap fwdMap_;
  std::vector<Value*> saved_;  // forward values, in the order of backward's saved inputs
};

/// Emits the gradient of `n` (some of whose outputs have gradients in ctx) into the backward graph.
/// Throws gj::Error when n's op has no formula.
void emitGradient(GradientContext& ctx, Node* n);

}  // namespace gj
