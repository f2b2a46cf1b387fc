// Shape propagation's rules (passes/shapes/rules.h) for the ops of ops.def's Reduction group: sums, means,
// extremes, norms.
#include "passes/shapes/rules.h"

#include "passes/util.h"

#include <algorithm>

namespace gj::shapes {

namespace {

Type varType(const Node*, size_t, const Args& op) {
  return op.like(0, reduceSizes(op.in(0), op.in(1), op.in(3)));
}

Type varBackwardType(const Node* n, size_t, const Args& op) {
  return op.same(n->kind() == OpKind::VarBackward ? 1 : 0);
}

Type nativeLayerNormType(const Node*, size_t k, const Args& op) {
  if (k == 0) return op.same(0);
  // The statistics: the input's sizes with the normalized (trailing) dims kept as 1.
  auto s = sizesOf(op.in(0));
  auto shape = constantInts(op.in(1));
  if (!s || !shape || shape->size() > s->size()) return op.like(0, std::nullopt);
  std::fill(s->end() - static_cast<long>(shape->size()), s->end(), 1);
  return op.like(0, s);
}

Type nativeLayerNormBackwardType(const Node*, size_t k, const Args& op) {
  const size_t from = k == 0 ? 1 : k + 4;  // input, weight, bias
  return op.in(from)->type().isTensor() ? op.same(from) : op.like(1, std::nullopt);
}

Type sumType(const Node*, size_t, const Args& op) {
  return integersSumInInt64(op.like(0, Sizes{}));
}

Type sumDimType(const Node*, size_t, const Args& op) {
  return integersSumInInt64(op.like(0, reduceSizes(op.in(0), op.in(1), op.in(2))));
}

Type meanType(const Node*, size_t, const Args& op) {
  return op.like(0, Sizes{});
}

Type meanDimType(const Node*, size_t, const Args& op) {
  return op.like(0, reduceSizes(op.in(0), op.in(1), op.in(2)));
}

Type maxDimType(const Node*, size_t k, const Args& op) {
  // The values, then their int64 indices
  auto s = sizesOf(op.in(0));
  auto d = normDim(constantInt(op.in(1)), rankOf(op.in(0)));
  auto keep = constantBool(op.in(2));
  if (s && d && keep && !s->empty()) {
    if (*keep) (*s)[*d] = 1;
    else s->erase(s->begin() + *d);
  }
  Type t = op.like(0, s && d && keep ? s : std::nullopt);
  if (k == 1) t.dtype = DType::Int64;
  return t;
}

Type nativeBatchNormType(const Node*, size_t k, const Args& op) {
  if (k == 0) return op.same(0);
  if (k >= 3) return op.same(k);  // the running statistics, updated
  auto x = sizesOf(op.in(0));
  return op.like(0, x && x->size() >= 2 ? std::optional<Sizes>(Sizes{(*x)[1]}) : std::nullopt);
}

Type nativeBatchNormBackwardType(const Node*, size_t k, const Args& op) {
  if (k == 0) return op.same(1);
  return op.in(2)->type().isTensor() ? op.same(2) : op.like(1, std::nullopt);
}

}  // namespace

std::span<const RuleRow> reductionRules() {
  static constexpr RuleRow kRows[] = {
      {OpKind::Softmax, likeFirstOperandType},
      {OpKind::LogSoftmax, likeFirstOperandType},
      {OpKind::SoftmaxBackward, likeFirstOperandType},
      {OpKind::LogSoftmaxBackward, likeFirstOperandType},
      {OpKind::Var, varType},
      {OpKind::Std, varType},
      {OpKind::VarBackward, varBackwardType},
      {OpKind::LayerNorm, varBackwardType},
      {OpKind::NativeLayerNorm, nativeLayerNormType},
      {OpKind::NativeLayerNormBackward, nativeLayerNormBackwardType},
      {OpKind::Sum, sumType},
      {OpKind::SumDim, sumDimType},
      {OpKind::Mean, meanType},
      {OpKind::NllLoss, meanType},
      {OpKind::CrossEntropy, meanType},
      {OpKind::MeanDim, meanDimType},
      {OpKind::Amax, meanDimType},
      {OpKind::Amin, meanDimType},
      {OpKind::MaxDim, maxDimType},
      {OpKind::MinDim, maxDimType},
      {OpKind::BatchNorm, likeFirstOperandType},
      {OpKind::NativeBatchNorm, nativeBatchNormType},
      {OpKind::NativeBatchNormBackward, nativeBatchNormBackwardType},
      {OpKind::SumToSize, sizedByListType},
  };
  return kRows;
}

}  // namespace gj::shapes
