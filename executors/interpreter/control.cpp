// The interpreter's kernels (executors/interpreter/kernels.h) for ops.def's Control group: loops, ifs and
// the ops that run a subgraph, and the frame's parts that run them.
#include "executors/interpreter/kernels.h"

namespace gj::interp {

void Frame::runLoop(const Node* n) {
  const Block* body = n->block(0);
  int64_t trips = at(n->input(0)).toInt("loop trip count");
  bool cond = at(n->input(1)).toBool("loop condition");
  size_t carried = n->inputs().size() - 2;
  std::vector<IValue> state;
  for (size_t k = 0; k < carried; ++k) state.push_back(at(n->input(k + 2)));
  for (int64_t i = 0; i < trips && cond; ++i) {
    at(body->inputs()[0]) = i;
    for (size_t k = 0; k < carried; ++k) at(body->inputs()[k + 1]) = std::move(state[k]);
    runBlock(body);
    cond = at(body->outputs()[0]).toBool("loop condition");
    for (size_t k = 0; k < carried; ++k) state[k] = at(body->outputs()[k + 1]);
    // Drop the body's own references so that carried lists stay uniquely owned (appends in place).
    for (size_t k = 0; k < carried; ++k)
      if (definedIn(body->outputs()[k + 1], body)) at(body->outputs()[k + 1]) = IValue();
  }
  for (size_t k = 0; k < carried; ++k) at(n->output(k)) = std::move(state[k]);
}

void Frame::runIf(const Node* n) {
  const Block* b = n->block(at(n->input(0)).toBool("if condition") ? 0 : 1);
  runBlock(b);
  for (size_t k = 0; k < n->outputs().size(); ++k) at(n->output(k)) = at(b->outputs()[k]);
}

void Frame::runSubgraph(const Node* n, const Operands& in) {
  if (tape_ && cur_->kind == OpKind::DifferentiableGraph) return recordStep(n, in);
  if ((isFusionGroupOp(cur_->kind) || cur_->kind == OpKind::RecurrenceGroup) && kernels_) {
    if (auto it = kernels_->find(n); it != kernels_->end() && runKernel(n, *it->second, in)) return;
  }
  if (cur_->kind == OpKind::FallbackGraph) {
    // Same tape and observer: values keep their grad edges across the call.
    const Graph& sub = *n->subgraph();
    Frame f(sub, gradients_, kernels_, plans_, tape_, observer_, keepAlive_, device_);
    for (size_t i = 0; i < in.size(); ++i) f.at(sub.inputs()[i]) = in[i];
    f.runBlock(sub.block());
    for (size_t k = 0; k < n->outputs().size(); ++k) at(n->output(k)) = f.at(sub.outputs()[k]);
    return;
  }
  auto outs = Interpreter(*n->subgraph(), gradients_, kernels_, plans_).run(in.copy(), nestedRun());
  for (size_t k = 0; k < outs.size(); ++k) at(n->output(k)) = std::move(outs[k]);
}

// Runs a compiled fusion group; false (the caller runs the subgraph) when the kernel refuses.
bool Frame::runKernel(const Node* n, const CompiledKernel& k, const Operands& in) {
  std::vector<const Tensor*>& ts = kernelInputs_;  // into the frame's slots, which the kernel does not write
  ts.clear();
  for (const IValue& v : in) {
    if (!v.isTensor() || !v.toTensor().defined()) return false;
    ts.push_back(&v.toTensor());
  }
  std::vector<Tensor> outs;
  try {
    outs = k.run(std::span<const Tensor* const>(ts));
  } catch (const Error&) {
    return false;
  }
  assert(cur_->node == n && cur_->numOuts == outs.size());
  for (size_t i = 0; i < outs.size(); ++i) env_[cur_->outs[i]] = std::move(outs[i]);
  return true;
}

namespace {

void blockStructureKernel(Frame&, const Node*, const Operands&) {
  IR_CHECK(false) << "a param or return node in a block's node list";
}

void loopKernel(Frame& f, const Node* n, const Operands&) { f.runLoop(n); }  // reads its operands from their slots

void ifKernel(Frame& f, const Node* n, const Operands&) { f.runIf(n); }

void subgraphKernel(Frame& f, const Node* n, const Operands& in) { f.runSubgraph(n, in); }

}  // namespace

std::span<const KernelRow> controlKernels() {
  static const KernelRow rows[] = {
      {OpKind::Param, blockStructureKernel},
      {OpKind::Return, blockStructureKernel},
      {OpKind::Loop, loopKernel},
      {OpKind::If, ifKernel},
      {OpKind::DifferentiableGraph, subgraphKernel},
      {OpKind::FallbackGraph, subgraphKernel},
      {OpKind::FusionGroup, subgraphKernel},
      {OpKind::TensorExprGroup, subgraphKernel},
      {OpKind::RecurrenceGroup, subgraphKernel},
  };
  return rows;
}

}  // namespace gj::interp
