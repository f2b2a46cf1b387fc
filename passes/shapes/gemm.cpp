// Shape propagation's rules (passes/shapes/rules.h) for the ops of ops.def's Gemm group (products and convolutions).
#include "passes/shapes/rules.h"

#include "passes/util.h"

#include <algorithm>

namespace gj::shapes {

namespace {

Type mmType(const Node* n, size_t, const Args& op) {
  return op.like(0, matmulSizes(op.in(0), op.in(1), n->kind()));
}

Type addmmType(const Node*, size_t, const Args& op) {
  return op.like(1, matmulSizes(op.in(1), op.in(2), OpKind::Mm));
}

Type linearType(const Node*, size_t, const Args& op) {
  auto s = sizesOf(op.in(0));
  auto w = sizesOf(op.in(1));
  if (s && w && !s->empty() && w->size() == 2) s->back() = (*w)[0];
  else s.reset();
  return op.like(0, s);
}

Type conv2dType(const Node* n, size_t, const Args& op) {
  return op.like(0, conv2dSizes(n));
}

Type convolutionBackwardType(const Node*, size_t k, const Args& op) {
  if (k == 0) return op.same(1);
  if (k == 1) return op.same(2);
  {
    auto w = sizesOf(op.in(2));
    return op.like(2, w && !w->empty() ? std::optional<Sizes>(Sizes{(*w)[0]}) : std::nullopt);
  }
}

}  // namespace

std::span<const RuleRow> gemmRules() {
  static constexpr RuleRow kRows[] = {
      {OpKind::Mm, mmType},
      {OpKind::Bmm, mmType},
      {OpKind::Matmul, mmType},
      {OpKind::Addmm, addmmType},
      {OpKind::Linear, linearType},
      {OpKind::Conv2d, conv2dType},
      {OpKind::ConvolutionBackward, convolutionBackwardType},
  };
  return kRows;
}

}  // namespace gj::shapes
