// The nests of a group's products (fusers/te/lowering/nests.h): aten::mm of two group inputs
// (te_fuser.cpp's fusibleProduct).
//   for i, j: acc = sum over r of a[i, r] * b[r, j]; out[i, j] = acc
// The CPU schedule turns it around (LoopNest::interchangeStridedReductions): for each r, a row of b times
// a[i, r] added to out[i, :], a contiguous loop that vectorizes.
#include "fusers/te/lowering/nests.h"

#include "passes/util.h"

namespace gj::te::lowering {

std::vector<Stmt> productNests(Values& values, std::vector<Buf>& outputs) {
  Group& group = values.group();
  std::vector<Stmt> nests;
  for (const Node* n : *group.sub.block()) {
    if (n->kind() != OpKind::Mm) continue;
    const Value* out = n->output();
    auto os = staticSizes(out);
    auto as = staticSizes(n->input(0));
    USER_CHECK(os && as && os->size() == 2 && as->size() == 2 && group.bufOf.count(n->input(0)) &&
                   group.bufOf.count(n->input(1)),
               "TE lowering: aten::mm needs two static 2-d group inputs");
    Buf to;
    for (size_t k = 0; k < group.sub.outputs().size(); ++k)
      if (group.sub.outputs()[k] == out) to = outputs[k];
    if (!to) {
      to = makeBuf(group.fresh("product"), *os, scalarKindOf(*out->type().dtype));
      outputs.push_back(to);
    }
    const ScalarKind t = to->type;
    Indices idx = {group.freshVar("i"), group.freshVar("j")};
    Expr r = group.freshVar("r");
    Expr summand = values.operand(n->input(0), {idx[0], r}, t) * values.operand(n->input(1), {r, idx[1]}, t);
    Buf acc = group.temporary("acc", t);
    Stmt body = Block::make({Allocate::make(acc),
                             Store::make(acc, {imm(0)}, Reduce::make(ReduceOpKind::Sum, summand, {r}, {(*as)[1]})),
                             Store::make(to, idx, Load::make(acc, {imm(0)})), Free::make(acc)});
    nests.push_back(loops(idx, *os, body));
    group.bufOf[out] = to;
  }
  return nests;
}

}  // namespace gj::te::lowering
