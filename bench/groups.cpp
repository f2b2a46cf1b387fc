// graphbench's groups: fastrnns' rnns, vl_lstm and cnns, the language model, the classifier, the cell
// sweeps and single ops, each a list of rows (rows.h). Every jit row is a Function with the chosen fuser
// and executor.
#include "bench/groups.h"

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

namespace {
// ---- vl_lstm: fastrnns' variable-length rows ----

Row packedLibraryRow(const std::string& name, const Options& o) {
  struct State {
    std::vector<Tensor> in, outs;
    std::shared_ptr<PackedLibraryLstm> lstm;
  };
  auto s = std::make_shared<State>();
  const Model m = vlModel(name, o);
  s->in = rowInputs(m, o);
  const Tensor& x = s->in[0];
  LstmParams p{x.size(0), x.size(1), x.size(2), s->in[2].size(2), s->in[2].size(0)};
  s->lstm = std::make_shared<PackedLibraryLstm>(ops::hostInts(s->in[1], "lengths"), p, o);
  auto fwd = [s] {
    s->outs = s->lstm->forward(s->in[0], s->in[2], s->in[3], std::vector<Tensor>(s->in.begin() + 4, s->in.end()));
  };
  auto bwd = [s] { s->lstm->backward(ones(s->outs[0]), ones(s->outs[1]), ones(s->outs[2])); };
  return {name, fwd, bwd, [what = std::string(libraryLstmName(o)), n = s->lstm->segments()] {
            return fmt::format("{} over packed sequences: {} runs of steps, the batch shrinking", what, n);
          }, ""};
}

Group vlLstm(const Options& o) {
  const Model probe = vlModel("vl_packed", o);
  const Shape& x = probe.inputs[0].sizes;
  Group g;
  g.title = fmt::format("vl_lstm: lengths in [{}, {}) (seed {}), padded to {} steps; miniBatch {}, inputSize {}, "
                        "hiddenSize {}, numLayers {}", kVlMinLength, kVlMaxLength, o.seed, x[0], x[1], x[2],
                        probe.inputs[2].sizes[2], probe.inputs[2].sizes[0]);
  g.sizes = {{"miniBatch", {x[1]}}, {"inputSize", {x[2]}}, {"hiddenSize", {probe.inputs[2].sizes[2]}},
             {"numLayers", {probe.inputs[2].sizes[0]}}};
  g.nloops = 10;
  const std::string noLibrary = noLibraryLstm(o);
  if (!noLibrary.empty()) g.title += fmt::format("; no vl_cudnn row ({})", noLibrary);
  for (const std::string& name : vlRowNames()) {
    if (name == "vl_cudnn") {
      if (noLibrary.empty()) g.rows.push_back(packedLibraryRow(name, o));
    } else if (name == "vl_py") {
      g.rows.push_back(eagerTrainingRow(name, vlModel(name, o), o));
    } else {
      g.rows.push_back(trainingRow(name, vlModel(name, o), o, functionOptions(o), false));
    }
  }
  return g;
}

// ---- cnns: fastrnns' ResNets ----

Group cnns(const Options& o) {
  const Model probe = cnnModel("resnet18", o);
  const Shape& x = probe.inputs[0].sizes;
  Group g;
  g.title = fmt::format("cnns: torchvision's ResNets in training on {} x {} x {} x {} images, {} classes; the eager "
                        "kernels (resnet18, resnet50) and the graph (resnet*_jit)",
                        x[0], x[1], x[2], x[3], probe.inputs.back().sizes[0]);
  g.sizes = {{"miniBatch", {x[0]}}, {"imageSize", {x[2]}}};
  g.nloops = 10;
  for (const std::string& name : cnnRowNames()) {
    const Model m = cnnModel(name, o);
    if (cnnEagerRow(name) == name) {
      g.rows.push_back(eagerTrainingRow(name, m, o));
      continue;
    }
    g.rows.push_back(trainingRow(name, m, o, functionOptions(o), false));
    g.rows.back().baseline = cnnEagerRow(name);
  }
  return g;
}

// ---- rnns: the fastrnns table ----

Group rnns(const Options& o) {
  LstmParams p = rnnsParams(o);
  Group g;
  g.title = fmt::format("rnns: seqLength {}, miniBatch {}, inputSize {}, hiddenSize {}, numLayers {}", p.seqLength,
                        p.miniBatch, p.inputSize, p.hiddenSize, p.numLayers);
  g.sizes = {{"seqLength", {p.seqLength}}, {"miniBatch", {p.miniBatch}}, {"inputSize", {p.inputSize}},
             {"hiddenSize", {p.hiddenSize}}, {"numLayers", {p.numLayers}}};
  const std::string noLibrary = noLibraryLstm(o);
  if (!noLibrary.empty() && (o.rnns.empty() || std::ranges::find(o.rnns, "cudnn") != o.rnns.end()))
    g.title += fmt::format("; no cudnn row ({})", noLibrary);
  for (const std::string& name : o.rnns.empty() ? defaultRnnRowNames() : o.rnns) {
    if (name == "cudnn" || name == "cudnn_layernorm" || name == "cudnn_dropout") {
      if (!noLibrary.empty()) continue;
      if (name == "cudnn_layernorm") g.rows.push_back(libraryLayerNormRow(name, p, o));
      else g.rows.push_back(libraryLstmRow(name, rnnsRowParams(name, p), o));
    }
    else if (name == "aten") g.rows.push_back(eagerTrainingRow(name, rnnsModel(name, p), o));
    else if (name == "py") g.rows.push_back(interpretedRow(name, rnnsModel(name, p), o));
    else g.rows.push_back(trainingRow(name, rnnsModel(name, p), o, rnnsFunctionOptions(name, o), false));
  }
  return g;
}

// ---- lm: the TensorFlow benchmark's stacked LSTM language model ----

// embedding -> the library's LSTM -> linear decoder -> cross-entropy, forward and backward by hand, then
// SGD: the "fused library LSTM" variant.
Row libraryLm(const std::string& name, const ModelConfig& c, const Options& o, bool train) {
  struct State {
    Model m;
    std::vector<Tensor> in;  // tokens, targets, embedding.weight, hx, cx, 4 per layer, decoder.weight, .bias
    std::shared_ptr<LibraryLstm> lstm;
    Tensor emb, out, logits, loss;
  };
  auto s = std::make_shared<State>();
  s->m = buildLstmLm(c);
  s->in = rowInputs(s->m, o);
  s->lstm = newLibraryLstm({c.seqLength, c.miniBatch, c.embedding, c.hiddenSize, c.numLayers}, o);
  const int64_t T = c.seqLength, B = c.miniBatch, H = c.hiddenSize, L = c.numLayers;
  const size_t dec = 5 + 4 * static_cast<size_t>(L);
  auto fwd = [s, T, B, H, dec] {
    s->emb = ops::embedding(s->in[2], s->in[0]);
    std::vector<Tensor> w(s->in.begin() + 5, s->in.begin() + static_cast<long>(dec));
    s->out = s->lstm->forward(s->emb, s->in[3], s->in[4], w)[0];
    s->logits = ops::linear(s->out.view({T * B, H}), s->in[dec], s->in[dec + 1]);
    s->loss = ops::crossEntropy(s->logits, s->in[1].view({T * B}));
  };
  auto bwd = [s, T, B, H, L, dec, lr = o.learningRate, V = c.vocab] {
    Tensor logp = ops::logSoftmax(s->logits, 1);
    Tensor targets = s->in[1].view({T * B});
    Tensor gl = ops::logSoftmaxBackward(ops::nllLossBackward(ones(s->loss), logp, targets), logp, 1);
    Tensor gWd = ops::mm(gl.t(), s->out.view({T * B, H}));
    Tensor gbd = ops::sum(gl, std::vector<int64_t>{0}, false);
    Tensor gOut = ops::mm(gl, s->in[dec]).view({T, B, H});
    const Tensor zero = Tensor::zeros({L, B, H}, DType::Float32, gOut.device());
    auto lg = s->lstm->backward(gOut, zero, zero);
    Tensor gEmb = ops::embeddingBackward(lg[0], s->in[0], V);
    sgdUpdate(s->in[2], gEmb, lr);
    for (size_t k = 3; k < lg.size(); ++k) sgdUpdate(s->in[5 + (k - 3)], lg[k], lr);
    sgdUpdate(s->in[dec], gWd, lr);
    sgdUpdate(s->in[dec + 1], gbd, lr);
  };
  auto info = [what = libraryLstmName(o)] { return std::string(what); };
  if (!train) return {name, fwd, {}, info, ""};
  return {name, fwd, bwd, info, ""};
}

Group lm(const Options& o) {
  ModelConfig c;
  c.vocab = pick(o.vocab, 10001);
  c.embedding = pick(o.inputSize, 128);
  c.numLayers = pick(o.numLayers, 3);
  c.hiddenSize = pick(o.hiddenSize, 256);
  c.seqLength = pick(o.seqLength, 50);
  c.miniBatch = pick(o.miniBatch, 128);
  Group g;
  g.title = fmt::format("lm: vocab {}, embedding {}, numLayers {}, hiddenSize {}, seqLength {}, miniBatch {}; "
                        "fwd = forward, bwd = backward + SGD update; *.infer rows: forward without gradients",
                        c.vocab, c.embedding, c.numLayers, c.hiddenSize, c.seqLength, c.miniBatch);
  g.sizes = {{"vocab", {c.vocab}},           {"embedding", {c.embedding}}, {"numLayers", {c.numLayers}},
             {"hiddenSize", {c.hiddenSize}}, {"seqLength", {c.seqLength}}, {"miniBatch", {c.miniBatch}}};
  g.nloops = 60;
  g.warmup = 10;
  auto isParameter = [](const std::string& n) { return n != "hx" && n != "cx"; };
  for (bool unroll : {true, false}) {
    FunctionOptions fo = functionOptions(o);
    fo.unrollLoops = unroll;
    const char* name = unroll ? "static" : "whileop";
    g.rows.push_back(trainingRow(name, buildLstmLm(c), o, fo, true, isParameter));
    g.rows.push_back(inferenceRow(std::string(name) + ".infer", buildLstmLm(c), o, fo));
  }
  if (std::string no = noLibraryLstm(o); !no.empty()) {
    g.title += fmt::format("; no cudnn rows ({})", no);
    return g;
  }
  g.rows.push_back(libraryLm("cudnn", c, o, true));
  g.rows.push_back(libraryLm("cudnn.infer", c, o, false));
  return g;
}

// ---- classifier: embedding -> LSTM -> last step -> linear -> cross-entropy, + SGD ----

Group classifier(const Options& o) {
  ModelConfig c;
  c.vocab = pick(o.vocab, 10000);
  c.classes = 5;
  c.seqLength = pick(o.seqLength, 50);
  c.miniBatch = pick(o.miniBatch, 64);
  std::vector<int64_t> hidden = {128, 256, 512, 1024, 2048};
  if (o.hiddenSize) hidden = {*o.hiddenSize};
  Group g;
  g.title = fmt::format("classifier: vocab {}, classes {}, seqLength {}, miniBatch {}, hidden = embedding in {{{}}}; "
                        "fwd = forward, bwd = backward + SGD update", c.vocab, c.classes, c.seqLength, c.miniBatch,
                        fmt::join(hidden, ", "));
  g.sizes = {{"vocab", {c.vocab}},         {"classes", {c.classes}}, {"seqLength", {c.seqLength}},
             {"miniBatch", {c.miniBatch}}, {"hiddenSize", hidden, true}};
  for (int64_t h : hidden) {
    c.hiddenSize = h;
    g.rows.push_back(trainingRow(fmt::format("h{}", h), buildLstmClassifier(c), o, functionOptions(o), true,
                                 [](const std::string& n) { return n != "hx" && n != "cx"; }));
  }
  return g;
}

// ---- cells: the TVM sweeps ----

Group cells(const Options& o) {
  Group g;
  const int64_t cellBatch = pick(o.miniBatch, 128), cellIn = pick(o.inputSize, 512), cellHidden = pick(o.hiddenSize, 512);
  std::vector<int64_t> batches = {1, 64}, seqs = {25, 100}, sizes = {128, 512}, depths = {1, 2, 5, 10, 20};
  if (o.miniBatch) batches = {*o.miniBatch};
  if (o.seqLength) seqs = {*o.seqLength};
  if (o.hiddenSize) sizes = {*o.hiddenSize};
  if (o.numLayers) depths = {1, *o.numLayers};
  const int64_t stackSize = pick(o.hiddenSize, 64), stackSeq = pick(o.seqLength, 100), stackBatch = pick(o.miniBatch, 64);
  g.title = fmt::format("cells: one cell (batch {}, input {}, hidden {}); one layer over batch {{{}}} x seq {{{}}} x "
                        "input = hidden {{{}}}; stacked depth {{{}}} at input = hidden {}, seq {}, batch {}",
                        cellBatch, cellIn, cellHidden, fmt::join(batches, ","), fmt::join(seqs, ","),
                        fmt::join(sizes, ","), fmt::join(depths, ","), stackSize, stackSeq, stackBatch);
  g.sizes = {{"cellBatch", {cellBatch}},    {"cellInputSize", {cellIn}},  {"cellHiddenSize", {cellHidden}},
             {"layerBatch", batches, true}, {"layerSeqLength", seqs, true}, {"layerSize", sizes, true},
             {"stackDepth", depths, true},  {"stackSize", {stackSize}},   {"stackSeqLength", {stackSeq}},
             {"stackBatch", {stackBatch}}};
  // The library rows: oneDNN's LSTM on the CPU, cuDNN's on CUDA (where it can be loaded).
  const std::string noLibrary = noLibraryLstm(o);
  const bool library = noLibrary.empty();
  if (!library) g.title += fmt::format("; no cudnn rows ({})", noLibrary);
  if (library) g.rows.push_back(libraryLstmRow("cell.cudnn", {1, cellBatch, cellIn, cellHidden, 1}, o));
  g.rows.push_back(trainingRow("cell", buildLstmCell(cellBatch, cellIn, cellHidden), o, functionOptions(o), false));
  if (library) g.rows.back().baseline = "cell.cudnn";
  for (int64_t b : batches)
    for (int64_t t : seqs)
      for (int64_t h : sizes) {
        LstmParams p{t, b, h, h, 1};
        std::string name = fmt::format("layer_b{}_s{}_h{}", b, t, h);
        if (library) g.rows.push_back(libraryLstmRow(name + ".cudnn", p, o));
        g.rows.push_back(trainingRow(name, buildLstm(LstmVariantKind::JitPremul, p), o, functionOptions(o), false));
        if (library) g.rows.back().baseline = name + ".cudnn";
        if (onCuda(o)) {  // the same layer as one persistent kernel: the rnns group's jit_persistent
          g.rows.push_back(trainingRow(name + ".persistent", buildLstm(LstmVariantKind::JitPremul, p), o,
                                       rnnsFunctionOptions("jit_persistent", o), false));
          if (library) g.rows.back().baseline = name + ".cudnn";
        }
      }
  for (int64_t d : depths) {
    LstmParams p{stackSeq, stackBatch, stackSize, stackSize, d};
    g.rows.push_back(trainingRow(fmt::format("stack_d{}", d), buildLstm(LstmVariantKind::JitMultilayer, p), o,
                                 functionOptions(o), false));
  }
  return g;
}

// ---- ops: single modules, compiled graph against the eager kernels ----

Group ops(const Options& o) {
  Group g;
  ModelConfig lin, conv, mha, sm;
  lin.rows = pick(o.miniBatch, 128), lin.features = pick(o.inputSize, 1024), lin.outFeatures = pick(o.hiddenSize, 1024);
  conv.miniBatch = pick(o.miniBatch, 8), conv.channels = pick(o.inputSize, 64), conv.outChannels = pick(o.hiddenSize, 64);
  conv.height = conv.width = pick(o.seqLength, 56), conv.kernel = 3, conv.padding = 1, conv.stride = 1;
  mha.seqLength = pick(o.seqLength, 128), mha.miniBatch = pick(o.miniBatch, 16), mha.embedDim = pick(o.inputSize, 512);
  mha.numHeads = mha.embedDim % 8 == 0 ? 8 : 1;
  sm.rows = pick(o.miniBatch, 2048), sm.features = pick(o.inputSize, 1024), sm.dim = -1;
  g.title = fmt::format("ops: linear {}x{}->{}; conv2d batch {}, {}->{} channels, {}x{}, kernel 3, padding 1; "
                        "multihead_attention seq {}, batch {}, embed {}, heads {}; softmax {}x{}; "
                        "each compiled graph (fwd, bwd) against the eager kernels (fwd)",
                        lin.rows, lin.features, lin.outFeatures, conv.miniBatch, conv.channels, conv.outChannels,
                        conv.height, conv.width, mha.seqLength, mha.miniBatch, mha.embedDim, mha.numHeads, sm.rows,
                        sm.features);
  g.sizes = {{"linearRows", {lin.rows}},         {"linearIn", {lin.features}},      {"linearOut", {lin.outFeatures}},
             {"convBatch", {conv.miniBatch}},    {"convIn", {conv.channels}},       {"convOut", {conv.outChannels}},
             {"convImage", {conv.height}},       {"attentionSeq", {mha.seqLength}}, {"attentionBatch", {mha.miniBatch}},
             {"attentionEmbed", {mha.embedDim}}, {"attentionHeads", {mha.numHeads}}, {"softmaxRows", {sm.rows}},
             {"softmaxFeatures", {sm.features}}};
  for (auto& [name, cfg] : std::vector<std::pair<std::string, ModelConfig>>{
           {"linear", lin}, {"conv2d", conv}, {"multihead_attention", mha}, {"softmax", sm}}) {
    Model m = buildModel(name, cfg);
    g.rows.push_back(eagerRow(name + ".eager", m, o));
    g.rows.push_back(trainingRow(name, m, o, functionOptions(o), false));
    g.rows.back().baseline = name + ".eager";
  }
  return g;
}

}  // namespace

LstmParams rnnsParams(const Options& o) {
  return {pick(o.seqLength, 100), pick(o.miniBatch, 64), pick(o.inputSize, 512), pick(o.hiddenSize, 512),
          pick(o.numLayers, 1)};
}

LstmParams rnnsRowParams(const std::string& row, LstmParams p) {
  if (row == "cudnn_dropout" || row == "jit_dropout") p.dropout = kRnnsDropout;
  return p;
}

Model rnnsModel(const std::string& row, const LstmParams& p) {
  if (row == "jit_layernorm" || row == "jit_layernorm_decom") {
    ModelConfig c;
    c.seqLength = p.seqLength, c.miniBatch = p.miniBatch, c.inputSize = p.inputSize, c.hiddenSize = p.hiddenSize;
    c.numLayers = p.numLayers;
    c.decomposeLayerNorm = row == "jit_layernorm_decom";
    return buildLnLstm(c);
  }
  if (row == "jit_dropout") return buildLstm(LstmVariantKind::Jit, rnnsRowParams(row, p));
  if (row == "jit_persistent") return buildLstm(LstmVariantKind::JitPremul, p);
  if (row.starts_with("jit")) return buildLstm(lstmVariantFromName(row), p);
  return buildLstm(LstmVariantKind::Jit, p);  // cudnn, cudnn_layernorm, aten, py
}

const std::vector<std::string>& groupNames() {
  static const std::vector<std::string> names = {"rnns", "vl_lstm", "cnns", "lm", "classifier", "cells", "ops"};
  return names;
}

const std::vector<std::string>& cnnRowNames() {
  static const std::vector<std::string> names = {"resnet18", "resnet18_jit", "resnet50", "resnet50_jit"};
  return names;
}

std::string cnnEagerRow(const std::string& row) {
  return row.ends_with("_jit") ? row.substr(0, row.size() - 4) : row;
}

Model cnnModel(const std::string& row, const Options& o) {
  ModelConfig c;
  c.miniBatch = pick(o.miniBatch, 64);
  c.imageSize = pick(o.imageSize, 224);
  return buildModel(cnnEagerRow(row), c);
}

const std::vector<std::string>& vlRowNames() {
  static const std::vector<std::string> names = {"vl_cudnn", "vl_jit", "vl_py", "vl_packed"};
  return names;
}

Model vlModel(const std::string& row, const Options& o) {
  ModelConfig c;
  c.seqLength = kVlMaxLength - 1;
  c.miniBatch = pick(o.miniBatch, 64), c.inputSize = pick(o.inputSize, 512), c.hiddenSize = pick(o.hiddenSize, 512);
  c.numLayers = pick(o.numLayers, 1);
  c.perSequence = row == "vl_jit" || row == "vl_py";
  Model m = buildVlLstm(c);
  InputSpec& lengths = m.inputs[1];
  IR_CHECK(lengths.name == "lengths") << "vl_lstm's second input is " << lengths.name;
  lengths.low = kVlMinLength, lengths.high = kVlMaxLength;  // randomInputs draws them so
  return m;
}

PackedLibraryLstm::PackedLibraryLstm(const std::vector<int64_t>& lengths, const LstmParams& p, const Options& o)
    : inputSizes_{p.seqLength, p.miniBatch, p.inputSize} {
  USER_CHECK(static_cast<int64_t>(lengths.size()) == p.miniBatch, "vl_cudnn: {} lengths for a batch of {}",
             lengths.size(), p.miniBatch);
  const Tensor len = Tensor::fromVector({p.miniBatch}, std::vector<double>(lengths.begin(), lengths.end()), DType::Int64);
  auto sorted = ops::sort(len, 0, true);
  order_ = sorted.indices;
  unsort_ = ops::sort(order_, 0, false).indices;
  std::vector<int64_t> desc = ops::hostInts(sorted.values, "vl_cudnn");
  int64_t begin = 0;
  for (int64_t n = p.miniBatch; n > 0;) {  // steps [begin, desc[n - 1]) run the first n sequences
    const int64_t end = desc[n - 1];
    USER_CHECK(end >= 1 && end <= p.seqLength, "vl_cudnn: length {} is not in [1, {}]", end, p.seqLength);
    if (end > begin) {
      LstmParams sp = p;
      sp.seqLength = end - begin, sp.miniBatch = n;
      segments_.push_back({begin, end, n, newLibraryLstm(sp, o)});
      begin = end;
    }
    while (n > 0 && desc[n - 1] <= begin) --n;
  }
}

std::vector<Tensor> PackedLibraryLstm::forward(const Tensor& input, const Tensor& hx, const Tensor& cx,
                                               const std::vector<Tensor>& w) {
  Tensor x = ops::indexSelect(input, 1, order_);
  Tensor h = ops::indexSelect(hx, 1, order_), c = ops::indexSelect(cx, 1, order_);
  Tensor out = Tensor::zeros({x.size(0), x.size(1), h.size(2)}, x.dtype(), x.device());
  for (const Segment& s : segments_) {
    // The library keeps its inputs for its backward, so the state goes in as copies (a contiguous narrow would
    // be h itself, which is overwritten below).
    auto r = s.lstm->forward(x.slice(0, s.begin, s.end).narrow(1, 0, s.batch).contiguous(),
                             h.narrow(1, 0, s.batch).clone(), c.narrow(1, 0, s.batch).clone(), w);
    out.slice(0, s.begin, s.end).narrow(1, 0, s.batch).copyFrom(r[0]);
    h.narrow(1, 0, s.batch).copyFrom(r[1]);
    c.narrow(1, 0, s.batch).copyFrom(r[2]);
  }
  return {ops::indexSelect(out, 1, unsort_), ops::indexSelect(h, 1, unsort_), ops::indexSelect(c, 1, unsort_)};
}

std::vector<Tensor> PackedLibraryLstm::backward(const Tensor& gradOutput, const Tensor& gradHy, const Tensor& gradCy) {
  Tensor go = ops::indexSelect(gradOutput, 1, order_);
  Tensor dh = ops::indexSelect(gradHy, 1, order_), dc = ops::indexSelect(gradCy, 1, order_);
  Tensor gx = Tensor::zeros(inputSizes_, go.dtype(), go.device());
  std::vector<Tensor> gw;
  for (auto s = segments_.rbegin(); s != segments_.rend(); ++s) {
    auto r = s->lstm->backward(go.slice(0, s->begin, s->end).narrow(1, 0, s->batch).contiguous(),
                               dh.narrow(1, 0, s->batch).contiguous(), dc.narrow(1, 0, s->batch).contiguous());
    gx.slice(0, s->begin, s->end).narrow(1, 0, s->batch).copyFrom(r[0]);
    dh.narrow(1, 0, s->batch).copyFrom(r[1]);
    dc.narrow(1, 0, s->batch).copyFrom(r[2]);
    for (size_t k = 3; k < r.size(); ++k) {
      if (gw.size() < k - 2) gw.push_back(r[k]);
      else gw[k - 3] = ops::add(gw[k - 3], r[k]);
    }
  }
  std::vector<Tensor> grads = {ops::indexSelect(gx, 1, unsort_), ops::indexSelect(dh, 1, unsort_),
                               ops::indexSelect(dc, 1, unsort_)};
  grads.insert(grads.end(), gw.begin(), gw.end());
  return grads;
}

const std::vector<std::string>& defaultRnnRowNames() {
  static const std::vector<std::string> names = {"cudnn", "aten", "py", "jit", "jit_premul", "jit_premul_bias",
                                                 "jit_simple", "jit_multilayer"};
  return names;
}

const std::vector<std::string>& rnnRowNames() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> all = defaultRnnRowNames();
    all.insert(all.end(), {"cudnn_layernorm", "jit_layernorm", "jit_layernorm_decom", "cudnn_dropout", "jit_dropout",
                           "jit_persistent"});
    return all;
  }();
  return names;
}

static Group buildGroupRows(const std::string& name, const Options& o) {
  if (name == "rnns") return rnns(o);
  if (name == "vl_lstm") return vlLstm(o);
  if (name == "cnns") return cnns(o);
  if (name == "lm") return lm(o);
  if (name == "classifier") return classifier(o);
  if (name == "cells") return cells(o);
  if (name == "ops") return ops(o);
  throw Error(fmt::format("--group={}: unknown group; groups: {}", name, fmt::join(groupNames(), ", ")));
}

namespace {

// A row's CUDA state under --cuda-graphs: its stream, and the memory its forward and backward graphs share
// (the backward reads what the forward saved).
struct RowStream {
  cuda::Stream stream;
  std::shared_ptr<cuda::GraphMemory> memory = cuda::Graph::newMemory();
};

// One closure of a row under --cuda-graphs: its first `eager` runs (profiling, compiling, first
// allocations) run as they are on the row's stream; the next is captured and replayed, and every later
// run replays the graph. The forward and the backward capture in the same iteration, in that order, as
// their shared memory needs. Work that cannot be captured (it waits for the device) runs uncaptured from
// then on, and the row's info says why. A failed capture executed none of its device work: a forward
// (`rerun`) runs again uncaptured at once, so that its backward has what it saved; a backward's run is
// lost instead, since running it again could repeat side effects (consuming its tape).
struct Replay {
  std::optional<cuda::Graph> graph;
  std::string uncaptured;  ///< why the capture failed; empty while it has not
  int runs = 0;
};

std::function<void()> replayed(std::shared_ptr<RowStream> rs, std::shared_ptr<Replay> state, std::function<void()> f,
                               int eager, bool rerun) {
  return [rs, state, f, eager, rerun] {
    cuda::StreamGuard guard(rs->stream);
    if (!state->graph && (state->runs++ < eager || !state->uncaptured.empty())) {
      f();
      cuda::synchronize();
      return;
    }
    if (!state->graph) {
      Result<cuda::Graph> g = cuda::Graph::capture(rs->stream, f, rs->memory);
      if (!g) {
        state->uncaptured = g.error().what();
        if (rerun) {
          f();
          cuda::synchronize();
        }
        return;
      }
      state->graph.emplace(std::move(g).value());
    }
    state->graph->replay();
    cuda::synchronize();
    state->graph->verify();
  };
}

// On CUDA a row's work is queued when its closure returns: each one waits for the device, so that the
// times are the device's.
std::function<void()> waiting(std::function<void()> f) {
  return [f] {
    f();
    cuda::synchronize();
  };
}

}  // namespace

// --kernel-bandwidth: the row's runtime reductions timed while it runs (cuda::setReductionTimes), and its
// info says what share of the DRAM's bandwidth they reached, beside the fused kernels'.
void timeReductions(Row& r) {
  auto times = std::make_shared<std::vector<KernelTime>>();
  auto timed = [times](std::function<void()> run) {
    return [times, run = std::move(run)] {
      struct Restore {
        std::vector<KernelTime>* before;
        ~Restore() { cuda::setReductionTimes(before); }
      } restore{cuda::setReductionTimes(times.get())};
      run();
    };
  };
  if (r.forward) r.forward = timed(std::move(r.forward));
  if (r.backward) r.backward = timed(std::move(r.backward));
  r.info = [times, info = std::move(r.info)] {
    std::string out = info ? info() : std::string();
    if (times->empty()) return out;
    return (out.empty() ? out : out + ", ") +
           bandwidthInfo(*times, cuda::requireDevice().dramGBs, "runtime reduction");
  };
}

Group buildGroup(const std::string& name, const Options& o) {
  Group g = buildGroupRows(name, o);
  if (!onCuda(o)) return g;
  for (Row& r : g.rows) {
    if (!o.cudaGraphs) {
      if (r.forward) r.forward = waiting(std::move(r.forward));
      if (r.backward) r.backward = waiting(std::move(r.backward));
      if (o.kernelBandwidth) timeReductions(r);
      continue;
    }
    auto rs = std::make_shared<RowStream>();
    auto fwd = std::make_shared<Replay>(), bwd = std::make_shared<Replay>();
    const int eager = o.profilingRuns + 1;
    if (r.forward) r.forward = replayed(rs, fwd, std::move(r.forward), eager, true);
    if (r.backward) r.backward = replayed(rs, bwd, std::move(r.backward), eager, false);
    r.info = [info = std::move(r.info), fwd, bwd] {
      auto nodes = [](const Replay& p) { return p.graph ? fmt::format("{}", p.graph->nodes()) : std::string("-"); };
      std::string out = fmt::format("{}, CUDA graphs of {} + {} nodes", info ? info() : std::string(), nodes(*fwd),
                                    nodes(*bwd));
      for (const auto& [what, p] : {std::pair{"forward", fwd}, std::pair{"backward", bwd}})
        if (!p->uncaptured.empty()) out += fmt::format("; {} runs uncaptured: {}", what, p->uncaptured);
      return out;
    };
  }
  return g;
}

}  // namespace gj::bench
