#pragma once
// Run-time autodiff: prim::DifferentiableGraph steps recorded on a tape during the forward run and
// replayed in reverse by backward().
//
// Every tensor that requires grad carries a GradEdge: the graph input it is (a leaf), or the tape step
// and output that produced it. Lists, loops and ifs move tensors around unchanged, so gradients follow
// them at run time; a kept loop records one step per iteration, and backward replays them in reverse.
// Note [Autodiff at run time]: the symbolic part (passes/autodiff) differentiates each subgraph once;
// the tape only routes tensors between those precomputed backward graphs.
#include "fusers/fuser.h"
#include "passes/autodiff.h"
#include "runtime/ivalue.h"

#include <memory>
#include <unordered_map>
#include <vector>

namespace gj {

struct TapeStep;
class RunPlanCache;

struct GradEdge {
  std::shared_ptr<TapeStep> step;  ///< the producing step; null for a leaf (a graph input)
  size_t slot = 0;                 ///< the step's output index, or the leaf's input index
  int64_t element = -1;            ///< element of a Tensor[] output; -1 for a tensor output
  /// The dtype of the tensor the edge belongs to: a gradient arriving in another dtype (the operand of a
  /// promoting op) is converted to it, as PyTorch's autograd engine does.
  DType dtype = DType::Float32;
};

/// The Gradient of every prim::DifferentiableGraph node of a graph (nested blocks included).
using GradientTable = std::unordered_map<const Node*, std::shared_ptr<const Gradient>>;

/// One execution of a DifferentiableGraph: what its backward graph needs, where its input gradients go,
/// and the gradients accumulated for its outputs.
struct TapeStep {
  std::shared_ptr<const Gradient> gradient;
  const KernelTable* kernels = nullptr;     ///< compiled fusion groups of the backward graph, if any
  RunPlanCache* plans = nullptr;            ///< the run plans of the plan's graphs, if any
  std::shared_ptr<const void> keepAlive;    ///< the plan that owns `kernels` and `plans`
  /// The forward graph's outputs as it returned them: `gradient->numOutputs` empty places (the step's
  /// outputs, which its caller holds), then the values its backward graph reads.
  std::vector<IValue> saved;
  /// For each of gradient->gradInputs: the edges of that input (one for a tensor, one per list element).
  std::vector<std::vector<std::shared_ptr<const GradEdge>>> inputEdges;
  std::vector<bool> inputIsList;
  /// Per forward output, per element (one for a tensor): the output's shape and accumulated gradient.
  std::vector<std::vector<Tensor>> outputs;  ///< detached forward values, for shapes of zero gradients
  std::vector<std::vector<Tensor>> grads;
  std::vector<bool> outputIsList;
};

class Tape {
 public:
  explicit Tape(size_t numInputs) : leafGrads_(numInputs) {}
  void record(std::shared_ptr<TapeStep> step) { steps_.push_back(std::move(step)); }
  size_t size() const { return steps_.size(); }

  /// Runs every recorded step's backward in reverse order, starting from `gradOutputs` for the forward
  /// `outputs` (an undefined gradient counts as zero). Returns one gradient per graph input; undefined
  /// for inputs that do not require grad. The tape is consumed.
  std::vector<Tensor> backward(const std::vector<IValue>& outputs, const std::vector<Tensor>& gradOutputs);

 private:
  Tensor& sumOf(const GradEdge& e);
  void accumulate(const GradEdge& e, const Tensor& g);
  /// Adds a b into e's sum later (Note [Products left to the tape], passes/autodiff.h).
  void accumulateProduct(const GradEdge& e, const Tensor& a, const Tensor& b);
  /// Adds the products pending for `sum` into it.
  void addProducts(Tensor& sum);
  std::vector<std::shared_ptr<TapeStep>> steps_;
  std::vector<Tensor> leafGrads_;
  /// Per sum (a step's gradient slot or a leaf's), the factors of the products still to be added.
  struct Products {
    std::vector<Tensor> left, right;
    DType dtype;
    int64_t rows = 0;  ///< the left factors' columns, all told
  };
  std::unordered_map<Tensor*, Products> pending_;
};

/// A graph ready for autodiff: its differentiable regions wrapped in DifferentiableGraph nodes, each
/// with its Gradient.
struct AutodiffGraph {
  std::shared_ptr<Graph> graph;
  GradientTable gradients;
};

/// Sets requires_grad on g's tensor inputs from `requiresGrad` (one flag per graph input).
void markRequiresGrad(Graph& g, const std::vector<bool>& requiresGrad);
/// markRequiresGrad, then the requires-grad and create-autodiff-subgraphs passes (a node on the gradient
/// path without a formula is a gj::Error). In place.
void createSubgraphsForAutodiff(Graph& g, const std::vector<bool>& requiresGrad);
/// createSubgraphsForAutodiff, then differentiates each subgraph.
AutodiffGraph prepareAutodiff(std::shared_ptr<Graph> g, const std::vector<bool>& requiresGrad);

/// The differentiated Gradient of every DifferentiableGraph node in g (which already has them).
GradientTable differentiateSubgraphs(const Graph& g);

/// A leaf edge for graph input `index`.
std::shared_ptr<const GradEdge> leafEdge(size_t index, DType dtype);
/// Copies of `v` with the grad edges removed (tensors and list elements).
IValue detach(const IValue& v);

}  // namespace gj
