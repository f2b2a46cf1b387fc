#pragma once
// Checks the graph's invariants: definitions dominate uses, use lists match inputs, arities match
// ops.def, control-flow nodes have well-formed blocks, constants fit their types.
#include "ir/graph.h"

#include <string>
#include <vector>

namespace gj {

struct Diagnostic {
  std::string message;
  std::string where;  ///< file:line:col when known, else a description of the node
};

/// Every problem found; empty when the graph is well formed.
std::vector<Diagnostic> verify(const Graph& g);
/// Throws gj::Error for the first problem; `context` (e.g. a pass name) is added to the message.
void verifyOrThrow(const Graph& g, std::string_view context = {});
/// Throws gj::Error when g holds TorchScript's forms that only the frontend passes may see: a FRONTEND_OP
/// node, a value of a frontend type (tuple, Optional, str, Device, Function, module, float[] or bool[])
/// or a tensor constant. `what` says what was about to run ("the profiling executor", "pass dce").
void requireLowered(const Graph& g, std::string_view what);
/// The first of those forms in g, in order (a graph or block input's form is its block's param node), and
/// in `why` what it is ("%h is of TorchScript's type (Tensor, Tensor)"); nullptr when g holds none.
const Node* firstFrontendForm(const Graph& g, std::string* why);

}  // namespace gj
