#include "fusers/te/lowering.h"

#include "fusers/group_rules.h"
#include "passes/util.h"
#include "support/error.h"
#include "support/philox.h"

#include <fmt/format.h>

#include <functional>
#include <map>
#include <unordered_map>

namespace gj::te {

namespace {

using Indices = std::vector<Expr>;

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


// A storage dtype's buffer stores it (`storage`) and holds the values of its compute dtype in the nest:
// float16 and bfloat16 Float32 values, uint8 to int32 Int (int64) values.
static std::optional<DType> storageOf(DType t) { return isStorageOnly(t) ? std::optional(t) : std::nullopt; }
static ScalarKind valueKind(DType t) { return scalarKindOf(computeDType(t)); }

class Lowerer {
 public:
  Lowerer(const Graph& sub, LoweringOptions options) : sub_(sub), options_(options) {}

  LoopNest run() {
    for (size_t i = 0; i < sub_.inputs().size(); ++i) {
      const Value* in = sub_.inputs()[i];
      auto s = staticSizes(in);
      USER_CHECK(s && in->type().dtype, "TE lowering: input %{} needs static sizes and a dtype", in->name());
      Buf b = makeBuf(fmt::format("in{}", i), *s, valueKind(*in->type().dtype), storageOf(*in->type().dtype));
      inputs_.push_back(b);
      bufOf_[in] = b;
    }
    for (const Node* n : *sub_.block())
      if (auto r = rowOp(n)) return rowGroup(*r);
    std::vector<Stmt> nests;
    std::vector<PointwiseStore> pointwise;
    std::vector<std::pair<const Value*, Slice>> reductions;  // built after every pointwise store is known
    std::vector<Buf> outputs(sub_.outputs().size());
    for (size_t k = 0; k < sub_.outputs().size(); ++k) outputs[k] = outputBuf(k);
    const size_t groupOutputs = outputs.size();
    std::vector<Stmt> products = productNests(outputs);
    for (size_t k = 0; k < groupOutputs; ++k) {
      const Value* out = sub_.outputs()[k];
      const Node* n = out->node();
      if (n->kind() == OpKind::Mm) continue;  // its product nest stores it
      if (isReduction(n)) {
        reductions.push_back({out, {outputs[k], -1, 0}});
      } else if (n->kind() == OpKind::Softmax || n->kind() == OpKind::LogSoftmax) {
        nests.push_back(softmaxNest(out, outputs[k]));
      } else if (n->kind() == OpKind::Cat) {
        for (const auto& [part, slice] : catParts(n, outputs[k])) {
          if (isReduction(part->node())) reductions.push_back({part, slice});
          else pointwise.push_back({*staticSizes(part), slice, part});
        }
      } else {
        pointwise.push_back({outputs[k]->dims, {outputs[k], -1, 0}, out});
      }
    }
    if (options_.readBackOutputs)
      for (const PointwiseStore& p : pointwise) storedAt_.emplace(p.value, p.to);
    for (const auto& [value, slice] : reductions) nests.push_back(reductionNest(value, slice));
    // Pointwise stores: one nest per shape, in the order the shapes first appear, ahead of the rest.
    std::vector<Stmt> pointwiseNests;
    std::vector<bool> done(pointwise.size(), false);
    for (size_t a = 0; a < pointwise.size(); ++a) {
      if (done[a]) continue;
      const auto& shape = pointwise[a].shape;
      Indices idx;
      for (size_t d = 0; d < shape.size(); ++d) idx.push_back(Var::make(fmt::format("i{}", d)));
      std::vector<Stmt> stores;
      for (size_t b = a; b < pointwise.size(); ++b) {
        if (done[b] || pointwise[b].shape != shape) continue;
        done[b] = true;
        stores.push_back(Store::make(pointwise[b].to.buf, pointwise[b].to.at(idx), compute(pointwise[b].value, idx)));
      }
      pointwiseNests.push_back(loops(idx, shape, Block::make(stores)));
    }
    nests.insert(nests.begin(), pointwiseNests.begin(), pointwiseNests.end());
    nests.insert(nests.begin(), products.begin(), products.end());
    return LoopNest(Block::make(nests), inputs_, outputs, outputs.size() - groupOutputs);
  }

 private:
  // Where a value is stored: `buf`, or (dim >= 0) the slice of `buf` that starts at `offset` along `dim`.
  struct Slice {
    Buf buf;
    int64_t dim;
    int64_t offset;
    Indices at(Indices idx) const {
      if (dim >= 0) idx[dim] = simplify(idx[dim] + imm(offset));
      return idx;
    }
  };
  struct PointwiseStore {
    std::vector<int64_t> shape;
    Slice to;
    const Value* value;
  };

  // Group output k's buffer.
  Buf outputBuf(size_t k) const {
    const Value* out = sub_.outputs()[k];
    auto s = staticSizes(out);
    USER_CHECK(s && out->type().dtype, "TE lowering: output %{} needs static sizes", out->name());
    return makeBuf(fmt::format("out{}", k), *s, valueKind(*out->type().dtype), storageOf(*out->type().dtype));
  }

  // Output partitioning: each part of aten::cat `cat` with the slice of `out` it is stored into.
  static std::vector<std::pair<const Value*, Slice>> catParts(const Node* cat, const Buf& out) {
    const Node* list = cat->input(0)->node();
    USER_CHECK(list->kind() == OpKind::ListConstruct, "TE lowering: aten::cat needs a prim::ListConstruct");
    auto d = constantInt(cat->input(1));
    USER_CHECK(d.has_value(), "TE lowering: aten::cat needs a constant dim");
    const int64_t dim = *d < 0 ? *d + static_cast<int64_t>(out->dims.size()) : *d;
    std::vector<std::pair<const Value*, Slice>> parts;
    int64_t offset = 0;
    for (const Value* part : list->inputs()) {
      parts.push_back({part, Slice{out, dim, offset}});
      offset += (*staticSizes(part))[dim];
    }
    return parts;
  }

  static bool isReduction(const Node* n) {
    const OpKind k = n->kind();
    return k == OpKind::SumToSize || k == OpKind::SumDim || k == OpKind::Mean || k == OpKind::MeanDim;
  }

  // Loops over `shape` around `body`; a 0-dim shape gets one loop of one trip, so that every nest is a
  // loop the schedules can bind and split.
  static Stmt loops(const Indices& idx, const std::vector<int64_t>& shape, Stmt body) {
    if (shape.empty()) return For::make(Var::make("i0"), imm(0), imm(1), body);
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d)
      body = For::make(idx[d], imm(0), imm(shape[d]), body);
    return body;
  }

  Buf temporary(const char* what, ScalarKind t) { return makeBuf(fmt::format("{}{}", what, temps_++), {1}, t); }

  // The nests of the group's products (aten::mm of two group inputs, te_fuser.cpp's fusibleProduct),
  // ahead of every other: each stores into its output's buffer when the group hands it out, else into a
  // scratch buffer appended to `outputs`; the nests after it read it there, as they read an input.
  //   for i, j: acc = sum over r of a[i, r] * b[r, j]; out[i, j] = acc
  // The CPU schedule turns it around (LoopNest::interchangeStridedReductions): for each r, a row of b
  // times a[i, r] added to out[i, :], a contiguous loop that vectorizes.
  std::vector<Stmt> productNests(std::vector<Buf>& outputs) {
    std::vector<Stmt> nests;
    for (const Node* n : *sub_.block()) {
      if (n->kind() != OpKind::Mm) continue;
      const Value* out = n->output();
      auto os = staticSizes(out);
      auto as = staticSizes(n->input(0));
      USER_CHECK(os && as && os->size() == 2 && as->size() == 2 && bufOf_.count(n->input(0)) &&
                     bufOf_.count(n->input(1)),
                 "TE lowering: aten::mm needs two static 2-d group inputs");
      Buf to;
      for (size_t k = 0; k < sub_.outputs().size(); ++k)
        if (sub_.outputs()[k] == out) to = outputs[k];
      if (!to) {
        to = makeBuf(fmt::format("product{}", temps_++), *os, scalarKindOf(*out->type().dtype));
        outputs.push_back(to);
      }
      const ScalarKind t = to->type;
      Indices idx = {Var::make(fmt::format("i{}", temps_++)), Var::make(fmt::format("j{}", temps_++))};
      Expr r = Var::make(fmt::format("r{}", temps_++));
      Expr summand = operand(n->input(0), {idx[0], r}, t) * operand(n->input(1), {r, idx[1]}, t);
      Buf acc = temporary("acc", t);
      Stmt body = Block::make({Allocate::make(acc),
                               Store::make(acc, {imm(0)}, Reduce::make(ReduceOpKind::Sum, summand, {r}, {(*as)[1]})),
                               Store::make(to, idx, Load::make(acc, {imm(0)})), Free::make(acc)});
      nests.push_back(loops(idx, *os, body));
      bufOf_[out] = to;
    }
    return nests;
  }

  // sum_to_size(x, sizes) / sum or mean(x, dims, keepdim) / mean(x): over the output's indices, a Reduce
  // over the rest into a one-element temporary, then stored (divided by the count for a mean).
  Stmt reductionNest(const Value* out, const Slice& to) {
    const Node* n = out->node();
    const Value* x = n->input(0);
    auto xs = *staticSizes(x);
    auto os = *staticSizes(out);
    const int64_t rank = static_cast<int64_t>(xs.size());
    std::vector<bool> reduced(rank, false);
    std::vector<int64_t> outDimOf(rank, -1);  // x dim -> output dim
    if (n->kind() == OpKind::SumToSize) {
      int64_t lead = rank - static_cast<int64_t>(os.size());
      for (int64_t d = 0; d < rank; ++d) {
        if (d < lead) { reduced[d] = true; continue; }
        outDimOf[d] = d - lead;
        if (os[d - lead] == 1 && xs[d] != 1) reduced[d] = true;
      }
    } else if (n->kind() == OpKind::Mean) {
      reduced.assign(rank, true);
    } else {
      auto dims = constantInts(n->input(1));
      auto keep = constantBool(n->input(2));
      USER_CHECK(dims && keep, "TE lowering: {} needs constant dims and keepdim", n->info().name);
      const int64_t wrap = std::max<int64_t>(rank, 1);  // a 0-d x takes dims -1 and 0, as PyTorch's
      for (int64_t d : *dims) {
        USER_CHECK(d >= -wrap && d < wrap, "TE lowering: {} dim {} out of range for rank {}", n->info().name, d, rank);
        if (rank > 0) reduced[d < 0 ? d + rank : d] = true;
      }
      if (dims->empty()) reduced.assign(rank, true);  // an empty dim list reduces everything
      int64_t o = 0;
      for (int64_t d = 0; d < rank; ++d) {
        if (!reduced[d] || *keep) outDimOf[d] = o++;
      }
    }
    Indices oidx;
    for (size_t d = 0; d < os.size(); ++d) oidx.push_back(Var::make(fmt::format("j{}", d)));
    Indices xidx(rank);
    std::vector<Expr> rvars;
    std::vector<int64_t> extents;
    int64_t count = 1;
    for (int64_t d = 0; d < rank; ++d) {
      if (reduced[d]) {
        rvars.push_back(Var::make(fmt::format("r{}", rvars.size())));
        extents.push_back(xs[d]);
        count *= xs[d];
        xidx[d] = rvars.back();
      } else {
        xidx[d] = oidx[outDimOf[d]];
      }
    }
    ScalarKind t = to.buf->type;
    Buf acc = temporary("acc", t);
    Expr total = Load::make(acc, {imm(0)});
    bool mean = n->kind() == OpKind::Mean || n->kind() == OpKind::MeanDim;
    // A value the group also stores (the LSTM backward sums the gate gradients it outputs) is read back
    // from its output, which the pointwise nests ahead of this one have written, instead of computed again.
    auto stored = storedAt_.find(x);
    Expr summand = stored != storedAt_.end() ? Load::make(stored->second.buf, stored->second.at(xidx)) : compute(x, xidx);
    Stmt body = Block::make({Allocate::make(acc),
                             Store::make(acc, {imm(0)}, Reduce::make(ReduceOpKind::Sum, summand, rvars, extents)),
                             Store::make(to.buf, to.at(oidx), mean ? total / FloatImm::make(double(count), t) : total),
                             Free::make(acc)});
    return loops(oidx, os, body);
  }

  // softmax / log_softmax over dim d: for every index of the other dims, the maximum and the sum of
  // exp(x - max) along d into one-element temporaries, then every element of the row:
  //   softmax:     exp(x - max) / sum          log_softmax: x - max - log(sum)
  Stmt softmaxNest(const Value* out, const Buf& buf) {
    const Node* n = out->node();
    const Value* x = n->input(0);
    auto xs = *staticSizes(x);
    const int64_t rank = static_cast<int64_t>(xs.size());
    auto dim = constantInt(n->input(1));
    USER_CHECK(dim && *dim >= -std::max<int64_t>(rank, 1) && *dim < std::max<int64_t>(rank, 1),
               "TE lowering: {} needs a constant dim in range for rank {}", n->info().name, rank);
    ScalarKind t = buf->type;
    Buf maxBuf = temporary("max", t), sumBuf = temporary("sum", t);
    Expr maxv = Load::make(maxBuf, {imm(0)}), sumv = Load::make(sumBuf, {imm(0)});
    if (rank == 0) {  // a single element: softmax 1, log_softmax 0
      Expr v = compute(x, {});
      Expr r = n->kind() == OpKind::Softmax ? exp(v - v) : v - v;
      return loops({}, {}, Store::make(buf, {}, r));
    }
    const int64_t d = *dim < 0 ? *dim + rank : *dim;
    Indices outer, rowR0(rank), rowR1(rank), rowK(rank);
    std::vector<int64_t> outerShape;
    Expr r0 = Var::make("r0"), r1 = Var::make("r1"), k = Var::make("k");
    for (int64_t a = 0; a < rank; ++a) {
      if (a == d) {
        rowR0[a] = r0, rowR1[a] = r1, rowK[a] = k;
        continue;
      }
      outer.push_back(Var::make(fmt::format("i{}", outer.size())));
      outerShape.push_back(xs[a]);
      rowR0[a] = rowR1[a] = rowK[a] = outer.back();
    }
    Expr xk = compute(x, rowK);
    // log_softmax takes the row's log once (sum becomes log(sum)), so the row loop has no libm call.
    const bool log = n->kind() == OpKind::LogSoftmax;
    Expr value = log ? xk - maxv - sumv : exp(xk - maxv) / sumv;
    std::vector<Stmt> body = {
        Allocate::make(maxBuf), Allocate::make(sumBuf),
        Store::make(maxBuf, {imm(0)}, Reduce::make(ReduceOpKind::Max, compute(x, rowR0), {r0}, {xs[d]})),
        Store::make(sumBuf, {imm(0)}, Reduce::make(ReduceOpKind::Sum, exp(compute(x, rowR1) - maxv), {r1}, {xs[d]}))};
    if (log) body.push_back(Store::make(sumBuf, {imm(0)}, Call::make(CallKind::Log, sumv)));
    body.insert(body.end(), {For::make(k, imm(0), imm(xs[d]), Store::make(buf, rowK, value)), Free::make(sumBuf),
                             Free::make(maxBuf)});
    return loops(outer, outerShape, Block::make(body));
  }

  // ---- row groups (see RowOp in lowering.h) ----
  //
  // for each row index o (the dims ahead of the trailing `dims` of the rows):
  //   the row's statistics, each a Reduce over the row into a one-element temporary, in dependency order
  //   the group's statistic outputs at [o, 0...]
  //   for each index j of the row: every output of the rows' shape at [o, j] (cat parts into their slices)
  // then one nest per column sum (native_layer_norm_backward's weight and bias gradients).
  LoopNest rowGroup(const RowOp& first) {
    const std::vector<int64_t> shape = *staticSizes(first.input);
    const int64_t rank = static_cast<int64_t>(shape.size()), k = first.dims;
    rowOuterShape_.assign(shape.begin(), shape.end() - k);
    rowDims_ = k;
    for (int64_t d = 0; d < rank - k; ++d) rowOuter_.push_back(Var::make(fmt::format("i{}", d)));
    Indices statIdx = rowOuter_;
    statIdx.resize(rank, imm(0));

    std::vector<Buf> outputs(sub_.outputs().size());
    std::vector<Stmt> statStores, columnNests;
    // Each shape of row (the inner dims) gets one loop, storing every value of that shape.
    std::vector<std::pair<std::vector<int64_t>, std::vector<std::pair<const Value*, Slice>>>> rows;
    auto storeRow = [&](const Value* v, const Slice& to) {
      auto s = *staticSizes(v);
      USER_CHECK(static_cast<int64_t>(s.size()) == rank && std::equal(rowOuterShape_.begin(), rowOuterShape_.end(), s.begin()),
                 "TE lowering: %{} is {}, not rows of {} over {} dims", v->name(), shapeStr(s), shapeStr(shape), k);
      std::vector<int64_t> inner(s.end() - k, s.end());
      auto it = std::find_if(rows.begin(), rows.end(), [&](const auto& r) { return r.first == inner; });
      if (it == rows.end()) it = rows.insert(rows.end(), {inner, {}});
      it->second.push_back({v, to});
    };
    for (size_t o = 0; o < sub_.outputs().size(); ++o) {
      const Value* out = sub_.outputs()[o];
      outputs[o] = outputBuf(o);
      const Node* n = out->node();
      if (n->kind() == OpKind::NativeLayerNormBackward && out->offset() > 0) {
        columnNests.push_back(columnSumNest(n, out->offset() == 1, outputs[o]));
      } else if (n->kind() == OpKind::Cat) {
        for (const auto& [part, slice] : catParts(n, outputs[o])) storeRow(part, slice);
      } else if (rowOp(n) && !rowOpKeepsShape(out)) {
        USER_CHECK(static_cast<int64_t>(outputs[o]->dims.size()) == rank, "TE lowering: statistic %{} must keep its dims",
                   out->name());
        statStores.push_back(Store::make(outputs[o], statIdx, compute(out, statIdx)));
      } else {
        storeRow(out, {outputs[o], -1, 0});
      }
    }
    std::vector<Stmt> rowLoops;
    int loop = 0;
    for (const auto& [inner, stores] : rows) {
      Indices full = rowOuter_, innerIdx;
      for (int64_t d = 0; d < k; ++d) innerIdx.push_back(Var::make(loop ? fmt::format("j{}_{}", d, loop) : fmt::format("j{}", d)));
      full.insert(full.end(), innerIdx.begin(), innerIdx.end());
      std::vector<Stmt> body;
      for (const auto& [v, to] : stores) body.push_back(Store::make(to.buf, to.at(full), compute(v, full)));
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
    return LoopNest(Block::make(nests), inputs_, outputs);
  }

  // One statistic of the current row: a Reduce into a new one-element temporary, then `finish` of it
  // (the Reduce stands alone in its store, as lowerReductions wants), read back.
  Expr statistic(Expr reduce, ScalarKind t, const std::function<Expr(Expr)>& finish = {}) {
    Buf b = temporary("stat", t);
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
    for (int64_t d = 0; d < r.dims; ++d) rvars.push_back(Var::make(fmt::format("r{}", temps_++)));
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
    USER_CHECK(!inColumnNest_, "TE lowering: a column sum cannot read the row statistics of {}", n->info().name);
    const RowOp r = *rowOp(n);
    auto rowInput = *staticSizes(r.input);
    USER_CHECK(r.dims == rowDims_ && rowInput.size() == rowOuterShape_.size() + static_cast<size_t>(rowDims_) &&
                   std::equal(rowOuterShape_.begin(), rowOuterShape_.end(), rowInput.begin()),
               "TE lowering: {} works on rows of {} over {} dims, unlike the group's rows of outer dims {} over {}",
               n->info().name, shapeStr(rowInput), r.dims, shapeStr(rowOuterShape_), rowDims_);
    const ScalarKind t = scalarKindOf(*n->output(0)->type().dtype);
    auto c = [&](double v) { return FloatImm::make(v, t); };
    auto x = [&](const Indices& idx) { return operand(r.input, idx, t); };
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
      out = {statistic(rowSum(r, [&](const Indices& idx) { return lnGradTimesWeight(n, idx, t); }), t, perElement),
             statistic(rowSum(r, [&](const Indices& idx) {
                         return lnGradTimesWeight(n, idx, t) * lnNormalized(n, idx, t);
                       }), t, perElement)};
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
  Expr lnGradTimesWeight(const Node* n, const Indices& idx, ScalarKind t) {
    Expr g = operand(n->input(0), idx, t);
    return n->input(5)->type().isTensor() ? g * operand(n->input(5), idx, t) : g;
  }
  Expr lnNormalized(const Node* n, const Indices& idx, ScalarKind t) {
    return (operand(n->input(1), idx, t) - operand(n->input(3), idx, t)) * operand(n->input(4), idx, t);
  }

  // A row op's output at idx (in its own shape).
  Expr rowOpValue(const Value* v, const Indices& idx) {
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
      return compute(n->input(0), gIdx) * (operand(n->input(1), idx, t) - s[0]) * c(2.0 / dof);
    }
    if (k == OpKind::NativeLayerNormBackward)  // rstd (g w - mean(g w) - xhat mean(g w xhat))
      return operand(n->input(4), idx, t) * (lnGradTimesWeight(n, idx, t) - s[0] - lnNormalized(n, idx, t) * s[1]);
    if (v->offset() > 0) return s[v->offset() - 1];  // native_layer_norm's mean and rstd
    Expr y = (operand(n->input(0), idx, t) - s[0]) * s[1];
    if (n->input(2)->type().isTensor()) y = y * operand(n->input(2), idx, t);
    if (n->input(3)->type().isTensor()) y = y + operand(n->input(3), idx, t);
    return y;
  }

  // native_layer_norm_backward's weight gradient (sum over the rows of g * xhat) or bias gradient (of g),
  // for every index of the normalized shape.
  Stmt columnSumNest(const Node* n, bool weight, const Buf& to) {
    const auto shape = *staticSizes(n->input(1));
    const int64_t rank = static_cast<int64_t>(shape.size());
    Indices cols, rows, idx;
    std::vector<int64_t> colShape(shape.end() - rowDims_, shape.end());
    std::vector<int64_t> rowExtents(shape.begin(), shape.end() - rowDims_);
    for (int64_t d = 0; d < rank - rowDims_; ++d) rows.push_back(Var::make(fmt::format("r{}", temps_++)));
    for (int64_t d = 0; d < rowDims_; ++d) cols.push_back(Var::make(fmt::format("k{}", d)));
    idx = rows;
    idx.insert(idx.end(), cols.begin(), cols.end());
    const ScalarKind t = to->type;
    inColumnNest_ = true;
    Expr g = operand(n->input(0), idx, t);
    Expr summand = weight ? g * lnNormalized(n, idx, t) : g;
    inColumnNest_ = false;
    Buf acc = temporary("acc", t);
    Expr total = rows.empty() ? summand : Reduce::make(ReduceOpKind::Sum, summand, rows, rowExtents);
    Stmt body = Block::make({Allocate::make(acc), Store::make(acc, {imm(0)}, total),
                             Store::make(to, cols, Load::make(acc, {imm(0)})), Free::make(acc)});
    return loops(cols, colShape, body);
  }

  static Expr exp(const Expr& e) { return Call::make(CallKind::Exp, e); }

  // The value of v at `idx` (in v's own shape). Memoized so a subexpression used twice is one node.
  Expr compute(const Value* v, const Indices& idx) {
    std::string key = fmt::format("{}|", static_cast<const void*>(v));
    for (const Expr& e : idx) key += fmt::format("{},", static_cast<const void*>(e.get()));
    if (auto it = memo_.find(key); it != memo_.end()) return it->second;
    Expr e = computeUncached(v, idx);
    memo_[key] = e;
    return e;
  }

  Expr load(const Buf& b, const Indices& idx, int64_t chunkDim = -1, int64_t chunkOffset = 0) {
    // idx is in the consumer's shape; b broadcasts from the right (size-1 dims read index 0).
    Indices li(b->dims.size());
    size_t lead = idx.size() - b->dims.size();
    for (size_t d = 0; d < b->dims.size(); ++d) {
      Expr i = b->dims[d] == 1 && chunkDim != static_cast<int64_t>(d) ? imm(0) : idx[lead + d];
      if (static_cast<int64_t>(d) == chunkDim) i = i + imm(chunkOffset);
      li[d] = simplify(i);
    }
    return Load::make(b, li);
  }

  Expr scalar(const Value* v, ScalarKind t) {
    auto d = constantDouble(v);
    USER_CHECK(d.has_value(), "TE lowering: scalar %{} must be a constant", v->name());
    return TeAlgebra{t}.c(*d);
  }

  // Reads operand `v` of a node computing at `idx` in type t (v broadcasts to that shape; a tensor of
  // another dtype is converted, which is type promotion when t is the node's result type).
  Expr operand(const Value* v, const Indices& idx, ScalarKind t) {
    if (!v->type().isTensor()) return scalar(v, t);
    auto s = *staticSizes(v);
    Indices sub(idx.end() - static_cast<long>(s.size()), idx.end());
    for (size_t d = 0; d < s.size(); ++d)
      if (s[d] == 1) sub[d] = imm(0);
    return Cast::make(t, compute(v, sub));
  }

  Expr computeUncached(const Value* v, const Indices& idx) {
    if (auto it = bufOf_.find(v); it != bufOf_.end()) return load(it->second, idx);
    const Node* n = v->node();
    if (n->kind() == OpKind::ListUnpack) {  // a chunk's piece: its input read at the piece's offset
      const Node* chunk = n->input(0)->node();
      USER_CHECK(chunk->kind() == OpKind::Chunk, "TE lowering: only chunks can be unpacked");
      const auto whole = *staticSizes(chunk->input(0));
      int64_t d = *constantInt(chunk->input(2));
      if (d < 0) d += static_cast<int64_t>(whole.size());
      const int64_t start = static_cast<int64_t>(v->offset()) * (whole[d] / *constantInt(chunk->input(1)));
      if (auto in = bufOf_.find(chunk->input(0)); in != bufOf_.end()) return load(in->second, idx, d, start);
      USER_CHECK(rowDims_ > 0, "TE lowering: only a row group reads chunks of its own values");
      Indices shifted(idx);
      shifted[d] = simplify(idx[d] + imm(start));
      return compute(chunk->input(0), shifted);
    }
    if (rowOp(n)) {
      USER_CHECK(rowDims_ > 0, "TE lowering: {} outside a row group", n->info().name);
      return rowOpValue(v, idx);
    }
    if (n->kind() == OpKind::PhiloxDropout) return dropout(v, idx);
    auto rule = n->info().pointwiseOp();
    USER_CHECK(rule.has_value(), "TE lowering: {} cannot be lowered", n->info().name);
    // The op's scalar rule (support/pointwise.def) over TE expressions in its compute type (a comparison's
    // result, 1 or 0 there, becomes a bool); operands past its arity are not read.
    // Beside a storage dtype numbers are rounded to it first (roundedNumber), and a storage dtype's result is
    // rounded (a narrow integer's truncated) to it, as the unfused op rounds them.
    const DType out = *v->type().dtype;
    const ScalarKind result = valueKind(out);
    const auto compute = fusion::computeDtype(n, fusion::Admit::Integers);
    USER_CHECK(compute.has_value(), "TE lowering: {} does not compute in a float or int64 dtype", n->describe());
    const ScalarKind t = scalarKindOf(*compute);
    Expr x[3];
    for (size_t i = 0; i < 3 && i < n->inputs().size(); ++i) {
      const auto rounded = fusion::roundedNumber(n, i);
      x[i] = rounded ? TeAlgebra{t}.c(*rounded) : operand(n->input(i), idx, t);
    }
    Expr r = applyPointwise(*rule, TeAlgebra{t}, x[0], x[1], x[2]);
    if (const auto storage = storageOf(out)) r = Call::make(roundingCall(*storage), r);
    return result == t ? r : Cast::make(result, r);
  }

  // prim::philox_dropout at idx (in its own shape): support/philox.h's rule with the number of the element's
  // row-major index, from the seed and offset in the group's rng input.
  Expr dropout(const Value* v, const Indices& idx) {
    const Node* n = v->node();
    const ScalarKind t = scalarKindOf(*v->type().dtype);
    auto train = constantBool(n->input(2));
    auto stream = constantInt(n->input(4));
    auto rng = bufOf_.find(n->input(3));
    USER_CHECK(train && stream && rng != bufOf_.end(),
               "TE lowering: prim::philox_dropout needs constant train and stream, and its rng as a group input");
    Expr x = operand(n->input(0), idx, t);
    if (!*train) return x;
    const auto sizes = *staticSizes(v);
    Expr linear = imm(0);
    for (size_t d = 0; d < sizes.size(); ++d) linear = simplify(linear * imm(sizes[d]) + idx[d]);
    Expr u = Philox::make(Load::make(rng->second, {imm(0)}), Load::make(rng->second, {imm(1)}), *stream, linear, t);
    return gjDropout(TeAlgebra{t}, x, u, scalar(n->input(1), t));
  }

  // The primitives support/pointwise.def's rules are written in, as TE expressions of type t. An Int's
  // (an int64 group's: group_rules' integerOp) numbers are integers, and its arithmetic wraps.
  struct TeAlgebra {
    ScalarKind t;
    Expr c(double v) const { return t == ScalarKind::Int ? imm(static_cast<int64_t>(v)) : FloatImm::make(v, t); }
    Expr add(const Expr& x, const Expr& y) const { return x + y; }
    Expr sub(const Expr& x, const Expr& y) const { return x - y; }
    // A product with a constant folds (add's alpha of 1 leaves the other operand).
    Expr mul(const Expr& x, const Expr& y) const {
      const bool constant = x.kind() == NodeKind::FloatImm || y.kind() == NodeKind::FloatImm ||
                            x.kind() == NodeKind::IntImm || y.kind() == NodeKind::IntImm;
      return constant ? simplify(x * y) : x * y;
    }
    Expr div(const Expr& x, const Expr& y) const { return x / y; }
    Expr neg(const Expr& x) const { return Call::make(CallKind::Neg, x); }
    Expr exp(const Expr& x) const { return Call::make(CallKind::Exp, x); }
    Expr log(const Expr& x) const { return Call::make(CallKind::Log, x); }
    Expr sqrt(const Expr& x) const { return Call::make(CallKind::Sqrt, x); }
    Expr tanh(const Expr& x) const { return Call::make(CallKind::Tanh, x); }
    Expr sigmoid(const Expr& x) const { return Call::make(CallKind::Sigmoid, x); }
    Expr erf(const Expr& x) const { return Call::make(CallKind::Erf, x); }
    Expr sin(const Expr& x) const { return Call::make(CallKind::Sin, x); }
    Expr expm1(const Expr& x) const { return Call::make(CallKind::Expm1, x); }
    Expr log1p(const Expr& x) const { return Call::make(CallKind::Log1p, x); }
    Expr atan(const Expr& x) const { return Call::make(CallKind::Atan, x); }
    Expr asin(const Expr& x) const { return Call::make(CallKind::Asin, x); }
    Expr acos(const Expr& x) const { return Call::make(CallKind::Acos, x); }
    Expr sinh(const Expr& x) const { return Call::make(CallKind::Sinh, x); }
    Expr cosh(const Expr& x) const { return Call::make(CallKind::Cosh, x); }
    Expr erfc(const Expr& x) const { return Call::make(CallKind::Erfc, x); }
    Expr lgamma(const Expr& x) const { return Call::make(CallKind::Lgamma, x); }
    Expr cos(const Expr& x) const { return Call::make(CallKind::Cos, x); }
    // an Int is its own floor, ceiling, truncation and rounding
    Expr floor(const Expr& x) const { return t == ScalarKind::Int ? x : Call::make(CallKind::Floor, x); }
    Expr ceil(const Expr& x) const { return t == ScalarKind::Int ? x : Call::make(CallKind::Ceil, x); }
    Expr trunc(const Expr& x) const { return t == ScalarKind::Int ? x : Call::make(CallKind::Trunc, x); }
    Expr round(const Expr& x) const { return t == ScalarKind::Int ? x : Call::make(CallKind::Round, x); }
    // PyTorch's pow by a number: 0.5 and -0.5 are sqrt and 1 / sqrt (NaN at -inf, -0 kept), not C's pow
    Expr pow(const Expr& x, const Expr& y) const {
      if (auto e = y.as<FloatImm>(); e && (e->value == 0.5 || e->value == -0.5))
        return e->value > 0 ? sqrt(x) : div(c(1), sqrt(x));
      return Binary::make(BinaryOpKind::Pow, x, y);
    }
    Expr max(const Expr& x, const Expr& y) const { return Binary::make(BinaryOpKind::Max, x, y); }
    Expr atan2(const Expr& x, const Expr& y) const { return Binary::make(BinaryOpKind::Atan2, x, y); }
    Expr fmod(const Expr& x, const Expr& y) const {  // an Int's is C's % (Int division truncates too)
      return Binary::make(t == ScalarKind::Int ? BinaryOpKind::Mod : BinaryOpKind::Fmod, x, y);
    }
    Expr min(const Expr& x, const Expr& y) const { return Binary::make(BinaryOpKind::Min, x, y); }
    Expr lt(const Expr& x, const Expr& y) const { return Compare::make(CompareOpKind::LT, x, y); }
    Expr gt(const Expr& x, const Expr& y) const { return Compare::make(CompareOpKind::GT, x, y); }
    Expr le(const Expr& x, const Expr& y) const { return Compare::make(CompareOpKind::LE, x, y); }
    Expr ge(const Expr& x, const Expr& y) const { return Compare::make(CompareOpKind::GE, x, y); }
    Expr eq(const Expr& x, const Expr& y) const { return Compare::make(CompareOpKind::EQ, x, y); }
    Expr ne(const Expr& x, const Expr& y) const { return Compare::make(CompareOpKind::NE, x, y); }
    Expr select(const Expr& cond, const Expr& x, const Expr& y) const { return Select::make(cond, x, y); }
  };

  const Graph& sub_;
  std::vector<Buf> inputs_;
  LoweringOptions options_;
  std::unordered_map<const Value*, Buf> bufOf_;
  std::unordered_map<const Value*, Slice> storedAt_;  // pointwise outputs, with options_.readBackOutputs
  std::map<std::string, Expr> memo_;
  int temps_ = 0;
  // A row group's rows: their shape, how many trailing dims a row spans, the current row's index, the
  // statistics computed so far (per row op) and the statements computing them.
  std::vector<int64_t> rowOuterShape_;
  int64_t rowDims_ = 0;
  Indices rowOuter_;
  std::vector<Stmt> prologue_;
  std::vector<Buf> statBufs_;
  std::unordered_map<const Node*, std::vector<Expr>> stats_;
  bool inColumnNest_ = false;
};

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
      if (!optionalFloat(n->input(5)) || !optionalFloat(n->input(6)) || staticSizes(n->input(0)) != staticSizes(n->input(1)))
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
    case OpKind::RecurrenceGroup: case OpKind::Loop: case OpKind::If: case OpKind::GetItem: case OpKind::Len: case OpKind::Size:
    case OpKind::Sizes: case OpKind::IntAdd: case OpKind::FloorDiv: case OpKind::Remainder: case OpKind::Mm:
    case OpKind::ScalarAdd: case OpKind::ScalarSub: case OpKind::ScalarMul: case OpKind::ScalarDiv:
    case OpKind::ScalarPow: case OpKind::ScalarMin: case OpKind::ScalarMax:
    case OpKind::ScalarAnd: case OpKind::ScalarOr: case OpKind::ScalarXor: case OpKind::ScalarLShift:
    case OpKind::ScalarRShift:
    case OpKind::Bmm: case OpKind::Matmul: case OpKind::Addmm: case OpKind::Linear: case OpKind::T:
    case OpKind::Transpose: case OpKind::Permute: case OpKind::Select: case OpKind::Slice: case OpKind::View:
    case OpKind::Reshape: case OpKind::Unsqueeze: case OpKind::Squeeze: case OpKind::Expand: case OpKind::Chunk:
    case OpKind::Unbind: case OpKind::Contiguous: case OpKind::TypeAs: case OpKind::DTypeOf: case OpKind::ToDType: case OpKind::CastOnDevice:
    case OpKind::Sum: case OpKind::Mean: case OpKind::Softmax: case OpKind::LogSoftmax: case OpKind::NllLoss:
    case OpKind::CrossEntropy: case OpKind::Embedding: case OpKind::Cat: case OpKind::Stack: case OpKind::Conv2d:
    case OpKind::ZerosLike: case OpKind::OnesLike: case OpKind::FullLike: case OpKind::Detach:
    case OpKind::SumToSize: case OpKind::SelectBackward: case OpKind::SliceBackward:
    case OpKind::EmbeddingBackward: case OpKind::SoftmaxBackward: case OpKind::LogSoftmaxBackward:
    case OpKind::NllLossBackward: case OpKind::ConvolutionBackward: case OpKind::SplitWithSizes:
    case OpKind::SumBackward: case OpKind::MeanBackward: case OpKind::PhiloxDropout: case OpKind::IntSub:
    case OpKind::IntOfTensor: case OpKind::NewZeros: case OpKind::Full: case OpKind::PhiloxUniform: case OpKind::Sort: case OpKind::IndexSelect:
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

LoopNest lowerGroup(const Graph& sub, LoweringOptions options) { return Lowerer(sub, options).run(); }

LoopNest cpuLoopNest(const Graph& sub, int64_t parallelGrain) {
  LoopNest nest = lowerGroup(sub, {.readBackOutputs = true});
  nest.interchangeStridedReductions();
  nest.lowerReductions();
  nest.scheduleCpu(parallelGrain);
  return nest;
}

void scheduleGpu(LoopNest& nest, const CudaLaunchOptions& launch, int64_t splitBlocks) {
  nest.scheduleGpu(launch.blockSize ? launch.blockSize : LoopNest::kGpuBlockSize,
                   launch.blockCount ? launch.blockCount : LoopNest::kGpuBlockCount,
                   launch.loopLevel ? launch.loopLevel : LoopNest::kGpuLoopLevel, splitBlocks);
}

LoopNest gpuLoopNest(const Graph& sub, const CudaLaunchOptions& launch, int64_t splitBlocks) {
  LoopNest nest = lowerGroup(sub);
  scheduleGpu(nest, launch, splitBlocks);  // lowers the reductions it does not give to a block
  return nest;
}

}  // namespace gj::te
