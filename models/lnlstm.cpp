#include "models/lnlstm.h"

#include "ir/builder.h"
#include "models/lstm.h"
#include "runtime/ops/ops.h"
#include "support/error.h"

namespace gj {

namespace {

constexpr double kLayerNormEps = 1e-5;  // nn.LayerNorm's default

struct LnCellWeights {
  Value *wih, *whh, *lniW, *lniB, *lnhW, *lnhB, *lncW, *lncB;
};

Value* emitLayerNorm(GraphBuilder& b, Value* x, Value* w, Value* bias, int64_t size, bool decompose) {
  if (!decompose)
    return b.op(OpKind::LayerNorm, {x, b.ints({size}), w, bias, b.f(kLayerNormEps), b.b(true)});
  Value* last = b.ints({-1});
  Value* mu = b.op(OpKind::MeanDim, {x, last, b.b(true)});
  Value* sigma = b.op(OpKind::Std, {x, last, b.b(false), b.b(true)});
  Value* one = b.i(1);
  Value* normalized = b.op(OpKind::Div, {b.op(OpKind::Sub, {x, mu, one}), sigma});
  return b.op(OpKind::Add, {b.op(OpKind::Mul, {normalized, w}), bias, one});
}

std::pair<Value*, Value*> emitLnCell(GraphBuilder& b, Value* x, Value* h, Value* c, const LnCellWeights& w,
                                     int64_t hidden, bool decompose) {
  Value* one = b.i(1);
  Value* igates = emitLayerNorm(b, b.op(OpKind::Mm, {x, b.op(OpKind::T, {w.wih})}), w.lniW, w.lniB, 4 * hidden, decompose);
  Value* hgates = emitLayerNorm(b, b.op(OpKind::Mm, {h, b.op(OpKind::T, {w.whh})}), w.lnhW, w.lnhB, 4 * hidden, decompose);
  Value* gates = b.op(OpKind::Add, {igates, hgates, one});
  auto g = b.unpack(b.op(OpKind::Chunk, {gates, b.i(4), one}, Type::of(TypeKind::TensorList)), 4);
  Value* cpre = b.op(OpKind::Add, {b.op(OpKind::Mul, {b.op(OpKind::Sigmoid, {g[1]}), c}),
                                   b.op(OpKind::Mul, {b.op(OpKind::Sigmoid, {g[0]}), b.op(OpKind::Tanh, {g[2]})}), one});
  Value* cy = emitLayerNorm(b, cpre, w.lncW, w.lncB, hidden, decompose);
  Value* hy = b.op(OpKind::Mul, {b.op(OpKind::Sigmoid, {g[3]}), b.op(OpKind::Tanh, {cy})});
  return {hy, cy};
}

eager::Var eagerLayerNorm(eager::Tape& tape, const eager::Var& x, const eager::Var& w, const eager::Var& bias,
                          bool decompose) {
  const int64_t last = x.value.size(-1);
  if (!decompose) return tape.layerNorm(x, {last}, w, bias, kLayerNormEps);
  const std::vector<int64_t> dims = {-1};
  eager::Var normalized = tape.div(tape.sub(x, tape.mean(x, dims, true)), tape.std(x, dims, false, true));
  return tape.add(tape.mul(normalized, w), bias);
}

// The eager model: in[0..2] input, hx, cx, then 8 parameters per layer in the order of the inputs.
std::vector<eager::Var> eagerLnLstm(eager::Tape& tape, const std::vector<eager::Var>& in, int64_t layers,
                                    bool decompose) {
  return eagerLayers(tape, in, layers, 8,
                     [&](const eager::Var& x, const eager::Var& h, const eager::Var& c, const eager::Var& wihT,
                         const eager::Var& whhT, const eager::Var* p) {
                       eager::Var gates = tape.add(eagerLayerNorm(tape, tape.mm(x, wihT), p[2], p[3], decompose),
                                                   eagerLayerNorm(tape, tape.mm(h, whhT), p[4], p[5], decompose));
                       auto g = tape.chunk(gates, 4, 1);
                       eager::Var cpre = tape.add(tape.mul(tape.sigmoid(g[1]), c),
                                                  tape.mul(tape.sigmoid(g[0]), tape.tanh(g[2])));
                       eager::Var cy = eagerLayerNorm(tape, cpre, p[6], p[7], decompose);
                       return std::pair{tape.mul(tape.sigmoid(g[3]), tape.tanh(cy)), cy};
                     });
}

}  // namespace

Model buildLnLstm(const ModelConfig& p) {
  USER_CHECK(p.seqLength >= 1 && p.miniBatch >= 1 && p.inputSize >= 1 && p.hiddenSize >= 1 && p.numLayers >= 1,
             "lnlstm: seqLength, miniBatch, inputSize, hiddenSize and numLayers must be positive");
  const int64_t H = p.hiddenSize;
  Model m;
  m.name = p.decomposeLayerNorm ? "lnlstm_decom" : "lnlstm";
  m.inputs = {{"input", DType::Float32, {p.seqLength, p.miniBatch, p.inputSize}},
              {"hx", DType::Float32, {p.numLayers, p.miniBatch, H}},
              {"cx", DType::Float32, {p.numLayers, p.miniBatch, H}}};
  for (int64_t l = 0; l < p.numLayers; ++l) {
    const std::string cell = fmt::format("layers.{}.cell.", l);
    m.inputs.push_back({cell + "weight_ih", DType::Float32, {4 * H, l == 0 ? p.inputSize : H}});
    m.inputs.push_back({cell + "weight_hh", DType::Float32, {4 * H, H}});
    for (const char* ln : {"i", "h", "c"})
      for (const char* what : {"weight", "bias"})
        m.inputs.push_back({fmt::format("{}layernorm_{}.{}", cell, ln, what), DType::Float32, {*ln == 'c' ? H : 4 * H}});
  }
  auto g = std::make_shared<Graph>();
  GraphBuilder b(*g);
  std::vector<Value*> in;
  for (const auto& s : m.inputs) in.push_back(g->addInput(Type::tensor(s.dtype, s.sizes), s.name));
  Value* zero = b.i(0);
  Value* layerInput = in[0];
  std::vector<Value*> hys, cys;
  for (int64_t l = 0; l < p.numLayers; ++l) {
    Value* const* q = &in[3 + 8 * l];
    LnCellWeights w{q[0], q[1], q[2], q[3], q[4], q[5], q[6], q[7]};
    Value* h0 = b.op(OpKind::Select, {in[1], zero, b.i(l)});
    Value* c0 = b.op(OpKind::Select, {in[2], zero, b.i(l)});
    auto [out, hy, cy] = emitRecurrence(b, layerInput, h0, c0, /*needOutputs=*/true, /*indexDirectly=*/false,
                                        [&](Value* x, Value* h, Value* c) {
                                          return emitLnCell(b, x, h, c, w, H, p.decomposeLayerNorm);
                                        });
    hys.push_back(hy);
    cys.push_back(cy);
    layerInput = out;
  }
  g->registerOutput(layerInput->setName("output"));
  g->registerOutput(b.op(OpKind::Stack, {b.list(hys), zero})->setName("hy"));
  g->registerOutput(b.op(OpKind::Stack, {b.list(cys), zero})->setName("cy"));
  m.outputs = {"output", "hy", "cy"};
  m.graph = g;
  m.eagerAutograd = [layers = p.numLayers, decompose = p.decomposeLayerNorm](eager::Tape& tape,
                                                                             const std::vector<eager::Var>& in) {
    return eagerLnLstm(tape, in, layers, decompose);
  };
  m.eager = [f = m.eagerAutograd](const std::vector<Tensor>& in) { return eagerValues(f, in); };
  return m;
}

}  // namespace gj
