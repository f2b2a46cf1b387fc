#include "fusers/legacy/kernel_spec.h"

#include "fusers/group_rules.h"
#include "passes/util.h"
#include "runtime/tensor.h"
#include "support/error.h"

#include <fmt/format.h>

#include <unordered_map>

namespace gj::legacy {

int64_t KernelSpec::numel() const { return numelOf(shape); }

int64_t KernelSpec::numel(int64_t rows) const {
  if (!dynamicRows()) return numel();
  return rows * numelOf(std::span<const int64_t>(shape).subspan(1));
}

std::string KernelSpec::key() const {
  std::string s = fmt::format("{} {}|", dtypeName(dtype), shapeStr(shape));
  for (size_t i = 0; i < argSizes.size(); ++i) s += fmt::format("{}{}", dtypeName(argDtypes[i]), shapeStr(argSizes[i]));
  s += "|";
  for (DType t : outDtypes) s += fmt::format("{} ", dtypeName(t));
  for (const Load& l : loads) s += fmt::format("L{}@{}{};", l.arg, l.offset, shapeStr(l.strides));
  for (const Expr& e : exprs) {
    switch (e.kind) {
      case ExprKind::Load: s += fmt::format("l{};", e.load); break;
      case ExprKind::Scalar: s += fmt::format("s{:a};", e.scalar); break;
      case ExprKind::Op:
        s += fmt::format("{}({}){};", opInfo(e.op).name, fmt::join(e.args, ","), e.roundTo ? dtypeName(*e.roundTo) : "");
        break;
      case ExprKind::Dropout: s += fmt::format("dropout({};rng{};s{});", fmt::join(e.args, ","), e.rngArg, e.stream); break;
    }
  }
  return s + fmt::format("->{}", fmt::join(outputs, ","));
}

namespace {

// Strides of a view (sizes, strides) read at the index of `shape`, aligned from the right.
std::vector<int64_t> broadcastStrides(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides,
                                      const std::vector<int64_t>& shape) {
  USER_CHECK(sizes.size() <= shape.size(), "fusion: {} does not broadcast to {}", shapeStr(sizes), shapeStr(shape));
  std::vector<int64_t> out(shape.size(), 0);
  size_t lead = shape.size() - sizes.size();
  for (size_t i = 0; i < sizes.size(); ++i) {
    USER_CHECK(sizes[i] == shape[lead + i] || sizes[i] == 1, "fusion: {} does not broadcast to {}", shapeStr(sizes),
               shapeStr(shape));
    out[lead + i] = sizes[i] == 1 ? 0 : strides[i];
  }
  return out;
}

class SpecBuilder {
 public:
  explicit SpecBuilder(const Graph& sub) : sub_(sub) {}

  KernelSpec build() {
    for (const Value* out : sub_.outputs()) {
      auto s = fusion::groupSizes(out, fusion::SizeRule::DynamicRows);
      USER_CHECK(s.has_value(), "fusion: output %{} has no static sizes", out->name());
      if (spec_.shape.empty() && !s->empty()) spec_.shape = *s;
      USER_CHECK(*s == spec_.shape || s->empty(), "fusion: outputs of different shapes");
      spec_.outDtypes.push_back(*out->type().dtype);
    }
    // The dtype the group computes in: its pointwise nodes' (the fuser joins nodes of one).
    for (const Node* n : *sub_.block())
      if (n->info().group == OpGroupKind::Pointwise)
        if (auto t = fusion::computeDtype(n, fusion::Admit::Integers)) spec_.dtype = *t;
    for (size_t i = 0; i < sub_.inputs().size(); ++i) {
      const Value* in = sub_.inputs()[i];
      USER_CHECK(in->type().isTensor(), "fusion: input %{} is not a tensor", in->name());
      auto s = fusion::groupSizes(in, fusion::SizeRule::DynamicRows);
      USER_CHECK(s.has_value(), "fusion: input %{} has no static sizes", in->name());
      spec_.argSizes.push_back(*s);
      spec_.argDtypes.push_back(in->type().dtype.value_or(spec_.dtype));
      argOf_[in] = i;
    }
    for (const Node* n : *sub_.block()) node(n);
    for (const Value* out : sub_.outputs()) spec_.outputs.push_back(exprOf(out));
    return spec_;
  }

 private:
  int add(KernelSpec::Expr e) {
    spec_.exprs.push_back(std::move(e));
    return static_cast<int>(spec_.exprs.size()) - 1;
  }
  int load(size_t arg, int64_t offset, const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides) {
    spec_.loads.push_back({arg, offset, broadcastStrides(sizes, strides, spec_.shape)});
    return add({KernelSpec::ExprKind::Load, OpKind::Add, {}, spec_.loads.size() - 1, 0, 0, 0, std::nullopt});
  }
  int scalar(double value) { return add({KernelSpec::ExprKind::Scalar, OpKind::Add, {}, 0, value, 0, 0, std::nullopt}); }
  int exprOf(const Value* v) {
    if (auto it = expr_.find(v); it != expr_.end()) return it->second;
    if (auto it = argOf_.find(v); it != argOf_.end()) {
      const auto& sizes = spec_.argSizes[it->second];
      return expr_[v] = load(it->second, 0, sizes, contiguousStrides(sizes));
    }
    if (auto d = constantDouble(v)) return expr_[v] = scalar(*d);
    USER_CHECK(false, "fusion: value %{} cannot be read in a kernel", v->name());
    return -1;
  }
  void node(const Node* n) {
    switch (n->info().group) {
      case OpGroupKind::Pointwise: {
        // Beside a storage dtype numbers are rounded to it first (roundedNumber), and the result is rounded
        // (a narrow integer's truncated) to its own dtype, as the unfused op rounds them.
        KernelSpec::Expr e{KernelSpec::ExprKind::Op, n->kind(), {}, 0, 0, 0, 0, std::nullopt};
        for (size_t i = 0; i < n->inputs().size(); ++i) {
          const auto rounded = fusion::roundedNumber(n, i);
          e.args.push_back(rounded ? scalar(*rounded) : exprOf(n->input(i)));
        }
        const std::optional<DType> out = n->output()->type().dtype;
        if (out && isStorageOnly(*out)) e.roundTo = *out;
        expr_[n->output()] = add(std::move(e));
        return;
      }
      case OpGroupKind::Data:
      case OpGroupKind::View:
      case OpGroupKind::Control:
        if (n->kind() == OpKind::Constant || n->kind() == OpKind::Chunk) return;  // read through their users
        if (n->kind() == OpKind::PhiloxDropout) return dropout(n);
        if (n->kind() == OpKind::ListUnpack) return chunkPieces(n);
        break;
      case OpGroupKind::Reduction:
      case OpGroupKind::Gemm:
        break;
    }
    USER_CHECK(false, "fusion: {} cannot be compiled by the legacy fuser", n->info().name);
  }
  void dropout(const Node* n) {
    auto train = constantBool(n->input(2));
    auto stream = constantInt(n->input(4));
    USER_CHECK(train && stream, "fusion: prim::philox_dropout needs constant train and stream");
    if (!*train) {
      expr_[n->output()] = exprOf(n->input(0));
      return;
    }
    auto rng = argOf_.find(n->input(3));
    USER_CHECK(rng != argOf_.end() && spec_.argDtypes[rng->second] == DType::Int64 &&
                   spec_.argSizes[rng->second] == std::vector<int64_t>{2},
               "fusion: prim::philox_dropout's rng must be an int64 [2] group input");
    // Its numbers follow its own element index: the group's, when its output has the group's shape.
    USER_CHECK(staticSizes(n->output()) == spec_.shape, "fusion: prim::philox_dropout of another shape than the group's");
    KernelSpec::Expr e{KernelSpec::ExprKind::Dropout, n->kind(), {exprOf(n->input(0)), exprOf(n->input(1))}, 0, 0,
                       rng->second, *stream, std::nullopt};
    expr_[n->output()] = add(std::move(e));
  }
  // Each piece of chunk(x, n, d) (x an input) is a view of x: the k-th slab along d.
  void chunkPieces(const Node* unpack) {
    const Node* chunk = unpack->input(0)->node();
    USER_CHECK(chunk->kind() == OpKind::Chunk && argOf_.count(chunk->input(0)),
               "fusion: only chunks of a group input can be read");
    size_t arg = argOf_.at(chunk->input(0));
    const auto& sizes = spec_.argSizes[arg];
    int64_t n = *constantInt(chunk->input(1));
    int64_t d = *constantInt(chunk->input(2));
    if (d < 0) d += static_cast<int64_t>(sizes.size());
    auto strides = contiguousStrides(sizes);
    auto pieceSizes = sizes;
    pieceSizes[d] /= n;
    for (int64_t k = 0; k < n; ++k) expr_[unpack->output(k)] = load(arg, k * pieceSizes[d] * strides[d], pieceSizes, strides);
  }

  const Graph& sub_;
  KernelSpec spec_;
  std::unordered_map<const Value*, size_t> argOf_;
  std::unordered_map<const Value*, int> expr_;
};

}  // namespace

KernelSpec buildKernelSpec(const Graph& sub) { return SpecBuilder(sub).build(); }

}  // namespace gj::legacy
