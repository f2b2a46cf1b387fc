#pragma once
// The kinds of nest a group lowers to (fusers/te/lowering.h), each lowered by a function of its own over
// the shared helpers of fusers/te/lowering/values.h; lowerGroup (lowering.cpp) picks and orders them.
#include "fusers/te/lowering/values.h"

namespace gj::te::lowering {

/// A pointwise value stored over `shape` into `to`.
struct PointwiseStore {
  std::vector<int64_t> shape;
  Slice to;
  const Value* value;
};

/// products.cpp: the nests of the group's products (aten::mm of two group inputs), ahead of every other;
/// each stores into its output's buffer when the group hands it out, else into a scratch buffer appended
/// to `outputs`, and becomes a buffer the nests after it read (group.bufOf).
std::vector<Stmt> productNests(Values& values, std::vector<Buf>& outputs);

/// pointwise.cpp: one nest per shape of `stores`, in the order the shapes first appear, each storing every
/// value of that shape.
std::vector<Stmt> pointwiseNests(Values& values, const std::vector<PointwiseStore>& stores);

/// cat.cpp: each part of aten::cat `cat` with the slice of `out` it is stored into.
std::vector<std::pair<const Value*, Slice>> catParts(const Node* cat, const Buf& out);

/// reductions.cpp: whether n is a reduction a group ends in (sum_to_size, sum, mean).
bool isTerminalReduction(const Node* n);
/// reductions.cpp: the nest of reduction `out` into `to`. A value in `storedAt` (a pointwise output the
/// nests ahead have written) is read back from there instead of computed again.
Stmt reductionNest(Values& values, const Value* out, const Slice& to,
                   const std::unordered_map<const Value*, Slice>& storedAt);
/// reductions.cpp: the nest of softmax or log_softmax `out` into `buf`.
Stmt softmaxNest(Values& values, const Value* out, const Buf& buf);

/// rows.cpp: a group with row ops, lowered as one loop over the rows (see RowOp in lowering.h).
LoopNest rowGroup(Group& group, const RowOp& first);

}  // namespace gj::te::lowering
