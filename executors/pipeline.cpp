#include "executors/pipeline.h"

#include "fusers/recurrence.h"
#include "ir/verifier.h"
#include "passes/shape_propagation.h"
#include "passes/util.h"
#include "support/error.h"

#include <algorithm>
#include <chrono>
#include <functional>

namespace gj {

double Plan::passMs() const {
  double ms = 0;
  for (const PassRecord& r : passes) ms += r.ms;
  return ms;
}

// Every step goes through the pass runner: verified after it when asked, logged under GJ_LOG, timed.
// Returns whether the last pass changed g.
static bool run(Plan& p, Graph& g, const std::vector<std::string>& names, const PipelineOptions& o) {
  auto recs = runPasses(g, names, o.passes);
  p.passes.insert(p.passes.end(), recs.begin(), recs.end());
  return !recs.empty() && recs.back().changed;
}

// A pass with typed parameters (passes.def's PASS_WITH_PARAMS), recorded as the named ones are.
template <typename Params>
static bool run(Plan& p, Graph& g, const Params& params, const PipelineOptions& o) {
  p.passes.push_back(runPass(g, params, o.passes));
  return p.passes.back().changed;
}

static void step(Plan& p, Graph& g, std::string_view name, const std::function<bool(Graph&)>& f,
                 const PipelineOptions& o) {
  p.passes.push_back(runPass(g, name, f, o.passes));
}

static bool anyTrue(const std::vector<bool>& v) { return std::find(v.begin(), v.end(), true) != v.end(); }


// Differentiates every DifferentiableGraph and simplifies its forward and backward graphs.
static std::vector<std::pair<const Node*, std::shared_ptr<Gradient>>> differentiateAll(Plan& p,
                                                                                     const PipelineOptions& o) {
  GradientTable raw;
  step(p, *p.graph, "differentiate", [&](Graph& g) {
    raw = differentiateSubgraphs(g);
    if (o.passes.verifyEach)
      for (const auto& [node, grad] : raw) {
        verifyOrThrow(*grad->forward, "differentiate (a forward graph)");
        verifyOrThrow(*grad->backward, "differentiate (a backward graph)");
      }
    return !raw.empty();
  }, o);
  std::vector<std::pair<const Node*, std::shared_ptr<Gradient>>> out;
  for (auto& [node, grad] : raw) {
    auto g = std::make_shared<Gradient>(*grad);
    // Shapes again once constants are folded: a gradient's split sizes are computed from sizes until
    // then, and batch-mm needs its pieces' sizes (a lower layer's weight gradients).
    for (Graph* sub : {g->forward.get(), g->backward.get()})
      run(p, *sub, {"shape-propagation", "constant-propagation", "peephole", "shape-propagation", "cse"}, o);
    // A kept loop's step runs once an iteration: its weight gradients go to the tape as factors (before
    // batch-mm, which would merge those products).
    if (inLoopBelow(node, nullptr))
      step(p, *g->backward, "leave-products-to-tape", [&](Graph&) { return leaveProductsToTape(*g) > 0; }, o);
    for (Graph* sub : {g->forward.get(), g->backward.get()})
      run(p, *sub, {"batch-mm", "dce", "shape-propagation", "contiguous-operands"}, o);
    out.emplace_back(node, g);
  }
  return out;
}

// Fuses and compiles the graphs the plan runs: the top graph and every forward and backward graph.
static void fuseAll(Plan& p, std::vector<Graph*> graphs, const PipelineOptions& o) {
  std::unique_ptr<Fuser> fuser = makeFuser(o.fuser, o.fuserOptions);
  if (!fuser) return;
  const bool persistent = o.fuserOptions.persistentRecurrences && o.fuserOptions.device == DeviceKind::Cuda;
  for (Graph* g : graphs) {
    step(p, *g, "fuse", [&](Graph& graph) { return fuser->fuse(graph) > 0; }, o);
    bool changed = p.passes.back().changed;
    if (persistent) {
      step(p, *g, "persistent-recurrences", [&](Graph& graph) {
        RecurrenceReport r = formRecurrences(graph, fuser->groupOp(), recurrenceWeightBudget());
        for (const std::string& line : r.lines) p.fusion.recurrences.push_back(line);
        return r.formed > 0;
      }, o);
      changed = changed || p.passes.back().changed;
    }
    // What fusion left unread (the constants the groups copied in, the chunk rewrites' operands): every
    // run of the graph would still run it.
    if (changed) run(p, *g, {"dce"}, o);
  }
  for (Graph* g : graphs) {
    fuser->compile(*g, p.kernels, p.fusion);
    if (persistent) compileRecurrences(*g, *fuser, o.fuserOptions, p.kernels, p.fusion);
  }
}

// Rounds of full unrolling (each can make the next loop's trip count constant): one per loop in a chain.
constexpr int kMaxFullUnrollRounds = 16;

// The options of a pipeline whose graph holds no frontend form (checked here, once, not before each pass).
static PipelineOptions loweredOnce(const Graph& g, const PipelineOptions& o) {
  requireLowered(g, "graphjit's pipeline");
  PipelineOptions checked = o;
  checked.passes.checkedLowered = true;
  return checked;
}

Plan optimizeSpecialized(std::shared_ptr<Graph> g, const std::vector<bool>& requiresGrad, const PipelineOptions& options) {
  const PipelineOptions o = loweredOnce(*g, options);
  Plan p;
  p.graph = g;
  p.withGrad = anyTrue(requiresGrad);
  run(p, *g, {"shape-propagation", "constant-propagation", "peephole"}, o);
  if (o.unrollLoops) {
    // Full unrolling first, round after round: a loop whose trip count becomes a constant only once the
    // loops before it are unrolled and their results' shapes propagated (a stacked LSTM's upper layers
    // run over the stacked outputs of the layer below) unrolls in a later round. Then what is left is
    // unrolled partially.
    const UnrollOptions full{.maxFullUnroll = o.maxFullUnroll, .factor = 1};
    for (int round = 0; round < kMaxFullUnrollRounds; ++round) {
      if (!run(p, *g, full, o)) break;
      run(p, *g, {"peephole", "shape-propagation", "constant-propagation"}, o);
    }
    if (run(p, *g, UnrollOptions{.maxFullUnroll = o.maxFullUnroll, .factor = 8}, o))
      run(p, *g, {"peephole", "constant-propagation", "shape-propagation"}, o);
  }
  run(p, *g, {"cse", "batch-mm", "licm", "cse", "dce", "shape-propagation"}, o);
  if (p.withGrad) {
    markRequiresGrad(*g, requiresGrad);  // the specialization's flags, as its types are
    run(p, *g, {"requires-grad", "create-autodiff-subgraphs"}, o);
  }
  std::vector<Graph*> graphs = {g.get()};
  auto grads = p.withGrad ? differentiateAll(p, o) : decltype(differentiateAll(p, o)){};
  // After differentiation: a backward reads the forward's operands in its own layout (a transposed
  // weight's transpose is row-major again), so each graph is laid out for itself.
  run(p, *g, {"contiguous-operands"}, o);
  for (auto& [node, grad] : grads) graphs.insert(graphs.end(), {grad->forward.get(), grad->backward.get()});
  fuseAll(p, graphs, o);
  for (auto& [node, grad] : grads) p.gradients[node] = grad;
  return p;
}

// graph(inputs):
//   %checked..., %ok = prim::TypeCheck(inputs)      (types: what profiling saw)
//   %outs = prim::If(%ok)
//     block0(): the graph on %checked, optimized for those types
//     block1(): prim::FallbackGraph_0(inputs)       (the graph as written)
std::shared_ptr<Graph> buildGuardedGraph(const Graph& original, const std::vector<std::optional<Type>>& observed,
                                         const std::vector<bool>& requiresGrad) {
  const Graph* g = &original;
  auto fallback = std::shared_ptr<Graph>(g->clone());
  bool withGrad = std::find(requiresGrad.begin(), requiresGrad.end(), true) != requiresGrad.end();
  if (withGrad) {
    propagateShapes(*fallback);  // ranks and dtypes only: graph_'s input sizes are open
    createSubgraphsForAutodiff(*fallback, requiresGrad);
  }
  auto w = std::make_shared<Graph>();
  std::vector<Value*> ins;
  for (Value* in : g->inputs()) ins.push_back(w->addInput(in->type(), in->name()));
  Node* check = w->create(OpKind::TypeCheck, ins, 0);
  for (size_t i = 0; i < ins.size(); ++i) {
    Type t = i < observed.size() && observed[i] ? *observed[i] : ins[i]->type();
    check->addOutput(t);
  }
  check->addOutput(Type::of(TypeKind::Bool));
  w->block()->append(check);
  Node* branch = w->create(OpKind::If, {check->outputs().back()}, 0);
  w->block()->append(branch);
  Block* fast = branch->addBlock();
  Block* slow = branch->addBlock();
  ValueMap env(*g);
  for (size_t i = 0; i < ins.size(); ++i) env[g->inputs()[i]] = check->output(i);
  for (const Node* n : *g->block()) fast->append(cloneNode(n, *w, env));
  for (Value* out : g->outputs()) fast->registerOutput(env.mapOr(out));
  Node* fb = w->create(OpKind::FallbackGraph, ins, g->outputs().size());
  fb->setSubgraph(fallback);
  slow->append(fb);
  for (Value* v : fb->outputs()) slow->registerOutput(v);
  for (size_t k = 0; k < g->outputs().size(); ++k) {
    Value* o = branch->addOutput(g->outputs()[k]->type());
    if (!g->outputs()[k]->name().empty()) o->setName(g->outputs()[k]->name());
    w->registerOutput(o);
  }
  return w;
}

Plan unoptimizedPlan(std::shared_ptr<Graph> g, const std::vector<bool>& requiresGrad, const PipelineOptions& options) {
  const PipelineOptions o = loweredOnce(*g, options);
  Plan p;
  p.graph = g;
  p.withGrad = anyTrue(requiresGrad);
  if (!p.withGrad) return p;
  // Ranks and dtypes (not sizes: this plan serves every shape) for the gradient formulas that need them.
  run(p, *g, {"shape-propagation"}, o);
  markRequiresGrad(*g, requiresGrad);
  run(p, *g, {"requires-grad", "create-autodiff-subgraphs"}, o);
  step(p, *g, "differentiate", [&](Graph& graph) {
    p.gradients = differentiateSubgraphs(graph);
    return !p.gradients.empty();
  }, o);
  return p;
}

}  // namespace gj
