#pragma once
// The reference interpreter: runs a verified graph node by node on CPU tensors with the runtime's
// unfused kernels. It is the oracle every fuser and executor is compared against.
#include "executors/autograd.h"
#include "ir/graph.h"
#include "runtime/ivalue.h"

#include <memory>
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
  DeviceKind device = DeviceKind::Cpu;    ///< the device the graph runs on: where prim::full makes its tensors
};

/// Why `v` does not match `expected` ("" when it does): dtype, rank, a size (* matches any) or device.
std::string typeMismatch(const Type& expected, const IValue& v);

/// What a run derives from a graph's structure alone (each graph's run plan: its values' frame slots, and
/// for each block the instructions its nodes become, with the values to drop after each), kept between
/// runs. An executor's plan owns one for all its graphs (top, fallback, every forward
/// and backward), which no longer change once built: a batch-1 LSTM step is a few microseconds of work,
/// and deriving this again on every call cost as much as running the nodes. Safe to share between
/// threads. Pass it only with graphs that are not changed while it lives.
class RunPlanCache {
 public:
  RunPlanCache();
  ~RunPlanCache();
  RunPlanCache(const RunPlanCache&) = delete;
  RunPlanCache& operator=(const RunPlanCache&) = delete;

  struct Impl;
  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

class Interpreter {
 public:
  /// Pre: verify(g) passes. The graph (and the gradient table, for runs with a tape) must outlive the
  /// interpreter; so must `plans`, which must not outlive the graph unchanged (see RunPlanCache).
  explicit Interpreter(const Graph& g, const GradientTable* gradients = nullptr, const KernelTable* kernels = nullptr,
                       RunPlanCache* plans = nullptr)
      : g_(g), gradients_(gradients), kernels_(kernels), plans_(plans) {}
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
  RunPlanCache* plans_;
};

/// Checks `v` against a graph input's declared type; throws gj::Error naming the input.
void checkInputType(const Value* input, const IValue& v);

}  // namespace gj
