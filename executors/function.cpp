#include "executors/function.h"
#include "support/environment.h"

#include "executors/executor.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "passes/shape_propagation.h"
#include "runtime/cuda/device.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <thread>

namespace gj {

namespace {

struct RegisteredExecutor {
  ExecutorKind kind;
  std::string_view name, help;
};

constexpr RegisteredExecutor kExecutors[] = {
#define EXECUTOR(E, NAME, HELP) {ExecutorKind::E, NAME, HELP},
#include "executors/executors.def"
#undef EXECUTOR
};

constexpr ExecutorKind kExecutorKinds[] = {
#define EXECUTOR(E, NAME, HELP) ExecutorKind::E,
#include "executors/executors.def"
#undef EXECUTOR
};

}  // namespace

std::span<const ExecutorKind> allExecutors() { return kExecutorKinds; }
std::string_view executorName(ExecutorKind k) { return kExecutors[static_cast<size_t>(k)].name; }
std::string_view executorHelp(ExecutorKind k) { return kExecutors[static_cast<size_t>(k)].help; }

ExecutorKind executorFromName(std::string_view name) {
  std::vector<std::string_view> names;
  for (const RegisteredExecutor& r : kExecutors) {
    if (r.name == name) return r.kind;
    names.push_back(r.name);
  }
  throw Error(fmt::format("unknown executor '{}'", name), "", fmt::format("executors: {}", fmt::join(names, ", ")));
}

std::string FunctionStats::str() const {
  std::string s = fmt::format(
      "calls {}, specializations {}, profiled runs {}, guard failures {}, re-profiles {}, fallback runs {}, "
      "fusion groups {}, kernels {} ({} from disk), kernel runs {}, refused {}, compile {:.1f} ms, passes {:.1f} ms",
      calls, specializations, profiledRuns, guardFailures, reprofiles, fallbackRuns, fusionGroups, kernelsCompiled,
      kernelDiskHits, kernelRuns, kernelRefusals, compileMs, passMs);
  for (const std::string& w : warnings) s += "\n  warning: " + w;
  for (const auto& [reason, n] : guardFailureReasons) s += fmt::format("\n  guard failed {}x: {}", n, reason);
  return s;
}

// ---- Executor ----

PipelineOptions Executor::pipelineOptions() const {
  PipelineOptions o;
  o.fuser = opts_.fuser;
  o.fuserOptions = opts_.fuserOptions;
  o.fuserOptions.device = opts_.device;
  if (o.fuserOptions.dumpDir.empty())
    if (const auto env = environment().dumpKernels) o.fuserOptions.dumpDir = *env;
  if (!o.fuserOptions.dumpDir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(o.fuserOptions.dumpDir, ec);
    USER_CHECK(!ec, "cannot create the kernel dump folder '{}' (GJ_DUMP_KERNELS or FuserOptions::dumpDir): {}",
               o.fuserOptions.dumpDir, ec.message());
  }
  o.unrollLoops = opts_.unrollLoops;
  o.passes = PassOptions::fromEnvironment();
  o.passes.verifyEach = opts_.verifyEach;
  return o;
}

void Executor::noteBuilt(const Plan& p) {
  ++stats_.specializations;
  stats_.passMs += p.passMs();
  stats_.fusionGroups += p.fusion.groups;
  stats_.kernelsCompiled += p.fusion.kernelsCompiled;
  stats_.kernelCacheHits += p.fusion.cacheHits;
  stats_.kernelDiskHits += p.fusion.diskHits;
  stats_.compileMs += p.fusion.compileMs;
  kernelRuns_.push_back(p.fusion.runs);
  for (const std::string& w : p.fusion.warnings) {
    std::fprintf(stderr, "graphjit: warning: %s\n", w.c_str());
    stats_.warnings.push_back(w);
  }
  for (const std::string& r : p.fusion.recurrences) stats_.recurrences.push_back(r);
  lastOptimized_ = printIR(*p.graph);
}

// ---- legacy ----

std::shared_ptr<const Plan> LegacyExecutor::planFor(const ArgumentSpec& spec, const std::vector<bool>& requiresGrad) {
  std::lock_guard<std::mutex> lock(mu_);
  ++stats_.calls;
  if (auto it = cache_.find(spec); it != cache_.end()) return it->second;
  auto g = std::shared_ptr<Graph>(graph_->clone());
  spec.applyTo(*g);
  auto plan = std::make_shared<const Plan>(optimizeSpecialized(g, requiresGrad, pipelineOptions()));
  noteBuilt(*plan);
  cache_.emplace(spec, plan);
  order_.push_back(spec);
  if (order_.size() > opts_.maxSpecializations) {
    cache_.erase(order_.front());
    order_.pop_front();
  }
  return plan;
}

std::vector<IValue> LegacyExecutor::run(std::vector<IValue> inputs, const std::vector<bool>& requiresGrad, Tape* tape) {
  for (size_t i = 0; i < inputs.size() && i < graph_->inputs().size(); ++i) checkInputType(graph_->inputs()[i], inputs[i]);
  USER_CHECK(inputs.size() == graph_->inputs().size(), "the graph takes {} inputs but {} were given",
             graph_->inputs().size(), inputs.size());
  auto plan = planFor(ArgumentSpec::of(inputs, requiresGrad), requiresGrad);
  RunOptions ro;
  ro.tape = tape;
  ro.requiresGrad = requiresGrad;
  ro.keepAlive = plan;
  ro.device = opts_.device;
  return Interpreter(*plan->graph, &plan->gradients, &plan->kernels, plan->runPlans.get()).run(std::move(inputs), ro);
}

// ---- profiling ----

namespace {

Type typeOf(const IValue& v, const Type& declared) {
  if (!v.isTensor()) return declared;
  const Tensor& t = v.toTensor();
  return Type::tensor(t.dtype(), t.sizes(), t.device());
}

class ProfileRecorder final : public RunObserver {
 public:
  explicit ProfileRecorder(size_t n) : seen(n) {}
  void profiled(const Node* n, const IValue& v) override {
    size_t i = n->input(0)->offset();  // profile nodes sit on graph inputs
    Type t = typeOf(v, n->input(0)->type());
    seen[i] = seen[i] ? mergeTypes(*seen[i], t) : t;
  }
  std::vector<std::optional<Type>> seen;
};

class GuardRecorder final : public RunObserver {
 public:
  void guardFailed(const Node*, const std::string& reason) override { failures.push_back(reason); }
  std::vector<std::string> failures;
};

}  // namespace

ProfilingExecutor::ProfilingExecutor(std::shared_ptr<const Graph> g, FunctionOptions o)
    : Executor(std::move(g), std::move(o)), observed_(graph_->inputs().size()) {
  USER_CHECK(opts_.profilingRuns >= 1, "profilingRuns must be at least 1, got {}", opts_.profilingRuns);
  USER_CHECK(opts_.maxGuardFailures >= 1, "maxGuardFailures must be at least 1, got {}", opts_.maxGuardFailures);
}

ProfilingExecutor::Mode& ProfilingExecutor::modeFor(const std::vector<bool>& requiresGrad) {
  return modes_[requiresGrad];
}

// The graph with a prim::profile node on every tensor input.
std::shared_ptr<Graph> ProfilingExecutor::profilingGraph() const {
  auto g = std::shared_ptr<Graph>(graph_->clone());
  Node* first = g->block()->paramNode()->next();
  for (Value* in : g->inputs()) {
    if (!in->type().isTensor()) continue;
    Node* p = g->create(OpKind::Profile, {in});
    p->output()->setType(in->type());
    p->insertBefore(first);
    g->replaceAllUsesWith(in, p->output());
    p->replaceInput(0, in);
  }
  return g;
}

std::vector<IValue> ProfilingExecutor::profile(Mode& m, std::vector<IValue> inputs,
                                               const std::vector<bool>& requiresGrad, Tape* tape,
                                               std::unique_lock<std::mutex>& lock) {
  if (!m.profiling)
    m.profiling = std::make_shared<const Plan>(unoptimizedPlan(profilingGraph(), requiresGrad, pipelineOptions()));
  auto plan = m.profiling;
  lock.unlock();
  ProfileRecorder rec(graph_->inputs().size());
  RunOptions ro;
  ro.tape = tape;
  ro.requiresGrad = requiresGrad;
  ro.observer = &rec;
  ro.keepAlive = plan;
  ro.device = opts_.device;
  auto out = Interpreter(*plan->graph, &plan->gradients, &plan->kernels, plan->runPlans.get()).run(std::move(inputs), ro);
  lock.lock();
  for (size_t i = 0; i < observed_.size(); ++i)
    if (rec.seen[i]) observed_[i] = observed_[i] ? mergeTypes(*observed_[i], *rec.seen[i]) : rec.seen[i];
  ++m.profiledRuns;
  ++stats_.profiledRuns;
  return out;
}

std::shared_ptr<const Plan> ProfilingExecutor::buildGuardedPlan(const std::vector<bool>& requiresGrad) {
  auto w = buildGuardedGraph(*graph_, observed_, requiresGrad);
  return std::make_shared<const Plan>(optimizeSpecialized(w, requiresGrad, pipelineOptions()));
}

void ProfilingExecutor::noteGuardResult(Mode& m, const std::vector<std::string>& failures) {
  if (failures.empty()) {
    m.consecutiveFailures = 0;
    return;
  }
  ++stats_.guardFailures;
  ++stats_.fallbackRuns;
  for (const std::string& r : failures) ++stats_.guardFailureReasons[r];
  if (++m.consecutiveFailures < opts_.maxGuardFailures) return;
  // Re-profile: the next runs add what they see to the types seen so far, so a plan built after them
  // accepts every shape seen (a dimension that varied becomes *); recompilations stay bounded.
  m.optimized.reset();
  m.profiledRuns = 0;
  m.consecutiveFailures = 0;
  ++stats_.reprofiles;
}

std::vector<IValue> ProfilingExecutor::run(std::vector<IValue> inputs, const std::vector<bool>& requiresGrad,
                                           Tape* tape) {
  std::unique_lock<std::mutex> lock(mu_);
  ++stats_.calls;
  Mode& m = modeFor(requiresGrad);
  if (!m.optimized && m.profiledRuns < opts_.profilingRuns)
    return profile(m, std::move(inputs), requiresGrad, tape, lock);
  if (!m.optimized) {
    m.optimized = buildGuardedPlan(requiresGrad);
    noteBuilt(*m.optimized);
  }
  auto plan = m.optimized;
  lock.unlock();
  GuardRecorder guards;
  RunOptions ro;
  ro.tape = tape;
  ro.requiresGrad = requiresGrad;
  ro.observer = &guards;
  ro.keepAlive = plan;
  ro.device = opts_.device;
  auto out = Interpreter(*plan->graph, &plan->gradients, &plan->kernels, plan->runPlans.get()).run(std::move(inputs), ro);
  lock.lock();
  noteGuardResult(modeFor(requiresGrad), guards.failures);
  return out;
}

// ---- Function ----

struct Function::PendingBackwards {
  struct Forward {
    std::vector<IValue> outputs;
    std::shared_ptr<Tape> tape;
  };
  std::mutex mu;
  std::map<std::thread::id, Forward> byThread;
};

// The graph a Function runs: the given one with every input's sizes left open (dtype and rank stay), so
// that calls may bring other sizes; the executors specialize on what comes.
static std::shared_ptr<const Graph> generalized(const Graph& graph) {
  std::shared_ptr<Graph> g = graph.clone();
  for (Value* in : g->inputs()) {
    Type t = in->type();
    if (t.isTensor() && t.sizes) std::fill(t.sizes->begin(), t.sizes->end(), kUnknownDim);
    in->setType(t);
  }
  return g;
}

Function::Function(const Graph& graph, FunctionOptions options)
    : graph_((requireLowered(graph, "graphjit's executors"), checkShapes(graph), generalized(graph))),
      options_(std::move(options)),
      pending_(std::make_unique<PendingBackwards>()) {
  if (!options_.fuserOptions.context) options_.fuserOptions.context = Context::shared();
  const ContextScope scope(*options_.fuserOptions.context);
  if (options_.device == DeviceKind::Cuda) cuda::requireDevice();  // "no CUDA device: <why>" where there is none
  options_.fuserOptions.cudaLaunch.validate();
  USER_CHECK(options_.fuserOptions.cudaLaunch.isDefault() || options_.device == DeviceKind::Cuda,
             "CUDA launch options ({}) apply to device cuda only", options_.fuserOptions.cudaLaunch.str());
  USER_CHECK(!options_.fuserOptions.persistentRecurrences || options_.device == DeviceKind::Cuda,
             "persistent recurrences run on device cuda only");
  if (options_.executor == ExecutorKind::Legacy)
    executor_ = std::make_unique<LegacyExecutor>(graph_, options_);
  else
    executor_ = std::make_unique<ProfilingExecutor>(graph_, options_);
}

Function::~Function() = default;

// On a CUDA Function, host tensors among the inputs are copied to the device.
static void toDevice(std::vector<IValue>& inputs, DeviceKind device) {
  if (device == DeviceKind::Cpu) return;
  for (IValue& v : inputs) {
    if (v.isTensor() && v.toTensor().defined()) {
      v = IValue(v.toTensor().to(device));
    } else if (v.isTensorList()) {
      TensorList xs = v.toTensorList();
      for (Tensor& t : xs) t = t.to(device);
      v = IValue(std::move(xs));
    }
  }
}

std::vector<IValue> Function::forward(std::vector<IValue> inputs, const std::vector<bool>& requiresGrad) {
  const ContextScope scope(*options_.fuserOptions.context);
  toDevice(inputs, options_.device);
  bool withGrad = std::find(requiresGrad.begin(), requiresGrad.end(), true) != requiresGrad.end();
  if (!withGrad) return executor_->run(std::move(inputs), {}, nullptr);
  USER_CHECK(requiresGrad.size() == inputs.size(), "forward: {} requires_grad flags for {} inputs",
             requiresGrad.size(), inputs.size());
  auto tape = std::make_shared<Tape>(inputs.size());
  auto outs = executor_->run(std::move(inputs), requiresGrad, tape.get());
  std::lock_guard<std::mutex> lock(pending_->mu);
  pending_->byThread[std::this_thread::get_id()] = {outs, tape};
  return outs;
}

std::vector<Tensor> Function::backward(const std::vector<Tensor>& gradOutputs) {
  const ContextScope scope(*options_.fuserOptions.context);
  PendingBackwards::Forward p;
  {
    std::lock_guard<std::mutex> lock(pending_->mu);
    auto it = pending_->byThread.find(std::this_thread::get_id());
    USER_CHECK(it != pending_->byThread.end(),
               "backward: no forward with gradients on in this thread; call forward(inputs, requiresGrad) first");
    p = std::move(it->second);
    pending_->byThread.erase(it);
  }
  return p.tape->backward(p.outputs, gradOutputs);
}

FunctionStats Function::stats() const { return executor_->stats(); }
std::string Function::optimizedGraph() const { return executor_->optimizedGraph(); }

}  // namespace gj
