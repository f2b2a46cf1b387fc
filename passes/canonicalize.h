#pragma once
#include "ir/graph.h"

namespace gj {

/// Puts equal graphs into equal text: every constant moves to the top of the graph, deduplicated and
/// sorted by type and value; values other than graph inputs and outputs lose their names, so the
/// printer numbers them in order. Returns true if g changed.
bool canonicalize(Graph& g);

}  // namespace gj
