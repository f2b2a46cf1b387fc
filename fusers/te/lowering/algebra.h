#pragma once
// TeAlgebra, the algebra of a group's pointwise rules and dropout (fusers/te/lowering/pointwise.cpp, dropout.cpp).
#include "fusers/te/ir.h"
#include "fusers/te/simplify.h"

namespace gj::te::lowering {

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

}  // namespace gj::te::lowering
