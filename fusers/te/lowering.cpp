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
  explicit Lowerer(const Graph& sub) : sub_(sub) {}

  LoopNest run() {
    for (size_t i = 0; i < sub_.inputs().size(); ++i) {
      const Value* in = sub_.inputs()[i];
      auto s = staticSizes(in);
      USER_CHECK(s && in->type().dtype, "TE lowering: input %{} needs static sizes and a dtype", in->name());
      Buf b = makeBuf(fmt::format("in{}", i), *s, scalarKindOf(*in->type().dtype));
      inputs_.push_back(b);
      bufOf_[in] = b;
    }
    for (const Node* n : *sub_.block()) producer_[n->outputs().empty() ? nullptr : n->output(0)] = n;
    std::vector<Stmt> nests;
    // Pointwise outputs: one nest over their common shape.
    std::vector<std::pair<size_t, const Value*>> pointwise;
    std::vector<Buf> outputs(sub_.outputs().size());
    for (size_t k = 0; k < sub_.outputs().size(); ++k) {
      const Value* out = sub_.outputs()[k];
      auto s = staticSizes(out);
      USER_CHECK(s && out->type().dtype, "TE lowering: output %{} needs static sizes", out->name());
      outputs[k] = makeBuf(fmt::format("out{}", k), *s, scalarKindOf(*out->type().dtype));
      if (isReduction(out->node())) nests.push_back(reductionNest(out, outputs[k]));
      else pointwise.emplace_back(k, out);
    }
    if (!pointwise.empty()) {
      auto shape = *staticSizes(pointwise[0].second);
      Indices idx;
      for (size_t d = 0; d < shape.size(); ++d) idx.push_back(Var::make(fmt::format("i{}", d)));
      std::vector<Stmt> stores;
      for (auto [k, v] : pointwise) {
        USER_CHECK(*staticSizes(v) == shape, "TE lowering: pointwise outputs of different shapes");
        stores.push_back(Store::make(outputs[k], idx, compute(v, idx)));
      }
      nests.insert(nests.begin(), loops(idx, shape, Block::make(stores)));
    }
    return LoopNest(Block::make(nests), inputs_, outputs);
  }

 private:
  static bool isReduction(const Node* n) { return n->kind() == OpKind::SumToSize || n->kind() == OpKind::SumDim; }

  static Stmt loops(const Indices& idx, const std::vector<int64_t>& shape, Stmt body) {
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d)
      body = For::make(idx[d], imm(0), imm(shape[d]), body);
    return body;
  }

  // sum_to_size(x, sizes) / sum(x, dims, keepdim): over the output's indices, Reduce over the rest.
  Stmt reductionNest(const Value* out, const Buf& buf) {
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
    } else {
      auto dims = constantInts(n->input(1));
      auto keep = constantBool(n->input(2));
      USER_CHECK(dims && keep, "TE lowering: aten::sum needs constant dims and keepdim");
      for (int64_t d : *dims) reduced[d < 0 ? d + rank : d] = true;
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
    for (int64_t d = 0; d < rank; ++d) {
      if (reduced[d]) {
        rvars.push_back(Var::make(fmt::format("r{}", rvars.size())));
        extents.push_back(xs[d]);
        xidx[d] = rvars.back();
      } else {
        xidx[d] = oidx[outDimOf[d]];
      }
    }
    Expr body = compute(x, xidx);
    return loops(oidx, os, Store::make(buf, oidx, Reduce::make(ReduceOpKind::Sum, body, rvars, extents)));
  }

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

  // Reads operand `v` of a node computing at `idx` (v broadcasts to that shape).
  Expr operand(const Value* v, const Indices& idx, ScalarKind t) {
    if (!v->type().isTensor()) return scalar(v, t);
    auto s = *staticSizes(v);
    Indices sub(idx.end() - static_cast<long>(s.size()), idx.end());
    for (size_t d = 0; d < s.size(); ++d)
      if (s[d] == 1) sub[d] = imm(0);
    return compute(v, sub);
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
    USER_CHECK(n->info().group == OpGroupKind::Pointwise, "TE lowering: {} cannot be lowered", n->info().name);
    ScalarKind t = scalarKindOf(*v->type().dtype);
    auto a = [&](size_t i) { return operand(n->input(i), idx, t); };
    Expr zero = FloatImm::make(0.0, t), one = FloatImm::make(1.0, t);
    switch (n->kind()) {
      case OpKind::Add: return a(0) + simplify(a(2) * a(1));
      case OpKind::Sub: return a(0) - simplify(a(2) * a(1));
      case OpKind::AutogradAdd: return a(0) + a(1);
      case OpKind::Mul: return a(0) * a(1);
      case OpKind::Div: return a(0) / a(1);
      case OpKind::Neg: return Call::make(CallKind::Neg, a(0));
      case OpKind::Exp: return Call::make(CallKind::Exp, a(0));
      case OpKind::Log: return Call::make(CallKind::Log, a(0));
      case OpKind::Sqrt: return Call::make(CallKind::Sqrt, a(0));
      case OpKind::Sigmoid: return Call::make(CallKind::Sigmoid, a(0));
      case OpKind::Tanh: return Call::make(CallKind::Tanh, a(0));
      case OpKind::Relu: return Select::make(Compare::make(CompareOpKind::LT, a(0), zero), zero, a(0));
      case OpKind::SigmoidBackward: return a(0) * a(1) * (one - a(1));
      case OpKind::TanhBackward: return a(0) * (one - a(1) * a(1));
      case OpKind::ThresholdBackward: return Select::make(Compare::make(CompareOpKind::GT, a(1), a(2)), a(0), zero);
      default: break;
    }
    throw Error(fmt::format("TE lowering: no rule for {}", n->info().name));
  }

  const Graph& sub_;
  std::vector<Buf> inputs_;
  std::unordered_map<const Value*, Buf> bufOf_;
  std::unordered_map<const Value*, const Node*> producer_;
  std::map<std::string, Expr> memo_;
};

}  // namespace

LoopNest lowerGroup(const Graph& sub) { return Lowerer(sub).run(); }

}  // namespace gj::te
