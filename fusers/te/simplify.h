#pragma once
// The TE simplifier: constant folding and identities on index arithmetic, and dead loops removed. The
// lowering and every loop transformation call it; LoopNest::simplify() applies it to a whole nest.
#include "fusers/te/ir.h"

namespace gj::te {

/// Constant folding and identities on indices (x*1, x+0, x*0, (x+a)+b), and on floats x*1.0; selects
/// on constant conditions chosen; loops of zero trips removed, nested blocks flattened.
Stmt simplify(const Stmt& s);
Expr simplify(const Expr& e);

}  // namespace gj::te
