// The interpreter's tape (executors/autograd.h): a prim::DifferentiableGraph run with a tape records a
// step, and its outputs' grad edges point at it.
#include "executors/interpreter/frame.h"

namespace gj::interp {

// Runs the forward graph of n's Gradient on detached inputs, records a tape step, and gives the
// outputs edges to it.
void Frame::recordStep(const Node* n, const Operands& in) {
  IR_CHECK(gradients_ && gradients_->count(n)) << "no Gradient for " << n->describe();
  auto step = std::make_shared<TapeStep>();
  step->gradient = gradients_->at(n);
  step->kernels = kernels_;
  step->plans = plans_;
  step->keepAlive = keepAlive_;
  const Gradient& grad = *step->gradient;
  std::vector<IValue> detached;
  for (const IValue& v : in) detached.push_back(detach(v));
  auto outs = Interpreter(*grad.forward, nullptr, kernels_, plans_).run(std::move(detached), nestedRun());
  for (size_t i = 0; i < grad.gradInputs.size(); ++i) {
    const IValue& v = in[grad.gradInputs[i]];
    std::vector<std::shared_ptr<const GradEdge>> edges;
    if (!grad.reached.empty() && !grad.reached[i]) {
      // no gradient reaches this input: no edge, so that the tape adds nothing (not zeros) to it
    } else if (v.isTensorList()) {
      for (const Tensor& t : v.toTensorList()) edges.push_back(t.gradEdge());
    } else if (v.isTensor()) {
      edges.push_back(v.toTensor().gradEdge());
    }
    step->inputEdges.push_back(std::move(edges));
    step->inputIsList.push_back(v.isTensorList());
  }
  for (size_t k = 0; k < grad.numOutputs; ++k) {
    IValue& o = outs[k];
    bool isList = o.isTensorList();
    step->outputIsList.push_back(isList);
    std::vector<Tensor> elems = isList ? o.toTensorList() : std::vector<Tensor>{o.toTensor("differentiable output")};
    step->outputs.push_back(elems);
    step->grads.emplace_back(elems.size());
    for (size_t e = 0; e < elems.size(); ++e) {
      if (!isFloating(elems[e].dtype())) continue;
      auto edge = std::make_shared<GradEdge>();
      edge->step = step;
      edge->slot = k;
      edge->element = isList ? static_cast<int64_t>(e) : -1;
      edge->dtype = elems[e].dtype();
      elems[e] = elems[e].withGradEdge(std::move(edge));
    }
    at(n->output(k)) = isList ? IValue(std::move(elems)) : IValue(elems[0]);
    o = IValue();
  }
  // The outputs' places stay, empty: backward puts their gradients there and hands the vector to the
  // backward graph as it is. An unrolled 100-step layer saves about 700 tensors a run, and a copy of the
  // vector each way was a tenth of the frame's own cost.
  step->saved = std::move(outs);
  tape_->record(std::move(step));
}

}  // namespace gj::interp
