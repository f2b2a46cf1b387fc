// The stacked LSTM language model and the LSTM classifier (see ../shared/fixtures: lstm_lm, lstm_classifier).
#include "models/lm.h"

#include "models/lstm.h"
#include "runtime/ops/ops.h"
#include "support/error.h"

namespace gj {

static std::vector<Value*> addInputs(Graph& g, const std::vector<InputSpec>& specs) {
  std::vector<Value*> vs;
  for (const auto& s : specs) vs.push_back(g.addInput(Type::tensor(s.dtype, s.sizes), s.name));
  return vs;
}

Model buildLstmLm(const ModelConfig& c) {
  USER_CHECK(c.vocab >= 1 && c.embedding >= 1 && c.hiddenSize >= 1 && c.numLayers >= 1 && c.seqLength >= 1 &&
                 c.miniBatch >= 1,
             "lstm_lm: vocab, embedding, hiddenSize, numLayers, seqLength and miniBatch must be positive");
  LstmVariantKind v = lstmVariantFromName(c.variant);
  Model m;
  m.name = "lstm_lm";
  const int64_t T = c.seqLength, B = c.miniBatch, H = c.hiddenSize, L = c.numLayers;
  m.inputs = {{"tokens", DType::Int64, {T, B}, c.vocab},
              {"targets", DType::Int64, {T, B}, c.vocab},
              {"embedding.weight", DType::Float32, {c.vocab, c.embedding}},
              {"hx", DType::Float32, {L, B, H}},
              {"cx", DType::Float32, {L, B, H}}};
  for (auto& s : lstmWeightSpecs(c.embedding, H, L, "lstm.")) m.inputs.push_back(s);
  m.inputs.push_back({"decoder.weight", DType::Float32, {c.vocab, H}});
  m.inputs.push_back({"decoder.bias", DType::Float32, {c.vocab}});
  m.outputs = {"loss"};
  auto g = std::make_shared<Graph>();
  GraphBuilder b(*g);
  auto in = addInputs(*g, m.inputs);
  Value* emb = b.op(OpKind::Embedding, {in[2], in[0]});
  std::vector<Value*> weights(in.begin() + 5, in.begin() + 5 + 4 * L);
  LstmOutputs o = emitLstm(b, v == LstmVariantKind::JitSimple ? LstmVariantKind::Jit : v, emb, in[3], in[4], weights, L);
  Value* flat = b.op(OpKind::Reshape, {o.output, b.ints({T * B, H})});
  Value* logits = b.op(OpKind::Linear, {flat, in[5 + 4 * L], in[6 + 4 * L]});
  Value* loss = b.op(OpKind::CrossEntropy, {logits, b.op(OpKind::Reshape, {in[1], b.ints({T * B})})});
  g->registerOutput(loss->setName("loss"));
  m.graph = g;
  m.eager = [T, B, H, L](const std::vector<Tensor>& t) {
    Tensor emb = ops::embedding(t[2], t[0]);
    std::vector<Tensor> w(t.begin() + 5, t.begin() + 5 + 4 * L);
    Tensor out = eagerLstm(emb, t[3], t[4], w, L)[0];
    Tensor logits = ops::linear(out.reshape({T * B, H}), t[5 + 4 * L], t[6 + 4 * L]);
    return std::vector<Tensor>{ops::crossEntropy(logits, t[1].reshape({T * B}))};
  };
  return m;
}

Model buildLstmClassifier(const ModelConfig& c) {
  USER_CHECK(c.vocab >= 1 && c.hiddenSize >= 1 && c.classes >= 1 && c.seqLength >= 1 && c.miniBatch >= 1,
             "lstm_classifier: vocab, hiddenSize, classes, seqLength and miniBatch must be positive");
  LstmVariantKind v = lstmVariantFromName(c.variant);
  Model m;
  m.name = "lstm_classifier";
  const int64_t T = c.seqLength, B = c.miniBatch, H = c.hiddenSize;
  m.inputs = {{"tokens", DType::Int64, {T, B}, c.vocab},
              {"labels", DType::Int64, {B}, c.classes},
              {"embedding.weight", DType::Float32, {c.vocab, H}},
              {"hx", DType::Float32, {1, B, H}},
              {"cx", DType::Float32, {1, B, H}}};
  for (auto& s : lstmWeightSpecs(H, H, 1, "lstm.")) m.inputs.push_back(s);
  m.inputs.push_back({"fc.weight", DType::Float32, {c.classes, H}});
  m.inputs.push_back({"fc.bias", DType::Float32, {c.classes}});
  m.outputs = {"loss"};
  auto g = std::make_shared<Graph>();
  GraphBuilder b(*g);
  auto in = addInputs(*g, m.inputs);
  Value* emb = b.op(OpKind::Embedding, {in[2], in[0]});
  std::vector<Value*> weights(in.begin() + 5, in.begin() + 9);
  // The last step's output is the top layer's final h: hy[0] for one layer.
  LstmOutputs o = emitLstm(b, v, emb, in[3], in[4], weights, 1);
  Value* last = b.op(OpKind::Select, {o.hy, b.i(0), b.i(-1)});
  Value* logits = b.op(OpKind::Linear, {last, in[9], in[10]});
  Value* loss = b.op(OpKind::CrossEntropy, {logits, in[1]});
  g->registerOutput(loss->setName("loss"));
  m.graph = g;
  m.eager = [](const std::vector<Tensor>& t) {
    Tensor emb = ops::embedding(t[2], t[0]);
    std::vector<Tensor> w(t.begin() + 5, t.begin() + 9);
    Tensor out = eagerLstm(emb, t[3], t[4], w, 1)[0];
    Tensor logits = ops::linear(out.select(0, -1), t[9], t[10]);
    return std::vector<Tensor>{ops::crossEntropy(logits, t[1])};
  };
  return m;
}

}  // namespace gj
