// graphbench's rows, of which the groups (groups.cpp) are made: compiled, interpreted, eager and library
// rows. A training row times the forward (gradients on) as fwd, and the backward plus an SGD update of the
// parameters as bwd.
#include "bench/rows.h"

#include "executors/function.h"
#include "executors/interpreter.h"
#include "models/lm.h"
#include "models/lnlstm.h"
#include "models/lstm.h"
#include "models/modules.h"
#include "models/vl_lstm.h"
#include "runtime/ops/ops.h"
#include "runtime/ops/onednn_lstm.h"
#include "runtime/cuda/cudnn_lstm.h"
#include "runtime/cuda/device.h"
#include "runtime/cuda/ops.h"
#include "support/error.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <optional>

namespace gj::bench {

// Gradients of ones, on `like`'s device (so that a backward on CUDA copies nothing from the host).
Tensor ones(const Tensor& like) { return Tensor::full(like.sizes(), like.dtype(), 1.0, like.device()); }

bool onCuda(const Options& o) { return o.device == "cuda"; }

// The model's random inputs, on the device the rows run on (copied there once, outside the timed runs).
std::vector<Tensor> rowInputs(const Model& m, const Options& o) {
  std::vector<Tensor> in = randomInputs(m, o.seed);
  if (onCuda(o))
    for (Tensor& t : in) t = t.to(DeviceKind::Cuda);
  return in;
}

// w -= lr * g, in place (the parameters are contiguous graph inputs, owned by the row).
void sgdUpdate(const Tensor& w, const Tensor& g, double lr) {
  USER_CHECK(w.dtype() == DType::Float32 && w.isContiguous() && g.sizes() == w.sizes(),
             "SGD update: parameter and gradient disagree");
  if (w.device() == DeviceKind::Cuda) {
    w.copyFrom(ops::sub(w, g, lr));
    return;
  }
  Tensor gc = g.contiguous();
  float* pw = w.data<float>();
  const float* pg = gc.data<float>();
  const float step = static_cast<float>(lr);
  for (int64_t i = 0, n = w.numel(); i < n; ++i) pw[i] -= step * pg[i];
}

std::string pairName(const FuserExecutor& p) { return fmt::format("{}/{}", fuserName(p.first), executorName(p.second)); }

FunctionOptions functionOptions(const Options& o) {
  FunctionOptions fo;
  fo.fuser = o.fuser;
  fo.executor = o.executor;
  fo.profilingRuns = o.profilingRuns;
  fo.device = onCuda(o) ? DeviceKind::Cuda : DeviceKind::Cpu;
  fo.fuserOptions.cudaLaunch = {.blockSize = o.cudaBlockSize, .blockCount = o.cudaBlockCount,
                                .loopLevel = o.cudaLoopLevel};
  fo.fuserOptions.timeKernels = o.kernelBandwidth && onCuda(o);
  fo.verifyEach = false;
  return fo;
}

FunctionOptions rnnsFunctionOptions(const std::string& row, const Options& o) {
  FunctionOptions fo = functionOptions(o);
  if (row == "jit_persistent") {  // jit_premul's graph, each layer's recurrence one kernel (fusers/recurrence.h)
    USER_CHECK(onCuda(o), "--rnns jit_persistent runs on --device cuda only (a persistent GPU kernel)");
    fo.fuserOptions.persistentRecurrences = true;
  }
  return fo;
}

namespace {

// nn.LSTM(dropout = p) in training on the library: one library LSTM a layer, and between layers the runtime's
// dropout with the graph's draws (stream = the layer's index), so that its masks are the compiled rows'.
// Its backward runs the layers' in reverse, the gradient of a layer's output masked again.
class DropoutLibraryLstm final : public LibraryLstm {
 public:
  DropoutLibraryLstm(const LstmParams& p, const Options& o, Tensor rng) : p_(p), rng_(std::move(rng)) {
    for (int64_t l = 0; l < p.numLayers; ++l)
      layers_.push_back(newLibraryLstm({p.seqLength, p.miniBatch, l ? p.hiddenSize : p.inputSize, p.hiddenSize, 1}, o));
  }

  std::vector<Tensor> forward(const Tensor& input, const Tensor& hx, const Tensor& cx,
                              const std::vector<Tensor>& weights) override {
    Tensor x = input;
    std::vector<Tensor> hy, cy;
    for (int64_t l = 0; l < p_.numLayers; ++l) {
      std::vector<Tensor> w(weights.begin() + 4 * l, weights.begin() + 4 * l + 4);
      auto out = layers_[l]->forward(x, hx.slice(0, l, l + 1, 1).contiguous(), cx.slice(0, l, l + 1, 1).contiguous(), w);
      x = l + 1 < p_.numLayers ? ops::dropout(out[0], p_.dropout, true, rng_, l) : out[0];
      hy.push_back(out[1]);
      cy.push_back(out[2]);
    }
    return {x, ops::cat(hy, 0), ops::cat(cy, 0)};
  }

  std::vector<Tensor> backward(const Tensor& gradOutput, const Tensor& gradHy, const Tensor& gradCy) override {
    Tensor g = gradOutput;
    std::vector<Tensor> ghx(p_.numLayers), gcx(p_.numLayers), gw;
    for (int64_t l = p_.numLayers - 1; l >= 0; --l) {
      if (l + 1 < p_.numLayers) g = ops::dropout(g, p_.dropout, true, rng_, l);
      auto d = layers_[l]->backward(g, gradHy.slice(0, l, l + 1, 1).contiguous(),
                                    gradCy.slice(0, l, l + 1, 1).contiguous());
      g = d[0], ghx[l] = d[1], gcx[l] = d[2];
      gw.insert(gw.begin(), d.begin() + 3, d.end());
    }
    std::vector<Tensor> grads = {g, ops::cat(ghx, 0), ops::cat(gcx, 0)};
    grads.insert(grads.end(), gw.begin(), gw.end());
    return grads;
  }

 private:
  LstmParams p_;
  Tensor rng_;
  std::vector<std::shared_ptr<LibraryLstm>> layers_;
};

}  // namespace

// The library's fused LSTM on the model's LSTM inputs (input, hx, cx, then 4 weights per layer): oneDNN's
// on the CPU, cuDNN's on CUDA.
std::shared_ptr<LibraryLstm> newLibraryLstm(const LstmParams& p, const Options& o, const Tensor& rng) {
  if (p.hasDropout()) {
    USER_CHECK(rng.defined(), "the library LSTM with dropout needs the generator state");
    return std::make_shared<DropoutLibraryLstm>(p, o, rng);
  }
  if (onCuda(o))
    return std::make_shared<cuda::CudnnLstm>(p.seqLength, p.miniBatch, p.inputSize, p.hiddenSize, p.numLayers);
  return std::make_shared<ops::OnednnLstm>(p.seqLength, p.miniBatch, p.inputSize, p.hiddenSize, p.numLayers);
}

const char* libraryLstmName(const Options& o) { return onCuda(o) ? "cuDNN LSTM" : "oneDNN LSTM"; }

// Why there is no library LSTM row on the options' device ("" when there is one).
std::string noLibraryLstm(const Options& o) { return onCuda(o) ? cuda::cudnnUnavailable() : ""; }


// What fraction of the DRAM bandwidth `peakGBs` the timed kernels (`what`: fused kernels, or the runtime's
// reductions) reached, a kernel's bytes being its inputs read and its outputs written once each (as
// `graphir codegen --stats` counts them): of the kernels that move 16 MiB or more a launch, the slowest;
// else the one that moves the most. Beside it, the share a device-to-device copy of as many bytes reached
// (cuda::copyCeilingMs): how far that size allows.
std::string bandwidthInfo(const std::vector<KernelTime>& times, double peakGBs, std::string_view what) {
  constexpr int64_t kLarge = int64_t{16} << 20;
  auto gbs = [](const KernelTime& k) { return k.ms > 0 ? k.bytes * k.launches / (k.ms * 1e-3) / 1e9 : 0.0; };
  const KernelTime* pick = nullptr;
  int64_t large = 0;
  for (const KernelTime& k : times) {
    if (k.bytes >= kLarge) {
      ++large;
      if (!pick || pick->bytes < kLarge || gbs(k) < gbs(*pick)) pick = &k;
    } else if (!large && (!pick || k.bytes > pick->bytes)) {
      pick = &k;
    }
  }
  std::string share = peakGBs > 0 ? fmt::format("{:.0f}% of {:.0f} GB/s", 100 * gbs(*pick) / peakGBs, peakGBs)
                                  : fmt::format("{:.1f} GB/s (the device's peak unknown)", gbs(*pick));
  if (const double copyMs = cuda::copyCeilingMs(pick->bytes); copyMs > 0) {
    const double copyGBs = pick->bytes / (copyMs * 1e-3) / 1e9;
    share += peakGBs > 0 ? fmt::format(" (a copy of as many bytes: {:.0f}%)", 100 * copyGBs / peakGBs)
                         : fmt::format(" (a copy of as many bytes: {:.1f} GB/s)", copyGBs);
  }
  const std::string which = fmt::format("{} ({:.1f} MiB a launch, {:.3f} ms)", pick->kernel,
                                       pick->bytes / double(1 << 20), pick->ms / pick->launches);
  return large ? fmt::format("DRAM: {} {}{} of 16 MiB or more, the slowest at {}: {}", large, what,
                             large == 1 ? "" : "s", share, which)
               : fmt::format("DRAM: no {} of 16 MiB; the largest at {}: {}", what, share, which);
}

namespace {

// The cold cost of a Function (passes, then kernel compilation; all specializations) and what it built.
std::string functionInfo(const Function& f) {
  FunctionStats s = f.stats();
  std::string info = fmt::format("passes {:.0f}ms, jit {:.0f}ms, {} group{}, {} specialization{}", s.passMs,
                                 s.compileMs, s.fusionGroups, s.fusionGroups == 1 ? "" : "s", s.specializations,
                                 s.specializations == 1 ? "" : "s");
  if (s.kernelsCompiled)
    info += fmt::format(", {} of {} kernel{} from the disk cache", s.kernelDiskHits, s.kernelsCompiled,
                        s.kernelsCompiled == 1 ? "" : "s");
  if (s.guardFailures) info += fmt::format(", {} guard failures", s.guardFailures);
  if (!s.warnings.empty()) info += fmt::format(", {} warnings", s.warnings.size());
  if (!s.kernelTimes.empty()) info += ", " + bandwidthInfo(s.kernelTimes, cuda::requireDevice().dramGBs);
  return info;
}

// A model through a Function: forward with gradients on the inputs `wantsGrad` accepts (by name), then
// backward with gradients of ones and, when `sgd`, an update of those inputs.
struct Training {
  std::shared_ptr<Function> f;
  std::vector<IValue> inputs;
  std::vector<bool> requiresGrad;
  std::vector<Tensor> gradOutputs;
  double lr = 0;
  bool sgd = false;

  void forward() {
    auto outs = f->forward(inputs, requiresGrad);
    if (gradOutputs.empty())
      for (const IValue& v : outs) gradOutputs.push_back(ones(v.toTensor()));
  }
  void backward() {
    auto grads = f->backward(gradOutputs);
    if (!sgd) return;
    for (size_t i = 0; i < grads.size(); ++i)
      if (requiresGrad[i] && grads[i].defined()) sgdUpdate(inputs[i].toTensor(), grads[i], lr);
  }
};

}  // namespace

Row trainingRow(const std::string& name, const Model& m, const Options& o, FunctionOptions fo, bool sgd,
                const std::function<bool(const std::string&)>& wantsGrad) {
  auto t = std::make_shared<Training>();
  t->f = std::make_shared<Function>(*m.graph, fo);
  auto in = rowInputs(m, o);
  for (size_t i = 0; i < in.size(); ++i) {
    t->inputs.push_back(in[i]);
    t->requiresGrad.push_back(takesGradient(m.inputs[i]) && (!wantsGrad || wantsGrad(m.inputs[i].name)));
  }
  t->lr = o.learningRate;
  t->sgd = sgd;
  return {name, [t] { t->forward(); }, [t] { t->backward(); }, [t] { return functionInfo(*t->f); }, "", FuserExecutor{o.fuser, o.executor}};
}

// Forward only, no gradients (inference).
Row inferenceRow(const std::string& name, const Model& m, const Options& o, FunctionOptions fo) {
  auto f = std::make_shared<Function>(*m.graph, fo);
  auto in = std::make_shared<std::vector<IValue>>();
  for (const Tensor& t : rowInputs(m, o)) in->push_back(t);
  return {name, [f, in] { f->forward(*in); }, {}, [f] { return functionInfo(*f); }, "", FuserExecutor{o.fuser, o.executor}};
}

// The graph interpreted as written (loops kept, no optimization), with the autodiff tape.
Row interpretedRow(const std::string& name, const Model& m, const Options& o) {
  struct State {
    AutodiffGraph ag;
    std::vector<IValue> inputs, outputs;
    std::vector<bool> requiresGrad;
    std::vector<Tensor> gradOutputs;
    std::shared_ptr<Tape> tape;
  };
  auto s = std::make_shared<State>();
  const std::vector<Tensor> in = rowInputs(m, o);
  for (size_t i = 0; i < in.size(); ++i) {
    s->inputs.push_back(in[i]);
    s->requiresGrad.push_back(takesGradient(m.inputs[i]));
  }
  s->ag = prepareAutodiff(std::shared_ptr<Graph>(m.graph->clone()), s->requiresGrad);
  auto fwd = [s] {
    s->tape = std::make_shared<Tape>(s->inputs.size());
    s->outputs = Interpreter(*s->ag.graph, &s->ag.gradients).runWithTape(s->inputs, s->requiresGrad, *s->tape);
    if (s->gradOutputs.empty())
      for (const IValue& v : s->outputs) s->gradOutputs.push_back(ones(v.toTensor()));
  };
  auto bwd = [s] { s->tape->backward(s->outputs, s->gradOutputs); };
  return {name, fwd, bwd, [] { return std::string("interpreted"); }, ""};
}

// Eager kernels (no graph, no autograd): forward only.
Row eagerRow(const std::string& name, const Model& m, const Options& o, std::string info) {
  auto model = std::make_shared<Model>(m);
  auto in = std::make_shared<std::vector<Tensor>>(rowInputs(m, o));
  return {name, [model, in] { model->eager(*in); }, {}, [info] { return info; }, ""};
}

// The eager kernels on an autograd tape (models/eager.h), as nn.LSTM with cuDNN off: the forward records
// every op's gradient; the backward runs them with gradients of ones.
Row eagerTrainingRow(const std::string& name, const Model& m, const Options& o) {
  struct State {
    Model model;
    std::vector<Tensor> in;
    std::unique_ptr<eager::Tape> tape;
    std::vector<eager::Var> outs;
    std::vector<Tensor> gradOutputs;
  };
  auto s = std::make_shared<State>();
  s->model = m;
  s->in = rowInputs(m, o);
  auto fwd = [s] {
    s->tape = std::make_unique<eager::Tape>();
    std::vector<eager::Var> vars;
    for (size_t i = 0; i < s->in.size(); ++i)
      vars.push_back(s->tape->input(s->in[i], takesGradient(s->model.inputs[i])));
    s->outs = s->model.eagerAutograd(*s->tape, vars);
    if (s->gradOutputs.empty())
      for (const eager::Var& v : s->outs) s->gradOutputs.push_back(ones(v.value));
  };
  auto bwd = [s] { s->tape->backward(s->outs, s->gradOutputs); };
  return {name, fwd, bwd, [] { return std::string("eager kernels, eager autograd"); }, ""};
}

Row libraryLstmRow(const std::string& name, const LstmParams& p, const Options& o) {
  auto m = std::make_shared<Model>(buildLstm(LstmVariantKind::Jit, p));
  auto in = std::make_shared<std::vector<Tensor>>(rowInputs(*m, o));
  std::shared_ptr<LibraryLstm> lstm = newLibraryLstm(p, o, p.hasDropout() ? in->back() : Tensor());
  std::string info = libraryLstmName(o);
  if (p.hasDropout()) info += fmt::format(" a layer, dropout {} between layers (graphjit's draws)", p.dropout);
  auto outs = std::make_shared<std::vector<Tensor>>();
  const int64_t layers = p.numLayers;
  return {name,
          [in, lstm, outs, layers] {
            std::vector<Tensor> w(in->begin() + 3, in->begin() + 3 + 4 * layers);
            *outs = lstm->forward((*in)[0], (*in)[1], (*in)[2], w);
          },
          [lstm, outs] { lstm->backward(ones((*outs)[0]), ones((*outs)[1]), ones((*outs)[2])); },
          [info] { return info; }, ""};
}

// fastrnns' cudnn_layernorm: the library LSTM, then 3 x seqLength layer norms (two over a [B, 4H] input,
// one over the final cy [L, B, H] again and again), forward only: a lower bound for a fused layer-norm
// LSTM, which no library offers.
Row libraryLayerNormRow(const std::string& name, const LstmParams& p, const Options& o) {
  struct State {
    std::vector<Tensor> in;
    std::shared_ptr<LibraryLstm> lstm;
    Tensor lnInput, wGates, bGates, wCell, bCell;
    std::vector<Tensor> outs;
  };
  auto s = std::make_shared<State>();
  const Model m = buildLstm(LstmVariantKind::Jit, p);
  s->in = rowInputs(m, o);
  s->lstm = newLibraryLstm(p, o);
  const DeviceKind device = onCuda(o) ? DeviceKind::Cuda : DeviceKind::Cpu;
  const int64_t H = p.hiddenSize;
  s->lnInput = Tensor::rand({p.miniBatch, 4 * H}, DType::Float32, o.seed + 7).to(device);
  s->wGates = Tensor::full({4 * H}, DType::Float32, 1.0, device), s->bGates = Tensor::zeros({4 * H}, DType::Float32, device);
  s->wCell = Tensor::full({H}, DType::Float32, 1.0, device), s->bCell = Tensor::zeros({H}, DType::Float32, device);
  auto fwd = [s, T = p.seqLength, H] {
    std::vector<Tensor> w(s->in.begin() + 3, s->in.end());
    s->outs = s->lstm->forward(s->in[0], s->in[1], s->in[2], w);
    const std::vector<int64_t> gates = {4 * H}, cell = {H};
    Tensor cy = s->outs[2];
    for (int64_t t = 0; t < T; ++t) {
      ops::layerNorm(s->lnInput, gates, s->wGates, s->bGates, 1e-5);
      ops::layerNorm(s->lnInput, gates, s->wGates, s->bGates, 1e-5);
      cy = ops::layerNorm(cy, cell, s->wCell, s->bCell, 1e-5).out;
    }
    s->outs[2] = cy;
  };
  return {name, fwd, {}, [what = std::string(libraryLstmName(o))] {
            return what + " + 3 x seqLength layer norms; forward only, a lower bound as in fastrnns";
          }, ""};
}

int64_t pick(const std::optional<int64_t>& given, int64_t fallback) { return given.value_or(fallback); }


}  // namespace gj::bench
