#include "passes/autodiff.h"

#include "ir/verifier.h"

#include "passes/gradient_context.h"
#include "passes/requires_grad.h"
#include "passes/util.h"

#include <ranges>

namespace gj {

Value* GradientContext::F(Value* v) {
  if (Value* m = fwdMap_.find(v)) return m;
  Value* m;
  if (v->node()->kind() == OpKind::Constant) {
    m = b_.constant(v->node()->constant());
  } else {
    m = bwd_.addInput(v->type(), v->name().empty() ? "" : v->name());
    saved_.push_back(v);
  }
  fwdMap_[v] = m;
  return m;
}

void GradientContext::accumulateSelect(Value* v, Value* g, Value* dim, Value* index) {
  if (!g || !requiresGrad(v)) return;
  auto sizes = staticSizes(v);
  auto d = constantInt(dim), i = constantInt(index);
  if (sizes && d && i) {
    int64_t rank = static_cast<int64_t>(sizes->size());
    int64_t dd = *d < 0 ? *d + rank : *d;
    int64_t n = dd >= 0 && dd < rank ? (*sizes)[dd] : 0;
    int64_t ii = *i < 0 ? *i + n : *i;
    auto it = slices_.find(v);
    if (ii >= 0 && ii < n && (it == slices_.end() || it->second.dim == dd)) {
      if (it == slices_.end()) it = slices_.emplace(v, SliceGrads{dd, std::vector<Value*>(n, nullptr)}).first;
      Value*& slot = it->second.byIndex[ii];
      slot = slot ? b_.op(OpKind::Add, {slot, g, b_.i(1)}) : g;
      return;
    }
  }
  accumulate(v, b_.op(OpKind::SelectBackward, {g, sizesOf(v), F(dim), F(index)}));
}

// Stacks the collected slice gradients of v (zeros for slices nothing reached) into its gradient.
void GradientContext::materialize(const Value* v) {
  auto it = slices_.find(v);
  if (it == slices_.end()) return;
  SliceGrads sg = std::move(it->second);
  slices_.erase(it);
  Value* any = nullptr;
  for (Value* g : sg.byIndex) any = any ? any : g;
  std::vector<Value*> parts;
  for (Value* g : sg.byIndex) parts.push_back(g ? g : b_.op(OpKind::ZerosLike, {any}));
  Value* stacked = b_.op(OpKind::Stack, {b_.list(parts), b_.i(sg.dim)}, v->type());
  accumulate(const_cast<Value*>(v), stacked);
}

Value* GradientContext::gradEntry(const Value* v) {
  materialize(v);
  return grads_.find(v);
}

Value* GradientContext::gradOf(Value* v) {
  materialize(v);
  if (Value* g = grads_.find(v)) return g;
  if (v->type().isTensor()) return b_.op(OpKind::ZerosLike, {F(v)}, v->type());
  return nullptr;
}

void GradientContext::accumulate(Value* v, Value* g) {
  if (!g || !requiresGrad(v)) return;
  Value*& entry = grads_[v];
  if (!entry) {
    entry = g;
    return;
  }
  USER_CHECK(v->type().isTensor(), "autodiff: the Tensor[] %{} gets gradients from two uses; build one list per use",
             v->name());
  entry = b_.op(OpKind::Add, {entry, g, b_.i(1)}, v->type());
}

Value* GradientContext::savedMeta(OpKind k, Value* v, Type t) {
  auto& cache = k == OpKind::Sizes ? savedSizes_ : savedDTypes_;
  if (Value* m = cache.find(v)) return m;
  Node* meta = v->graph()->create(k, {v});
  meta->output()->setType(std::move(t));
  meta->insertAfter(v->node());  // a param's: the block's first node
  return cache[v] = F(meta->output());
}

Value* GradientContext::sizesOf(Value* v) {
  if (auto s = staticSizes(v)) return b_.ints(*s);
  return savedMeta(OpKind::Sizes, v, Type::of(TypeKind::IntList));
}

Value* GradientContext::castTo(Value* g, Value* v) {
  Value* code = v->type().dtype ? b_.i(static_cast<int64_t>(*v->type().dtype))
                                : savedMeta(OpKind::DTypeOf, v, Type::of(TypeKind::Int));
  return b_.op(OpKind::ToDType, {g, code}, v->type());
}

Value* GradientContext::reduceTo(Value* g, Value* v, Value* result) {
  if (!v->type().isTensor()) return nullptr;
  auto sv = staticSizes(v), sr = staticSizes(result);
  if (!sv || !sr || *sv != *sr) {
    Type t = v->type();
    t.dtype = result->type().dtype;
    g = b_.op(OpKind::SumToSize, {g, sizesOf(v)}, t);
  }
  // A promoting op (x32 * y64) hands its operand a gradient in the operand's own dtype; when both dtypes
  // are known and equal, as after specialization for one-dtype models, nothing is added.
  const auto &dv = v->type().dtype, &dr = result->type().dtype;
  if (dv && dr && *dv == *dr) return g;
  return castTo(g, v);
}

namespace {

// The statistics of a layer norm: the input's type with the normalized dims as 1.
Type layerNormStatsType(const Node* n) {
  Type stats = n->input(0)->type();
  stats.requiresGrad.reset();
  auto shape = constantInts(n->input(1));
  if (stats.sizes && shape && shape->size() <= stats.sizes->size())
    std::fill(stats.sizes->end() - static_cast<long>(shape->size()), stats.sizes->end(), 1);
  else
    stats.sizes.reset();
  return stats;
}

// Per channel [C] of a batch norm's input [N, C, *].
Type channelType(const Node* n) {
  Type t = n->input(0)->type();
  t.requiresGrad.reset();
  if (t.sizes && t.sizes->size() >= 2) t.sizes = std::vector<int64_t>{(*t.sizes)[1]};
  else t.sizes.reset();
  return t;
}

void rewriteForBackward(Graph& f, Node* n) {
  OpKind to;
  std::vector<Value*> inputs(n->inputs().begin(), n->inputs().end());
  std::vector<Type> extra;  // the types of the outputs past the first
  if (n->kind() == OpKind::LayerNorm) {
    to = OpKind::NativeLayerNorm;
    inputs.resize(5);  // without cudnn_enable
    extra = {layerNormStatsType(n), layerNormStatsType(n)};
  } else if (n->kind() == OpKind::BatchNorm) {
    to = OpKind::NativeBatchNorm;
    inputs.resize(8);  // without cudnn_enabled
    Type running = channelType(n);
    running.requiresGrad = false;
    extra = {channelType(n), channelType(n), running, running};
  } else if (n->kind() == OpKind::MaxPool2d) {
    to = OpKind::MaxPool2dWithIndices;
    Type idx = n->output(0)->type();
    idx.dtype = DType::Int64;
    idx.requiresGrad = false;
    extra = {idx};
  } else {
    return;  // its own forward saves what its gradient needs
  }
  Node* full = f.create(to, inputs, 1 + extra.size());
  full->output(0)->setType(n->output(0)->type());
  for (size_t k = 0; k < extra.size(); ++k) full->output(k + 1)->setType(extra[k]);
  full->insertBefore(n);
  f.replaceAllUsesWith(n->output(0), full->output(0));
  f.erase(n);
}

}  // namespace

Gradient differentiate(const Graph& original, const std::vector<bool>& seeded) {
  Gradient grad;
  grad.forward = original.clone();
  Graph& f = *grad.forward;
  propagateRequiresGrad(f);
  // An op on the gradient path whose backward reads more than its output runs as the form that returns
  // it: layer_norm as native_layer_norm (the mean and rstd), batch_norm as the functional native batch norm
  // (the mean and invstd), max_pool2d as max_pool2d_with_indices (the positions of the maxima).
  for (Node* n : f.block()->nodesList())
    if (!n->outputs().empty() && GradientContext::requiresGrad(n->output(0))) rewriteForBackward(f, n);
  grad.backward = std::make_shared<Graph>();
  Graph& bw = *grad.backward;
  GraphBuilder b(bw);
  GradientContext ctx(f, bw, b);

  // One gradient input per forward output, seeded into the outputs' gradients.
  grad.numOutputs = f.outputs().size();
  std::vector<Value*> gradInputs;
  for (size_t k = 0; k < f.outputs().size(); ++k) {
    Value* out = f.outputs()[k];
    Type t = out->type();
    t.requiresGrad.reset();
    gradInputs.push_back(bw.addInput(t, fmt::format("grad_{}", out->name().empty() ? std::to_string(k) : out->name())));
  }
  IR_CHECK(seeded.empty() || seeded.size() == f.outputs().size())
      << "differentiate: " << seeded.size() << " seed flags for " << f.outputs().size() << " outputs";
  for (size_t k = 0; k < f.outputs().size(); ++k)
    if (seeded.empty() || seeded[k]) ctx.accumulate(f.outputs()[k], gradInputs[k]);

  for (Node* n : f.block()->nodesList() | std::views::reverse) {
    IR_CHECK(n->blocks().empty() && !n->subgraph()) << "differentiate: " << n->describe() << " has blocks";
    bool anyGrad = false, anyInput = false;
    for (Value* v : n->outputs()) anyGrad = anyGrad || ctx.hasGrad(v);
    for (Value* v : n->inputs()) anyInput = anyInput || GradientContext::requiresGrad(v);
    if (anyGrad && anyInput) emitGradient(ctx, n);
  }

  for (size_t i = 0; i < f.inputs().size(); ++i) {
    Value* in = f.inputs()[i];
    if (!GradientContext::requiresGrad(in)) continue;
    Value* g = ctx.gradEntry(in);
    grad.reached.push_back(g != nullptr);
    if (!g) {
      // Nothing flows back: zeros for a tensor; an empty list for a list (the tape adds nothing then).
      g = in->type().isTensor() ? b.op(OpKind::ZerosLike, {ctx.F(in)}, in->type())
                                : b.list({}, TypeKind::TensorList);
    }
    bw.registerOutput(g);
    grad.gradInputs.push_back(i);
  }
  for (Value* v : ctx.saved()) f.registerOutput(v);
  verifyOrThrow(f, "differentiate (forward)");
  verifyOrThrow(bw, "differentiate (backward)");
  return grad;
}

int64_t leaveProductsToTape(Gradient& g) {
  Graph& bw = *g.backward;
  const size_t gradients = g.gradInputs.size();
  int64_t changed = 0;
  for (size_t j = 0; j < gradients; ++j) {
    Value* v = bw.outputs()[j];
    Node* mm = v->node();
    if (mm->kind() != OpKind::Mm || v->uses().size() != 1 || !v->type().isTensor()) continue;
    bw.block()->returnNode()->replaceInput(j, mm->input(0));
    bw.registerOutput(mm->input(1));
    g.products.push_back({j, bw.outputs().size() - 1});
    bw.erase(mm);
    ++changed;
  }
  return changed;
}

}  // namespace gj
