#include "models/modules.h"

#include "ir/builder.h"
#include "runtime/ops/ops.h"
#include "support/error.h"

#include <cmath>

namespace gj {

namespace {
struct Built {
  std::shared_ptr<Graph> g;
  std::vector<Value*> in;
};
Built start(const Model& m) {
  Built b{std::make_shared<Graph>(), {}};
  for (const auto& s : m.inputs) b.in.push_back(b.g->addInput(Type::tensor(s.dtype, s.sizes), s.name));
  return b;
}
}  // namespace

Model buildLinear(const ModelConfig& c) {
  USER_CHECK(c.rows >= 1 && c.features >= 1 && c.outFeatures >= 1, "linear: sizes must be positive");
  Model m;
  m.name = "linear";
  m.inputs = {{"input", DType::Float32, {c.rows, c.features}},
              {"weight", DType::Float32, {c.outFeatures, c.features}},
              {"bias", DType::Float32, {c.outFeatures}}};
  m.outputs = {"output"};
  auto [g, in] = start(m);
  GraphBuilder b(*g);
  g->registerOutput(b.op(OpKind::Linear, {in[0], in[1], in[2]})->setName("output"));
  m.graph = g;
  m.eager = [](const std::vector<Tensor>& t) { return std::vector<Tensor>{ops::linear(t[0], t[1], t[2])}; };
  return m;
}

Model buildSoftmax(const ModelConfig& c) {
  USER_CHECK(c.rows >= 1 && c.features >= 1, "softmax: sizes must be positive");
  Model m;
  m.name = "softmax";
  m.inputs = {{"input", DType::Float32, {c.rows, c.features}}};
  m.outputs = {"output"};
  auto [g, in] = start(m);
  GraphBuilder b(*g);
  g->registerOutput(b.op(OpKind::Softmax, {in[0], b.i(c.dim)})->setName("output"));
  m.graph = g;
  const int64_t dim = c.dim;
  m.eager = [dim](const std::vector<Tensor>& t) { return std::vector<Tensor>{ops::softmax(t[0], dim)}; };
  return m;
}

Model buildConv2d(const ModelConfig& c) {
  USER_CHECK(c.miniBatch >= 1 && c.channels >= 1 && c.outChannels >= 1 && c.kernel >= 1 && c.stride >= 1 &&
                 c.padding >= 0,
             "conv2d: sizes and stride must be positive, padding non-negative");
  Model m;
  m.name = "conv2d";
  m.inputs = {{"input", DType::Float32, {c.miniBatch, c.channels, c.height, c.width}},
              {"weight", DType::Float32, {c.outChannels, c.channels, c.kernel, c.kernel}},
              {"bias", DType::Float32, {c.outChannels}}};
  m.outputs = {"output"};
  auto [g, in] = start(m);
  GraphBuilder b(*g);
  Value* out = b.op(OpKind::Conv2d, {in[0], in[1], in[2], b.ints({c.stride, c.stride}), b.ints({c.padding, c.padding}),
                                     b.ints({1, 1}), b.i(1)});
  g->registerOutput(out->setName("output"));
  m.graph = g;
  ops::Conv2dParams p;
  p.strideH = p.strideW = c.stride;
  p.padH = p.padW = c.padding;
  m.eager = [p](const std::vector<Tensor>& t) { return std::vector<Tensor>{ops::conv2d(t[0], t[1], t[2], p)}; };
  return m;
}

Model buildMultiheadAttention(const ModelConfig& c) {
  const int64_t T = c.seqLength, B = c.miniBatch, E = c.embedDim, h = c.numHeads;
  USER_CHECK(T >= 1 && B >= 1 && E >= 1 && h >= 1, "multihead_attention: sizes must be positive");
  USER_CHECK(E % h == 0, "multihead_attention: embedDim {} is not divisible by numHeads {}", E, h);
  const int64_t d = E / h;
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  Model m;
  m.name = "multihead_attention";
  m.inputs = {{"query", DType::Float32, {T, B, E}},
              {"in_proj_weight", DType::Float32, {3 * E, E}},
              {"in_proj_bias", DType::Float32, {3 * E}},
              {"out_proj.weight", DType::Float32, {E, E}},
              {"out_proj.bias", DType::Float32, {E}}};
  m.outputs = {"output"};
  auto [g, in] = start(m);
  GraphBuilder b(*g);
  Value* one = b.i(1);
  Value* proj = b.op(OpKind::Linear, {in[0], in[1], in[2]});
  auto qkv = b.unpack(b.op(OpKind::Chunk, {proj, b.i(3), b.i(-1)}, Type::of(TypeKind::TensorList)), 3);
  // [T, B, E] -> [B*h, T, d]
  auto heads = [&](Value* x) {
    Value* v = b.op(OpKind::View, {b.op(OpKind::Contiguous, {x}), b.ints({T, B * h, d})});
    return b.op(OpKind::Transpose, {v, b.i(0), one});
  };
  Value* q = heads(b.op(OpKind::Mul, {qkv[0], b.f(scale)}));
  Value* k = heads(qkv[1]);
  Value* v = heads(qkv[2]);
  Value* scores = b.op(OpKind::Bmm, {q, b.op(OpKind::Transpose, {k, one, b.i(2)})});
  Value* attn = b.op(OpKind::Softmax, {scores, b.i(-1)});
  Value* ctx = b.op(OpKind::Bmm, {attn, v});
  Value* merged = b.op(OpKind::View, {b.op(OpKind::Contiguous, {b.op(OpKind::Transpose, {ctx, b.i(0), one})}),
                                      b.ints({T * B, E})});
  Value* out = b.op(OpKind::View, {b.op(OpKind::Linear, {merged, in[3], in[4]}), b.ints({T, B, E})});
  g->registerOutput(out->setName("output"));
  m.graph = g;
  m.eager = [T, B, E, h, d, scale](const std::vector<Tensor>& t) {
    auto qkv = ops::linear(t[0], t[1], t[2]).chunk(3, -1);
    auto heads = [&](const Tensor& x) { return x.contiguous().view({T, B * h, d}).transpose(0, 1); };
    Tensor q = heads(ops::mul(qkv[0], Tensor::scalar(scale, t[0].dtype())));
    Tensor attn = ops::softmax(ops::bmm(q, heads(qkv[1]).transpose(1, 2)), -1);
    Tensor ctx = ops::bmm(attn, heads(qkv[2])).transpose(0, 1).contiguous().view({T * B, E});
    return std::vector<Tensor>{ops::linear(ctx, t[3], t[4]).view({T, B, E})};
  };
  return m;
}

}  // namespace gj
