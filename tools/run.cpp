// graphir run and graphir check: graphs on .npy inputs, and conformance against reference cases.
#include "executors/function.h"
#include "ir/parser.h"
#include "models/reference_case.h"
#include "passes/shape_propagation.h"
#include "executors/interpreter.h"
#include "runtime/npy.h"
#include "tools/graphir.h"

#include <fmt/format.h>

#include <filesystem>
#include <iostream>

namespace fs = std::filesystem;

namespace gj::tools {

FunctionOptions RunSettings::options() const {
  FunctionOptions o;
  o.fuser = fuserFromName(fuser);
  o.executor = executorFromName(executor);
  auto d = deviceFromName(device);
  USER_CHECK(d.has_value(), "unknown device '{}'; devices: cpu, cuda", device);
  o.device = *d;
  o.injectKernelError = injectKernelError;
  return o;
}

std::unique_ptr<Graph> loadIR(const std::string& file) {
  std::unique_ptr<Graph> g = parseIRFile(file);
  checkShapes(*g);
  return g;
}

static std::string outputName(const Value* v, size_t i) {
  return v->name().empty() ? fmt::format("output{}", i) : v->name();
}

static Tensor readNamed(const std::string& dir, const std::string& name, const char* what) {
  std::string path = (fs::path(dir) / (name + ".npy")).string();
  USER_CHECK(fs::exists(path), "missing {}: {} needs {}", what, name, path);
  return readNpy(path);
}

// A graph input's tensor against the graph's declared type (dtype and sizes; the device is the run's).
static void checkDeclared(const Value* in, const Tensor& t, const std::string& from) {
  Type declared = in->type();
  declared.device.reset();
  std::string why = typeMismatch(declared, IValue(t));
  USER_CHECK(why.empty(), "input %{}: {} has {} {} but the graph declares {}: {}; hint: write the .npy with the "
             "declared shape and dtype, or change the graph input's type", in->name(), from, dtypeName(t.dtype()),
             shapeStr(t.sizes()), in->type().str(), why);
}

// The runs graphir makes so that the plan the settings name is the one that runs last: the profiling
// executor interprets its first FunctionOptions::profilingRuns calls and optimizes on the next.
static int runsToOptimize(const FunctionOptions& o) {
  return o.executor == ExecutorKind::Profiling ? o.profilingRuns + 1 : 1;
}

static std::string runLabel(const FunctionOptions& o, int run) {
  if (o.executor != ExecutorKind::Profiling) return fmt::format("run {}", run);
  return fmt::format("run {} ({})", run, run <= o.profilingRuns ? "profiling" : "optimized");
}

// What one run launched: fused kernels (and refusals) between two snapshots of the stats.
static std::string launched(const FunctionStats& before, const FunctionStats& after) {
  std::string s = fmt::format("{} fused kernel launches", after.kernelRuns - before.kernelRuns);
  if (after.kernelRefusals > before.kernelRefusals)
    s += fmt::format(", {} refused (their groups ran unfused)", after.kernelRefusals - before.kernelRefusals);
  return s;
}

// The last line of run and check: what the optimized plan holds, and whether its fused code ran.
static std::string planSummary(const FunctionOptions& o, const FunctionStats& s) {
  if (o.fuser == FuserKind::None) return "fuser none: no fusion groups";
  return fmt::format("fuser {}: {} fusion groups, {} kernels ({} compiled, {} from the cache), {} fused kernel "
                     "launches in all", fuserName(o.fuser), s.fusionGroups, s.kernelsCompiled + s.kernelCacheHits,
                     s.kernelsCompiled, s.kernelCacheHits, s.kernelRuns);
}

// A fuser was named and made groups, yet none of its kernels ran in the optimized run: the results
// are the interpreter's, and saying they were the fuser's would mislead.
static std::string fusedCodeMissing(const FunctionOptions& o, const FunctionStats& s, int64_t optimizedLaunches) {
  if (o.fuser == FuserKind::None || s.fusionGroups == 0 || optimizedLaunches > 0) return {};
  return fmt::format("fuser {} made {} fusion groups but none of their kernels ran (see the warnings above)",
                     fuserName(o.fuser), s.fusionGroups);
}

void makeFolder(const std::string& dir, const char* what) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    throw Error(fmt::format("cannot create the {} folder {}: {}", what, dir, ec.message()), "",
                "give a folder where you may write");
}

// OUT/outputs/NAME.npy for every output, and OUT/grads/NAME.npy for every defined gradient.
static void writeOutputs(const Graph& g, const std::vector<IValue>& outputs, const std::vector<Tensor>& grads,
                         const std::string& outDir) {
  makeFolder((fs::path(outDir) / "outputs").string(), "output");
  for (size_t i = 0; i < outputs.size(); ++i) {
    std::string name = outputName(g.outputs()[i], i);
    USER_CHECK(outputs[i].isTensor(), "output %{} is {}, not a tensor", name, outputs[i].describe());
    std::string path = (fs::path(outDir) / "outputs" / (name + ".npy")).string();
    writeNpy(path, outputs[i].toTensor().to(DeviceKind::Cpu));
    std::cout << fmt::format("wrote {} {}\n", path, shapeStr(outputs[i].toTensor().sizes()));
  }
  if (grads.empty()) return;
  makeFolder((fs::path(outDir) / "grads").string(), "gradient");
  for (size_t i = 0; i < grads.size(); ++i) {
    if (!grads[i].defined()) continue;
    std::string path = (fs::path(outDir) / "grads" / (g.inputs()[i]->name() + ".npy")).string();
    writeNpy(path, grads[i].to(DeviceKind::Cpu));
    std::cout << fmt::format("wrote {} {}\n", path, shapeStr(grads[i].sizes()));
  }
}

int cmdRun(const std::string& file, const std::string& inputsDir, const std::string& outDir, bool backward,
           const std::string& gradOutputsDir, const RunSettings& s) {
  auto g = loadIR(file);
  std::vector<IValue> inputs;
  std::vector<bool> rg;
  for (const Value* in : g->inputs()) {
    USER_CHECK(in->type().isTensor(), "graph input %{} is {}: graphir run reads only tensor inputs from .npy files",
               in->name(), in->type().str());
    Tensor t = readNamed(inputsDir, in->name(), "input");
    checkDeclared(in, t, (fs::path(inputsDir) / (in->name() + ".npy")).string());
    rg.push_back(backward && isFloating(t.dtype()));
    inputs.push_back(t);
  }
  const FunctionOptions options = s.options();
  Function f(*g, options);
  const int runs = runsToOptimize(options);
  std::vector<IValue> outputs;
  std::vector<Tensor> gradOutputs, grads;
  int64_t lastLaunches = 0;
  for (int run = 1; run <= runs; ++run) {
    const FunctionStats before = f.stats();
    outputs = f.forward(inputs, backward ? rg : std::vector<bool>{});
    if (backward) {
      if (gradOutputs.empty()) {
        for (size_t i = 0; i < outputs.size(); ++i) {
          std::string name = outputName(g->outputs()[i], i);
          USER_CHECK(outputs[i].isTensor(), "output %{} is {}, not a tensor", name, outputs[i].describe());
          const Tensor& out = outputs[i].toTensor();
          if (gradOutputsDir.empty()) {
            gradOutputs.push_back(Tensor::full(out.sizes(), out.dtype(), 1.0));
            continue;
          }
          Tensor go = readNamed(gradOutputsDir, name, "gradient");
          USER_CHECK(go.sizes() == out.sizes(), "gradient {} has shape {} but output {} has {}", name,
                     shapeStr(go.sizes()), name, shapeStr(out.sizes()));
          gradOutputs.push_back(go);
        }
        if (gradOutputsDir.empty())
          std::cout << "no --grad-outputs: the gradient of every output is ones (as backward() on a sum)\n";
      }
      grads = f.backward(gradOutputs);
    }
    const FunctionStats after = f.stats();
    lastLaunches = after.kernelRuns - before.kernelRuns;
    std::cout << fmt::format("{}: {}\n", runLabel(options, run), launched(before, after));
  }
  writeOutputs(*g, outputs, grads, outDir);
  const FunctionStats st = f.stats();
  std::cout << planSummary(options, st) << "\n";
  if (std::string why = fusedCodeMissing(options, st, lastLaunches); !why.empty())
    std::cerr << "graphir: warning: " << why << "\n";
  return 0;
}

int cmdCheck(const std::string& caseDir, const RunSettings& s) {
  constexpr double kForward = 1e-5, kGradient = 1e-4;
  ReferenceCase c = readReferenceCase(caseDir);
  Model m = buildModel(c.model, c.config);
  auto inputs = caseInputs(m, c);
  std::vector<bool> rg;
  for (size_t i = 0; i < inputs.size(); ++i) {
    checkDeclared(m.graph->inputs()[i], inputs[i], fmt::format("{}/inputs/{}.npy", c.dir, m.inputs[i].name));
    rg.push_back(isFloating(inputs[i].dtype()));
  }
  std::vector<Tensor> gradOutputs;
  for (const std::string& name : m.outputs) {
    USER_CHECK(c.outputs.count(name), "{}: the case has no outputs/{}.npy", c.dir, name);
    USER_CHECK(c.gradOutputs.count(name), "{}: the case has no grad_outputs/{}.npy", c.dir, name);
    gradOutputs.push_back(c.gradOutputs.at(name));
  }
  const FunctionOptions options = s.options();
  Function f(*m.graph, options);
  bool ok = true;
  auto report = [&](const char* kind, const std::string& name, double err, double tol) {
    bool pass = err <= tol;
    ok = ok && pass;
    std::cout << fmt::format("  {:<8} {:<28} {:.3e}  {}\n", kind, name, err, pass ? "ok" : fmt::format("FAIL (> {:g})", tol));
  };
  std::cout << fmt::format("{}: model {}, fuser {}, executor {}, device {}\n", c.dir, c.model, s.fuser, s.executor,
                           s.device);
  // Every run is compared: under the profiling executor the interpreted profiling runs, then the
  // optimized plan with the fuser's kernels.
  const int runs = runsToOptimize(options);
  int64_t lastLaunches = 0;
  for (int run = 1; run <= runs; ++run) {
    const FunctionStats before = f.stats();
    auto outs = f.forward(std::vector<IValue>(inputs.begin(), inputs.end()), rg);
    auto grads = f.backward(gradOutputs);
    const FunctionStats after = f.stats();
    lastLaunches = after.kernelRuns - before.kernelRuns;
    std::cout << fmt::format("{}: {}\n", runLabel(options, run), launched(before, after));
    for (size_t i = 0; i < m.outputs.size(); ++i)
      report("output", m.outputs[i], relativeError(outs[i].toTensor(), c.outputs.at(m.outputs[i])), kForward);
    for (size_t i = 0; i < m.inputs.size(); ++i) {
      auto it = c.grads.find(m.inputs[i].name);
      if (it == c.grads.end()) continue;
      report("gradient", m.inputs[i].name, grads[i].defined() ? relativeError(grads[i], it->second) : INFINITY,
             kGradient);
    }
  }
  const FunctionStats st = f.stats();
  std::cout << planSummary(options, st) << "\n";
  if (std::string why = fusedCodeMissing(options, st, lastLaunches); !why.empty()) {
    std::cout << "FAIL: " << why << "\n";
    return 1;
  }
  std::cout << (ok ? "PASS\n" : "FAIL\n");
  return ok ? 0 : 1;
}

}  // namespace gj::tools
