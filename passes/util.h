#pragma once
// Small queries shared by the passes.
#include "ir/graph.h"

#include <functional>
#include <optional>
#include <unordered_set>
#include <vector>

namespace gj {

/// The value of a prim::Constant output, or nullopt for anything else.
std::optional<int64_t> constantInt(const Value* v);
std::optional<double> constantDouble(const Value* v);  ///< int constants convert
std::optional<bool> constantBool(const Value* v);
std::optional<std::vector<int64_t>> constantInts(const Value* v);
/// A str constant's text (TorchScript's messages; a Function constant's name).
std::optional<std::string> constantString(const Value* v);
bool isConstant(const Value* v);
/// True for a prim::Constant that equals `x` (int, float or bool).
bool isConstantEqual(const Value* v, double x);

/// Calls f on every node of `b` and of the blocks nested in it (pre-order). Not into subgraphs.
void forEachNode(const Block* b, const std::function<void(Node*)>& f);
/// Values used inside n's blocks but defined outside n.
std::vector<Value*> freeVariables(const Node* n);
/// n's inputs and its free variables.
std::vector<Value*> allUses(const Node* n);
/// The ancestor of `n` (n itself or an enclosing node) whose owning block is `b`; nullptr if none.
Node* ancestorIn(Node* n, const Block* b);
/// True when `n` sits in the body of a loop nested in `home`: it runs once per iteration.
bool inLoopBelow(const Node* n, const Block* home);

/// A `kind` node on `inputs`, inserted before `at`; returns its one output, of type `out`.
Value* emitBefore(Node* at, OpKind kind, const std::vector<Value*>& inputs, Type out = Type::tensor());
/// A prim::Constant inserted before `at`.
Value* constantBefore(Node* at, ConstantValue v);
/// A `kind` node on `inputs` with `numOutputs` outputs, inserted before `n` at n's positions (text and Python
/// source), its first outputs taking the place of n's (their types, names and uses), as many as both have.
/// n stays, for the caller to erase once its other outputs are unused.
Node* emitReplacement(Node* n, OpKind kind, const std::vector<Value*>& inputs, size_t numOutputs);

/// Static sizes of a tensor value when every dimension is known.
std::optional<std::vector<int64_t>> staticSizes(const Value* v);

/// True for subgraph nodes whose bodies the optimizing passes also optimize: prim::DifferentiableGraph.
/// A prim::FallbackGraph keeps the unoptimized graph on purpose.
inline bool optimizesInto(const Node* n) { return n->kind() == OpKind::DifferentiableGraph; }

/// Ops that only move values around without computing on tensors: list construction and access,
/// control flow, subgraph calls, constants, size queries.
bool isPlumbing(OpKind k);
/// a == b, a != b, ... for the scalar comparisons (aten::eq ... aten::ge of ints, floats or bools: two ints
/// as int64, else as double); nullopt for another op. The interpreter and constant propagation both compute
/// them here.
template <typename T>
std::optional<bool> compareScalars(OpKind k, T a, T b) {
  if (k == OpKind::IntEq) return a == b;
  if (k == OpKind::IntNe) return a != b;
  if (k == OpKind::IntLt) return a < b;
  if (k == OpKind::IntLe) return a <= b;
  if (k == OpKind::IntGt) return a > b;
  if (k == OpKind::IntGe) return a >= b;
  return std::nullopt;
}
/// A node without outputs (prim::RaiseIf; TorchScript's raise and warn) is there for its effect, as is a
/// node whose blocks hold one: dead-code elimination keeps it and no pass moves it across a loop.
bool hasEffects(const Node* n);
/// ops.def's Meta flag: the result is made from the tensor operands' sizes, dtype and device alone.
bool readsOnlyMetadata(OpKind k);
/// An op whose result takes no gradient whatever its operands: a metadata read, a comparison (its result
/// is bool), aten::detach.
bool resultTakesNoGradient(OpKind k);
/// An op that no gradient passes through, so it may read a value requiring grad outside a
/// prim::DifferentiableGraph: plumbing, or one whose result takes none.
bool passesNoGradient(OpKind k);

}  // namespace gj
