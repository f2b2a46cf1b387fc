#pragma once
// Questions about a loop nest and a reduction's fold that the CPU and GPU schedules (loopnest.cpp,
// gpu_schedule.cpp) both ask; internal to the TE fuser.
#include "fusers/te/ir.h"

#include <limits>
#include <vector>

namespace gj::te::nest {

// A reduction's fold: `x` folded into `acc` by `op`, and the value the fold starts from.
inline Expr foldInto(ReduceOpKind op, const Expr& acc, const Expr& x) {
  return op == ReduceOpKind::Sum ? acc + x : Binary::make(BinaryOpKind::Max, acc, x);
}
inline double foldIdentity(ReduceOpKind op) {
  return op == ReduceOpKind::Sum ? 0.0 : -std::numeric_limits<double>::infinity();
}

// Whether `var` (a Var node) occurs in `e`.
inline bool mentions(const Expr& e, const ExprNode* var) {
  struct Find : Visitor {
    using Visitor::visit;
    const ExprNode* var;
    bool found = false;
    void visit(const Var* op) override { found = found || op == var; }
  } f;
  f.var = var;
  f.visit(e);
  return f.found;
}

// The loads of `e` (an expression or a statement).
template <typename X>
std::vector<const Load*> loadsOf(const X& e) {
  struct Collect : Visitor {
    using Visitor::visit;
    std::vector<const Load*> loads;
    void visit(const Load* op) override {
      loads.push_back(op);
      Visitor::visit(op);
    }
  } c;
  c.visit(e);
  return c.loads;
}

}  // namespace gj::te::nest
