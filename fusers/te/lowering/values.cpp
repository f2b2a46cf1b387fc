// The shared helpers of a group's lowering (fusers/te/lowering/values.h).
#include "fusers/te/lowering/values.h"

#include "fusers/te/lowering/algebra.h"
#include "passes/util.h"

namespace gj::te::lowering {

std::optional<DType> storageOf(DType t) { return isStorageOnly(t) ? std::optional(t) : std::nullopt; }
ScalarKind valueKind(DType t) { return scalarKindOf(computeDType(t)); }

Group::Group(const Graph& graph) : sub(graph) {
  for (size_t i = 0; i < sub.inputs().size(); ++i) {
    const Value* in = sub.inputs()[i];
    auto s = staticSizes(in);
    USER_CHECK(s && in->type().dtype, "TE lowering: input %{} needs static sizes and a dtype", in->name());
    Buf b = makeBuf(fmt::format("in{}", i), *s, valueKind(*in->type().dtype), storageOf(*in->type().dtype));
    inputs.push_back(b);
    bufOf[in] = b;
  }
}

Buf Group::outputBuf(size_t k) const {
  const Value* out = sub.outputs()[k];
  auto s = staticSizes(out);
  USER_CHECK(s && out->type().dtype, "TE lowering: output %{} needs static sizes", out->name());
  return makeBuf(fmt::format("out{}", k), *s, valueKind(*out->type().dtype), storageOf(*out->type().dtype));
}

Expr Values::compute(const Value* v, const Indices& idx) {
  Key key{v, {}};
  key.indices.reserve(idx.size());
  for (const Expr& e : idx) key.indices.push_back(e.get());
  if (auto it = memo_.find(key); it != memo_.end()) return it->second;
  Expr e = computeUncached(v, idx);
  memo_.emplace(std::move(key), e);
  return e;
}

Expr Values::scalar(const Value* v, ScalarKind t) const {
  auto d = constantDouble(v);
  USER_CHECK(d.has_value(), "TE lowering: scalar %{} must be a constant", v->name());
  return TeAlgebra{t}.c(*d);
}

Expr Values::operand(const Value* v, const Indices& idx, ScalarKind t) {
  if (!v->type().isTensor()) return scalar(v, t);
  auto s = *staticSizes(v);
  Indices sub(idx.end() - static_cast<long>(s.size()), idx.end());
  for (size_t d = 0; d < s.size(); ++d)
    if (s[d] == 1) sub[d] = imm(0);
  return Cast::make(t, compute(v, sub));
}

Expr Values::computeUncached(const Value* v, const Indices& idx) {
  if (auto it = group_.bufOf.find(v); it != group_.bufOf.end()) return load(it->second, idx);
  const Node* n = v->node();
  if (n->kind() == OpKind::ListUnpack) return chunkPiece(v, idx);
  if (rowOp(n)) {
    USER_CHECK(rows_, "TE lowering: {} is a row op, which only the row loop of a row group reads", n->info().name);
    return rows_->value(v, idx);
  }
  if (n->kind() == OpKind::PhiloxDropout) return dropout(v, idx);
  return pointwise(v, idx);
}

Expr Values::chunkPiece(const Value* v, const Indices& idx) {
  const Node* chunk = v->node()->input(0)->node();
  USER_CHECK(chunk->kind() == OpKind::Chunk, "TE lowering: only chunks can be unpacked");
  const auto whole = *staticSizes(chunk->input(0));
  int64_t d = *constantInt(chunk->input(2));
  if (d < 0) d += static_cast<int64_t>(whole.size());
  const int64_t start = static_cast<int64_t>(v->offset()) * (whole[d] / *constantInt(chunk->input(1)));
  if (auto in = group_.bufOf.find(chunk->input(0)); in != group_.bufOf.end()) return load(in->second, idx, d, start);
  USER_CHECK(rows_, "TE lowering: only a row group reads chunks of its own values");
  Indices shifted(idx);
  shifted[d] = simplify(idx[d] + imm(start));
  return compute(chunk->input(0), shifted);
}

Expr load(const Buf& b, const Indices& idx, int64_t chunkDim, int64_t chunkOffset) {
  Indices li(b->dims.size());
  size_t lead = idx.size() - b->dims.size();
  for (size_t d = 0; d < b->dims.size(); ++d) {
    Expr i = b->dims[d] == 1 && chunkDim != static_cast<int64_t>(d) ? imm(0) : idx[lead + d];
    if (static_cast<int64_t>(d) == chunkDim) i = i + imm(chunkOffset);
    li[d] = simplify(i);
  }
  return Load::make(b, li);
}

Stmt loops(const Indices& idx, const std::vector<int64_t>& shape, Stmt body) {
  if (shape.empty()) return For::make(Var::make("i0"), imm(0), imm(1), body);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d)
    body = For::make(idx[d], imm(0), imm(shape[d]), body);
  return body;
}

Indices indices(size_t rank, const char* prefix) {
  Indices idx;
  for (size_t d = 0; d < rank; ++d) idx.push_back(Var::make(fmt::format("{}{}", prefix, d)));
  return idx;
}

Expr exp(const Expr& e) { return Call::make(CallKind::Exp, e); }

}  // namespace gj::te::lowering
