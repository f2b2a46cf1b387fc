#pragma once
// Symbolic differentiation of straight-line graphs (the bodies of prim::DifferentiableGraph).
//
// differentiate(g) splits g into a forward graph, which also returns the values the backward needs,
// and a backward graph from the output gradients to the input gradients:
//
//   forward:  (inputs...)                     -> (outputs..., saved...)
//   backward: (grad_outputs..., saved...)     -> (grads of the inputs whose type says requires_grad=1)
//
// Gradients come from one table of formulas (gradient_formulas.cpp), one entry per differentiable op;
// broadcasting gradients are summed back to each input's size. A node on the gradient path whose op has
// no formula is a gj::Error naming the op and the node.
#include "ir/graph.h"

#include <memory>
#include <vector>

namespace gj {

struct Gradient {
  std::shared_ptr<Graph> forward;
  std::shared_ptr<Graph> backward;
  size_t numOutputs = 0;           ///< forward's outputs before the saved values
  std::vector<size_t> gradInputs;  ///< indices of the inputs whose gradients backward returns, in order
};

/// Pre: g has no blocks (loops are unrolled or stay outside, in the enclosing graph); the requiresGrad
/// flags of g's inputs say which gradients are wanted. g is not changed.
Gradient differentiate(const Graph& g);

/// True for ops in the formula table.
bool hasGradientFormula(OpKind k);

}  // namespace gj
