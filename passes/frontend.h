#pragma once
// The frontend passes: TorchScript's forms (ops.def's FRONTEND_OP rows, tuple / Optional / module / str
// types, tensor constants) lowered to graphjit's own, so that every pass, executor and fuser after them
// applies unchanged. One file each under passes/frontend/; lowerTorchScript runs them in order. They are
// the only passes that take a graph requireLowered refuses (passes.def: FRONTEND_PASS). docs/torchscript.md
// says what each accepts.
#include "ir/graph.h"

#include <string>

namespace gj {

/// check-calls: a prim::CallFunction or prim::CallMethod is an error naming the callee (its body is not in
/// the text: print `.inlined_graph`); aten::warn is dropped (graphjit prints no Python warnings).
bool checkCalls(Graph& g);

/// lower-module-attributes: a module's `self` (the first input, of a class type) and its prim::GetAttr chains
/// become graph inputs named
/// by the attribute's state_dict key, appended after the other inputs in order of first use.
///
/// Given:  graph(%self : __torch__.M, %x : Tensor):
///           %fc1 : __torch__.Linear = prim::GetAttr[name="fc1"](%self)
///           %w : Tensor = prim::GetAttr[name="weight"](%fc1)
/// Result: graph(%x : Tensor, %fc1.weight : Tensor):   (%w's uses read %fc1.weight)
bool lowerModuleAttributes(Graph& g);

/// lower-tuples: tuple inputs, returns, loop-carried values and if results become one value per element
/// (nested tuples depth-first; an input %hidden.1 : (Tensor, Tensor) becomes %hidden_0 and %hidden_1), and
/// prim::TupleUnpack / prim::TupleIndex of a prim::TupleConstruct read its operands.
bool lowerTuples(Graph& g);

/// functionalize-lists: TorchScript's in-place list mutation (aten::append, the aten::add_ that `xs += [y]`
/// prints) becomes graphjit's functional prim::ListAppend / aten::add, each read of the list taking the
/// version current at that point; a list mutated inside a loop or an if becomes carried by it. An aten::list
/// copy is a list of its own until then, and the version it copied afterwards.
bool functionalizeLists(Graph& g);

/// fold-shape-checks: `if cond: raise` becomes prim::RaiseIf (folded away where the types decide cond),
/// Optional inputs are taken as given (aten::__is__ / __isnot__ against None and prim::unchecked_cast fold),
/// aten::dim becomes the rank (or aten::len of aten::size), and a trace's prim::NumToTensor / {2} tensor
/// constants used as a pointwise op's scalar operand become that scalar. A check the types prove always
/// fails is an error naming it.
bool foldShapeChecks(Graph& g);

/// lower-overloads: the overloads PyTorch prints with a trailing `dtype` (aten::sum, mean, softmax,
/// log_softmax) become graphjit's rows, the operand cast by aten::to first when the dtype is not None; so do
/// the factories with options (zeros_like, ones_like, full_like, new_zeros) and aten::to(self, dtype,
/// non_blocking, copy, memory_format). The rows whose trailing arguments graphjit takes at their defaults
/// only (embedding, nll_loss, cross_entropy_loss, contiguous, expand: passes/frontend/overloads.h) drop
/// them, or a gj::Error names the argument. aten::clone is its operand; aten::native_batch_norm, which
/// updates its running statistics in place, becomes the functional row, later reads of the statistics
/// reading its updated ones. aten::dropout is its input when `train` is the constant false, else
/// prim::philox_dropout on the graph's input %rng (int64 [2], Philox's seed and offset; added when the graph
/// has none), each dropout a stream of its own.
bool lowerOverloads(Graph& g);

/// lower-torchscript: the passes above in order, then dead-code elimination. Tensor types lose the
/// requires_grad and device a trace's example inputs gave them (the run decides both). Afterwards g holds only graphjit's
/// forms, or a gj::Error names the first form left and its position (text and Python source).
bool lowerTorchScript(Graph& g);

/// export-torchscript: the inverse direction, for a graph as written or built (before the executors' passes):
/// graphjit's forms become PyTorch's, so that the printed text is read by torch._C.parse_ir and run by
/// torch._C._create_function_from_graph. prim::ListAppend becomes aten::append (on an aten::list copy
/// where the old list is read again), prim::RaiseIf an if that raises, the rows PyTorch's schemas give
/// more arguments (aten::sum's dtype, aten::embedding's padding_idx, ...) get them at their defaults,
/// aten::to a ScalarType code, the functional batch norm aten::native_batch_norm on aten::clone'd running
/// statistics, prim::philox_dropout aten::dropout (PyTorch draws its own mask). lowerTorchScript reads
/// the result back. A gj::Error names an op PyTorch has no form of (fusion groups, gradient ops).
void exportTorchScript(Graph& g);

/// PyTorch's debugNameBase: a value name without its ".N" suffix ("input.1" -> "input", "x" -> "x").
std::string baseName(const std::string& name);

/// True when g holds any of TorchScript's forms (so lowerTorchScript has work to do).
bool hasTorchScriptForms(const Graph& g);

}  // namespace gj
