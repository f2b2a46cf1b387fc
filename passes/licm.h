#pragma once
#include "ir/graph.h"

namespace gj {

/// Moves nodes out of loop bodies when none of their inputs is defined in the body (loop-invariant
/// code motion), innermost loops first. Returns true if g changed.
bool hoistLoopInvariants(Graph& g);

}  // namespace gj
