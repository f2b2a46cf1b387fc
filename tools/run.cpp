// graphir run and graphir check: graphs on .npy inputs, and conformance against reference cases.
#include "executors/function.h"
#include "ir/parser.h"
#include "models/reference_case.h"
#include "passes/frontend.h"
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
  o.fuser = fuser;
  o.executor = executor;
  auto d = deviceFromName(device);
  USER_CHECK(d.has_value(), "unknown device '{}'; devices: cpu, cuda", device);
  o.device = *d;
  o.fuserOptions.injectKernelError = injectKernelError;
  o.fuserOptions.persistentRecurrences = persistentRecurrences;
  return o;
}

std::unique_ptr<Graph> loadIR(const std::string& file, Form form) {
  std::unique_ptr<Graph> g = parseIRFile(file);
  if (form == Form::Lowered && hasTorchScriptForms(*g)) lowerTorchScript(*g);
  checkShapes(*g);
  return g;
}

static std::string outputName(const Value* v, size_t i) {
  return v->name().empty() ? fmt::format("output{}", i) : v->name();
}

// An output's own file besides its position's: not for a name PyTorch numbered (%34), which would be
// taken for a position.
static bool writesNamedFile(const Value* v) {
  return !v->name().empty() && v->name().find_first_not_of("0123456789") != std::string::npos;
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

// DIR/NAME.npy, else DIR/BASE.npy for a TorchScript name: %input.1 reads input.npy.
static std::string inputPath(const std::string& dir, const std::string& name) {
  std::string path = (fs::path(dir) / (name + ".npy")).string();
  std::string base = (fs::path(dir) / (baseName(name) + ".npy")).string();
  if (fs::exists(path) || !fs::exists(base)) return path;
  return base;
}

// A graph input's value from its .npy file in dir (inputPath): a tensor, checked against the declared type,
// or an int, float or bool from a one-element file.
static IValue readInput(const Value* in, const std::string& dir) {
  const std::string path = inputPath(dir, in->name());
  const TypeKind kind = in->type().kind;
  const bool scalar = kind == TypeKind::Int || kind == TypeKind::Float || kind == TypeKind::Bool;
  USER_CHECK(in->type().isTensor() || scalar,
             "graph input %{} is {}: graphir run reads tensors and int, float or bool scalars from .npy files",
             in->name(), in->type().str());
  USER_CHECK(fs::exists(path), "missing input: %{} needs {}", in->name(), path);
  Tensor t = readNpy(path);
  if (!scalar) {
    checkDeclared(in, t, path);
    return t;
  }
  USER_CHECK(t.numel() == 1, "input %{} is {}, but {} holds {} values {}; hint: write a 0-d array (np.array(3))",
             in->name(), in->type().str(), path, t.numel(), shapeStr(t.sizes()));
  const double x = t.item(0);
  if (kind == TypeKind::Float) return IValue(x);
  USER_CHECK(!isFloating(t.dtype()),
             "input %{} is {}, but {} holds a {} value; hint: write it with an integer or bool dtype", in->name(),
             in->type().str(), path, dtypeName(t.dtype()));
  if (kind == TypeKind::Bool) return IValue(x != 0);
  return IValue(static_cast<int64_t>(x));
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
  std::string recurrences;
  for (const std::string& line : s.recurrences) recurrences += line + "\n";
  return recurrences + fmt::format("fuser {}: {} fusion groups, {} kernels ({} compiled, {} of them from the disk cache; {} "
                     "from the cache), {} fused kernel launches in all", fuserName(o.fuser), s.fusionGroups,
                     s.kernelsCompiled + s.kernelCacheHits, s.kernelsCompiled, s.kernelDiskHits, s.kernelCacheHits,
                     s.kernelRuns);
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

// An output as a tensor: a tensor itself; a bool, int or float (`eq(int, int)`, `aten::size`) a 0-d tensor of
// bool, int64 or float64, as numpy holds a Python scalar. Lists and None are errors naming the output.
static Tensor outputTensor(const IValue& v, const std::string& name) {
  if (v.isTensor()) return v.toTensor();
  if (v.isBool()) return Tensor::scalar(v.toBool() ? 1.0 : 0.0, DType::Bool);
  if (v.isInt()) {
    Tensor t = Tensor::empty({}, DType::Int64, DeviceKind::Cpu);
    *static_cast<int64_t*>(t.rawData()) = v.toInt();
    return t;
  }
  if (v.isDouble()) return Tensor::scalar(v.toDouble(), DType::Float64);
  throw Error(fmt::format("output {} is {}, not a tensor or a scalar", name, v.describe()), "",
              "return tensors, bools, ints or floats");
}

// OUT/outputs/N.npy for the output at position N, and OUT/outputs/NAME.npy for a named one; OUT/grads/BASE.npy
// for every defined gradient, by the input's base name (%input.1: input.npy).
static void writeOutputs(const Graph& g, const std::vector<IValue>& outputs, const std::vector<Tensor>& grads,
                         const std::string& outDir) {
  makeFolder((fs::path(outDir) / "outputs").string(), "output");
  for (size_t i = 0; i < outputs.size(); ++i) {
    std::string name = outputName(g.outputs()[i], i);
    const Tensor t = outputTensor(outputs[i], "%" + name).to(DeviceKind::Cpu);
    std::vector<std::string> files{std::to_string(i)};
    if (writesNamedFile(g.outputs()[i])) files.push_back(name);
    for (const std::string& file : files) {
      std::string path = (fs::path(outDir) / "outputs" / (file + ".npy")).string();
      writeNpy(path, t);
      std::cout << fmt::format("wrote {} {}\n", path, shapeStr(t.sizes()));
    }
  }
  if (grads.empty()) return;
  makeFolder((fs::path(outDir) / "grads").string(), "gradient");
  for (size_t i = 0; i < grads.size(); ++i) {
    if (!grads[i].defined()) continue;
    std::string path = (fs::path(outDir) / "grads" / (baseName(g.inputs()[i]->name()) + ".npy")).string();
    writeNpy(path, grads[i].to(DeviceKind::Cpu));
    std::cout << fmt::format("wrote {} {}\n", path, shapeStr(grads[i].sizes()));
  }
}

int cmdRun(const std::string& file, const std::string& inputsDir, const std::string& outDir, bool backward,
           const std::string& gradOutputsDir, const RunSettings& s) {
  auto g = loadIR(file, Form::Lowered);
  std::vector<IValue> inputs;
  std::vector<bool> rg;
  for (const Value* in : g->inputs()) {
    IValue v = readInput(in, inputsDir);
    rg.push_back(backward && v.isTensor() && isFloating(v.toTensor().dtype()));
    inputs.push_back(std::move(v));
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
          if (!outputs[i].isTensor()) {  // a scalar has no gradient (a list or None is an error here)
            outputTensor(outputs[i], "%" + name);
            gradOutputs.emplace_back();
            continue;
          }
          const Tensor& out = outputs[i].toTensor();
          if (gradOutputsDir.empty()) {
            gradOutputs.push_back(Tensor::full(out.sizes(), out.dtype(), 1.0));
            continue;
          }
          // by position (DIR/0.npy), else by name
          const std::string byPosition = (fs::path(gradOutputsDir) / fmt::format("{}.npy", i)).string();
          Tensor go = fs::exists(byPosition) ? readNpy(byPosition) : readNamed(gradOutputsDir, name, "gradient");
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

// What check compares: a graph, its inputs, the gradients of its outputs, and the expected outputs and
// gradients (by the output's position and the input's position).
struct CheckSubject {
  const Graph* graph;
  std::string title;
  std::vector<IValue> inputs;
  std::vector<bool> requiresGrad;
  std::vector<Tensor> gradOutputs;  // empty: forward only
  std::vector<std::pair<std::string, Tensor>> outputs;
  std::vector<std::optional<std::pair<std::string, Tensor>>> grads;  // per input
};

static int runCheck(const CheckSubject& c, const RunSettings& s) {
  constexpr double kForward = 1e-5, kGradient = 1e-4;
  const FunctionOptions options = s.options();
  Function f(*c.graph, options);
  bool ok = true;
  auto report = [&](const char* kind, const std::string& name, double err, double tol) {
    bool pass = err <= tol;
    ok = ok && pass;
    std::cout << fmt::format("  {:<8} {:<28} {:.3e}  {}\n", kind, name, err, pass ? "ok" : fmt::format("FAIL (> {:g})", tol));
  };
  std::cout << fmt::format("{}, fuser {}, executor {}, device {}\n", c.title, fuserName(s.fuser),
                           executorName(s.executor), s.device);
  // Every run is compared: under the profiling executor the interpreted profiling runs, then the
  // optimized plan with the fuser's kernels.
  const int runs = runsToOptimize(options);
  int64_t lastLaunches = 0;
  for (int run = 1; run <= runs; ++run) {
    const FunctionStats before = f.stats();
    auto outs = f.forward(c.inputs, c.gradOutputs.empty() ? std::vector<bool>{} : c.requiresGrad);
    std::vector<Tensor> grads;
    if (!c.gradOutputs.empty()) grads = f.backward(c.gradOutputs);
    const FunctionStats after = f.stats();
    lastLaunches = after.kernelRuns - before.kernelRuns;
    std::cout << fmt::format("{}: {}\n", runLabel(options, run), launched(before, after));
    for (size_t i = 0; i < c.outputs.size(); ++i) {
      const auto& [name, expected] = c.outputs[i];
      report("output", name, relativeError(outputTensor(outs[i], name), expected), kForward);
    }
    for (size_t i = 0; i < grads.size() && i < c.grads.size(); ++i) {
      if (!c.grads[i]) continue;
      const auto& [name, expected] = *c.grads[i];
      report("gradient", name, grads[i].defined() ? relativeError(grads[i], expected) : INFINITY, kGradient);
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

// A folder as tools/torchscript_export.py writes it: graph.ir (TorchScript's text), inputs/NAME.npy by base
// name, outputs/N.npy by position; for backward also grad_outputs/N.npy and grads/NAME.npy.
static int checkGraphFolder(const std::string& dir, const RunSettings& s) {
  const fs::path root(dir);
  auto g = loadIR((root / "graph.ir").string(), Form::Lowered);
  CheckSubject c{g.get(), fmt::format("{}: graph.ir", dir), {}, {}, {}, {}, {}};
  const bool backward = fs::exists(root / "grad_outputs");
  for (const Value* in : g->inputs()) {
    IValue v = readInput(in, (root / "inputs").string());
    c.requiresGrad.push_back(backward && v.isTensor() && isFloating(v.toTensor().dtype()));
    std::optional<std::pair<std::string, Tensor>> grad;
    const fs::path gradPath = root / "grads" / (baseName(in->name()) + ".npy");
    if (backward && fs::exists(gradPath)) grad = std::pair{baseName(in->name()), readNpy(gradPath.string())};
    c.grads.push_back(std::move(grad));
    c.inputs.push_back(std::move(v));
  }
  for (size_t i = 0; i < g->outputs().size(); ++i) {
    const fs::path out = root / "outputs" / fmt::format("{}.npy", i);
    USER_CHECK(fs::exists(out), "{}: the graph's output {} has no {}", dir, i, out.string());
    c.outputs.emplace_back(fmt::format("{} (%{})", i, outputName(g->outputs()[i], i)), readNpy(out.string()));
    if (!backward) continue;
    const fs::path go = root / "grad_outputs" / fmt::format("{}.npy", i);
    // a bool output, or a scalar one, takes no gradient
    if ((!isFloating(c.outputs.back().second.dtype()) || !g->outputs()[i]->type().isTensor()) && !fs::exists(go)) {
      c.gradOutputs.emplace_back();
      continue;
    }
    USER_CHECK(fs::exists(go), "{}: the graph's output {} has no {}", dir, i, go.string());
    c.gradOutputs.push_back(readNpy(go.string()));
  }
  return runCheck(c, s);
}

int cmdCheck(const std::string& caseDir, const RunSettings& s) {
  if (fs::exists(fs::path(caseDir) / "graph.ir")) return checkGraphFolder(caseDir, s);
  ReferenceCase rc = readReferenceCase(caseDir);
  Model m = buildModel(rc.model, rc.config);
  auto inputs = caseInputs(m, rc);
  CheckSubject c{m.graph.get(), fmt::format("{}: model {}", rc.dir, rc.model), {}, {}, {}, {}, {}};
  for (size_t i = 0; i < inputs.size(); ++i) {
    checkDeclared(m.graph->inputs()[i], inputs[i], fmt::format("{}/inputs/{}.npy", rc.dir, m.inputs[i].name));
    c.requiresGrad.push_back(isFloating(inputs[i].dtype()));
    c.inputs.emplace_back(inputs[i]);
    auto it = rc.grads.find(m.inputs[i].name);
    c.grads.push_back(it == rc.grads.end() ? std::nullopt : std::optional(std::pair{it->first, it->second}));
  }
  for (const std::string& name : m.outputs) {
    USER_CHECK(rc.outputs.count(name), "{}: the case has no outputs/{}.npy", rc.dir, name);
    USER_CHECK(rc.gradOutputs.count(name), "{}: the case has no grad_outputs/{}.npy", rc.dir, name);
    c.outputs.emplace_back(name, rc.outputs.at(name));
    c.gradOutputs.push_back(rc.gradOutputs.at(name));
  }
  return runCheck(c, s);
}

}  // namespace gj::tools
