#pragma once
// Lowering a prim::TensorExprGroup's subgraph to a LoopNest: one loop nest storing every pointwise output
// (they share the group's shape, and their common subexpressions are one node), one nest per reduction.
#include "fusers/fuser.h"
#include "fusers/te/loopnest.h"
#include "ir/graph.h"

namespace gj::te {

struct LoweringOptions {
  /// A reduction of a value the group also stores reads it back from that output instead of computing
  /// it again (the LSTM backward sums the gate gradients it outputs). Only where the nests of a kernel
  /// run one after another (the CPU); a GPU kernel's threads run its nests side by side.
  bool readBackOutputs = false;
};

/// A row op: a node computed row by row over the trailing `dims` dims of `input`: layer norm (both forms) and
/// its backward, var, std and var's backward, and sums and means over trailing dims kept as 1. A group with
/// row ops is lowered as one loop over the rows, which computes each row's statistics (Reduces into
/// one-element temporaries) ahead of the row's elements; so, unlike a terminal reduction, a row op's result
/// is read by the group's other ops. The backward's weight and bias gradients, sums over the rows, are
/// nests of their own.
struct RowOp {
  const Value* input;
  int64_t dims;
};
std::optional<RowOp> rowOp(const Node* n);
/// Whether output `v` of a row op has the row op's input shape (else it is a statistic, or a column sum of
/// native_layer_norm_backward).
bool rowOpKeepsShape(const Value* v);

/// Pre: the subgraph holds pointwise ops, chunks of its inputs, row ops and, at its outputs, sum_to_size / sum
/// reductions of its values, all over static float types. Throws gj::Error for anything else.
LoopNest lowerGroup(const Graph& sub, LoweringOptions options = {});

/// A group's loop nest as the CPU runs it: lowered reading outputs back, strided sums interchanged,
/// reductions lowered, scheduled (vectorized; parallel above `parallelGrain` statements).
LoopNest cpuLoopNest(const Graph& sub, int64_t parallelGrain = 1 << 15);

/// nest.scheduleGpu with fastrnns' knobs as the fusers take them (FuserOptions::cudaLaunch): a knob that
/// is not given (0) takes scheduleGpu's default.
/// `splitBlocks`: the blocks a split reduction may spread over (the device's, at compile time).
void scheduleGpu(LoopNest& nest, const CudaLaunchOptions& launch, int64_t splitBlocks = LoopNest::kGpuSplitBlocks);

/// A group's loop nest as a GPU runs it: lowered, reductions lowered, scheduled with `launch`'s knobs.
LoopNest gpuLoopNest(const Graph& sub, const CudaLaunchOptions& launch = {},
                     int64_t splitBlocks = LoopNest::kGpuSplitBlocks);

}  // namespace gj::te
