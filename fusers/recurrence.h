#pragma once
// Persistent recurrences (docs/fusers.md): the steps of an unrolled recurrence run on a CUDA device as one
// cooperative kernel for the whole sequence instead of a product and a fused cell kernel per step.
//
// A recurrence, as the pipeline leaves an LSTM's or a GRU's unrolled loop once fused:
//   %g.0 = aten::mm(%h0, %W)                      %W: [K, G], the same weight every step
//   %c.1, %h.1 = prim::FusionGroup(%x.0, %g.0, %b, %c0)
//   %g.1 = aten::mm(%h.1, %W)                     the left operand: an output of the step before
//   %c.2, %h.2 = prim::FusionGroup(%x.1, %g.1, %b, %c.1)
//   ...
// Every step's group is the same (structurally equal subgraphs), and reads, input by input, the step's
// product, an output of the step before (the state; an outside value in the first step), one value for
// every step (a bias) or a value of its own from outside (x_t). The group's elements are [B, H], and it
// reads the product [B, G] only through chunks along dim 1 (G = C H: the gates) or as it is (G = H), so
// element (b, j) reads product columns c H + j alone. Its outputs are elementwise, concatenations of such
// along dim 1, or sums of such over the batch (a backward's bias gradients). The next product reads one
// output, or a concatenation of outputs along dim 1 (a backward's gate gradients, dgates W_hh), as [B, K].
//
// The kernel: block n owns hidden units [n U, n U + U), and the product's columns c H + j of them, whose
// weight columns it keeps in shared memory (where they fit; else it reads them from L2 every step). Each
// step it computes its columns of h_{t-1} W, runs the group's element function (Fuser::
// emitElementFunction: the fuser in charge's own code) on its units, and meets the grid at a barrier.
// Every output of every step goes to a [T, ...] stack, whose slices are the node's outputs.
//
// recurrence.cpp forms the nodes, recurrence_kernel.cpp builds and launches their kernels, and
// recurrence_layout.h is what both know of a chain (each group input's and output's role).
#include "fusers/fuser.h"

#include <string>
#include <vector>

namespace gj {

/// A chain of steps that was not made a prim::RecurrenceGroup, and why (graphir explain).
struct RecurrenceRefusal {
  const Node* head;  ///< the first step's product
  int64_t steps;
  std::string why;
};

struct RecurrenceReport {
  int64_t formed = 0;
  std::vector<RecurrenceRefusal> refused;
  /// One line per chain: "persistent recurrence: 100 steps at <node>" or "not a persistent recurrence: ...".
  std::vector<std::string> lines;
};

/// The most weight bytes a persistent kernel takes: the device's L2 (a weight that no grid of resident
/// blocks holds in shared memory is read from there every step), or 32 MiB where the driver does not say
/// (the emulated driver).
int64_t recurrenceWeightBudget();

/// Replaces each chain of at least two steps (above) in g's blocks by a prim::RecurrenceGroup whose subgraph
/// holds them; `groupOp` is the fuser's group op. A chain whose weight is over `maxWeightBytes`, or whose
/// group reads across its elements (a row op), is refused, and stays as it is.
RecurrenceReport formRecurrences(Graph& g, OpKind groupOp, int64_t maxWeightBytes);

/// Compiles every prim::RecurrenceGroup of g (nested blocks included) for the CUDA device: its persistent
/// kernel, the cell from `fuser`'s element function, and the fusion groups of its subgraph, which run
/// where the persistent kernel cannot (a launch that does not fit the device, or inputs it was not built
/// for). A recurrence that fails to compile runs its steps, with a warning.
void compileRecurrences(const Graph& g, Fuser& fuser, const FuserOptions& opts, KernelTable& kernels,
                        FusionReport& report);

/// The CUDA C of a prim::RecurrenceGroup's persistent kernel under the symbol `name`, its cell from `fuser`
/// (graphir codegen --persistent-recurrences). Throws gj::Error for a subgraph the kernel cannot run.
std::string emitRecurrence(const Node* group, const Fuser& fuser, const std::string& name);

}  // namespace gj
