#pragma once
// What every kind of nest a group lowers to shares (fusers/te/lowering.h): the group's buffers, and the
// value of any of its values at given indices as a TE expression (Values). Each kind of nest is lowered by
// a function of its own (fusers/te/lowering/nests.h) over these.
#include "fusers/te/lowering.h"

#include <fmt/format.h>

#include <map>
#include <unordered_map>

namespace gj::te::lowering {

using Indices = std::vector<Expr>;

/// Where a value is stored: `buf`, or (dim >= 0) the slice of `buf` that starts at `offset` along `dim`.
struct Slice {
  Buf buf;
  int64_t dim = -1;
  int64_t offset = 0;
  Indices at(Indices idx) const {
    if (dim >= 0) idx[dim] = simplify(idx[dim] + imm(offset));
    return idx;
  }
};

/// The group being lowered: its subgraph, the buffers its nests read (its inputs, then its products'
/// results), and names for temporaries and loop variables unique across its nests.
struct Group {
  explicit Group(const Graph& sub);

  /// Group output k's buffer.
  Buf outputBuf(size_t k) const;
  /// `prefix` with a number no other name of the group has.
  std::string fresh(const char* prefix) { return fmt::format("{}{}", prefix, temps_++); }
  /// A one-element temporary with a fresh name.
  Buf temporary(const char* what, ScalarKind t) { return makeBuf(fresh(what), {1}, t); }
  /// A loop variable with a fresh name.
  Expr freshVar(const char* prefix) { return Var::make(fresh(prefix)); }

  const Graph& sub;
  std::vector<Buf> inputs;
  std::unordered_map<const Value*, Buf> bufOf;

 private:
  int temps_ = 0;
};

/// A storage dtype's buffer stores it and holds the values of its compute dtype in the nest: float16 and
/// bfloat16 Float32 values, uint8 to int32 Int (int64) values.
std::optional<DType> storageOf(DType t);
ScalarKind valueKind(DType t);

/// The values of a row group's row ops at the current row (fusers/te/lowering/rows.cpp).
class RowOps {
 public:
  virtual ~RowOps() = default;
  /// Row op output v at idx (in v's own shape).
  virtual Expr value(const Value* v, const Indices& idx) = 0;
};

/// The group's values as TE expressions at given indices, memoized so that a subexpression used twice is one
/// node. `rows` gives row ops their values: only a row group's row loop has them; elsewhere reading one is
/// an error.
class Values {
 public:
  explicit Values(Group& group, RowOps* rows = nullptr) : group_(group), rows_(rows) {}

  /// The value of v at idx (in v's own shape).
  Expr compute(const Value* v, const Indices& idx);
  /// Operand v of a node computing at idx in type t: v broadcast to that shape, a tensor of another dtype
  /// converted (type promotion when t is the node's result type), a scalar its constant.
  Expr operand(const Value* v, const Indices& idx, ScalarKind t);
  /// Constant scalar v in type t.
  Expr scalar(const Value* v, ScalarKind t) const;
  Group& group() { return group_; }

 private:
  Expr computeUncached(const Value* v, const Indices& idx);
  /// A chunk's piece: its input read at the piece's offset.
  Expr chunkPiece(const Value* v, const Indices& idx);
  /// A pointwise op's scalar rule over its operands (pointwise.cpp).
  Expr pointwise(const Value* v, const Indices& idx);
  /// prim::philox_dropout (dropout.cpp).
  Expr dropout(const Value* v, const Indices& idx);

  struct Key {
    const Value* value;
    std::vector<const ExprNode*> indices;
    bool operator<(const Key& o) const { return std::tie(value, indices) < std::tie(o.value, o.indices); }
  };
  Group& group_;
  RowOps* rows_;
  std::map<Key, Expr> memo_;
};

/// Reads buffer b at idx, which is in the consumer's shape (b broadcasts from the right: size-1 dims read
/// index 0), along dim chunkDim shifted by chunkOffset.
Expr load(const Buf& b, const Indices& idx, int64_t chunkDim = -1, int64_t chunkOffset = 0);
/// Loops over `shape` around `body`; a 0-dim shape gets one loop of one trip, so that every nest is a loop
/// the schedules can bind and split.
Stmt loops(const Indices& idx, const std::vector<int64_t>& shape, Stmt body);
/// Fresh indices i0, i1, ... for `rank` dims.
Indices indices(size_t rank, const char* prefix = "i");
Expr exp(const Expr& e);

}  // namespace gj::te::lowering
