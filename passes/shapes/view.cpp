// Shape propagation's rules (passes/shapes/rules.h) for the ops of ops.def's View group: aliases of their
// input (transposes, slices, reshapes).
#include "passes/shapes/rules.h"

#include "passes/util.h"

#include <algorithm>

namespace gj::shapes {

namespace {

Type matrixTransposeType(const Node*, size_t, const Args& op) {
  auto s = sizesOf(op.in(0));
  if (s && s->size() == 2) std::swap((*s)[0], (*s)[1]);
  return op.like(0, s);
}

Type transposeType(const Node*, size_t, const Args& op) {
  auto s = sizesOf(op.in(0));
  auto a = normDim(constantInt(op.in(1)), rankOf(op.in(0))), b = normDim(constantInt(op.in(2)), rankOf(op.in(0)));
  if (!s || !a || !b) return op.like(0, std::nullopt);
  if (!s->empty()) std::swap((*s)[*a], (*s)[*b]);
  return op.like(0, s);
}

Type permuteType(const Node*, size_t, const Args& op) {
  auto s = sizesOf(op.in(0));
  auto dims = constantInts(op.in(1));
  if (!s || !dims || dims->size() != s->size()) return op.like(0, std::nullopt);
  Sizes out;
  for (int64_t d : *dims) {
    auto nd = normDim(d, static_cast<int64_t>(s->size()));
    if (!nd) return op.like(0, std::nullopt);
    out.push_back((*s)[*nd]);
  }
  return op.like(0, out);
}

Type selectType(const Node*, size_t, const Args& op) {
  auto s = sizesOf(op.in(0));
  auto d = normDim(constantInt(op.in(1)), rankOf(op.in(0)));
  if (!s || !d || s->empty()) return op.like(0, std::nullopt);
  return op.like(0, dropDim(*s, *d));
}

Type sliceType(const Node*, size_t, const Args& op) {
  auto s = sizesOf(op.in(0));
  auto d = normDim(constantInt(op.in(1)), rankOf(op.in(0)));
  auto start = constantInt(op.in(2)), end = constantInt(op.in(3)), step = constantInt(op.in(4));
  if (!s || !d || s->empty()) return op.like(0, std::nullopt);
  int64_t n0 = (*s)[*d];
  if (!start || !end || !step || n0 == kUnknownDim || *step <= 0) {
    (*s)[*d] = kUnknownDim;
    return op.like(0, s);
  }
  int64_t a = *start < 0 ? *start + n0 : *start, e = *end < 0 ? *end + n0 : *end;
  a = std::clamp<int64_t>(a, 0, n0);
  e = std::clamp<int64_t>(e, a, n0);
  (*s)[*d] = (e - a + *step - 1) / *step;
  return op.like(0, s);
}

Type viewType(const Node*, size_t, const Args& op) {
  return op.like(0, reshapeSizes(op.in(0), op.in(1)));
}

Type unsqueezeType(const Node*, size_t, const Args& op) {
  auto s = sizesOf(op.in(0));
  auto d = normDim(constantInt(op.in(1)), s ? std::optional<int64_t>(s->size() + 1) : std::nullopt);
  if (!s || !d) return op.like(0, std::nullopt);
  s->insert(s->begin() + *d, 1);
  return op.like(0, s);
}

Type squeezeType(const Node*, size_t, const Args& op) {
  auto s = sizesOf(op.in(0));
  auto d = normDim(constantInt(op.in(1)), rankOf(op.in(0)));
  if (!s || !d || s->empty()) return op.like(0, s && s->empty() ? s : std::nullopt);
  if ((*s)[*d] == 1) return op.like(0, dropDim(*s, *d));
  if ((*s)[*d] == kUnknownDim) return op.like(0, std::nullopt);
  return op.like(0, s);
}

Type expandType(const Node*, size_t, const Args& op) {
  auto to = constantInts(op.in(1));
  auto s = sizesOf(op.in(0));
  if (!to) return op.like(0, std::nullopt);
  for (size_t i = 0; i < to->size(); ++i)
    if ((*to)[i] == -1) {
      size_t j = i + (s ? s->size() : 0) - to->size();
      (*to)[i] = s && j < s->size() ? (*s)[j] : kUnknownDim;
    }
  return op.like(0, to);
}

Type chunkType(const Node*, size_t, const Args&) {
  return Type::of(TypeKind::TensorList);
}

Type flattenType(const Node* n, size_t, const Args& op) {
  return op.like(0, flattenSizes(n));
}

}  // namespace

std::span<const RuleRow> viewRules() {
  static constexpr RuleRow kRows[] = {
      {OpKind::T, matrixTransposeType},
      {OpKind::Transpose, transposeType},
      {OpKind::Permute, permuteType},
      {OpKind::Select, selectType},
      {OpKind::Slice, sliceType},
      {OpKind::View, viewType},
      {OpKind::Reshape, viewType},
      {OpKind::Unsqueeze, unsqueezeType},
      {OpKind::Squeeze, squeezeType},
      {OpKind::Expand, expandType},
      {OpKind::Chunk, chunkType},
      {OpKind::Unbind, chunkType},
      {OpKind::SplitWithSizes, chunkType},
      {OpKind::Flatten, flattenType},
  };
  return kRows;
}

}  // namespace gj::shapes
