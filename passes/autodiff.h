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
  /// Per gradient backward returns: false where no gradient reaches that input (backward returns zeros
  /// there, which the tape does not add: PyTorch's undefined gradient, so that no 0 * NaN follows).
  std::vector<bool> reached;
  /// Gradients left to the tape as matrix products (Note [Products left to the tape]): backward's output
  /// `output` (one of the gradients) holds A and its output `right` (past the gradients) B; the gradient
  /// is A B.
  struct Product {
    size_t output, right;
  };
  std::vector<Product> products;
};

/// Pre: g has no blocks (loops are unrolled or stay outside, in the enclosing graph); the requiresGrad
/// flags of g's inputs say which gradients are wanted. g is not changed. `seeded`, when given (one flag an
/// output of g), says which outputs' gradients flow back: an output read only by ops whose results take
/// no gradient (aten::detach, a comparison, a size) keeps its gradient input, which the tape fills with
/// zeros, but the backward reads nothing of it (PyTorch's undefined gradient), so that no 0 * inf or
/// 0 * NaN reaches the inputs' gradients.
Gradient differentiate(const Graph& g, const std::vector<bool>& seeded = {});

/// Note [Products left to the tape]: a kept loop's step differentiates once and runs once an iteration,
/// and a weight's gradient in it is a product of the step's rows (x_t^T g_t, rank 1 at batch 1) that the
/// tape then adds into the weight's sum: a pass over the whole weight-sized product twice a step (vl_jit:
/// 8 MB a step, three quarters of its backward). Where a gradient output of g's backward is an aten::mm
/// read nowhere else, the backward returns the two factors instead, and the tape collects them across
/// the steps and multiplies once, when the sum is read: all steps' factors concatenated, one GEMM, added
/// into the sum by the GEMM itself. Returns how many outputs it changed.
int64_t leaveProductsToTape(Gradient& g);

/// True for ops in the formula table.
bool hasGradientFormula(OpKind k);

}  // namespace gj
