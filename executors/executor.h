#pragma once
// The executors behind Function (internal). Each runs a call, given its inputs, grad flags and an
// optional tape, and keeps its own plans and statistics under its own lock.
#include "executors/argument_spec.h"
#include "executors/function.h"
#include "executors/interpreter.h"
#include "executors/pipeline.h"

#include <list>
#include <mutex>
#include <unordered_map>

namespace gj {

class Executor {
 public:
  virtual ~Executor() = default;
  virtual std::vector<IValue> run(std::vector<IValue> inputs, const std::vector<bool>& requiresGrad, Tape* tape) = 0;
  FunctionStats stats() const {
    std::lock_guard<std::mutex> lock(mu_);
    FunctionStats s = stats_;
    for (const auto& r : kernelRuns_) {
      s.kernelRuns += r->ran;
      s.kernelRefusals += r->refused;
      std::lock_guard<std::mutex> times(r->mutex);
      s.kernelTimes.insert(s.kernelTimes.end(), r->times.begin(), r->times.end());
    }
    return s;
  }
  std::string optimizedGraph() const {
    std::lock_guard<std::mutex> lock(mu_);
    return lastOptimized_;
  }

 protected:
  Executor(std::shared_ptr<const Graph> g, FunctionOptions o) : graph_(std::move(g)), opts_(std::move(o)) {}
  PipelineOptions pipelineOptions() const;
  /// Records a freshly built plan in the stats (under the lock).
  void noteBuilt(const Plan& p);

  std::shared_ptr<const Graph> graph_;
  FunctionOptions opts_;
  mutable std::mutex mu_;
  FunctionStats stats_;
  std::vector<std::shared_ptr<KernelRunCounts>> kernelRuns_;  // every plan's, evicted ones too
  std::string lastOptimized_;
};

/// Specializes on every call's ArgumentSpec; a miss builds and caches a new plan.
class LegacyExecutor final : public Executor {
 public:
  LegacyExecutor(std::shared_ptr<const Graph> g, FunctionOptions o) : Executor(std::move(g), std::move(o)) {}
  std::vector<IValue> run(std::vector<IValue> inputs, const std::vector<bool>& requiresGrad, Tape* tape) override;

 private:
  std::shared_ptr<const Plan> planFor(const ArgumentSpec& spec, const std::vector<bool>& requiresGrad);
  std::unordered_map<ArgumentSpec, std::shared_ptr<const Plan>, ArgumentSpecHash> cache_;
  std::list<ArgumentSpec> order_;  // build order, for eviction
};

/// Profiles the first runs, then runs a plan optimized for what it saw behind a prim::TypeCheck guard,
/// with the unoptimized graph as the fallback; repeated guard failures re-profile.
class ProfilingExecutor final : public Executor {
 public:
  ProfilingExecutor(std::shared_ptr<const Graph> g, FunctionOptions o);
  std::vector<IValue> run(std::vector<IValue> inputs, const std::vector<bool>& requiresGrad, Tape* tape) override;

 private:
  struct Mode {  // everything that depends on which inputs require grad
    std::shared_ptr<const Plan> profiling;  // the graph with prim::profile nodes
    std::shared_ptr<const Plan> optimized;  // guarded plan, once built
    int profiledRuns = 0;
    int consecutiveFailures = 0;
  };
  Mode& modeFor(const std::vector<bool>& requiresGrad);
  std::shared_ptr<Graph> profilingGraph() const;
  std::vector<IValue> profile(Mode& m, std::vector<IValue> inputs, const std::vector<bool>& requiresGrad, Tape* tape,
                              std::unique_lock<std::mutex>& lock);
  std::shared_ptr<const Plan> buildGuardedPlan(const std::vector<bool>& requiresGrad);
  void noteGuardResult(Mode& m, const std::vector<std::string>& failures);

  std::vector<std::optional<Type>> observed_;  // per graph input: types seen while profiling, merged
  std::map<std::vector<bool>, Mode> modes_;
};

}  // namespace gj
