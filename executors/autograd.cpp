#include "executors/autograd.h"

#include "executors/interpreter.h"
#include "passes/create_autodiff_subgraphs.h"
#include "passes/requires_grad.h"
#include "passes/util.h"
#include "runtime/ops/ops.h"

#include <algorithm>

namespace gj {

std::shared_ptr<const GradEdge> leafEdge(size_t index, DType dtype) {
  auto e = std::make_shared<GradEdge>();
  e->slot = index;
  e->dtype = dtype;
  return e;
}

IValue detach(const IValue& v) {
  if (v.isTensor()) return v.toTensor().withGradEdge(nullptr);
  if (v.isTensorList()) {
    TensorList xs;
    for (const Tensor& t : v.toTensorList()) xs.push_back(t.withGradEdge(nullptr));
    return IValue(std::move(xs));
  }
  return v;
}

Tensor& Tape::sumOf(const GradEdge& e) {
  return e.step ? e.step->grads[e.slot][std::max<int64_t>(e.element, 0)] : leafGrads_[e.slot];
}

// In place once the sum is a tensor of the tape's own: a weight's gradient takes one term per step of a
// kept loop, and a new tensor per term cost an allocation and a pass over memory each. A sum whose storage
// anything else still holds (a saved value, a view of another gradient, the caller's gradient) is never
// written: it is added out of place into a tensor of the tape's own.
static bool ownSum(const Tensor& sum, const Shape& sizes, DType dtype, DeviceKind device) {
  return sum.defined() && sum.storage().use_count() == 1 && sum.isContiguous() && sum.sizes() == sizes &&
         sum.dtype() == dtype && sum.device() == device;
}

void Tape::accumulate(const GradEdge& e, const Tensor& g) {
  if (!g.defined()) return;
  Tensor& sum = sumOf(e);
  Tensor x = g.to(e.dtype);
  if (x.device() == DeviceKind::Cpu && ownSum(sum, x.sizes(), x.dtype(), DeviceKind::Cpu)) {
    ops::addInPlace(sum, x);
    return;
  }
  sum = ops::autogradAdd(sum, x);
}

// The factors a sum holds back at most, in rows of the concatenated product: what they keep alive (a
// batch-64 step's gate gradients are half a megabyte, and its outer products' sum once concatenated as
// much again) stays bounded, while one GEMM still covers dozens of steps.
constexpr int64_t kMaxPendingProductRows = 4096;

void Tape::accumulateProduct(const GradEdge& e, const Tensor& a, const Tensor& b) {
  if (!a.defined() || !b.defined()) return;
  const bool collectable = a.dim() == 2 && b.dim() == 2 && a.dtype() == e.dtype && b.dtype() == e.dtype &&
                           a.device() == b.device();
  if (!collectable) return accumulate(e, ops::mm(a, b));
  Tensor& sum = sumOf(e);
  Products& p = pending_[&sum];
  p.left.push_back(a);
  p.right.push_back(b);
  p.dtype = e.dtype;
  p.rows += a.size(1);
  if (p.rows >= kMaxPendingProductRows) addProducts(sum);
}

// The pending products' factors side by side: their sum is one product, [M, sum K] times [sum K, N].
void Tape::addProducts(Tensor& sum) {
  auto it = pending_.find(&sum);
  if (it == pending_.end()) return;
  Products p = std::move(it->second);
  pending_.erase(it);
  const Tensor a = p.left.size() == 1 ? p.left[0] : ops::cat(p.left, 1);
  const Tensor b = p.right.size() == 1 ? p.right[0] : ops::cat(p.right, 0);
  if (ownSum(sum, Shape{a.size(0), b.size(1)}, p.dtype, a.device())) {
    ops::addmmInPlace(sum, a, b);
    return;
  }
  sum = ops::autogradAdd(sum, ops::mm(a, b));
}

static Tensor orZeros(const Tensor& g, const Tensor& like) {
  return g.defined() ? g : Tensor::zeros(like.sizes(), like.dtype(), like.device());
}

std::vector<Tensor> Tape::backward(const std::vector<IValue>& outputs, const std::vector<Tensor>& gradOutputs) {
  USER_CHECK(outputs.size() == gradOutputs.size(), "backward: {} gradients for {} outputs", gradOutputs.size(),
             outputs.size());
  for (size_t k = 0; k < outputs.size(); ++k) {
    if (!outputs[k].isTensor() || !gradOutputs[k].defined()) continue;
    const Tensor& out = outputs[k].toTensor();
    USER_CHECK(gradOutputs[k].sizes() == out.sizes(), "backward: gradient {} has shape {} but output {} has {}", k,
               shapeStr(gradOutputs[k].sizes()), k, shapeStr(out.sizes()));
    if (out.gradEdge()) accumulate(*out.gradEdge(), gradOutputs[k].to(out.dtype()).to(out.device()));
  }
  for (auto it = steps_.rbegin(); it != steps_.rend(); ++it) {
    TapeStep& s = **it;
    bool any = false;
    for (auto& gs : s.grads)
      for (Tensor& g : gs) {
        if (!pending_.empty()) addProducts(g);
        any = any || g.defined();
      }
    if (!any) continue;
    // The backward graph takes the outputs' gradients, then the saved values: into the outputs' places.
    std::vector<IValue> in = std::move(s.saved);
    IR_CHECK(in.size() >= s.grads.size()) << "a tape step saved " << in.size() << " values for " << s.grads.size()
                                          << " outputs";
    for (size_t k = 0; k < s.grads.size(); ++k) {
      if (s.outputIsList[k]) {
        TensorList xs;
        for (size_t e = 0; e < s.grads[k].size(); ++e) xs.push_back(orZeros(s.grads[k][e], s.outputs[k][e]));
        in[k] = IValue(std::move(xs));
      } else {
        in[k] = orZeros(s.grads[k][0], s.outputs[k][0]);
      }
    }
    auto grads = Interpreter(*s.gradient->backward, nullptr, s.kernels, s.plans).run(std::move(in));
    const std::vector<Gradient::Product>& products = s.gradient->products;
    for (size_t j = 0; j < s.inputEdges.size(); ++j) {
      const auto& edges = s.inputEdges[j];
      if (s.inputIsList[j]) {
        const TensorList& gl = grads[j].toTensorList("backward list gradient");
        for (size_t e = 0; e < edges.size() && e < gl.size(); ++e)
          if (edges[e]) accumulate(*edges[e], gl[e]);
      } else if (!edges.empty() && edges[0]) {
        const Tensor& g = grads[j].toTensor("backward gradient");
        auto p = std::find_if(products.begin(), products.end(), [&](const auto& q) { return q.output == j; });
        if (p != products.end())
          accumulateProduct(*edges[0], g, grads[p->right].toTensor("backward gradient"));
        else
          accumulate(*edges[0], g);
      }
    }
    it->reset();  // frees saved values and gradients as soon as the step is done
  }
  steps_.clear();
  for (Tensor& g : leafGrads_)
    if (!pending_.empty()) addProducts(g);
  return std::move(leafGrads_);
}

// Which of a differentiable graph's outputs a gradient can reach: those read by anything but ops whose
// results take no gradient (aten::detach, comparisons, sizes). Returned, or read by a list, a loop or
// another graph, an output is seeded.
static std::vector<bool> seededOutputs(const Node* n) {
  std::vector<bool> seeded;
  for (const Value* v : n->outputs()) {
    bool any = false;
    for (const Use& u : v->uses()) any = any || !resultTakesNoGradient(u.user->kind());
    seeded.push_back(any);
  }
  return seeded;
}

static void differentiateBlock(const Block* b, GradientTable& table) {
  for (const Node* n : *b) {
    for (const Block* inner : n->blocks()) differentiateBlock(inner, table);
    if (n->kind() == OpKind::DifferentiableGraph)
      table[n] = std::make_shared<const Gradient>(differentiate(*n->subgraph(), seededOutputs(n)));
    if (n->kind() == OpKind::FallbackGraph) differentiateBlock(n->subgraph()->block(), table);
  }
}

GradientTable differentiateSubgraphs(const Graph& g) {
  GradientTable table;
  differentiateBlock(g.block(), table);
  return table;
}

void markRequiresGrad(Graph& g, const std::vector<bool>& requiresGrad) {
  USER_CHECK(requiresGrad.size() == g.inputs().size(), "autodiff: {} requires_grad flags for {} inputs",
             requiresGrad.size(), g.inputs().size());
  for (size_t i = 0; i < requiresGrad.size(); ++i) {
    Value* in = g.inputs()[i];
    if (!in->type().isTensor() && in->type().kind != TypeKind::TensorList) continue;
    Type t = in->type();
    t.requiresGrad = requiresGrad[i];
    in->setType(t);
  }
}

void createSubgraphsForAutodiff(Graph& g, const std::vector<bool>& requiresGrad) {
  markRequiresGrad(g, requiresGrad);
  propagateRequiresGrad(g);
  createAutodiffSubgraphs(g);
}

AutodiffGraph prepareAutodiff(std::shared_ptr<Graph> g, const std::vector<bool>& requiresGrad) {
  createSubgraphsForAutodiff(*g, requiresGrad);
  AutodiffGraph ag{g, differentiateSubgraphs(*g)};
  return ag;
}

}  // namespace gj
