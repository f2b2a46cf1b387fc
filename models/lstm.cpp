#include "models/lstm.h"

#include "runtime/cpu/ops.h"
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

LstmOutputs emitLstm(GraphBuilder& b, LstmVariantKind v, Value* input, Value* hx, Value* cx,
                     const std::vector<Value*>& weights, int64_t numLayers) {
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
  m.name = fmt::format("lstm_{}", lstmVariantName(v));
  m.inputs = {{"input", DType::Float32, {p.seqLength, p.miniBatch, p.inputSize}},
              {"hx", DType::Float32, {p.numLayers, p.miniBatch, p.hiddenSize}},
              {"cx", DType::Float32, {p.numLayers, p.miniBatch, p.hiddenSize}}};
  for (auto& s : lstmWeightSpecs(p.inputSize, p.hiddenSize, p.numLayers)) m.inputs.push_back(s);
  auto g = std::make_shared<Graph>();
  GraphBuilder b(*g);
  std::vector<Value*> ins;
  for (const auto& s : m.inputs) ins.push_back(addInput(*g, s));
  std::vector<Value*> weights(ins.begin() + 3, ins.end());
  LstmOutputs o = emitLstm(b, v, ins[0], ins[1], ins[2], weights, p.numLayers);
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
  m.eager = [layers, simple](const std::vector<Tensor>& in) {
    std::vector<Tensor> w(in.begin() + 3, in.end());
    auto out = eagerLstm(in[0], in[1], in[2], w, layers);
    if (simple) out.erase(out.begin());
    return out;
  };
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
  m.eager = [](const std::vector<Tensor>& t) { return eagerLstmCell(t[0], t[1], t[2], t[3], t[4], t[5], t[6]); };
  return m;
}

std::vector<Tensor> eagerLstmCell(const Tensor& x, const Tensor& h, const Tensor& c, const Tensor& wih,
                                  const Tensor& whh, const Tensor& bih, const Tensor& bhh) {
  Tensor gates = cpu::add(cpu::add(cpu::add(cpu::mm(x, wih.t()), cpu::mm(h, whh.t())), bih), bhh);
  auto g = gates.chunk(4, 1);
  Tensor cy = cpu::add(cpu::mul(cpu::sigmoid(g[1]), c), cpu::mul(cpu::sigmoid(g[0]), cpu::tanh(g[2])));
  Tensor hy = cpu::mul(cpu::sigmoid(g[3]), cpu::tanh(cy));
  return {hy, cy};
}

std::vector<Tensor> eagerLstm(const Tensor& input, const Tensor& hx, const Tensor& cx,
                              const std::vector<Tensor>& weights, int64_t numLayers) {
  USER_CHECK(static_cast<int64_t>(weights.size()) == 4 * numLayers, "lstm: {} weights for {} layers",
             weights.size(), numLayers);
  Tensor layerInput = input;
  std::vector<Tensor> hys, cys;
  for (int64_t l = 0; l < numLayers; ++l) {
    Tensor h = hx.select(0, l), c = cx.select(0, l);
    std::vector<Tensor> outs;
    for (int64_t t = 0; t < layerInput.size(0); ++t) {
      auto hc = eagerLstmCell(layerInput.select(0, t), h, c, weights[4 * l], weights[4 * l + 1], weights[4 * l + 2],
                              weights[4 * l + 3]);
      h = hc[0];
      c = hc[1];
      outs.push_back(h);
    }
    layerInput = cpu::stack(outs, 0);
    hys.push_back(h);
    cys.push_back(c);
  }
  return {layerInput, cpu::stack(hys, 0), cpu::stack(cys, 0)};
}

}  // namespace gj
