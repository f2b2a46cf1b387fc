// Pointwise values and the nests that store them (fusers/te/lowering/nests.h).
#include "fusers/te/lowering/algebra.h"
#include "fusers/te/lowering/nests.h"

#include "fusers/group_rules.h"
#include "support/pointwise.h"

namespace gj::te::lowering {

Expr Values::pointwise(const Value* v, const Indices& idx) {
  const Node* n = v->node();
  auto rule = n->info().pointwiseOp();
  USER_CHECK(rule.has_value(), "TE lowering: {} cannot be lowered", n->info().name);
  // The op's scalar rule (support/pointwise.def) over TE expressions in its compute type (a comparison's
  // result, 1 or 0 there, becomes a bool); operands past its arity are not read.
  // Beside a storage dtype numbers are rounded to it first (roundedNumber), and a storage dtype's result is
  // rounded (a narrow integer's truncated) to it, as the unfused op rounds them.
  const DType out = *v->type().dtype;
  const ScalarKind result = valueKind(out);
  const auto computeIn = fusion::computeDtype(n, fusion::Admit::Integers);
  USER_CHECK(computeIn.has_value(), "TE lowering: {} does not compute in a float or int64 dtype", n->describe());
  const ScalarKind t = scalarKindOf(*computeIn);
  Expr x[3];
  for (size_t i = 0; i < 3 && i < n->inputs().size(); ++i) {
    const auto rounded = fusion::roundedNumber(n, i);
    x[i] = rounded ? TeAlgebra{t}.c(*rounded) : operand(n->input(i), idx, t);
  }
  Expr r = applyPointwise(*rule, TeAlgebra{t}, x[0], x[1], x[2]);
  if (const auto storage = storageOf(out)) r = Call::make(roundingCall(*storage), r);
  return result == t ? r : Cast::make(result, r);
}

std::vector<Stmt> pointwiseNests(Values& values, const std::vector<PointwiseStore>& stores) {
  std::vector<Stmt> nests;
  std::vector<bool> done(stores.size(), false);
  for (size_t a = 0; a < stores.size(); ++a) {
    if (done[a]) continue;
    const auto& shape = stores[a].shape;
    const Indices idx = indices(shape.size());
    std::vector<Stmt> body;
    for (size_t b = a; b < stores.size(); ++b) {
      if (done[b] || stores[b].shape != shape) continue;
      done[b] = true;
      body.push_back(Store::make(stores[b].to.buf, stores[b].to.at(idx), values.compute(stores[b].value, idx)));
    }
    nests.push_back(loops(idx, shape, Block::make(body)));
  }
  return nests;
}

}  // namespace gj::te::lowering
