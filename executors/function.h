#pragma once
// The public API: a Function compiles a graph with the chosen executor and fuser and runs it forward
// and backward.
//
//   gj::Function f(graph, {.fuser = gj::FuserKind::None, .executor = gj::ExecutorKind::Profiling});
//   auto outputs = f.forward(inputs, requiresGrad);
//   auto grads = f.backward(gradOutputs);   // for the inputs that require grad
//
// Functions with different options live side by side, and one Function may be called from several threads
// at once (each thread's backward() pairs with its own last forward()). What a Function compiles is kept in
// its context (FunctionOptions::fuserOptions.context, runtime/context.h): the process's default one unless
// the caller gives its own, so that Functions with different contexts share no cache and no JIT session.
#include "fusers/fuser.h"
#include "ir/graph.h"
#include "runtime/ivalue.h"
#include "support/build.h"

#include <functional>
#include <map>
#include <span>
#include <memory>
#include <string_view>
#include <string>
#include <vector>

namespace gj {

/// How a Function runs its graph: `legacy` specializes ahead of time on each call's argument types;
/// `profiling` profiles real runs, then runs a plan specialized to what it saw behind a type guard.
/// (executors/executors.def)
enum class ExecutorKind : uint8_t {
#define EXECUTOR(E, NAME, HELP) E,
#include "executors/executors.def"
#undef EXECUTOR
};
/// Every ExecutorKind in the table's order.
std::span<const ExecutorKind> allExecutors();
std::string_view executorName(ExecutorKind k);  ///< its command-line name (executors.def)
std::string_view executorHelp(ExecutorKind k);  ///< what --help says of it
/// The executor named `name` on the command line; a gj::Error lists the names.
ExecutorKind executorFromName(std::string_view name);

struct FunctionOptions {
  FuserKind fuser = FuserKind::None;  ///< a row of fusers/fusers.def, or None
  ExecutorKind executor = ExecutorKind::Profiling;
  DeviceKind device = DeviceKind::Cpu;
  int profilingRuns = 1;           ///< profiling: interpreted runs before optimizing
  int maxGuardFailures = 3;        ///< profiling: consecutive guard failures before re-profiling
  size_t maxSpecializations = 64;  ///< legacy: cached specializations (least recently built dropped first)
  bool unrollLoops = true;         ///< unroll loops whose trip count the specialization fixes
  bool verifyEach = kDebugBuild;   ///< verify the graph after every pass
  /// The fuser's own options (fusers/fuser.h): the context (null: Context::shared()), kernel dumps
  /// (default: $GJ_DUMP_KERNELS), CUDA launches, kernel timing (FunctionStats::kernelTimes), persistent
  /// recurrences, the tests' injected failures. Its `device` is ignored: the fuser compiles for the
  /// Function's device.
  FuserOptions fuserOptions;
};

struct FunctionStats {
  int64_t calls = 0;
  int64_t specializations = 0;     ///< optimized plans built
  int64_t profiledRuns = 0;
  int64_t guardFailures = 0;
  std::map<std::string, int64_t> guardFailureReasons;  ///< "input %x: size 3 in dimension 0 where 7 ..." -> count
  int64_t reprofiles = 0;
  int64_t fallbackRuns = 0;        ///< calls that ran the unoptimized graph (failed guards)
  int64_t fusionGroups = 0;
  int64_t kernelsCompiled = 0;
  int64_t kernelCacheHits = 0;     ///< kernels found compiled already (in the context's cache)
  int64_t kernelDiskHits = 0;      ///< of kernelsCompiled, those whose code came from the persistent cache
  int64_t kernelRuns = 0;          ///< fused kernel launches that ran, forward and backward
  int64_t kernelRefusals = 0;      ///< launches a kernel refused (other input sizes): its group ran unfused
  double compileMs = 0;            ///< kernel compilation
  double passMs = 0;               ///< optimizing passes and differentiation
  std::vector<std::string> warnings;  ///< e.g. fusion groups that failed to compile and run unfused
  /// FunctionOptions::fuserOptions.persistentRecurrences: each recurrence found, run as one kernel or refused and why.
  std::vector<std::string> recurrences;
  std::vector<KernelTime> kernelTimes;  ///< FunctionOptions::fuserOptions.timeKernels: each fused kernel's launches
  std::string str() const;
};

class Executor;

class Function {
 public:
  /// The graph is copied; `options.device` must be available (cuda fails with "no CUDA device").
  Function(const Graph& graph, FunctionOptions options = {});
  ~Function();
  Function(const Function&) = delete;
  Function& operator=(const Function&) = delete;

  /// Runs the graph. `requiresGrad` (one flag per input, or empty for none) selects the inputs whose
  /// gradients backward() will return; with any flag set the run records what backward needs. On a
  /// CUDA Function, host tensors among the inputs are copied to the device, and outputs and gradients
  /// stay there.
  std::vector<IValue> forward(std::vector<IValue> inputs, const std::vector<bool>& requiresGrad = {});
  /// Gradients of this thread's last forward() with gradients on: one per input (undefined for inputs
  /// that do not require grad). An undefined gradOutput counts as zero. Consumes that forward.
  std::vector<Tensor> backward(const std::vector<Tensor>& gradOutputs);

  FunctionStats stats() const;
  const FunctionOptions& options() const { return options_; }
  const Graph& graph() const { return *graph_; }
  /// The most recently built optimized graph, printed (empty before the first optimization).
  std::string optimizedGraph() const;

 private:
  struct PendingBackwards;  // each thread's last forward with gradients, which its backward() consumes

  std::shared_ptr<const Graph> graph_;
  FunctionOptions options_;
  std::unique_ptr<Executor> executor_;
  std::unique_ptr<PendingBackwards> pending_;
};

}  // namespace gj
