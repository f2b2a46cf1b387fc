#include "models/lstm.h"

#include "runtime/ops/ops.h"
#include "support/error.h"

namespace gj {

const std::vector<LstmVariantKind>& allLstmVariants() {
  static const std::vector<LstmVariantKind> kAll = {LstmVariantKind::Jit, LstmVariantKind::JitPremul,
                                                    LstmVariantKind::JitPremulBias, LstmVariantKind::JitSimple,
                                                    LstmVariantKind::JitMultilayer};
  return kAll;
}

std::string_view lstmVariantName(LstmVariantKind v) {
  switch (v) {
    case LstmVariantKind::Jit: return "jit";
    case LstmVariantKind::JitPremul: return "jit_premul";
    case LstmVariantKind::JitPremulBias: return "jit_premul_bias";
    case LstmVariantKind::JitSimple: return "jit_simple";
    case LstmVariantKind::JitMultilayer: return "jit_multilayer";
  }
  return "?";
}

LstmVariantKind lstmVariantFromName(std::string_view name) {
  std::string known;
  for (LstmVariantKind v : allLstmVariants()) {
    if (lstmVariantName(v) == name) return v;
    known += (known.empty() ? "" : ", ") + std::string(lstmVariantName(v));
  }
  throw Error(fmt::format("unknown LSTM variant '{}'", name), "", "variants: " + known);
}

std::vector<InputSpec> lstmWeightSpecs(int64_t inputSize, int64_t hiddenSize, int64_t numLayers,
                                       const std::string& prefix) {
  std::vector<InputSpec> specs;
  for (int64_t k = 0; k < numLayers; ++k) {
    int64_t in = k == 0 ? inputSize : hiddenSize;
    specs.push_back({fmt::format("{}weight_ih_l{}", prefix, k), DType::Float32, {4 * hiddenSize, in}});
    specs.push_back({fmt::format("{}weight_hh_l{}", prefix, k), DType::Float32, {4 * hiddenSize, hiddenSize}});
    specs.push_back({fmt::format("{}bias_ih_l{}", prefix, k), DType::Float32, {4 * hiddenSize}});
    specs.push_back({fmt::format("{}bias_hh_l{}", prefix, k), DType::Float32, {4 * hiddenSize}});
  }
  return specs;
}

std::tuple<Value*, Value*, Value*> emitRecurrence(GraphBuilder& b, Value* steps, Value* h0, Value* c0, bool needOutputs,
                                                  bool indexDirectly, const CellEmitter& cell) {
  Value* zero = b.i(0);
  Value* seq = indexDirectly ? steps : b.op(OpKind::Unbind, {steps, zero}, Type::of(TypeKind::TensorList));
  Value* trips = indexDirectly ? b.op(OpKind::Size, {steps, zero}, Type::of(TypeKind::Int))
                               : b.op(OpKind::Len, {seq}, Type::of(TypeKind::Int));
  std::vector<Value*> init = {h0, c0};
  if (needOutputs) init.push_back(b.list({}));
  auto loop = b.beginLoop(trips, init);
  Value* xt = indexDirectly ? b.op(OpKind::Select, {seq, zero, loop.index}) : b.op(OpKind::GetItem, {seq, loop.index});
  auto [hy, cy] = cell(xt, loop.carried[0], loop.carried[1]);
  std::vector<Value*> next = {hy, cy};
  if (needOutputs)
    next.push_back(b.op(OpKind::ListAppend, {loop.carried[2], hy}, Type::of(TypeKind::TensorList)));
  auto outs = b.endLoop(loop, next);
  Value* output = needOutputs ? b.op(OpKind::Stack, {outs[2], zero}) : nullptr;
  return {output, outs[0], outs[1]};
}

namespace {

struct LayerWeights {
  Value *wih, *whh, *bih, *bhh;
};

// gates -> (hy, cy). See Note [Gate order].
std::pair<Value*, Value*> emitGateMath(GraphBuilder& b, Value* gates, Value* c) {
  Value* one = b.i(1);
  auto g = b.unpack(b.op(OpKind::Chunk, {gates, b.i(4), one}, Type::of(TypeKind::TensorList)), 4);
  Value* ingate = b.op(OpKind::Sigmoid, {g[0]});
  Value* forgetgate = b.op(OpKind::Sigmoid, {g[1]});
  Value* cellgate = b.op(OpKind::Tanh, {g[2]});
  Value* outgate = b.op(OpKind::Sigmoid, {g[3]});
  Value* cy = b.op(OpKind::Add, {b.op(OpKind::Mul, {forgetgate, c}), b.op(OpKind::Mul, {ingate, cellgate}), one});
  Value* hy = b.op(OpKind::Mul, {outgate, b.op(OpKind::Tanh, {cy})});
  return {hy, cy};
}

// The per-step gates of each variant. `xt` is the step's input row, or its premultiplied input gates.
Value* emitGates(GraphBuilder& b, LstmVariantKind v, Value* xt, Value* h, const LayerWeights& w) {
  Value* one = b.i(1);
  auto hgates = [&] { return b.op(OpKind::Mm, {h, b.op(OpKind::T, {w.whh})}); };
  switch (v) {
    case LstmVariantKind::Jit:
    case LstmVariantKind::JitSimple:
    case LstmVariantKind::JitMultilayer: {
      Value* igates = b.op(OpKind::Mm, {xt, b.op(OpKind::T, {w.wih})});
      Value* s = b.op(OpKind::Add, {igates, hgates(), one});
      return b.op(OpKind::Add, {b.op(OpKind::Add, {s, w.bih, one}), w.bhh, one});
    }
    case LstmVariantKind::JitPremul:
      return b.op(OpKind::Add, {b.op(OpKind::Add, {b.op(OpKind::Add, {xt, hgates(), one}), w.bih, one}), w.bhh, one});
    case LstmVariantKind::JitPremulBias:
      return b.op(OpKind::Add, {b.op(OpKind::Add, {xt, hgates(), one}), w.bhh, one});
  }
  return nullptr;
}

// One layer of the variant over the whole sequence.
std::tuple<Value*, Value*, Value*> emitLayer(GraphBuilder& b, LstmVariantKind v, Value* input, Value* h0, Value* c0,
                                             const LayerWeights& w, bool needOutputs) {
  Value* steps = input;  // [T, B, *]: what the loop indexes per step
  if (v == LstmVariantKind::JitPremul || v == LstmVariantKind::JitPremulBias) {
    steps = b.op(OpKind::Matmul, {input, b.op(OpKind::T, {w.wih})});
    if (v == LstmVariantKind::JitPremulBias) steps = b.op(OpKind::Add, {steps, w.bih, b.i(1)});
  }
  return emitRecurrence(b, steps, h0, c0, needOutputs, v == LstmVariantKind::JitSimple,
                        [&](Value* xt, Value* h, Value* c) { return emitGateMath(b, emitGates(b, v, xt, h, w), c); });
}

}  // namespace

std::pair<Value*, Value*> emitLstmCell(GraphBuilder& b, Value* x, Value* h, Value* c, const std::vector<Value*>& w) {
  IR_CHECK(w.size() == 4) << "emitLstmCell: " << w.size() << " weights";
  return emitGateMath(b, emitGates(b, LstmVariantKind::Jit, x, h, {w[0], w[1], w[2], w[3]}), c);
}

LstmOutputs emitLstm(GraphBuilder& b, LstmVariantKind v, Value* input, Value* hx, Value* cx,
                     const std::vector<Value*>& weights, int64_t numLayers, Value* rng, double dropout) {
  IR_CHECK(static_cast<int64_t>(weights.size()) == 4 * numLayers) << "emitLstm: " << weights.size() << " weights for "
                                                                   << numLayers << " layers";
  Value* zero = b.i(0);
  // jit_multilayer gathers the parameters into one list and indexes it per layer.
  Value* params = v == LstmVariantKind::JitMultilayer ? b.list(weights) : nullptr;
  auto weight = [&](int64_t k) { return params ? b.getItem(params, k) : weights[k]; };
  std::vector<Value*> hys, cys;
  Value* layerInput = input;
  for (int64_t l = 0; l < numLayers; ++l) {
    LayerWeights w{weight(4 * l), weight(4 * l + 1), weight(4 * l + 2), weight(4 * l + 3)};
    Value* h0 = b.op(OpKind::Select, {hx, zero, b.i(l)});
    Value* c0 = b.op(OpKind::Select, {cx, zero, b.i(l)});
    bool needOutputs = v != LstmVariantKind::JitSimple || l + 1 < numLayers;
    auto [out, hy, cy] = emitLayer(b, v, layerInput, h0, c0, w, needOutputs);
    hys.push_back(hy);
    cys.push_back(cy);
    layerInput = out;
    if (rng && l + 1 < numLayers)
      layerInput = b.op(OpKind::PhiloxDropout, {layerInput, b.f(dropout), b.b(true), rng, b.i(l)});
  }
  Value* hy = b.op(OpKind::Stack, {b.list(hys), zero});
  Value* cy = b.op(OpKind::Stack, {b.list(cys), zero});
  return {layerInput, hy, cy};
}

static Value* addInput(Graph& g, const InputSpec& s) {
  return g.addInput(Type::tensor(s.dtype, s.sizes), s.name);
}

Model buildLstm(LstmVariantKind v, const LstmParams& p) {
  USER_CHECK(p.seqLength >= 1 && p.miniBatch >= 1 && p.inputSize >= 1 && p.hiddenSize >= 1 && p.numLayers >= 1,
             "lstm: seqLength, miniBatch, inputSize, hiddenSize and numLayers must be positive");
  Model m;
  USER_CHECK(p.dropout >= 0 && p.dropout < 1, "lstm: dropout {} is not a probability in [0, 1)", p.dropout);
  USER_CHECK(!p.hasDropout() || v != LstmVariantKind::JitSimple,
             "lstm: jit_simple has no layer outputs to drop; take another variant for dropout");
  m.name = fmt::format("lstm_{}{}", lstmVariantName(v), p.hasDropout() ? "_dropout" : "");
  m.inputs = {{"input", DType::Float32, {p.seqLength, p.miniBatch, p.inputSize}},
              {"hx", DType::Float32, {p.numLayers, p.miniBatch, p.hiddenSize}},
              {"cx", DType::Float32, {p.numLayers, p.miniBatch, p.hiddenSize}}};
  for (auto& s : lstmWeightSpecs(p.inputSize, p.hiddenSize, p.numLayers)) m.inputs.push_back(s);
  if (p.hasDropout()) m.inputs.push_back({"rng", DType::Int64, {2}, int64_t{1} << 40});
  auto g = std::make_shared<Graph>();
  GraphBuilder b(*g);
  std::vector<Value*> ins;
  for (const auto& s : m.inputs) ins.push_back(addInput(*g, s));
  std::vector<Value*> weights(ins.begin() + 3, ins.begin() + 3 + 4 * p.numLayers);
  LstmOutputs o = emitLstm(b, v, ins[0], ins[1], ins[2], weights, p.numLayers, p.hasDropout() ? ins.back() : nullptr,
                           p.dropout);
  if (o.output) {
    g->registerOutput(o.output->setName("output"));
    m.outputs.push_back("output");
  }
  g->registerOutput(o.hy->setName("hy"));
  g->registerOutput(o.cy->setName("cy"));
  m.outputs.insert(m.outputs.end(), {"hy", "cy"});
  m.graph = g;
  const int64_t layers = p.numLayers;
  const bool simple = v == LstmVariantKind::JitSimple;
  const double dropout = p.hasDropout() ? p.dropout : 0;
  m.eagerAutograd = [layers, simple, dropout](eager::Tape& tape, const std::vector<eager::Var>& in) {
    auto out = eagerLstm(tape, in, layers, dropout);
    if (simple) out.erase(out.begin());
    return out;
  };
  m.eager = [f = m.eagerAutograd](const std::vector<Tensor>& in) { return eagerValues(f, in); };
  return m;
}

Model buildLstmCell(int64_t miniBatch, int64_t inputSize, int64_t hiddenSize) {
  Model m;
  m.name = "lstm_cell";
  m.inputs = {{"input", DType::Float32, {miniBatch, inputSize}},
              {"hx", DType::Float32, {miniBatch, hiddenSize}},
              {"cx", DType::Float32, {miniBatch, hiddenSize}},
              {"weight_ih", DType::Float32, {4 * hiddenSize, inputSize}},
              {"weight_hh", DType::Float32, {4 * hiddenSize, hiddenSize}},
              {"bias_ih", DType::Float32, {4 * hiddenSize}},
              {"bias_hh", DType::Float32, {4 * hiddenSize}}};
  auto g = std::make_shared<Graph>();
  GraphBuilder b(*g);
  std::vector<Value*> in;
  for (const auto& s : m.inputs) in.push_back(addInput(*g, s));
  LayerWeights w{in[3], in[4], in[5], in[6]};
  auto [hy, cy] = emitGateMath(b, emitGates(b, LstmVariantKind::Jit, in[0], in[1], w), in[2]);
  g->registerOutput(hy->setName("hy"));
  g->registerOutput(cy->setName("cy"));
  m.outputs = {"hy", "cy"};
  m.graph = g;
  m.eagerAutograd = [](eager::Tape& tape, const std::vector<eager::Var>& v) {
    auto [hy, cy] = eagerLstmCell(tape, v[0], v[1], v[2], tape.t(v[3]), tape.t(v[4]), v[5], v[6]);
    return std::vector<eager::Var>{hy, cy};
  };
  m.eager = [f = m.eagerAutograd](const std::vector<Tensor>& in) { return eagerValues(f, in); };
  return m;
}

std::pair<eager::Var, eager::Var> eagerLstmCell(eager::Tape& tape, const eager::Var& x, const eager::Var& h,
                                                const eager::Var& c, const eager::Var& wihT, const eager::Var& whhT,
                                                const eager::Var& bih, const eager::Var& bhh) {
  eager::Var gates = tape.add(tape.add(tape.add(tape.mm(x, wihT), tape.mm(h, whhT)), bih), bhh);
  auto g = tape.chunk(gates, 4, 1);
  eager::Var cy = tape.add(tape.mul(tape.sigmoid(g[1]), c), tape.mul(tape.sigmoid(g[0]), tape.tanh(g[2])));
  eager::Var hy = tape.mul(tape.sigmoid(g[3]), tape.tanh(cy));
  return {hy, cy};
}

std::vector<eager::Var> eagerLayers(eager::Tape& tape, const std::vector<eager::Var>& in, int64_t numLayers,
                                    size_t perLayer, const EagerCell& cell, double dropout) {
  const size_t rng = dropout > 0 ? 1 : 0;
  USER_CHECK(in.size() == 3 + perLayer * static_cast<size_t>(numLayers) + rng, "lstm: {} inputs for {} layers of {} "
             "parameters{}", in.size(), numLayers, perLayer, rng ? " and the rng state" : "");
  eager::Var layerInput = in[0];
  std::vector<eager::Var> hys, cys;
  for (int64_t l = 0; l < numLayers; ++l) {
    const eager::Var* w = &in[3 + perLayer * static_cast<size_t>(l)];
    eager::Var wihT = tape.t(w[0]), whhT = tape.t(w[1]);
    eager::Var h = tape.select(in[1], 0, l), c = tape.select(in[2], 0, l);
    std::vector<eager::Var> outs;
    for (const eager::Var& x : tape.unbind(layerInput)) {
      std::tie(h, c) = cell(x, h, c, wihT, whhT, w);
      outs.push_back(h);
    }
    layerInput = tape.stack(outs, 0);
    if (rng && l + 1 < numLayers) layerInput = tape.dropout(layerInput, dropout, in.back().value, l);
    hys.push_back(h);
    cys.push_back(c);
  }
  return {layerInput, tape.stack(hys, 0), tape.stack(cys, 0)};
}

std::vector<eager::Var> eagerLstm(eager::Tape& tape, const std::vector<eager::Var>& in, int64_t numLayers,
                                  double dropout) {
  return eagerLayers(tape, in, numLayers, 4,
                     [&](const eager::Var& x, const eager::Var& h, const eager::Var& c, const eager::Var& wihT,
                         const eager::Var& whhT, const eager::Var* w) {
                       return eagerLstmCell(tape, x, h, c, wihT, whhT, w[2], w[3]);
                     }, dropout);
}

std::vector<Tensor> eagerValues(const std::function<std::vector<eager::Var>(eager::Tape&, const std::vector<eager::Var>&)>& f,
                                const std::vector<Tensor>& in) {
  eager::Tape tape;
  std::vector<eager::Var> vars;
  for (const Tensor& t : in) vars.push_back(tape.input(t, false));
  std::vector<Tensor> out;
  for (const eager::Var& v : f(tape, vars)) out.push_back(v.value);
  return out;
}

std::vector<Tensor> eagerLstm(const Tensor& input, const Tensor& hx, const Tensor& cx,
                              const std::vector<Tensor>& weights, int64_t numLayers) {
  std::vector<Tensor> in = {input, hx, cx};
  in.insert(in.end(), weights.begin(), weights.end());
  return eagerValues([numLayers](eager::Tape& tape, const std::vector<eager::Var>& v) {
    return eagerLstm(tape, v, numLayers);
  }, in);
}

}  // namespace gj
