#pragma once
// Internal to fusers/recurrence*.cpp: a chain of steps as the persistent-recurrences step finds it, and what
// the persistent kernel needs to know of it (its Layout), shared by the step that forms the
// prim::RecurrenceGroup and the compile step that builds its kernel (fusers/recurrence.h).
#include "ir/graph.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gj::recurrence {

// What a step's group reads at one of its inputs.
enum class Role : uint8_t {
  Product,    // the step's product h_{t-1} W
  Carried,    // output `from` of the step before; an outside value in the first step
  Invariant,  // one outside value for every step
  PerStep,    // an outside value of the step's own (x_t)
};

struct Slot {
  Role role = Role::Invariant;
  size_t from = 0;
};

// The steps, in order: step t is products[t] (aten::mm) and the group groups[t] that reads it, and where the
// next product reads a concatenation of the group's outputs (the backward's gate gradients, which the
// legacy fuser leaves outside its groups) the prim::ListConstruct lists[t] and aten::cat cats[t] of it
// (every step but possibly the last).
struct Chain {
  std::vector<const Node*> products, groups, lists, cats;
  /// Every node, in program order.
  std::vector<const Node*> nodes() const {
    std::vector<const Node*> all;
    for (size_t t = 0; t < products.size(); ++t) {
      all.push_back(products[t]);
      all.push_back(groups[t]);
      if (t < cats.size()) {
        all.push_back(lists[t]);
        all.push_back(cats[t]);
      }
    }
    return all;
  }
};

// What one of the group's outputs is to the kernel: an output of the cell (the element function), [B, w H]
// (w > 1: a concatenation along dim 1, which the element function stores in slices), or a sum over the
// batch ([m H]: sum_to_size to [H] of a [B, H] value, or a concatenation of such along dim 0: the
// backward's bias gradients), which the kernel folds from the cell's outputs after they are written.
struct OutputRole {
  bool sum = false;
  size_t index = 0;   // the cell output's, or the sum's
  int64_t width = 1;  // a cell output's columns, in units of H
  std::vector<std::pair<size_t, int64_t>> parts;  // a sum's: per H of its result, (cell output, column block)
};

// Binding::outputs' group output index for the step's concatenation (Chain::cats).
constexpr size_t kConcatenation = ~size_t{0};

struct Layout {
  std::vector<Slot> slots;  // one per group input
  std::vector<OutputRole> roles;  // one per group output
  std::vector<int64_t> cellWidths;  // one per cell output
  size_t sums = 0;
  size_t hidden = 0;             // the cell output the next step's product reads (no concatenation)
  std::vector<size_t> catParts;  // else the cell outputs it reads concatenated along dim 1, in order
  int64_t steps = 0;
  int64_t batch = 0, inner = 0, width = 0, units = 0, chunks = 1;  // B, K, G, H, C (G = C H)
  DType dtype = DType::Float32;
  std::vector<int64_t> cell;  // the cell's elements, [B, H]
};

/// Every aten::cat along dim 1 of a list of g's outputs alone (a GRU's backward concatenates its gate
/// gradients twice: for the product by W_hh, and for the input's).
std::vector<const Node*> catsOfOutputs(const Node* g);

/// The chain's first `steps` steps (the rest computing another cell); the concatenation of the last one kept.
void truncate(Chain& c, size_t steps);

/// Fills `l` from the chain; "" when the persistent kernel can run it, else why not.
std::string analyze(const Chain& c, Layout& l);

/// The chain of a prim::RecurrenceGroup's subgraph: its products, groups, lists and concatenations in order.
Chain chainOf(const Graph& sub);

}  // namespace gj::recurrence
