#include "bench/check.h"
#include "support/environment.h"

#include "executors/autograd.h"
#include "executors/interpreter.h"
#include "ir/builder.h"
#include "runtime/ops/ops.h"
#include "runtime/cuda/ops.h"
#include "support/error.h"

#include <fmt/format.h>

#include <algorithm>
#include <tuple>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <iostream>
#include <map>
#include <optional>

namespace gj::bench {

namespace {

constexpr uint64_t kSeed = 17;       // fastrnns' test.py
constexpr double kTolerance = 1e-3;  // its max abs diff
constexpr double kPlanted = 2e-3;

// What one run computed, by name: the model's outputs, and the gradient of every float input.
struct Computed {
  std::map<std::string, Tensor> outputs, grads;
};

// A way to run a model: forward on `in`, then backward from `gradOutputs` (one per model output).
using Compute = std::function<Computed(const Model& m, const std::vector<Tensor>& in,
                                       const std::vector<Tensor>& gradOutputs)>;

Tensor onHost(const Tensor& t) { return t.defined() ? t.to(DeviceKind::Cpu) : t; }

Computed named(const Model& m, const std::vector<Tensor>& outs, const std::vector<Tensor>& grads) {
  Computed c;
  for (size_t k = 0; k < outs.size(); ++k) c.outputs[m.outputs[k]] = onHost(outs[k]);
  for (size_t i = 0; i < grads.size(); ++i)
    if (grads[i].defined()) c.grads[m.inputs[i].name] = onHost(grads[i]);
  return c;
}

// The inputs that take gradients: the float ones, but for those the model says none reaches (a batch norm's
// running statistics).
std::vector<bool> gradientInputs(const Model& m) {
  std::vector<bool> rg;
  for (const InputSpec& s : m.inputs) rg.push_back(takesGradient(s));
  return rg;
}

// The library LSTM; with dropout, a layer at a time with the runtime's dropout between (drawing from the
// model's last input, rng).
Compute library(const Options& o, double dropout = 0) {
  return [o, dropout](const Model& m, const std::vector<Tensor>& in, const std::vector<Tensor>& gy) {
    LstmParams p = rnnsParams(o);
    p.dropout = dropout;
    auto lstm = newLibraryLstm(p, o, p.hasDropout() ? in.back() : Tensor());
    std::vector<Tensor> w(in.begin() + 3, in.begin() + 3 + 4 * p.numLayers);
    auto outs = lstm->forward(in[0], in[1], in[2], w);
    return named(m, outs, lstm->backward(gy[0], gy[1], gy[2]));
  };
}

Compute eagerAutograd() {
  return [](const Model& m, const std::vector<Tensor>& in, const std::vector<Tensor>& gy) {
    eager::Tape tape;
    std::vector<eager::Var> vars;
    const std::vector<bool> rg = gradientInputs(m);
    for (size_t i = 0; i < in.size(); ++i) vars.push_back(tape.input(in[i], rg[i]));
    std::vector<eager::Var> outs = m.eagerAutograd(tape, vars);
    tape.backward(outs, gy);
    std::vector<Tensor> values, grads;
    for (const eager::Var& v : outs) values.push_back(v.value);
    for (const eager::Var& v : vars) grads.push_back(tape.grad(v));
    return named(m, values, grads);
  };
}

Compute interpreted() {
  return [](const Model& m, const std::vector<Tensor>& in, const std::vector<Tensor>& gy) {
    std::vector<IValue> inputs(in.begin(), in.end());
    std::vector<bool> rg = gradientInputs(m);
    AutodiffGraph ag = prepareAutodiff(std::shared_ptr<Graph>(m.graph->clone()), rg);
    Tape tape(inputs.size());
    auto outs = Interpreter(*ag.graph, &ag.gradients).runWithTape(inputs, rg, tape);
    std::vector<Tensor> values;
    for (const IValue& v : outs) values.push_back(v.toTensor());
    return named(m, values, tape.backward(outs, gy));
  };
}

// A Function run as often as its executor needs to reach its optimized plan (the profiling executor
// profiles first); the last run is the one compared.
Compute compiled(FunctionOptions fo) {
  return [fo](const Model& m, const std::vector<Tensor>& in, const std::vector<Tensor>& gy) {
    Function f(*m.graph, fo);
    std::vector<IValue> inputs(in.begin(), in.end());
    std::vector<bool> rg = gradientInputs(m);
    Computed c;
    for (int run = 0; run < fo.profilingRuns + 2; ++run) {
      auto outs = f.forward(inputs, rg);
      std::vector<Tensor> values;
      for (const IValue& v : outs) values.push_back(v.toTensor());
      c = named(m, values, f.backward(gy));
    }
    return c;
  };
}

double maxAbsDiff(const Tensor& a, const Tensor& b) {
  if (a.sizes() != b.sizes()) return std::numeric_limits<double>::infinity();
  double d = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    const double x = std::abs(a.item(i) - b.item(i));
    d = std::isnan(x) ? std::numeric_limits<double>::infinity() : std::max(d, x);
  }
  return d;
}

double maxAbs(const Tensor& a) {
  double m = 0;
  for (int64_t i = 0; i < a.numel(); ++i) m = std::max(m, std::abs(a.item(i)));
  return m;
}

struct Subject {
  std::string row;       // as printed: jit_premul/te/profiling
  std::string rnnsRow;   // the rnns (or vl_lstm) row: jit_premul
  Compute compute;
  std::string twinName;  // cudnn, aten
  Compute twin;
  std::optional<double> dropout = std::nullopt;  // a dropout row's, in place of kRnnsDropout
};

bool isVlRow(const std::string& row) { return row.starts_with("vl_"); }

// vl_cudnn: the library LSTM over the packed batch.
Compute packedLibrary(const Options& o) {
  return [o](const Model& m, const std::vector<Tensor>& in, const std::vector<Tensor>& gy) {
    LstmParams p{in[0].size(0), in[0].size(1), in[0].size(2), in[2].size(2), in[2].size(0)};
    PackedLibraryLstm lstm(ops::hostInts(in[1], "lengths"), p, o);
    auto outs = lstm.forward(in[0], in[2], in[3], std::vector<Tensor>(in.begin() + 4, in.end()));
    std::vector<Tensor> grads = lstm.backward(gy[0], gy[1], gy[2]);
    grads.insert(grads.begin() + 1, Tensor());  // the lengths have none
    return named(m, outs, grads);
  };
}

// The model subject s runs: its rnns row's, at the subject's dropout for a dropout row; a vl row's.
Model subjectModel(const Subject& s, const std::string& row, const Options& o) {
  if (isVlRow(row)) return vlModel(row, o);
  if (row.starts_with("resnet")) return cnnModel(row, o);
  if (!s.dropout) return rnnsModel(row, rnnsParams(o));
  LstmParams p = rnnsParams(o);
  p.dropout = *s.dropout;
  return buildLstm(LstmVariantKind::Jit, p);
}

// Runs a subject and its twin on one set of inputs; prints the row's line; true when they agree.
bool check(const Subject& s, const Options& o) {
  const Model m = subjectModel(s, s.rnnsRow, o);
  const Model full = subjectModel(s, s.rnnsRow == "jit_simple" ? "jit" : s.rnnsRow, o);  // all outputs
  std::vector<Tensor> in = randomInputs(full, kSeed);
  std::map<std::string, Tensor> gy;  // random output gradients, of the sizes one eager run gives (the graphs'
  {                                  // loops leave their outputs' sizes open to shape propagation)
    std::vector<Tensor> probe = full.eager(in);
    for (size_t k = 0; k < probe.size(); ++k)
      gy[full.outputs[k]] = Tensor::rand(probe[k].sizes(), DType::Float32, kSeed + 1 + k, -1, 1);
  }
  const DeviceKind device = o.device == "cuda" ? DeviceKind::Cuda : DeviceKind::Cpu;
  for (Tensor& t : in) t = t.to(device);
  auto gradsFor = [&](const Model& model, bool onlySubjectOutputs) {
    std::vector<Tensor> g;
    for (const std::string& name : model.outputs) {
      // The twin gets zeros for an output the subject does not return (jit_simple's `output`).
      const bool used = !onlySubjectOutputs || std::ranges::find(m.outputs, name) != m.outputs.end();
      const Tensor& given = gy.at(name);
      g.push_back((used ? given : Tensor::zeros(given.sizes(), DType::Float32)).to(device));
    }
    return g;
  };
  Computed a = s.compute(m, in, gradsFor(m, false));
  Computed b = s.twin(full, in, gradsFor(full, true));
  if (const auto plant = environment().checkPlantError; plant && s.row == *plant)
    for (auto& [name, g] : a.grads)
      if (name.find("weight") != std::string::npos) {
        g = g.contiguous().clone();
        float& v = g.data<float>()[0];
        v += static_cast<float>(std::max(kPlanted, std::abs(v) * kPlanted));  // beyond float32's rounding of v
        break;
      }
  double worst = 0;
  std::string worstWhat, missing;
  const Tensor* worstTwin = nullptr;  // the twin's tensor of the worst difference, whose size the line names
  auto compare = [&](const char* kind, const std::map<std::string, Tensor>& x, const std::map<std::string, Tensor>& y) {
    size_t n = 0;
    for (const auto& [name, t] : x) {
      auto other = y.find(name);
      if (other == y.end()) {
        missing += fmt::format(" {} {}", kind, name);
        continue;
      }
      ++n;
      const double d = maxAbsDiff(t, other->second);
      if (d >= worst) worst = d, worstWhat = fmt::format("{} {}", kind, name), worstTwin = &other->second;
    }
    return n;
  };
  const size_t outputs = compare("output", a.outputs, b.outputs);
  const size_t grads = compare("gradient", a.grads, b.grads);
  if (worstTwin) worstWhat += fmt::format(", largest |value| {:.3g}", maxAbs(*worstTwin));
  const bool ok = missing.empty() && worst <= kTolerance && outputs == m.outputs.size() && grads > 0;
  std::cout << fmt::format("check {} vs {}: {} outputs, {} gradients, max |diff| {:.2e} ({}){}: {}\n", s.row,
                           s.twinName, outputs, grads, worst, worstWhat,
                           missing.empty() ? "" : "; the twin lacks" + missing, ok ? "ok" : "MISMATCH")
            << std::flush;
  return ok;
}

// A dropout row's masks (`run` applies its dropout to a tensor with a generator state): over [T, B, H] ones at
// fastrnns' p, the rate within 4 sigma of p, the mask the host kernel draws for the same seed and offset, and
// another for another seed. Prints the row's line; true when all three hold.
bool checkMasks(const std::string& row, const Options& o, const std::function<Tensor(const Tensor&, const Tensor&)>& run) {
  const LstmParams p = rnnsParams(o);
  const DeviceKind device = o.device == "cuda" ? DeviceKind::Cuda : DeviceKind::Cpu;
  const Tensor x = Tensor::full({p.seqLength, p.miniBatch, p.hiddenSize}, DType::Float32, 1.0);
  auto state = [](int64_t seed) { return Tensor::fromVector({2}, {static_cast<double>(seed), 3}, DType::Int64); };
  auto mask = [](const Tensor& y) {
    std::vector<bool> m(y.numel());
    for (int64_t i = 0; i < y.numel(); ++i) m[i] = y.item(i) != 0;
    return m;
  };
  std::vector<bool> got = mask(run(x.to(device), state(kSeed).to(device)).to(DeviceKind::Cpu));
  if (const auto plant = environment().checkPlantError; plant && row + " masks" == *plant) got[0] = !got[0];
  const std::vector<bool> host = mask(ops::dropout(x, kRnnsDropout, true, state(kSeed), 0));
  const std::vector<bool> other = mask(run(x.to(device), state(kSeed + 1).to(device)).to(DeviceKind::Cpu));
  const double n = static_cast<double>(got.size());
  const double rate = static_cast<double>(std::count(got.begin(), got.end(), false)) / n;
  const double sigma = std::sqrt(kRnnsDropout * (1 - kRnnsDropout) / n);
  const bool ok = std::abs(rate - kRnnsDropout) <= 4 * sigma && got == host && got != other;
  std::cout << fmt::format("check {} masks: dropped {:.4f} of {:g} (p {:g} +- 4 sigma {:.4f}); {} the host kernel's for "
                           "seed {}; {} for seed {}: {}\n",
                           row, rate, n, kRnnsDropout, 4 * sigma, got == host ? "the same as" : "NOT the same as", kSeed,
                           got != other ? "another" : "the SAME", kSeed + 1, ok ? "ok" : "MISMATCH")
            << std::flush;
  return ok;
}

// The dropout rows' own dropout, applied as the row runs it: the compiled rows through a Function of the
// row's options (fused where its fuser fuses), the library row through the runtime's kernel.
std::function<Tensor(const Tensor&, const Tensor&)> rowDropout(const std::optional<FunctionOptions>& fo) {
  if (!fo) return [](const Tensor& x, const Tensor& rng) { return ops::dropout(x, kRnnsDropout, true, rng, 0); };
  return [fo = *fo](const Tensor& x, const Tensor& rng) {
    Graph g;
    GraphBuilder b(g);
    Value* in = g.addInput(Type::tensor(DType::Float32, x.sizes()), "x");
    Value* state = g.addInput(Type::tensor(DType::Int64, {2}), "rng");
    Value* y = b.op(OpKind::PhiloxDropout, {b.op(OpKind::Mul, {in, in}), b.f(kRnnsDropout), b.b(true), state, b.i(0)});
    g.registerOutput(b.op(OpKind::Mul, {y, b.f(1.0)}));
    Function f(g, fo);
    Tensor out;
    for (int run = 0; run < fo.profilingRuns + 2; ++run) out = f.forward({x, rng})[0].toTensor();
    return out;
  };
}

}  // namespace

// Calls f(name, options) for a compiled row under each fuser x executor pair: the name printed (row/fuser/
// executor when there are several pairs) and its Function's options.
template <typename F>
void forEachPair(const std::string& row, const Options& o, const std::vector<FuserExecutor>& pairs, F&& f) {
  for (const FuserExecutor& p : pairs) {
    Options po = o;
    std::tie(po.fuser, po.executor) = p;
    f(pairs.size() > 1 ? fmt::format("{}/{}", row, pairName(p)) : row, rnnsFunctionOptions(row, po));
  }
}

int runCheck(const Options& o, const std::vector<FuserExecutor>& pairs) {
  const std::string noLibrary = noLibraryLstm(o);
  const std::string libraryName = noLibrary.empty() ? "cudnn" : "aten";
  const Compute libraryTwin = noLibrary.empty() ? library(o) : eagerAutograd();
  const bool lstmGroups = std::ranges::any_of(o.groups, [](const std::string& g) { return g != "cnns"; });
  const bool cnnsOnCuda = o.device == "cuda" && std::ranges::find(o.groups, "cnns") != o.groups.end();
  // The twins run the same convolutions: with cuDNN's fastest algorithms their weight gradients would differ
  // by the atomics' summation order alone (6.8e-3 at ResNet-50's, whose values reach 1.4e3), which is not
  // what the check is after.
  if (cnnsOnCuda) Context::shared()->deterministicConvolutions = true;
  std::cout << fmt::format("Checking {} rows against their twins (seed {}, max |diff| <= {:g}{}{})\n",
                           fmt::join(o.groups, " and "), kSeed,
                           kTolerance,
                           !lstmGroups              ? std::string()
                           : noLibrary.empty()      ? fmt::format("; cudnn is the {}", libraryLstmName(o))
                                                    : fmt::format("; no library LSTM ({}), so aten stands in", noLibrary),
                           cnnsOnCuda ? "; cuDNN's convolutions deterministic" : "")
            << std::flush;
  std::vector<Subject> subjects;
  bool masksOk = true;
  size_t maskChecks = 0;
  const bool rnnsGroup = std::ranges::find(o.groups, "rnns") != o.groups.end();
  for (const std::string& row : !rnnsGroup ? std::vector<std::string>{} : o.rnns.empty() ? defaultRnnRowNames() : o.rnns) {
    if (row == "cudnn_layernorm") {
      std::cout << "check cudnn_layernorm: not compared (a timing lower bound, forward only; its cy is normalized "
                   "3 x seqLength times, as in fastrnns, and is no model's output)\n";
      continue;
    }
    if (row == "cudnn" || row == "cudnn_dropout") {
      if (!noLibrary.empty()) {
        std::cout << fmt::format("check {}: no row ({})\n", row, noLibrary);
        continue;
      }
      if (row == "cudnn") {
        subjects.push_back({row, row, library(o), "aten", eagerAutograd()});
        continue;
      }
      // At dropout 0 (as fastrnns compares), then at its dropout: the draws are graphjit's in every row.
      for (double p : {0.0, kRnnsDropout})
        subjects.push_back({fmt::format("{} (dropout {:g})", row, p), row, library(o, p), "aten", eagerAutograd(), p});
      masksOk &= checkMasks(row, o, rowDropout(std::nullopt));
      ++maskChecks;
      continue;
    }
    if (row == "aten") {  // without a library, against the graph interpreted (py), not against itself
      if (noLibrary.empty()) subjects.push_back({row, row, eagerAutograd(), libraryName, libraryTwin});
      else subjects.push_back({row, row, eagerAutograd(), "py", interpreted()});
      continue;
    }
    if (row == "py") {
      subjects.push_back({row, row, interpreted(), libraryName, libraryTwin});
      continue;
    }
    const bool layerNorm = row.starts_with("jit_layernorm");
    forEachPair(row, o, pairs, [&](const std::string& name, const FunctionOptions& fo) {
      if (row == "jit_dropout") {
        for (double p : {0.0, kRnnsDropout})
          subjects.push_back({fmt::format("{} (dropout {:g})", name, p), row, compiled(fo), libraryName,
                              noLibrary.empty() ? library(o, p) : eagerAutograd(), p});
        masksOk &= checkMasks(name, o, rowDropout(fo));
        ++maskChecks;
        return;
      }
      subjects.push_back({name, row, compiled(fo), layerNorm ? "aten" : libraryName,
                          layerNorm ? eagerAutograd() : libraryTwin});
    });
  }
  if (std::ranges::find(o.groups, "vl_lstm") != o.groups.end()) {
    // fastrnns compares vl_* with vl_cudnn; vl_cudnn with the eager per-sequence loop (vl_py).
    const std::string vlTwin = noLibrary.empty() ? "vl_cudnn" : "vl_py";
    const Compute twin = noLibrary.empty() ? packedLibrary(o) : eagerAutograd();
    for (const std::string& row : vlRowNames()) {
      if (row == "vl_cudnn") {
        if (noLibrary.empty()) subjects.push_back({row, row, packedLibrary(o), "vl_py", eagerAutograd()});
        else std::cout << fmt::format("check vl_cudnn: no row ({})\n", noLibrary);
      } else if (row == "vl_py") {
        if (noLibrary.empty()) subjects.push_back({row, row, eagerAutograd(), vlTwin, twin});
      } else {
        forEachPair(row, o, pairs, [&](const std::string& name, const FunctionOptions& fo) {
          subjects.push_back({name, row, compiled(fo), vlTwin, twin});
        });
      }
    }
  }
  if (std::ranges::find(o.groups, "cnns") != o.groups.end()) {
    // fastrnns compares resnet*_jit with resnet*; the eager ResNet is compared with its graph interpreted.
    for (const std::string& row : cnnRowNames()) {
      if (cnnEagerRow(row) == row) {
        subjects.push_back({row, row, eagerAutograd(), "py (the graph interpreted)", interpreted()});
        continue;
      }
      forEachPair(row, o, pairs, [&](const std::string& name, const FunctionOptions& fo) {
        subjects.push_back({name, row, compiled(fo), cnnEagerRow(row), eagerAutograd()});
      });
    }
  }
  size_t failed = 0;
  for (const Subject& s : subjects) failed += check(s, o) ? 0 : 1;
  std::cout << fmt::format("{} of {} rows agree with their twins{}\n", subjects.size() - failed, subjects.size(),
                           maskChecks ? fmt::format("; {} dropout mask checks {}", maskChecks, masksOk ? "pass" : "FAIL")
                                      : "");
  return failed || !masksOk ? 1 : 0;
}

}  // namespace gj::bench
