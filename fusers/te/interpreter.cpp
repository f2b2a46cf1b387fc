#include "fusers/te/interpreter.h"

#include "support/error.h"
#include "support/half.h"
#include "support/philox.h"

#include <cmath>
#include <span>
#include <unordered_map>

namespace gj::te {

// x rounded to float16 or bfloat16 and back, as support/half.h rounds on the host.
static double roundedTo(DType t, double x) {
  const float f = static_cast<float>(x);
  return t == DType::Float16 ? floatFromHalfBits(halfBitsFromFloat(f)) : floatFromBFloat16Bits(bfloat16BitsFromFloat(f));
}

namespace {

struct Storage {
  std::vector<double> data;
  ScalarKind type;
};

class Eval {
 public:
  std::unordered_map<const BufNode*, Storage> bufs;

  double expr(const Expr& e) {
    switch (e.kind()) {
      case NodeKind::IntImm: return static_cast<double>(e.as<IntImm>()->value);
      case NodeKind::FloatImm: return e.as<FloatImm>()->value;
      case NodeKind::Var: {
        auto it = vars_.find(e.get());
        IR_CHECK(it != vars_.end()) << "TE interpreter: unbound variable " << e.as<Var>()->name;
        return static_cast<double>(it->second);
      }
      case NodeKind::Binary: return binary(e.as<Binary>());
      case NodeKind::Compare: return compare(e.as<Compare>());
      case NodeKind::Select: {
        const Select* s = e.as<Select>();
        return expr(s->cond) != 0 ? expr(s->t) : expr(s->f);
      }
      case NodeKind::Call: return call(e.as<Call>());
      case NodeKind::Cast: {
        const Cast* c = e.as<Cast>();
        double x = expr(c->arg);
        switch (c->type) {
          case ScalarKind::Float32: return static_cast<float>(x);
          case ScalarKind::Int: return static_cast<double>(static_cast<int64_t>(x));
          case ScalarKind::Bool: return x != 0;
          case ScalarKind::Float64: return x;
        }
        return x;
      }
      case NodeKind::Load: {
        const Load* l = e.as<Load>();
        return storage(l->buf).data.at(offset(l->buf, l->indices));
      }
      case NodeKind::Philox: {  // Int values are doubles here: seeds and offsets exact up to 2^53
        const Philox* r = e.as<Philox>();
        return gjPhiloxUniform<double>(static_cast<int64_t>(expr(r->seed)), static_cast<int64_t>(expr(r->offset)),
                                       r->stream, static_cast<int64_t>(expr(r->index)));  // exact in float too
      }
      case NodeKind::Reduce: IR_CHECK(false) << "TE interpreter: run lowerReductions first"; return 0;
      case NodeKind::ThreadReduce:
        IR_CHECK(false) << "TE interpreter: a block's reduction runs on a GPU only";
        return 0;
      case NodeKind::Block: case NodeKind::For: case NodeKind::Store: case NodeKind::Allocate: case NodeKind::Free:
      case NodeKind::Cond: case NodeKind::GridSync:
        break;
    }
    IR_CHECK(false) << "TE interpreter: a statement used as an expression";
    return 0;
  }

  void stmt(const Stmt& s) {
    if (!s) return;
    switch (s.kind()) {
      case NodeKind::Block:
        for (const Stmt& x : s.as<Block>()->stmts) stmt(x);
        return;
      case NodeKind::For: {
        const For* f = s.as<For>();
        int64_t lo = static_cast<int64_t>(expr(f->start)), hi = static_cast<int64_t>(expr(f->stop));
        for (int64_t i = lo; i < hi; ++i) {
          vars_[f->var.get()] = i;
          stmt(f->body);
        }
        vars_.erase(f->var.get());
        return;
      }
      case NodeKind::Store: {
        const Store* st = s.as<Store>();
        double v = expr(st->value);
        if (st->buf->type == ScalarKind::Float32) v = static_cast<float>(v);
        if (st->buf->storage) v = roundedTo(*st->buf->storage, v);
        storage(st->buf).data.at(offset(st->buf, st->indices)) = v;
        return;
      }
      case NodeKind::Allocate: {
        const Buf& b = s.as<Allocate>()->buf;
        int64_t n = 1;
        for (int64_t d : b->dims) n *= d;
        bufs[b.get()] = Storage{std::vector<double>(n, 0.0), b->type};
        return;
      }
      case NodeKind::Free: bufs.erase(s.as<Free>()->buf.get()); return;
      case NodeKind::GridSync: IR_CHECK(false) << "TE interpreter: a grid barrier (GPU only) in a CPU nest"; return;
      case NodeKind::Cond: {
        const Cond* c = s.as<Cond>();
        if (expr(c->cond) != 0) stmt(c->thenStmt);
        else stmt(c->elseStmt);
        return;
      }
      case NodeKind::IntImm: case NodeKind::FloatImm: case NodeKind::Var: case NodeKind::Binary:
      case NodeKind::Compare: case NodeKind::Select: case NodeKind::Call: case NodeKind::Cast: case NodeKind::Load:
      case NodeKind::Philox: case NodeKind::Reduce: case NodeKind::ThreadReduce:
        break;
    }
    IR_CHECK(false) << "TE interpreter: an expression used as a statement";
  }

 private:
  Storage& storage(const Buf& b) {
    auto it = bufs.find(b.get());
    IR_CHECK(it != bufs.end()) << "TE interpreter: buffer " << b->name << " is not allocated";
    return it->second;
  }
  int64_t offset(const Buf& b, const std::vector<Expr>& idx) {
    int64_t off = 0;
    for (size_t d = 0; d < idx.size(); ++d) {
      int64_t i = static_cast<int64_t>(expr(idx[d]));
      USER_CHECK(i >= 0 && i < b->dims[d], "TE interpreter: index {} out of range [0, {}) in dimension {} of {}", i,
                 b->dims[d], d, b->name);
      off = off * b->dims[d] + i;
    }
    return off;
  }
  double binary(const Binary* b) {
    double x = expr(b->a), y = expr(b->b);
    bool isInt = b->type == ScalarKind::Int;
    switch (b->op) {
      case BinaryOpKind::Add: return x + y;
      case BinaryOpKind::Sub: return x - y;
      case BinaryOpKind::Mul: return x * y;
      case BinaryOpKind::Div: return isInt ? static_cast<double>(static_cast<int64_t>(x) / static_cast<int64_t>(y)) : x / y;
      case BinaryOpKind::Mod: return static_cast<double>(static_cast<int64_t>(x) % static_cast<int64_t>(y));
      case BinaryOpKind::Min: return std::isnan(x) || x < y ? x : y;
      case BinaryOpKind::Max: return std::isnan(x) || x > y ? x : y;
      case BinaryOpKind::Pow: return std::pow(x, y);
      case BinaryOpKind::Atan2: return std::atan2(x, y);
      case BinaryOpKind::Fmod: return std::fmod(x, y);
    }
    return 0;
  }
  double compare(const Compare* c) {
    double x = expr(c->a), y = expr(c->b);
    switch (c->op) {
      case CompareOpKind::LT: return x < y;
      case CompareOpKind::LE: return x <= y;
      case CompareOpKind::GT: return x > y;
      case CompareOpKind::GE: return x >= y;
      case CompareOpKind::EQ: return x == y;
      case CompareOpKind::NE: return x != y;
    }
    return 0;
  }
  double call(const Call* c) {
    double x = expr(c->arg);
    switch (c->fn) {
      case CallKind::Exp: return std::exp(x);
      case CallKind::Log: return std::log(x);
      case CallKind::Tanh: return std::tanh(x);
      case CallKind::Sigmoid: return 1.0 / (1.0 + std::exp(-x));
      case CallKind::Sqrt: return std::sqrt(x);
      case CallKind::Neg: return -x;
      case CallKind::Erf: return std::erf(x);
      case CallKind::Sin: return std::sin(x);
      case CallKind::Cos: return std::cos(x);
      case CallKind::Floor: return std::floor(x);
      case CallKind::Ceil: return std::ceil(x);
      case CallKind::Trunc: return std::trunc(x);
      case CallKind::Round: return std::nearbyint(x);  // halves to even
      case CallKind::Expm1: return std::expm1(x);
      case CallKind::Log1p: return std::log1p(x);
      case CallKind::Atan: return std::atan(x);
      case CallKind::Asin: return std::asin(x);
      case CallKind::Acos: return std::acos(x);
      case CallKind::Sinh: return std::sinh(x);
      case CallKind::Cosh: return std::cosh(x);
      case CallKind::Erfc: return std::erfc(x);
      case CallKind::Lgamma: return std::lgamma(x);
      case CallKind::RoundHalf: return roundedTo(DType::Float16, x);
      case CallKind::RoundBFloat16: return roundedTo(DType::BFloat16, x);
    }
    return 0;
  }
  std::unordered_map<const ExprNode*, int64_t> vars_;
};

}  // namespace

std::vector<Tensor> interpret(const LoopNest& nest, const std::vector<Tensor>& inputs) {
  USER_CHECK(inputs.size() == nest.inputs().size(), "TE interpreter: {} inputs for {}", inputs.size(),
             nest.inputs().size());
  Eval ev;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Buf& b = nest.inputs()[i];
    Tensor t = inputs[i].contiguous();
    USER_CHECK(t.sizes() == b->dims, "TE interpreter: input {} is {} but {} is {}", i, shapeStr(t.sizes()), b->name,
               shapeStr(b->dims));
    Storage s{std::vector<double>(t.numel()), b->type};
    for (int64_t k = 0; k < t.numel(); ++k) s.data[k] = t.item(k);
    ev.bufs[b.get()] = std::move(s);
  }
  for (const Buf& b : nest.outputs()) {
    int64_t n = 1;
    for (int64_t d : b->dims) n *= d;
    ev.bufs[b.get()] = Storage{std::vector<double>(n, 0.0), b->type};
  }
  ev.stmt(nest.root());
  std::vector<Tensor> outs;
  for (const Buf& b : std::span(nest.outputs()).first(nest.outputs().size() - nest.scratch())) {
    const DType dt = bufDType(*b);
    outs.push_back(Tensor::fromVector(b->dims, ev.bufs.at(b.get()).data, dt));
  }
  return outs;
}

}  // namespace gj::te
