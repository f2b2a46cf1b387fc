// graphir run and graphir check: graphs on .npy inputs, and conformance against reference cases.
#include "executors/function.h"
#include "ir/parser.h"
#include "models/reference_case.h"
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
  return o;
}

static std::string outputName(const Value* v, size_t i) {
  return v->name().empty() ? fmt::format("output{}", i) : v->name();
}

static Tensor readNamed(const std::string& dir, const std::string& name, const char* what) {
  std::string path = (fs::path(dir) / (name + ".npy")).string();
  USER_CHECK(fs::exists(path), "missing {}: {} needs {}", what, name, path);
  return readNpy(path);
}

int cmdRun(const std::string& file, const std::string& inputsDir, const std::string& outDir, bool backward,
           const std::string& gradOutputsDir, const RunSettings& s) {
  auto g = parseIRFile(file);
  USER_CHECK(!backward || !gradOutputsDir.empty(), "--backward needs --grad-outputs DIR");
  std::vector<IValue> inputs;
  std::vector<bool> rg;
  for (const Value* in : g->inputs()) {
    USER_CHECK(in->type().isTensor(), "graph input %{} is {}: graphir run reads only tensor inputs from .npy files",
               in->name(), in->type().str());
    Tensor t = readNamed(inputsDir, in->name(), "input");
    rg.push_back(backward && isFloating(t.dtype()));
    inputs.push_back(t);
  }
  Function f(*g, s.options());
  auto outputs = f.forward(inputs, backward ? rg : std::vector<bool>{});
  fs::create_directories(fs::path(outDir) / "outputs");
  std::vector<Tensor> gradOutputs;
  for (size_t i = 0; i < outputs.size(); ++i) {
    std::string name = outputName(g->outputs()[i], i);
    USER_CHECK(outputs[i].isTensor(), "output %{} is {}, not a tensor", name, outputs[i].describe());
    std::string path = (fs::path(outDir) / "outputs" / (name + ".npy")).string();
    writeNpy(path, outputs[i].toTensor());
    std::cout << fmt::format("wrote {} {}\n", path, shapeStr(outputs[i].toTensor().sizes()));
    if (backward) {
      Tensor go = readNamed(gradOutputsDir, name, "gradient");
      USER_CHECK(go.sizes() == outputs[i].toTensor().sizes(), "gradient {} has shape {} but output {} has {}", name,
                 shapeStr(go.sizes()), name, shapeStr(outputs[i].toTensor().sizes()));
      gradOutputs.push_back(go);
    }
  }
  if (!backward) return 0;
  auto grads = f.backward(gradOutputs);
  fs::create_directories(fs::path(outDir) / "grads");
  for (size_t i = 0; i < grads.size(); ++i) {
    if (!grads[i].defined()) continue;
    std::string path = (fs::path(outDir) / "grads" / (g->inputs()[i]->name() + ".npy")).string();
    writeNpy(path, grads[i]);
    std::cout << fmt::format("wrote {} {}\n", path, shapeStr(grads[i].sizes()));
  }
  return 0;
}

int cmdCheck(const std::string& caseDir, const RunSettings& s) {
  constexpr double kForward = 1e-5, kGradient = 1e-4;
  ReferenceCase c = readReferenceCase(caseDir);
  Model m = buildModel(c.model, c.config);
  auto inputs = caseInputs(m, c);
  std::vector<bool> rg;
  for (const Tensor& t : inputs) rg.push_back(isFloating(t.dtype()));
  Function f(*m.graph, s.options());
  auto outs = f.forward(std::vector<IValue>(inputs.begin(), inputs.end()), rg);
  bool ok = true;
  auto report = [&](const char* kind, const std::string& name, double err, double tol) {
    bool pass = err <= tol;
    ok = ok && pass;
    std::cout << fmt::format("  {:<8} {:<28} {:.3e}  {}\n", kind, name, err, pass ? "ok" : fmt::format("FAIL (> {:g})", tol));
  };
  std::cout << fmt::format("{}: model {}, fuser {}, executor {}, device {}\n", c.dir, c.model, s.fuser, s.executor,
                           s.device);
  std::vector<Tensor> gradOutputs;
  for (size_t i = 0; i < m.outputs.size(); ++i) {
    const std::string& name = m.outputs[i];
    USER_CHECK(c.outputs.count(name), "{}: the case has no output {}", c.dir, name);
    report("output", name, relativeError(outs[i].toTensor(), c.outputs.at(name)), kForward);
    USER_CHECK(c.gradOutputs.count(name), "{}: the case has no grad_outputs/{}.npy", c.dir, name);
    gradOutputs.push_back(c.gradOutputs.at(name));
  }
  auto grads = f.backward(gradOutputs);
  for (size_t i = 0; i < m.inputs.size(); ++i) {
    auto it = c.grads.find(m.inputs[i].name);
    if (it == c.grads.end()) continue;
    if (!grads[i].defined()) {
      report("gradient", m.inputs[i].name, INFINITY, kGradient);
      continue;
    }
    report("gradient", m.inputs[i].name, relativeError(grads[i], it->second), kGradient);
  }
  std::cout << (ok ? "PASS\n" : "FAIL\n");
  return ok ? 0 : 1;
}

}  // namespace gj::tools
