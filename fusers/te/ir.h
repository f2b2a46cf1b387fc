#pragma once
// Tensor expressions (TE IR): immutable, value-typed expression and statement nodes behind small
// handles (STYLE.md, rule 3). A node is never changed after it is made; transforms build new nodes and
// share the unchanged ones, so `same()` is a cheap "did anything change" test.
//
//   for (int i = 0; i < 64; i++) {
//     for (int j = 0; j < 512; j++) {
//       out0[i, j] = sigmoid(in0[i, j] + in1[j]);
//     }
//   }
#include "support/dtype.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gj::te {

enum class NodeKind : uint8_t {
#define TE_EXPR(K) K,
#define TE_STMT(K) K,
#include "fusers/te/nodes.def"
#undef TE_EXPR
#undef TE_STMT
};

/// Element types of TE values. Index arithmetic is Int (int64).
enum class ScalarKind : uint8_t { Int, Float32, Float64, Bool };
ScalarKind scalarKindOf(DType t);
/// The tensor dtype of a buffer of this kind (Int is int64).
DType dtypeOf(ScalarKind k);
const char* scalarKindName(ScalarKind k);

struct NodeBase {
  explicit NodeBase(NodeKind k) : kind(k) {}
  virtual ~NodeBase();
  const NodeKind kind;
};

struct ExprNode : NodeBase {
  ExprNode(NodeKind k, ScalarKind t) : NodeBase(k), type(t) {}
  const ScalarKind type;
};
struct StmtNode : NodeBase {
  using NodeBase::NodeBase;
};

/// A handle to an immutable node. Typed access through as<T>() (a kind test, no RTTI).
template <typename N>
class Handle {
 public:
  Handle() = default;
  Handle(std::shared_ptr<const N> p) : p_(std::move(p)) {}
  template <typename T, typename = std::enable_if_t<std::is_base_of_v<N, T>>>
  Handle(std::shared_ptr<const T> p) : p_(std::move(p)) {}
  const N* get() const { return p_.get(); }
  const N* operator->() const { return p_.get(); }
  explicit operator bool() const { return p_ != nullptr; }
  bool same(const Handle& o) const { return p_ == o.p_; }
  NodeKind kind() const { return p_->kind; }
  template <typename T>
  const T* as() const {
    return p_ && p_->kind == T::kKind ? static_cast<const T*>(p_.get()) : nullptr;
  }
  const std::shared_ptr<const N>& ptr() const { return p_; }

 private:
  std::shared_ptr<const N> p_;
};

using Expr = Handle<ExprNode>;
using Stmt = Handle<StmtNode>;

/// A buffer: a named, typed, row-major array. Buffers are compared by identity. A float16 or bfloat16 group
/// input or output has `storage` set and type Float32: its loads widen the 16 bits to a float and its stores
/// round the float to them, as the unfused ops do. A uint8, int8, int16 or int32 one has type Int: its loads
/// extend to int64 and its stores truncate.
struct BufNode {
  std::string name;
  std::vector<int64_t> dims;
  ScalarKind type;
  std::optional<DType> storage;
};
using Buf = std::shared_ptr<const BufNode>;
Buf makeBuf(std::string name, std::vector<int64_t> dims, ScalarKind type, std::optional<DType> storage = std::nullopt);
/// The dtype of the tensor a buffer holds: its storage dtype, else its type's.
DType bufDType(const BufNode& b);

// ---- expressions ----

struct IntImm : ExprNode {
  static constexpr NodeKind kKind = NodeKind::IntImm;
  explicit IntImm(int64_t v) : ExprNode(kKind, ScalarKind::Int), value(v) {}
  const int64_t value;
  static Expr make(int64_t v);
};

struct FloatImm : ExprNode {
  static constexpr NodeKind kKind = NodeKind::FloatImm;
  FloatImm(double v, ScalarKind t) : ExprNode(kKind, t), value(v) {}
  const double value;
  static Expr make(double v, ScalarKind t);
};

/// A loop or reduction variable (Int). Identity is the node: two Vars with one name are different.
struct Var : ExprNode {
  static constexpr NodeKind kKind = NodeKind::Var;
  explicit Var(std::string n) : ExprNode(kKind, ScalarKind::Int), name(std::move(n)) {}
  const std::string name;
  static Expr make(std::string name);
};

enum class BinaryOpKind : uint8_t { Add, Sub, Mul, Div, Mod, Min, Max, Pow, Atan2, Fmod };
/// Pow, Atan2 and Fmod: floats only, C's math functions of the operands' type (powf, pow, ...).
inline bool isFloatFunction(BinaryOpKind op) {
  return op == BinaryOpKind::Pow || op == BinaryOpKind::Atan2 || op == BinaryOpKind::Fmod;
}
struct Binary : ExprNode {
  static constexpr NodeKind kKind = NodeKind::Binary;
  Binary(BinaryOpKind o, Expr x, Expr y) : ExprNode(kKind, x->type), op(o), a(std::move(x)), b(std::move(y)) {}
  const BinaryOpKind op;
  const Expr a, b;
  static Expr make(BinaryOpKind op, Expr a, Expr b);
};

enum class CompareOpKind : uint8_t { LT, LE, GT, GE, EQ, NE };
struct Compare : ExprNode {
  static constexpr NodeKind kKind = NodeKind::Compare;
  Compare(CompareOpKind o, Expr x, Expr y) : ExprNode(kKind, ScalarKind::Bool), op(o), a(std::move(x)), b(std::move(y)) {}
  const CompareOpKind op;
  const Expr a, b;
  static Expr make(CompareOpKind op, Expr a, Expr b);
};

struct Select : ExprNode {
  static constexpr NodeKind kKind = NodeKind::Select;
  Select(Expr c, Expr t, Expr f) : ExprNode(kKind, t->type), cond(std::move(c)), t(std::move(t)), f(std::move(f)) {}
  const Expr cond, t, f;
  static Expr make(Expr cond, Expr t, Expr f);
};

/// Math intrinsics on floats (Neg on Int too: wrapping), and the roundings to a storage dtype.
enum class CallKind : uint8_t {
  Exp, Log, Tanh, Sigmoid, Sqrt, Neg, Erf, Sin, Cos, Floor, Ceil, Trunc, Round,
  Expm1, Log1p, Atan, Asin, Acos, Sinh, Cosh, Erfc, Lgamma,
  RoundHalf, RoundBFloat16,  ///< a float rounded to float16 / bfloat16 and back (a storage dtype's op result)
  WrapUInt8, WrapInt8, WrapInt16, WrapInt32,  ///< an Int truncated to the narrower integer and extended back
};
/// The call that rounds a value to storage dtype t and back: RoundHalf, RoundBFloat16 or a Wrap.
CallKind roundingCall(DType t);
/// The storage dtype a rounding call rounds to; nullopt for the other calls.
std::optional<DType> roundedDtype(CallKind k);
struct Call : ExprNode {
  static constexpr NodeKind kKind = NodeKind::Call;
  Call(CallKind f, Expr x) : ExprNode(kKind, x->type), fn(f), arg(std::move(x)) {}
  const CallKind fn;
  const Expr arg;
  static Expr make(CallKind fn, Expr arg);
};

/// A value converted to another element type (type promotion: float32 <-> float64, or Int to a float).
struct Cast : ExprNode {
  static constexpr NodeKind kKind = NodeKind::Cast;
  Cast(ScalarKind t, Expr x) : ExprNode(kKind, t), arg(std::move(x)) {}
  const Expr arg;
  static Expr make(ScalarKind t, Expr arg);
};

struct Load : ExprNode {
  static constexpr NodeKind kKind = NodeKind::Load;
  Load(Buf b, std::vector<Expr> idx) : ExprNode(kKind, b->type), buf(std::move(b)), indices(std::move(idx)) {}
  const Buf buf;
  const std::vector<Expr> indices;
  static Expr make(Buf buf, std::vector<Expr> indices);
};

/// Dropout's uniform number in [0, 1) for element `index` (Int) of the Philox stream of `seed`, `offset` (Int)
/// and `stream` (support/philox.h), in type t (float32 or float64; exact in both).
struct Philox : ExprNode {
  static constexpr NodeKind kKind = NodeKind::Philox;
  Philox(Expr s, Expr o, int64_t st, Expr i, ScalarKind t)
      : ExprNode(kKind, t), seed(std::move(s)), offset(std::move(o)), stream(st), index(std::move(i)) {}
  const Expr seed, offset;
  const int64_t stream;
  const Expr index;
  static Expr make(Expr seed, Expr offset, int64_t stream, Expr index, ScalarKind t);
};

/// body reduced over vars[k] in [0, extents[k]), starting from the op's identity (0 for Sum, -inf for Max).
/// Only as the value of a Store; LoopNest::lowerReductions turns it into loops.
enum class ReduceOpKind : uint8_t { Sum, Max };
struct Reduce : ExprNode {
  static constexpr NodeKind kKind = NodeKind::Reduce;
  Reduce(ReduceOpKind o, Expr b, std::vector<Expr> v, std::vector<int64_t> e)
      : ExprNode(kKind, b->type), op(o), body(std::move(b)), vars(std::move(v)), extents(std::move(e)) {}
  const ReduceOpKind op;
  const Expr body;
  const std::vector<Expr> vars;  // Var nodes
  const std::vector<int64_t> extents;
  static Expr make(ReduceOpKind op, Expr body, std::vector<Expr> vars, std::vector<int64_t> extents);
};

/// Which threads a ThreadReduce combines: the block's (a warp's butterfly of shuffles, then the warps'
/// results through shared memory), a warp's (the butterfly alone), or one lane's threads across the
/// block's warps (threadIdx.x % 32 alike, through shared memory: one result per lane).
enum class ThreadScope : uint8_t { Block, Warp, Columns };
/// GPU only: `value` combined by `op` over the threads of `scope`, every one of them getting the result.
/// Every thread of the block (of the warp, for Warp) must reach it (LoopNest::scheduleGpu puts it where all
/// do).
struct ThreadReduce : ExprNode {
  static constexpr NodeKind kKind = NodeKind::ThreadReduce;
  ThreadReduce(ReduceOpKind o, Expr v, ThreadScope s) : ExprNode(kKind, v->type), op(o), value(std::move(v)), scope(s) {}
  const ReduceOpKind op;
  const Expr value;
  const ThreadScope scope;
  static Expr make(ReduceOpKind op, Expr value, ThreadScope scope = ThreadScope::Block);
};

// ---- statements ----

struct Block : StmtNode {
  static constexpr NodeKind kKind = NodeKind::Block;
  explicit Block(std::vector<Stmt> s) : StmtNode(kKind), stmts(std::move(s)) {}
  const std::vector<Stmt> stmts;
  static Stmt make(std::vector<Stmt> stmts);
};

/// How a loop runs: a schedule's marks, honoured by the backends.
struct LoopOptions {
  bool vectorize = false;  ///< CPU: ask LLVM to vectorize (the inner loop)
  bool parallel = false;   ///< CPU: split the iterations over the runtime's threads
  int gpuBlock = -1;       ///< CUDA: bound to blockIdx.{x,y,z} (0..2), or -1
  int gpuThread = -1;      ///< CUDA: bound to threadIdx.{x,y,z} (0..2), or -1
  bool operator==(const LoopOptions&) const = default;
};

struct For : StmtNode {
  static constexpr NodeKind kKind = NodeKind::For;
  For(Expr v, Expr s, Expr e, Stmt b, LoopOptions o)
      : StmtNode(kKind), var(std::move(v)), start(std::move(s)), stop(std::move(e)), body(std::move(b)), options(o) {}
  const Expr var, start, stop;  // for (var = start; var < stop; ++var)
  const Stmt body;
  const LoopOptions options;
  static Stmt make(Expr var, Expr start, Expr stop, Stmt body, LoopOptions options = {});
};

struct Store : StmtNode {
  static constexpr NodeKind kKind = NodeKind::Store;
  Store(Buf b, std::vector<Expr> idx, Expr v) : StmtNode(kKind), buf(std::move(b)), indices(std::move(idx)), value(std::move(v)) {}
  const Buf buf;
  const std::vector<Expr> indices;
  const Expr value;
  static Stmt make(Buf buf, std::vector<Expr> indices, Expr value);
};

struct Allocate : StmtNode {
  static constexpr NodeKind kKind = NodeKind::Allocate;
  explicit Allocate(Buf b) : StmtNode(kKind), buf(std::move(b)) {}
  const Buf buf;
  static Stmt make(Buf buf);
};

struct Free : StmtNode {
  static constexpr NodeKind kKind = NodeKind::Free;
  explicit Free(Buf b) : StmtNode(kKind), buf(std::move(b)) {}
  const Buf buf;
  static Stmt make(Buf buf);
};

/// GPU only: every thread of the grid waits here until all have arrived (a cooperative launch's
/// this_grid().sync()); what any thread wrote before it, every thread reads after it. Every thread of the
/// grid must reach it: LoopNest::scheduleGpu puts it where all do, and gpuLaunch() marks the launch
/// cooperative.
struct GridSync : StmtNode {
  static constexpr NodeKind kKind = NodeKind::GridSync;
  GridSync() : StmtNode(kKind) {}
  static Stmt make();
};

struct Cond : StmtNode {
  static constexpr NodeKind kKind = NodeKind::Cond;
  Cond(Expr c, Stmt t, Stmt e) : StmtNode(kKind), cond(std::move(c)), thenStmt(std::move(t)), elseStmt(std::move(e)) {}
  const Expr cond;
  const Stmt thenStmt, elseStmt;  // elseStmt may be empty
  static Stmt make(Expr cond, Stmt thenStmt, Stmt elseStmt = {});
};

// Arithmetic helpers for building expressions.
/// The value of an IntImm; nullopt for any other expression.
std::optional<int64_t> intValue(const Expr& e);

/// Whether a and b compute the same thing by their structure: the same kinds, operators, constants and
/// types all the way down, one Var node for each Var and one buffer for each load (identity, never names:
/// two Vars with one name are different).
bool equal(const Expr& a, const Expr& b);

Expr operator+(const Expr& a, const Expr& b);
Expr operator-(const Expr& a, const Expr& b);
Expr operator*(const Expr& a, const Expr& b);
Expr operator/(const Expr& a, const Expr& b);
Expr operator%(const Expr& a, const Expr& b);
Expr imm(int64_t v);

}  // namespace gj::te
