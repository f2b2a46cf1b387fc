#pragma once
// The optimizing pipelines, one per executor flavour, as straight-line code (STYLE.md, rule 5).
#include "executors/autograd.h"
#include "executors/interpreter.h"
#include "passes/pass_manager.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gj {



struct PipelineOptions {
  FuserKind fuser = FuserKind::None;
  FuserOptions fuserOptions;      ///< device, kernel dumps, fault injection
  bool unrollLoops = true;        ///< unroll loops whose trip count the specialization makes constant
  int64_t maxFullUnroll = 512;    ///< longer loops are unrolled by 8 and kept
  PassOptions passes;             ///< verification and GJ_LOG printing
};

/// What the interpreter runs: an optimized graph and the Gradient of each of its DifferentiableGraphs.
struct Plan {
  std::shared_ptr<Graph> graph;
  GradientTable gradients;
  bool withGrad = false;
  KernelTable kernels;             ///< compiled fusion groups (top graph and every forward/backward graph)
  /// What runs derive from these graphs' structure, kept between runs (the graphs no longer change).
  std::shared_ptr<RunPlanCache> runPlans = std::make_shared<RunPlanCache>();
  FusionReport fusion;
  std::vector<PassRecord> passes;  ///< every pass run, in order, with its time
  double passMs() const;
};

/// The optimizing pipeline for a graph whose inputs have complete types (a specialization): simplify,
/// unroll, batch GEMMs, then, when an input requires grad, autodiff subgraphs (each differentiated and
/// optimized), then fusion. `g` is changed in place.
Plan optimizeSpecialized(std::shared_ptr<Graph> g, const std::vector<bool>& requiresGrad, const PipelineOptions& o);

/// The profiling executor's plan graph, before optimization:
///   %checked..., %ok = prim::TypeCheck(inputs)      (types: `observed`, or the declared ones)
///   %outs = prim::If(%ok)
///     block0(): the graph on %checked (optimizeSpecialized then specializes it to those types)
///     block1(): prim::FallbackGraph_0(inputs)       (the graph as written, ready for autodiff)
std::shared_ptr<Graph> buildGuardedGraph(const Graph& original, const std::vector<std::optional<Type>>& observed,
                                         const std::vector<bool>& requiresGrad);


/// The unoptimized graph, prepared for autodiff when an input requires grad (loops kept).
Plan unoptimizedPlan(std::shared_ptr<Graph> g, const std::vector<bool>& requiresGrad, const PipelineOptions& o);

}  // namespace gj
