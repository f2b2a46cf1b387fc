#pragma once
// The TE fuser's graph pass: prim::TensorExprGroup around pointwise regions and the reductions of their
// values (the gradient-of-broadcast sums), so a backward's bias gradients stay inside the group.
#include "ir/graph.h"

#include <string>

namespace gj::te {

/// Groups, in every block, pointwise ops over one static shape (inputs broadcasting, chunks of outside
/// tensors read as partitions) with sum_to_size / sum reductions of their values at the group's edge.
/// Pre: complete types. Returns the number of groups.
int64_t fuseTensorExprGroups(Graph& g);

}  // namespace gj::te
