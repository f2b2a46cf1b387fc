// Row groups (fusers/te/lowering/nests.h; RowOp in lowering.h): one loop over the rows, each row's
// statistics computed ahead of its elements.
#include "fusers/te/lowering/nests.h"

#include "fusers/group_rules.h"
#include "passes/util.h"

#include <functional>

namespace gj::te {

namespace {

// k when `dims` (constant) are exactly the trailing k dims of a rank-`rank` tensor, in any order.
std::optional<int64_t> trailingDims(const Value* dims, int64_t rank) {
  auto ds = constantInts(dims);
  if (!ds || ds->empty()) return std::nullopt;
  std::vector<bool> seen(rank, false);
  for (int64_t d : *ds) {
    if (d < -rank || d >= rank) return std::nullopt;
    int64_t w = d < 0 ? d + rank : d;
    if (seen[w]) return std::nullopt;
    seen[w] = true;
  }
  const int64_t k = static_cast<int64_t>(ds->size());
  for (int64_t d = rank - k; d < rank; ++d)
    if (!seen[d]) return std::nullopt;
  return k;
}

bool optionalFloat(const Value* v) { return v->type().kind == TypeKind::None || fusion::floatTensor(v); }

// How many trailing dims of static x a constant normalized_shape names (it must equal their sizes).
std::optional<int64_t> normalizedDims(const Value* x, const Value* normalizedShape) {
  auto shape = constantInts(normalizedShape);
  auto sizes = *staticSizes(x);
  if (!shape || shape->empty() || shape->size() > sizes.size() ||
      !std::equal(shape->begin(), shape->end(), sizes.end() - static_cast<long>(shape->size())))
    return std::nullopt;
  return static_cast<int64_t>(shape->size());
}

}  // namespace

std::optional<RowOp> rowOp(const Node* n) {
  auto make = [&](size_t input, std::optional<int64_t> dims) -> std::optional<RowOp> {
    if (!dims) return std::nullopt;
    return RowOp{n->input(input), *dims};
  };
  auto rank = [&](size_t i) { return static_cast<int64_t>(staticSizes(n->input(i))->size()); };
  switch (n->kind()) {
    case OpKind::LayerNorm:
    case OpKind::NativeLayerNorm: {
      if (!fusion::floatTensor(n->input(0)) || !optionalFloat(n->input(2)) || !optionalFloat(n->input(3)) ||
          !constantDouble(n->input(4)))
        return std::nullopt;
      return make(0, normalizedDims(n->input(0), n->input(1)));
    }
    case OpKind::NativeLayerNormBackward: {
      for (size_t i : {0, 1, 3, 4})
        if (!fusion::floatTensor(n->input(i))) return std::nullopt;
      if (!optionalFloat(n->input(5)) || !optionalFloat(n->input(6)) ||
          staticSizes(n->input(0)) != staticSizes(n->input(1)))
        return std::nullopt;
      return make(1, normalizedDims(n->input(1), n->input(2)));
    }
    case OpKind::Var:
    case OpKind::Std:
      if (!fusion::floatTensor(n->input(0)) || !constantBool(n->input(2)) || constantBool(n->input(3)) != true)
        return std::nullopt;
      return make(0, trailingDims(n->input(1), rank(0)));
    case OpKind::SumDim:
    case OpKind::MeanDim:
      if (!fusion::floatTensor(n->input(0)) || constantBool(n->input(2)) != true) return std::nullopt;
      return make(0, trailingDims(n->input(1), rank(0)));
    case OpKind::VarBackward:
      if (!fusion::floatTensor(n->input(0)) || !fusion::floatTensor(n->input(1)) || !constantBool(n->input(3)) ||
          !constantBool(n->input(4)))
        return std::nullopt;
      return make(1, trailingDims(n->input(2), rank(1)));
#include "ir/pointwise_cases.inc"
#include "ir/frontend_cases.inc"
    case OpKind::Param: case OpKind::Return: case OpKind::Constant: case OpKind::ListConstruct:
    case OpKind::ListUnpack: case OpKind::ListAppend: case OpKind::DifferentiableGraph: case OpKind::Profile:
    case OpKind::TypeCheck: case OpKind::FallbackGraph: case OpKind::FusionGroup: case OpKind::TensorExprGroup:
    case OpKind::RecurrenceGroup: case OpKind::Loop: case OpKind::If: case OpKind::GetItem: case OpKind::Len:
    case OpKind::Size:
    case OpKind::Sizes: case OpKind::IntAdd: case OpKind::FloorDiv: case OpKind::Remainder: case OpKind::Mm:
    case OpKind::ScalarAdd: case OpKind::ScalarSub: case OpKind::ScalarMul: case OpKind::ScalarDiv:
    case OpKind::ScalarPow: case OpKind::ScalarMin: case OpKind::ScalarMax:
    case OpKind::ScalarAnd: case OpKind::ScalarOr: case OpKind::ScalarXor: case OpKind::ScalarLShift:
    case OpKind::ScalarRShift:
    case OpKind::Bmm: case OpKind::Matmul: case OpKind::Addmm: case OpKind::Linear: case OpKind::T:
    case OpKind::Transpose: case OpKind::Permute: case OpKind::Select: case OpKind::Slice: case OpKind::View:
    case OpKind::Reshape: case OpKind::Unsqueeze: case OpKind::Squeeze: case OpKind::Expand: case OpKind::Chunk:
    case OpKind::Unbind: case OpKind::Contiguous: case OpKind::TypeAs: case OpKind::DTypeOf: case OpKind::ToDType:
    case OpKind::CastOnDevice:
    case OpKind::Sum: case OpKind::Mean: case OpKind::Softmax: case OpKind::LogSoftmax: case OpKind::NllLoss:
    case OpKind::CrossEntropy: case OpKind::Embedding: case OpKind::Cat: case OpKind::Stack: case OpKind::Conv2d:
    case OpKind::ZerosLike: case OpKind::OnesLike: case OpKind::FullLike: case OpKind::Detach:
    case OpKind::SumToSize: case OpKind::SelectBackward: case OpKind::SliceBackward:
    case OpKind::EmbeddingBackward: case OpKind::SoftmaxBackward: case OpKind::LogSoftmaxBackward:
    case OpKind::NllLossBackward: case OpKind::ConvolutionBackward: case OpKind::SplitWithSizes:
    case OpKind::SumBackward: case OpKind::MeanBackward: case OpKind::PhiloxDropout: case OpKind::IntSub:
    case OpKind::IntOfTensor: case OpKind::NewZeros: case OpKind::Full: case OpKind::PhiloxUniform: case OpKind::Sort:
    case OpKind::IndexSelect:
    case OpKind::BitwiseAnd: case OpKind::BitwiseOr: case OpKind::BitwiseXor: case OpKind::LeftShift:
    case OpKind::RightShift: case OpKind::BitwiseNot:
    case OpKind::IntEq: case OpKind::IntNe: case OpKind::IntLt:
    case OpKind::IntLe: case OpKind::IntGt: case OpKind::IntGe: case OpKind::BoolNot: case OpKind::RaiseIf:
    case OpKind::ListConcat:
    case OpKind::PackPaddedSequence: case OpKind::IndexSelectBackward: case OpKind::PackPaddedSequenceBackward:
    case OpKind::BatchNorm: case OpKind::NativeBatchNorm: case OpKind::NativeBatchNormBackward:
    case OpKind::MaxPool2d: case OpKind::MaxPool2dWithIndices: case OpKind::MaxPool2dWithIndicesBackward:
    case OpKind::AdaptiveAvgPool2d: case OpKind::AdaptiveAvgPool2dBackward: case OpKind::Flatten:
    case OpKind::Amax: case OpKind::Amin: case OpKind::MaxDim: case OpKind::MinDim: case OpKind::ValueSelectingBackward:
      return std::nullopt;
  }
  return std::nullopt;
}

bool rowOpKeepsShape(const Value* v) {
  const OpKind k = v->node()->kind();
  if (k == OpKind::LayerNorm || k == OpKind::VarBackward) return true;
  return (k == OpKind::NativeLayerNorm || k == OpKind::NativeLayerNormBackward) && v->offset() == 0;
}


}  // namespace gj::te

namespace gj::te::lowering {

namespace {

// The row ops of a column sum's nest, which runs after the row loop: none (their statistics are the row
// loop's).
class NoRowStatistics final : public RowOps {
 public:
  Expr value(const Value* v, const Indices&) override {
    USER_CHECK(false, "TE lowering: a column sum cannot read the row statistics of {}", v->node()->info().name);
    return {};
  }
};

// A row group's lowering: its rows (their shape, how many trailing dims a row spans, the current row's
// index), and the statistics of its row ops computed so far for the current row, with the statements
// that compute them.
class RowLowering final : public RowOps {
 public:
  RowLowering(Group& group, const RowOp& first) : group_(group), first_(first) {}

  // for each row index o (the dims ahead of the trailing `dims` of the rows):
  //   the row's statistics, each a Reduce over the row into a one-element temporary, in dependency order
  //   the group's statistic outputs at [o, 0...]
  //   for each index j of the row: every output of the rows' shape at [o, j] (cat parts into their slices)
  // then one nest per column sum (native_layer_norm_backward's weight and bias gradients).
  LoopNest run() {
    const std::vector<int64_t> shape = *staticSizes(first_.input);
    const int64_t rank = static_cast<int64_t>(shape.size()), k = first_.dims;
    rowOuterShape_.assign(shape.begin(), shape.end() - k);
    rowDims_ = k;
    rowOuter_ = indices(static_cast<size_t>(rank - k));
    Indices statIdx = rowOuter_;
    statIdx.resize(rank, imm(0));

    std::vector<Buf> outputs(group_.sub.outputs().size());
    std::vector<Stmt> statStores, columnNests;
    // Each shape of row (the inner dims) gets one loop, storing every value of that shape.
    std::vector<std::pair<std::vector<int64_t>, std::vector<std::pair<const Value*, Slice>>>> rows;
    auto storeRow = [&](const Value* v, const Slice& to) {
      auto s = *staticSizes(v);
      USER_CHECK(static_cast<int64_t>(s.size()) == rank &&
                     std::equal(rowOuterShape_.begin(), rowOuterShape_.end(), s.begin()),
                 "TE lowering: %{} is {}, not rows of {} over {} dims", v->name(), shapeStr(s), shapeStr(shape), k);
      std::vector<int64_t> inner(s.end() - k, s.end());
      auto it = std::find_if(rows.begin(), rows.end(), [&](const auto& r) { return r.first == inner; });
      if (it == rows.end()) it = rows.insert(rows.end(), {inner, {}});
      it->second.push_back({v, to});
    };
    for (size_t o = 0; o < group_.sub.outputs().size(); ++o) {
      const Value* out = group_.sub.outputs()[o];
      outputs[o] = group_.outputBuf(o);
      const Node* n = out->node();
      if (n->kind() == OpKind::NativeLayerNormBackward && out->offset() > 0) {
        columnNests.push_back(columnSumNest(n, out->offset() == 1, outputs[o]));
      } else if (n->kind() == OpKind::Cat) {
        for (const auto& [part, slice] : catParts(n, outputs[o])) storeRow(part, slice);
      } else if (rowOp(n) && !rowOpKeepsShape(out)) {
        USER_CHECK(static_cast<int64_t>(outputs[o]->dims.size()) == rank,
                   "TE lowering: statistic %{} must keep its dims",
                   out->name());
        statStores.push_back(Store::make(outputs[o], statIdx, values_.compute(out, statIdx)));
      } else {
        storeRow(out, {outputs[o], -1, 0});
      }
    }
    std::vector<Stmt> rowLoops;
    int loop = 0;
    for (const auto& [inner, stores] : rows) {
      Indices full = rowOuter_, innerIdx;
      for (int64_t d = 0; d < k; ++d)
        innerIdx.push_back(Var::make(loop ? fmt::format("j{}_{}", d, loop) : fmt::format("j{}", d)));
      full.insert(full.end(), innerIdx.begin(), innerIdx.end());
      std::vector<Stmt> body;
      for (const auto& [v, to] : stores) body.push_back(Store::make(to.buf, to.at(full), values_.compute(v, full)));
      rowLoops.push_back(loops(innerIdx, inner, Block::make(body)));
      ++loop;
    }
    std::vector<Stmt> body;
    for (const Buf& b : statBufs_) body.push_back(Allocate::make(b));
    body.insert(body.end(), prologue_.begin(), prologue_.end());
    body.insert(body.end(), statStores.begin(), statStores.end());
    body.insert(body.end(), rowLoops.begin(), rowLoops.end());
    for (const Buf& b : statBufs_) body.push_back(Free::make(b));
    std::vector<Stmt> nests = {loops(rowOuter_, rowOuterShape_, Block::make(body))};
    nests.insert(nests.end(), columnNests.begin(), columnNests.end());
    return LoopNest(Block::make(nests), group_.inputs, outputs);
  }

  // A row op's output at idx (in its own shape).
  Expr value(const Value* v, const Indices& idx) override {
    const Node* n = v->node();
    const ScalarKind t = scalarKindOf(*v->type().dtype);
    auto c = [&](double x) { return FloatImm::make(x, t); };
    const std::vector<Expr>& s = rowStatistics(n);
    const OpKind k = n->kind();
    if (k == OpKind::SumDim || k == OpKind::MeanDim) return s[0];
    if (k == OpKind::Var || k == OpKind::Std) return s[1];
    if (k == OpKind::VarBackward) {  // g (at the row's statistic index) * 2 (x - mean) / (count - unbiased)
      const double dof = rowCount(*rowOp(n)) - (*constantBool(n->input(3)) ? 1.0 : 0.0);
      Indices gIdx = rowOuter_;
      if (*constantBool(n->input(4))) gIdx.resize(idx.size(), imm(0));
      return values_.compute(n->input(0), gIdx) * (values_.operand(n->input(1), idx, t) - s[0]) * c(2.0 / dof);
    }
    if (k == OpKind::NativeLayerNormBackward)  // rstd (g w - mean(g w) - xhat mean(g w xhat))
      return values_.operand(n->input(4), idx, t) *
             (lnGradTimesWeight(values_, n, idx, t) - s[0] - lnNormalized(values_, n, idx, t) * s[1]);
    if (v->offset() > 0) return s[v->offset() - 1];  // native_layer_norm's mean and rstd
    Expr y = (values_.operand(n->input(0), idx, t) - s[0]) * s[1];
    if (n->input(2)->type().isTensor()) y = y * values_.operand(n->input(2), idx, t);
    if (n->input(3)->type().isTensor()) y = y + values_.operand(n->input(3), idx, t);
    return y;
  }

 private:
  // ---- the current row's statistics ----

  // One statistic of the current row: a Reduce into a new one-element temporary, then `finish` of it
  // (the Reduce stands alone in its store, as lowerReductions wants), read back.
  Expr statistic(Expr reduce, ScalarKind t, const std::function<Expr(Expr)>& finish = {}) {
    Buf b = group_.temporary("stat", t);
    statBufs_.push_back(b);
    Expr value = Load::make(b, {imm(0)});
    prologue_.push_back(Store::make(b, {imm(0)}, std::move(reduce)));
    if (finish) prologue_.push_back(Store::make(b, {imm(0)}, finish(value)));
    return value;
  }

  // The sum over the current row of row op r's input of f(index in that input's shape), and that row's
  // element count.
  Expr rowSum(const RowOp& r, const std::function<Expr(const Indices&)>& f) {
    auto shape = *staticSizes(r.input);
    Indices idx = rowOuter_;
    std::vector<Expr> rvars;
    std::vector<int64_t> extents(shape.end() - r.dims, shape.end());
    for (int64_t d = 0; d < r.dims; ++d) rvars.push_back(group_.freshVar("r"));
    idx.insert(idx.end(), rvars.begin(), rvars.end());
    return Reduce::make(ReduceOpKind::Sum, f(idx), rvars, extents);
  }
  static double rowCount(const RowOp& r) {
    auto shape = *staticSizes(r.input);
    double n = 1;
    for (int64_t d = 0; d < r.dims; ++d) n *= static_cast<double>(shape[shape.size() - 1 - d]);
    return n;
  }

  // The statistics of row op n for the current row, computed once: layer norm: mean, rstd; var / std:
  // mean, then the variance or its square root; sum / mean: the sum or mean; var_backward: the mean;
  // native_layer_norm_backward: mean(g w), mean(g w xhat).
  const std::vector<Expr>& rowStatistics(const Node* n) {
    if (auto it = stats_.find(n); it != stats_.end()) return it->second;
    const RowOp r = *rowOp(n);
    auto rowInput = *staticSizes(r.input);
    USER_CHECK(r.dims == rowDims_ && rowInput.size() == rowOuterShape_.size() + static_cast<size_t>(rowDims_) &&
                   std::equal(rowOuterShape_.begin(), rowOuterShape_.end(), rowInput.begin()),
               "TE lowering: {} works on rows of {} over {} dims, unlike the group's rows of outer dims {} over {}",
               n->info().name, shapeStr(rowInput), r.dims, shapeStr(rowOuterShape_), rowDims_);
    const ScalarKind t = scalarKindOf(*n->output(0)->type().dtype);
    auto c = [&](double v) { return FloatImm::make(v, t); };
    auto x = [&](const Indices& idx) { return values_.operand(r.input, idx, t); };
    const double count = rowCount(r);
    auto perElement = [&](Expr sum) { return sum / c(count); };
    // rowOp() names the row ops, each handled below.
    const OpKind k = n->kind();
    std::vector<Expr> out;
    if (k == OpKind::SumDim) {
      out = {statistic(rowSum(r, x), t)};
    } else if (k == OpKind::MeanDim || k == OpKind::VarBackward) {
      out = {statistic(rowSum(r, x), t, perElement)};
    } else if (k == OpKind::NativeLayerNormBackward) {
      auto gw = [&](const Indices& idx) { return lnGradTimesWeight(values_, n, idx, t); };
      auto gwXhat = [&](const Indices& idx) { return gw(idx) * lnNormalized(values_, n, idx, t); };
      out = {statistic(rowSum(r, gw), t, perElement), statistic(rowSum(r, gwXhat), t, perElement)};
    } else {  // layer_norm, native_layer_norm, var, std: the mean, then the sum of squared deviations
      Expr mean = statistic(rowSum(r, x), t, perElement);
      Expr ss = rowSum(r, [&](const Indices& idx) {
        Expr d = x(idx) - mean;
        return d * d;
      });
      if (k == OpKind::LayerNorm || k == OpKind::NativeLayerNorm) {
        Expr eps = c(*constantDouble(n->input(4)));
        out = {mean, statistic(ss, t, [&](Expr v) { return c(1.0) / Call::make(CallKind::Sqrt, v / c(count) + eps); })};
      } else {
        const double dof = count - (*constantBool(n->input(2)) ? 1.0 : 0.0);
        const bool std = k == OpKind::Std;
        out = {mean, statistic(ss, t, [&](Expr v) {
                 Expr var = v * c(1.0 / dof);
                 return std ? Call::make(CallKind::Sqrt, var) : var;
               })};
      }
    }
    return stats_[n] = out;
  }

  // native_layer_norm_backward's g * weight (g without a weight) and xhat = (x - mean) * rstd, at idx.
  static Expr lnGradTimesWeight(Values& values, const Node* n, const Indices& idx, ScalarKind t) {
    Expr g = values.operand(n->input(0), idx, t);
    return n->input(5)->type().isTensor() ? g * values.operand(n->input(5), idx, t) : g;
  }
  static Expr lnNormalized(Values& values, const Node* n, const Indices& idx, ScalarKind t) {
    return (values.operand(n->input(1), idx, t) - values.operand(n->input(3), idx, t)) *
           values.operand(n->input(4), idx, t);
  }

  // native_layer_norm_backward's weight gradient (sum over the rows of g * xhat) or bias gradient (of g),
  // for every index of the normalized shape.
  Stmt columnSumNest(const Node* n, bool weight, const Buf& to) {
    const auto shape = *staticSizes(n->input(1));
    const int64_t rank = static_cast<int64_t>(shape.size());
    Indices rows, idx;
    std::vector<int64_t> colShape(shape.end() - rowDims_, shape.end());
    std::vector<int64_t> rowExtents(shape.begin(), shape.end() - rowDims_);
    for (int64_t d = 0; d < rank - rowDims_; ++d) rows.push_back(group_.freshVar("r"));
    const Indices cols = indices(static_cast<size_t>(rowDims_), "k");
    idx = rows;
    idx.insert(idx.end(), cols.begin(), cols.end());
    const ScalarKind t = to->type;
    NoRowStatistics none;
    Values columns(group_, &none);
    Expr g = columns.operand(n->input(0), idx, t);
    Expr summand = weight ? g * lnNormalized(columns, n, idx, t) : g;
    Buf acc = group_.temporary("acc", t);
    Expr total = rows.empty() ? summand : Reduce::make(ReduceOpKind::Sum, summand, rows, rowExtents);
    Stmt body = Block::make({Allocate::make(acc), Store::make(acc, {imm(0)}, total),
                             Store::make(to, cols, Load::make(acc, {imm(0)})), Free::make(acc)});
    return loops(cols, colShape, body);
  }


  Group& group_;
  Values values_{group_, this};  // the row loop's
  const RowOp first_;
  std::vector<int64_t> rowOuterShape_;
  int64_t rowDims_ = 0;
  Indices rowOuter_;
  std::vector<Stmt> prologue_;
  std::vector<Buf> statBufs_;
  std::unordered_map<const Node*, std::vector<Expr>> stats_;
};

}  // namespace

LoopNest rowGroup(Group& group, const RowOp& first) { return RowLowering(group, first).run(); }

}  // namespace gj::te::lowering
