#pragma once
#include "ir/graph.h"

#include <span>
#include <vector>

namespace gj {

/// Computes the types of every value from the graph inputs' types: dtype, sizes (per dimension where
/// known) and device, through each op's shape rule; loop-carried values are merged to a fixed point,
/// if-outputs over both branches. requires_grad is left as it is. Returns true if any type changed.
///
/// Given:  %x : Float(3, 4), %w : Float(4, 5) ; %y : Tensor = aten::mm(%x, %w)
/// Result: %y : Float(3, 5) = aten::mm(%x, %w)
bool propagateShapes(Graph& g);
/// The same over the nodes from `first` to `last` of one block, in order, reading the types around them as
/// they are: for a pass that made those nodes and needs their types before the next whole propagation.
bool propagateShapes(Node* first, Node* last);

/// The dtype a pointwise node's operands promote to: resultType (support/dtype.h) over the operands that
/// promotesType names, numbers included (int64 [2] < 1.5 compares in float32; a condition operand, add's
/// alpha and the like take no part; float32 for where of two numbers). Its result's dtype, but for a
/// comparison's, which is bool. nullopt when a dtype or rank it depends on is unknown.
std::optional<DType> pointwiseOperandDtype(const Node* n);

/// The types node n's results take when its operands have `operandTypes`, by the same rules: for the
/// interpreter, which meets storage dtypes (support/dtype.h) in a graph whose types a run only now
/// decides. Operands made by constants are read from n's graph; a tensor list operand's elements have
/// listElementTypes[i] (empty for any other operand). For a pointwise op, *promoted (when given) is the
/// dtype its operands meet in (pointwiseOperandDtype).
std::vector<Type> outputTypesFor(const Node* n, std::span<const Type> operandTypes,
                                 std::span<const std::vector<Type>> listElementTypes,
                                 std::optional<DType>* promoted = nullptr);

/// The types a user wrote, checked by propagating them (on a copy; g is unchanged): a gj::Error at the
/// first node, with its file:line:col, whose operands' known sizes its op cannot take (a GEMM's rank or
/// inner sizes, linear's features or bias, a broadcast) or whose declared output type contradicts what
/// the op makes (another kind, dtype, rank or known size). Unknown sizes (`*`, `Tensor`) agree with any.
///
/// Rejects:  %x : Float(4, 8), %w : Float(5, 16) ; %y = aten::linear(%x, %w, %b)   (8 features, weight takes 16)
///           %a : int = aten::relu(%h)                                              (relu makes a tensor)
void checkShapes(const Graph& g);

}  // namespace gj
