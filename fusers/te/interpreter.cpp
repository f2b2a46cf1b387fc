#include "fusers/te/interpreter.h"

#include "fusers/te/printer.h"

#include "support/error.h"
#include "support/half.h"
#include "support/philox.h"

#include <algorithm>
#include <cmath>
#include <span>
#include <unordered_map>

namespace gj::te {

// x rounded to float16 or bfloat16 and back, as support/half.h rounds on the host.
static double roundedTo(DType t, double x) {
  const float f = static_cast<float>(x);
  return t == DType::Float16 ? floatFromHalfBits(halfBitsFromFloat(f)) : floatFromBFloat16Bits(bfloat16BitsFromFloat(f));
}

// x truncated to the narrow integer t and extended back, as C's conversions do (wrapping).
static int64_t wrappedTo(DType t, int64_t x) {
  switch (t) {
    case DType::UInt8: return static_cast<uint8_t>(x);
    case DType::Int8: return static_cast<int8_t>(x);
    case DType::Int16: return static_cast<int16_t>(x);
    case DType::Int32: return static_cast<int32_t>(x);
    default: return x;
  }
}

namespace {

// A buffer's elements: an Int buffer's exactly as int64 (`ints`), the others' as doubles (`data`).
struct Storage {
  std::vector<double> data;
  std::vector<int64_t> ints;
  ScalarKind type;
  static Storage of(ScalarKind t, size_t n) {
    return t == ScalarKind::Int ? Storage{{}, std::vector<int64_t>(n, 0), t} : Storage{std::vector<double>(n, 0.0), {}, t};
  }
};

class Eval {
 public:
  std::unordered_map<const BufNode*, Storage> bufs;

  // An Int expression's value, exact over all of int64: sums, differences, products and negations wrap.
  int64_t intExpr(const Expr& e) {
    auto wrap = [](uint64_t v) { return static_cast<int64_t>(v); };
    switch (e.kind()) {
      case NodeKind::IntImm: return e.as<IntImm>()->value;
      case NodeKind::FloatImm: return static_cast<int64_t>(e.as<FloatImm>()->value);
      case NodeKind::Var: {
        auto it = vars_.find(e.get());
        IR_CHECK(it != vars_.end()) << "TE interpreter: unbound variable " << e.as<Var>()->name;
        return it->second;
      }
      case NodeKind::Binary: {
        const Binary* b = e.as<Binary>();
        const int64_t x = intExpr(b->a), y = intExpr(b->b);
        switch (b->op) {
          case BinaryOpKind::Add: return wrap(static_cast<uint64_t>(x) + static_cast<uint64_t>(y));
          case BinaryOpKind::Sub: return wrap(static_cast<uint64_t>(x) - static_cast<uint64_t>(y));
          case BinaryOpKind::Mul: return wrap(static_cast<uint64_t>(x) * static_cast<uint64_t>(y));
          case BinaryOpKind::Div: return x / y;
          case BinaryOpKind::Mod: return x % y;
          case BinaryOpKind::Min: return std::min(x, y);
          case BinaryOpKind::Max: return std::max(x, y);
          case BinaryOpKind::Pow: case BinaryOpKind::Atan2: case BinaryOpKind::Fmod: break;
        }
        break;
      }
      case NodeKind::Select: {
        const Select* s = e.as<Select>();
        return expr(s->cond) != 0 ? intExpr(s->t) : intExpr(s->f);
      }
      case NodeKind::Call: {
        const Call* c = e.as<Call>();
        const int64_t x = intExpr(c->arg);
        if (c->fn == CallKind::Neg) return wrap(0 - static_cast<uint64_t>(x));
        if (auto t = roundedDtype(c->fn)) return wrappedTo(*t, x);
        break;
      }
      case NodeKind::Cast: {
        const Cast* c = e.as<Cast>();
        return c->arg->type == ScalarKind::Int ? intExpr(c->arg) : static_cast<int64_t>(expr(c->arg));
      }
      case NodeKind::Load: {
        const Load* l = e.as<Load>();
        return storage(l->buf).ints.at(offset(l->buf, l->indices));
      }
      default: break;
    }
    IR_CHECK(false) << "TE interpreter: " << toString(e) << " is not an integer expression";
    return 0;
  }

  double expr(const Expr& e) {
    if (e->type == ScalarKind::Int) return static_cast<double>(intExpr(e));  // IntImm, Var and every Int value
    switch (e.kind()) {
      case NodeKind::FloatImm: return e.as<FloatImm>()->value;
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
          case ScalarKind::Bool: return x != 0;
          case ScalarKind::Float64: case ScalarKind::Int: return x;  // to Int: intExpr
        }
        return x;
      }
      case NodeKind::Load: {
        const Load* l = e.as<Load>();
        return storage(l->buf).data.at(offset(l->buf, l->indices));
      }
      case NodeKind::Philox: {
        const Philox* r = e.as<Philox>();
        return gjPhiloxUniform<double>(intExpr(r->seed), intExpr(r->offset), r->stream,
                                       intExpr(r->index));  // exact in float too
      }
      case NodeKind::Reduce: IR_CHECK(false) << "TE interpreter: run lowerReductions first"; return 0;
      case NodeKind::ThreadReduce:
        IR_CHECK(false) << "TE interpreter: a block's reduction runs on a GPU only";
        return 0;
      case NodeKind::IntImm: case NodeKind::Var:  // Int: intExpr
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
        int64_t lo = intExpr(f->start), hi = intExpr(f->stop);
        for (int64_t i = lo; i < hi; ++i) {
          vars_[f->var.get()] = i;
          stmt(f->body);
        }
        vars_.erase(f->var.get());
        return;
      }
      case NodeKind::Store: {
        const Store* st = s.as<Store>();
        if (st->buf->type == ScalarKind::Int) {  // a narrow integer's truncated
          const int64_t v = intExpr(st->value);
          storage(st->buf).ints.at(offset(st->buf, st->indices)) = st->buf->storage ? wrappedTo(*st->buf->storage, v) : v;
          return;
        }
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
        bufs[b.get()] = Storage::of(b->type, static_cast<size_t>(n));
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
      int64_t i = intExpr(idx[d]);
      USER_CHECK(i >= 0 && i < b->dims[d], "TE interpreter: index {} out of range [0, {}) in dimension {} of {}", i,
                 b->dims[d], d, b->name);
      off = off * b->dims[d] + i;
    }
    return off;
  }
  double binary(const Binary* b) {
    double x = expr(b->a), y = expr(b->b);  // floats: an Int's is intExpr's
    switch (b->op) {
      case BinaryOpKind::Add: return x + y;
      case BinaryOpKind::Sub: return x - y;
      case BinaryOpKind::Mul: return x * y;
      case BinaryOpKind::Div: return x / y;
      case BinaryOpKind::Mod: return static_cast<double>(static_cast<int64_t>(x) % static_cast<int64_t>(y));
      case BinaryOpKind::Min: return std::isnan(x) || x < y ? x : y;
      case BinaryOpKind::Max: return std::isnan(x) || x > y ? x : y;
      case BinaryOpKind::Pow: return std::pow(x, y);
      case BinaryOpKind::Atan2: return std::atan2(x, y);
      case BinaryOpKind::Fmod: return std::fmod(x, y);
    }
    return 0;
  }
  template <typename T>
  static double compared(CompareOpKind op, T x, T y) {
    switch (op) {
      case CompareOpKind::LT: return x < y;
      case CompareOpKind::LE: return x <= y;
      case CompareOpKind::GT: return x > y;
      case CompareOpKind::GE: return x >= y;
      case CompareOpKind::EQ: return x == y;
      case CompareOpKind::NE: return x != y;
    }
    return 0;
  }
  double compare(const Compare* c) {
    if (c->a->type == ScalarKind::Int && c->b->type == ScalarKind::Int)  // exactly
      return compared(c->op, intExpr(c->a), intExpr(c->b));
    return compared(c->op, expr(c->a), expr(c->b));
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
      case CallKind::WrapUInt8: case CallKind::WrapInt8: case CallKind::WrapInt16: case CallKind::WrapInt32:
        break;  // of Int values: intExpr
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
    Storage s = Storage::of(b->type, static_cast<size_t>(t.numel()));
    if (b->type == ScalarKind::Int) {  // exactly, through int64
      const Tensor w = t.to(DType::Int64).contiguous();
      std::copy(w.data<int64_t>(), w.data<int64_t>() + w.numel(), s.ints.begin());
    } else {
      for (int64_t k = 0; k < t.numel(); ++k) s.data[k] = t.item(k);
    }
    ev.bufs[b.get()] = std::move(s);
  }
  for (const Buf& b : nest.outputs()) {
    int64_t n = 1;
    for (int64_t d : b->dims) n *= d;
    ev.bufs[b.get()] = Storage::of(b->type, static_cast<size_t>(n));
  }
  ev.stmt(nest.root());
  std::vector<Tensor> outs;
  for (const Buf& b : std::span(nest.outputs()).first(nest.outputs().size() - nest.scratch())) {
    const DType dt = bufDType(*b);
    const Storage& s = ev.bufs.at(b.get());
    if (b->type != ScalarKind::Int) {
      outs.push_back(Tensor::fromVector(b->dims, s.data, dt));
      continue;
    }
    Tensor t = Tensor::empty(b->dims, DType::Int64);
    std::copy(s.ints.begin(), s.ints.end(), t.data<int64_t>());
    outs.push_back(t.to(dt));
  }
  return outs;
}

}  // namespace gj::te
