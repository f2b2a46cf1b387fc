// The reductions a group ends in (fusers/te/lowering/nests.h): sum_to_size, sum and mean, each a nest of
// its own, and softmax and log_softmax.
#include "fusers/te/lowering/nests.h"

#include "passes/util.h"

namespace gj::te::lowering {

bool isTerminalReduction(const Node* n) {
  const OpKind k = n->kind();
  return k == OpKind::SumToSize || k == OpKind::SumDim || k == OpKind::Mean || k == OpKind::MeanDim;
}

// sum_to_size(x, sizes) / sum or mean(x, dims, keepdim) / mean(x): over the output's indices, a Reduce
// over the rest into a one-element temporary, then stored (divided by the count for a mean).
Stmt reductionNest(Values& values, const Value* out, const Slice& to,
                   const std::unordered_map<const Value*, Slice>& storedAt) {
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
  const Indices oidx = indices(os.size(), "j");
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
  Buf acc = values.group().temporary("acc", t);
  Expr total = Load::make(acc, {imm(0)});
  bool mean = n->kind() == OpKind::Mean || n->kind() == OpKind::MeanDim;
  // A value the group also stores (the LSTM backward sums the gate gradients it outputs) is read back
  // from its output, which the pointwise nests ahead of this one have written, instead of computed again.
  auto stored = storedAt.find(x);
  Expr summand =
      stored != storedAt.end() ? Load::make(stored->second.buf, stored->second.at(xidx)) : values.compute(x, xidx);
  Stmt body = Block::make({Allocate::make(acc),
                           Store::make(acc, {imm(0)}, Reduce::make(ReduceOpKind::Sum, summand, rvars, extents)),
                           Store::make(to.buf, to.at(oidx), mean ? total / FloatImm::make(double(count), t) : total),
                           Free::make(acc)});
  return loops(oidx, os, body);
}

// softmax / log_softmax over dim d: for every index of the other dims, the maximum and the sum of
// exp(x - max) along d into one-element temporaries, then every element of the row:
//   softmax:     exp(x - max) / sum          log_softmax: x - max - log(sum)
Stmt softmaxNest(Values& values, const Value* out, const Buf& buf) {
  const Node* n = out->node();
  const Value* x = n->input(0);
  auto xs = *staticSizes(x);
  const int64_t rank = static_cast<int64_t>(xs.size());
  auto dim = constantInt(n->input(1));
  USER_CHECK(dim && *dim >= -std::max<int64_t>(rank, 1) && *dim < std::max<int64_t>(rank, 1),
             "TE lowering: {} needs a constant dim in range for rank {}", n->info().name, rank);
  ScalarKind t = buf->type;
  Buf maxBuf = values.group().temporary("max", t), sumBuf = values.group().temporary("sum", t);
  Expr maxv = Load::make(maxBuf, {imm(0)}), sumv = Load::make(sumBuf, {imm(0)});
  if (rank == 0) {  // a single element: softmax 1, log_softmax 0
    Expr v = values.compute(x, {});
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
  Expr xk = values.compute(x, rowK);
  // log_softmax takes the row's log once (sum becomes log(sum)), so the row loop has no libm call.
  const bool log = n->kind() == OpKind::LogSoftmax;
  Expr value = log ? xk - maxv - sumv : exp(xk - maxv) / sumv;
  std::vector<Stmt> body = {
      Allocate::make(maxBuf), Allocate::make(sumBuf),
      Store::make(maxBuf, {imm(0)}, Reduce::make(ReduceOpKind::Max, values.compute(x, rowR0), {r0}, {xs[d]})),
      Store::make(sumBuf, {imm(0)},
                  Reduce::make(ReduceOpKind::Sum, exp(values.compute(x, rowR1) - maxv), {r1}, {xs[d]}))};
  if (log) body.push_back(Store::make(sumBuf, {imm(0)}, Call::make(CallKind::Log, sumv)));
  body.insert(body.end(), {For::make(k, imm(0), imm(xs[d]), Store::make(buf, rowK, value)), Free::make(sumBuf),
                           Free::make(maxBuf)});
  return loops(outer, outerShape, Block::make(body));
}

}  // namespace gj::te::lowering
