#pragma once
// The reference interpreter: runs a verified graph node by node on CPU tensors with the runtime's
// unfused kernels. It is the oracle every fuser and executor is compared against.
#include "executors/autograd.h"
#include "ir/graph.h"
#include "runtime/ivalue.h"

#include <vector>

namespace gj {

/// Hooks the executors use to watch a run: the profiling executor's type records and guard failures.
class RunObserver {
 public:
  virtual ~RunObserver() = default;
  /// A prim::profile node saw `v`.
  virtual void profiled(const Node* n, const IValue& v) {}
  /// A prim::TypeCheck failed; `reason` names the input and the property that differed.
  virtual void guardFailed(const Node* n, const std::string& reason) {}
};

struct RunOptions {
  Tape* tape = nullptr;               ///< record DifferentiableGraph steps (see runWithTape)
  std::vector<bool> requiresGrad;     ///< with a tape: the inputs that become leaves
  RunObserver* observer = nullptr;
  std::shared_ptr<const void> keepAlive;  ///< with a tape: kept by every step (the plan owning the tables)
};

/// Why `v` does not match `expected` ("" when it does): dtype, rank, a size (* matches any) or device.
std::string typeMismatch(const Type& expected, const IValue& v);

class Interpreter {
 public:
  /// Pre: verify(g) passes. The graph (and the gradient table, for runs with a tape) must outlive the
  /// interpreter.
  explicit Interpreter(const Graph& g, const GradientTable* gradients = nullptr, const KernelTable* kernels = nullptr)
      : g_(g), gradients_(gradients), kernels_(kernels) {}
  /// Runs the graph on `inputs` (one per graph input, in order). Inputs whose graph type is known are
  /// checked against it (dtype, rank, sizes); a mismatch or a failing kernel is a gj::Error naming the
  /// input or node.
  std::vector<IValue> run(std::vector<IValue> inputs) const;
  /// Runs with autodiff: inputs flagged in `requiresGrad` become leaves, every DifferentiableGraph
  /// execution is recorded on `tape` (its Gradient comes from the table given at construction), and
  /// the outputs carry grad edges. Fusion groups run their compiled kernel from `kernels` (or their
  /// subgraph when there is none, or when the kernel refuses the inputs). A tensor that requires grad reaching an op outside a
  /// DifferentiableGraph is a gj::Error (its gradient would be lost).
  std::vector<IValue> runWithTape(std::vector<IValue> inputs, const std::vector<bool>& requiresGrad, Tape& tape) const;
  /// The general form of run and runWithTape.
  std::vector<IValue> run(std::vector<IValue> inputs, const RunOptions& opts) const;

 private:
  const Graph& g_;
  const GradientTable* gradients_;
  const KernelTable* kernels_;
};

/// Checks `v` against a graph input's declared type; throws gj::Error naming the input.
void checkInputType(const Value* input, const IValue& v);

}  // namespace gj
