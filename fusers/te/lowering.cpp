#include "fusers/te/lowering.h"

#include "passes/util.h"
#include "support/error.h"

#include <fmt/format.h>

#include <map>
#include <unordered_map>

namespace gj::te {

namespace {

using Indices = std::vector<Expr>;

class Lowerer {
 public:
  Lowerer(const Graph& sub, LoweringOptions options) : sub_(sub), options_(options) {}

  LoopNest run() {
    for (size_t i = 0; i < sub_.inputs().size(); ++i) {
      const Value* in = sub_.inputs()[i];
      auto s = staticSizes(in);
      USER_CHECK(s && in->type().dtype, "TE lowering: input %{} needs static sizes and a dtype", in->name());
      Buf b = makeBuf(fmt::format("in{}", i), *s, scalarKindOf(*in->type().dtype));
      inputs_.push_back(b);
      bufOf_[in] = b;
    }
    std::vector<Stmt> nests;
    std::vector<PointwiseStore> pointwise;
    std::vector<std::pair<const Value*, Slice>> reductions;  // built after every pointwise store is known
    std::vector<Buf> outputs(sub_.outputs().size());
    for (size_t k = 0; k < sub_.outputs().size(); ++k) {
      const Value* out = sub_.outputs()[k];
      auto s = staticSizes(out);
      USER_CHECK(s && out->type().dtype, "TE lowering: output %{} needs static sizes", out->name());
      outputs[k] = makeBuf(fmt::format("out{}", k), *s, scalarKindOf(*out->type().dtype));
      const Node* n = out->node();
      if (isReduction(n)) {
        reductions.push_back({out, {outputs[k], -1, 0}});
      } else if (n->kind() == OpKind::Softmax || n->kind() == OpKind::LogSoftmax) {
        nests.push_back(softmaxNest(out, outputs[k]));
      } else if (n->kind() == OpKind::Cat) {
        // Output partitioning: every part is stored into its slice of the output.
        const Node* list = n->input(0)->node();
        USER_CHECK(list->kind() == OpKind::ListConstruct, "TE lowering: aten::cat needs a prim::ListConstruct");
        auto d = constantInt(n->input(1));
        USER_CHECK(d.has_value(), "TE lowering: aten::cat needs a constant dim");
        int64_t dim = *d < 0 ? *d + static_cast<int64_t>(s->size()) : *d;
        int64_t offset = 0;
        for (const Value* part : list->inputs()) {
          Slice slice{outputs[k], dim, offset};
          if (isReduction(part->node())) reductions.push_back({part, slice});
          else pointwise.push_back({*staticSizes(part), slice, part});
          offset += (*staticSizes(part))[dim];
        }
      } else {
        pointwise.push_back({*s, {outputs[k], -1, 0}, out});
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
    return LoopNest(Block::make(nests), inputs_, outputs);
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
      for (int64_t d : *dims) {
        USER_CHECK(d >= -rank && d < std::max<int64_t>(rank, 1), "TE lowering: {} dim {} out of range for rank {}",
                   n->info().name, d, rank);
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
    return FloatImm::make(*d, t);
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
    if (n->kind() == OpKind::ListUnpack) {
      const Node* chunk = n->input(0)->node();
      USER_CHECK(chunk->kind() == OpKind::Chunk && bufOf_.count(chunk->input(0)),
                 "TE lowering: only chunks of group inputs can be read");
      const Buf& b = bufOf_.at(chunk->input(0));
      int64_t d = *constantInt(chunk->input(2));
      if (d < 0) d += static_cast<int64_t>(b->dims.size());
      int64_t piece = b->dims[d] / *constantInt(chunk->input(1));
      Indices full(idx);
      return load(b, full, d, static_cast<int64_t>(v->offset()) * piece);
    }
    auto rule = n->info().pointwiseOp();
    USER_CHECK(rule.has_value(), "TE lowering: {} cannot be lowered", n->info().name);
    ScalarKind t = scalarKindOf(*v->type().dtype);
    // The op's scalar rule (support/pointwise.def) over TE expressions; operands past its arity are not read.
    Expr x[3];
    for (size_t i = 0; i < 3 && i < n->inputs().size(); ++i) x[i] = operand(n->input(i), idx, t);
    return applyPointwise(*rule, TeAlgebra{t}, x[0], x[1], x[2]);
  }

  // The primitives support/pointwise.def's rules are written in, as TE expressions of type t.
  struct TeAlgebra {
    ScalarKind t;
    Expr c(double v) const { return FloatImm::make(v, t); }
    Expr add(const Expr& x, const Expr& y) const { return x + y; }
    Expr sub(const Expr& x, const Expr& y) const { return x - y; }
    // A product with a constant folds (add's alpha of 1 leaves the other operand).
    Expr mul(const Expr& x, const Expr& y) const {
      return x.kind() == NodeKind::FloatImm || y.kind() == NodeKind::FloatImm ? simplify(x * y) : x * y;
    }
    Expr div(const Expr& x, const Expr& y) const { return x / y; }
    Expr neg(const Expr& x) const { return Call::make(CallKind::Neg, x); }
    Expr exp(const Expr& x) const { return Call::make(CallKind::Exp, x); }
    Expr log(const Expr& x) const { return Call::make(CallKind::Log, x); }
    Expr sqrt(const Expr& x) const { return Call::make(CallKind::Sqrt, x); }
    Expr tanh(const Expr& x) const { return Call::make(CallKind::Tanh, x); }
    Expr sigmoid(const Expr& x) const { return Call::make(CallKind::Sigmoid, x); }
    Expr lt(const Expr& x, const Expr& y) const { return Compare::make(CompareOpKind::LT, x, y); }
    Expr gt(const Expr& x, const Expr& y) const { return Compare::make(CompareOpKind::GT, x, y); }
    Expr select(const Expr& cond, const Expr& x, const Expr& y) const { return Select::make(cond, x, y); }
  };

  const Graph& sub_;
  std::vector<Buf> inputs_;
  LoweringOptions options_;
  std::unordered_map<const Value*, Buf> bufOf_;
  std::unordered_map<const Value*, Slice> storedAt_;  // pointwise outputs, with options_.readBackOutputs
  std::map<std::string, Expr> memo_;
  int temps_ = 0;
};

}  // namespace

LoopNest lowerGroup(const Graph& sub, LoweringOptions options) { return Lowerer(sub, options).run(); }

LoopNest cpuLoopNest(const Graph& sub, int64_t parallelGrain) {
  LoopNest nest = lowerGroup(sub, {.readBackOutputs = true});
  nest.interchangeStridedReductions();
  nest.lowerReductions();
  nest.scheduleCpu(parallelGrain);
  return nest;
}

void scheduleGpu(LoopNest& nest, const CudaLaunchOptions& launch) {
  nest.scheduleGpu(launch.blockSize ? launch.blockSize : LoopNest::kGpuBlockSize,
                   launch.blockCount ? launch.blockCount : LoopNest::kGpuBlockCount,
                   launch.loopLevel ? launch.loopLevel : LoopNest::kGpuLoopLevel);
}

LoopNest gpuLoopNest(const Graph& sub, const CudaLaunchOptions& launch) {
  LoopNest nest = lowerGroup(sub);
  nest.lowerReductions();
  scheduleGpu(nest, launch);
  return nest;
}

}  // namespace gj::te
