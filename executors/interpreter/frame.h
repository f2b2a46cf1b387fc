#pragma once
// The interpreter's frame: one run of one graph (executors/interpreter.h). It holds the values of the
// graph's slots (executors/interpreter/plan.h), runs each block's instructions in order, dropping what
// nothing reads any more, and gives each node to its op's kernel (executors/interpreter/kernels.h), which
// reads its operands and writes its results through the frame. What the kernels of more than one op
// group need of the run is here: the running node's results, loops and subgraphs, the tape, the observer,
// the device, and the packed right operands of products.
#include "executors/interpreter/plan.h"
#include "runtime/gemm.h"

#include <cassert>
#include <optional>

namespace gj::interp {

class Frame {
 public:
  Frame(const Graph& g, const GradientTable* gradients, const KernelTable* kernels, RunPlanCache* plans, Tape* tape,
        RunObserver* observer, std::shared_ptr<const void> keepAlive, DeviceKind device);

  /// Runs b's instructions; an error from a node without a place of its own is given the node's.
  void runBlock(const Block* b);
  IValue& at(const Value* v) {
    assert(v->id() < plan_->slotOf.size() && plan_->slotOf[v->id()] != kNoSlot);
    return env_[plan_->slotOf[v->id()]];
  }
  IValue& slot(uint32_t s) { return env_[s]; }
  /// Slots 0 to n - 1, the rest dropped; the frame is done.
  std::vector<IValue> takeFirstSlots(size_t n) {
    env_.resize(n);
    return std::move(env_);
  }
  const GraphPlan& plan() const { return *plan_; }

  // ---- for the kernels: the running node ----

  /// Sets the running node's single result.
  void set(const Node* n, IValue v) {
    assert(cur_ && cur_->node == n && cur_->numOuts == 1);
    env_[cur_->outs[0]] = std::move(v);
  }
  void set(const Node* n, Tensor t) {  // stored in place (IValue::operator=(Tensor&&))
    assert(cur_ && cur_->node == n && cur_->numOuts == 1);
    env_[cur_->outs[0]] = std::move(t);
  }
  /// The running node's result k.
  IValue& output(size_t k) {
    assert(cur_ && k < cur_->numOuts);
    return env_[cur_->outs[k]];
  }
  Tape* tape() const { return tape_; }
  RunObserver* observer() const { return observer_; }
  /// Where the graph runs: where ops that make tensors from nothing (prim::full) make them.
  DeviceKind device() const { return device_; }

  /// Control ops (executors/interpreter/control.cpp): prim::Loop and prim::If read their operands from
  /// their slots; a subgraph op runs its compiled kernel, records a tape step or runs its graph.
  void runLoop(const Node* n);
  void runIf(const Node* n);
  void runSubgraph(const Node* n, const Operands& in);
  /// Whether v is a result or parameter of b itself (not of a block nested in it).
  static bool definedIn(const Value* v, const Block* b) { return v->node()->owningBlock() == b; }

  /// aten::mm, with its right operand packed once per run where products share it (gemm.cpp).
  Tensor mm(const Tensor& a, const Tensor& b);
  /// Whether the running aten::contiguous may hand over its operand as it is: when every reader is a
  /// product that packs it (contiguous-operands gives a shared weight a row-major copy for sgemm; packing
  /// reads either layout, so the copy would be a pass over the weight for nothing). A product that then
  /// does not pack (its left operand too tall, say) multiplies by the view: slower, the same values.
  bool handsOverUncopied(const Tensor& x) const { return cur_->shared && packable(x); }

 private:
  void runNode(const Node* n);
  void runOp(const Node* n, const Operands& in);
  void runWidened(const Node* n, const Operands& in);
  bool runKernel(const Node* n, const CompiledKernel& k, const Operands& in);
  void recordStep(const Node* n, const Operands& in);  // tape.cpp
  // A graph this frame runs in an interpreter of its own (a subgraph, a step's forward): on its device.
  RunOptions nestedRun() const {
    RunOptions ro;
    ro.device = device_;
    return ro;
  }
  static bool packable(const Tensor& b);  // gemm.cpp

  std::optional<GraphPlan> ownPlan_;  // without a RunPlanCache
  const GraphPlan* plan_;
  std::vector<IValue> env_;  // by slot
  const Instr* cur_ = nullptr;
  std::vector<const Tensor*> kernelInputs_;  // runKernel's
  // aten::mm's right operands packed for oneDNN's matmul primitive, by value, each with the tensor it was
  // packed from (its storage held, so the address cannot come back as another tensor's).
  struct PackedOperand {
    Tensor from;
    int64_t rows = 0;                   // A's, which the packing is for
    std::unique_ptr<PackedGemmB> gemm;  // null where packing does not pay: plain sgemm
  };
  std::unordered_map<uint32_t, PackedOperand> packed_;  // by the operand's slot
  const GradientTable* gradients_;
  const KernelTable* kernels_;
  RunPlanCache* plans_;
  Tape* tape_;
  RunObserver* observer_;
  std::shared_ptr<const void> keepAlive_;
  DeviceKind device_;
};

}  // namespace gj::interp
