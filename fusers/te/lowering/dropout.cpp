// prim::philox_dropout's values (fusers/te/lowering/values.h).
#include "fusers/te/lowering/algebra.h"
#include "fusers/te/lowering/values.h"

#include "passes/util.h"
#include "support/philox.h"

namespace gj::te::lowering {

// support/philox.h's rule with the number of the element's row-major index, from the seed and offset in
// the group's rng input.
Expr Values::dropout(const Value* v, const Indices& idx) {
  const Node* n = v->node();
  const ScalarKind t = scalarKindOf(*v->type().dtype);
  auto train = constantBool(n->input(2));
  auto stream = constantInt(n->input(4));
  auto rng = group_.bufOf.find(n->input(3));
  USER_CHECK(train && stream && rng != group_.bufOf.end(),
             "TE lowering: prim::philox_dropout needs constant train and stream, and its rng as a group input");
  Expr x = operand(n->input(0), idx, t);
  if (!*train) return x;
  const auto sizes = *staticSizes(v);
  Expr linear = imm(0);
  for (size_t d = 0; d < sizes.size(); ++d) linear = simplify(linear * imm(sizes[d]) + idx[d]);
  Expr u = Philox::make(Load::make(rng->second, {imm(0)}), Load::make(rng->second, {imm(1)}), *stream, linear, t);
  return gjDropout(TeAlgebra{t}, x, u, scalar(n->input(1), t));
}

}  // namespace gj::te::lowering
