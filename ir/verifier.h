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

}  // namespace gj
