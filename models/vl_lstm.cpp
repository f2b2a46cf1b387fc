#include "models/vl_lstm.h"

#include "models/lstm.h"
#include "runtime/ops/ops.h"
#include "support/error.h"

namespace gj {

namespace {

Type intType() { return Type::of(TypeKind::Int); }

struct VlGraph {
  GraphBuilder& b;
  Value *input, *lengths, *hx, *cx;
  std::vector<Value*> weights;
  int64_t numLayers, hidden;

  std::vector<Value*> layerWeights(int64_t l) const {
    return {weights.begin() + 4 * l, weights.begin() + 4 * l + 4};
  }
  Value* slice(Value* x, Value* start, Value* end) { return b.op(OpKind::Slice, {x, b.i(0), start, end, b.i(1)}); }
  Value* cat2(Value* x, Value* y, int64_t dim) { return b.op(OpKind::Cat, {b.list({x, y}), b.i(dim)}); }
  Value* toInt(Value* scalarTensor) { return b.op(OpKind::IntOfTensor, {scalarTensor}, intType()); }

  // See vl_lstm.h, packed.
  LstmOutputs packed() {
    Value *zero = b.i(0), *one = b.i(1);
    Node* sorted = b.node(OpKind::Sort, {lengths, zero, b.b(true)}, 2);
    Value* order = sorted->output(1);
    Value* unsort = b.node(OpKind::Sort, {order, zero, b.b(false)}, 2)->output(1);  // the inverse permutation
    Node* pack = b.node(OpKind::PackPaddedSequence, {b.op(OpKind::IndexSelect, {input, one, order}),
                                                     sorted->output(0), b.b(false)}, 2);
    Value *data = pack->output(0), *batchSizes = pack->output(1);
    Value* steps = b.op(OpKind::Size, {batchSizes, zero}, intType());
    Value* total = b.op(OpKind::Size, {input, zero}, intType());
    Value* batch = b.op(OpKind::Size, {input, one}, intType());
    Value* below = nullptr;  // the layer below's outputs [steps, B, H], sorted, zero past each length
    std::vector<Value*> hys, cys;
    for (int64_t l = 0; l < numLayers; ++l) {
      auto start = [&](Value* state) {
        return b.op(OpKind::IndexSelect, {b.op(OpKind::Select, {state, zero, b.i(l)}), zero, order});
      };
      auto loop = b.beginLoop(steps, {start(hx), start(cx), zero, b.list({})});
      Value *t = loop.index, *h = loop.carried[0], *c = loop.carried[1], *offset = loop.carried[2];
      Value* n = toInt(b.op(OpKind::Select, {batchSizes, zero, t}));
      Value* next = b.op(OpKind::IntAdd, {offset, n}, intType());
      Value* x = l == 0 ? slice(data, offset, next) : slice(b.op(OpKind::Select, {below, zero, t}), zero, n);
      auto [hy, cy] = emitLstmCell(b, x, slice(h, zero, n), slice(c, zero, n), layerWeights(l));
      Value* padding = b.op(OpKind::NewZeros, {hy, b.list({b.op(OpKind::IntSub, {batch, n}, intType()), b.i(hidden)},
                                                          TypeKind::IntList)});
      Value* outs = b.op(OpKind::ListAppend, {loop.carried[3], cat2(hy, padding, 0)}, Type::of(TypeKind::TensorList));
      auto done = b.endLoop(loop, {cat2(hy, slice(h, n, batch), 0), cat2(cy, slice(c, n, batch), 0), next, outs});
      below = b.op(OpKind::Stack, {done[3], zero});
      hys.push_back(b.op(OpKind::IndexSelect, {done[0], zero, unsort}));
      cys.push_back(b.op(OpKind::IndexSelect, {done[1], zero, unsort}));
    }
    Value* tail = b.op(OpKind::NewZeros, {below, b.list({b.op(OpKind::IntSub, {total, steps}, intType()), batch,
                                                         b.i(hidden)}, TypeKind::IntList)});
    Value* output = b.op(OpKind::IndexSelect, {cat2(below, tail, 0), one, unsort});
    return {output, b.op(OpKind::Stack, {b.list(hys), zero}), b.op(OpKind::Stack, {b.list(cys), zero})};
  }

  // See vl_lstm.h, perSequence: fastrnns' varlen_lstm_factory, each sequence's output padded to T steps.
  LstmOutputs perSequence(int64_t batchSize) {
    Value *zero = b.i(0), *one = b.i(1);
    Value* total = b.op(OpKind::Size, {input, zero}, intType());
    std::vector<Value*> outputs, hys, cys;
    for (int64_t s = 0; s < batchSize; ++s) {
      Value* length = toInt(b.op(OpKind::Select, {lengths, zero, b.i(s)}));
      Value* x = slice(b.op(OpKind::Select, {input, one, b.i(s)}), zero, length);  // [len, I]
      std::vector<Value*> hy, cy;
      for (int64_t l = 0; l < numLayers; ++l) {
        auto state = [&](Value* st) {  // [1, H]
          return b.op(OpKind::Unsqueeze, {b.op(OpKind::Select, {b.op(OpKind::Select, {st, zero, b.i(l)}), zero,
                                                                b.i(s)}), zero});
        };
        auto loop = b.beginLoop(length, {state(hx), state(cx), b.list({})});
        Value* xt = b.op(OpKind::Unsqueeze, {b.op(OpKind::Select, {x, zero, loop.index}), zero});
        auto [h, c] = emitLstmCell(b, xt, loop.carried[0], loop.carried[1], layerWeights(l));
        Value* outs = b.op(OpKind::ListAppend, {loop.carried[2], h}, Type::of(TypeKind::TensorList));
        auto done = b.endLoop(loop, {h, c, outs});
        x = b.op(OpKind::Squeeze, {b.op(OpKind::Stack, {done[2], zero}), one});  // [len, H]
        hy.push_back(done[0]);
        cy.push_back(done[1]);
      }
      Value* padding = b.op(OpKind::NewZeros, {x, b.list({b.op(OpKind::IntSub, {total, length}, intType()),
                                                          b.i(hidden)}, TypeKind::IntList)});
      outputs.push_back(b.op(OpKind::Unsqueeze, {cat2(x, padding, 0), one}));  // [T, 1, H]
      hys.push_back(b.op(OpKind::Stack, {b.list(hy), zero}));                    // [L, 1, H]
      cys.push_back(b.op(OpKind::Stack, {b.list(cy), zero}));
    }
    return {b.op(OpKind::Cat, {b.list(outputs), one}), b.op(OpKind::Cat, {b.list(hys), one}),
            b.op(OpKind::Cat, {b.list(cys), one})};
  }
};

}  // namespace

Model buildVlLstm(const ModelConfig& c) {
  USER_CHECK(c.seqLength >= 1 && c.miniBatch >= 1 && c.inputSize >= 1 && c.hiddenSize >= 1 && c.numLayers >= 1,
             "vl_lstm: seqLength, miniBatch, inputSize, hiddenSize and numLayers must be positive");
  Model m;
  m.name = c.perSequence ? "vl_lstm_per_sequence" : "vl_lstm";
  m.inputs = {{"input", DType::Float32, {c.seqLength, c.miniBatch, c.inputSize}},
              {"lengths", DType::Int64, {c.miniBatch}, c.seqLength + 1, 1},
              {"hx", DType::Float32, {c.numLayers, c.miniBatch, c.hiddenSize}},
              {"cx", DType::Float32, {c.numLayers, c.miniBatch, c.hiddenSize}}};
  for (auto& s : lstmWeightSpecs(c.inputSize, c.hiddenSize, c.numLayers)) m.inputs.push_back(s);
  auto g = std::make_shared<Graph>();
  GraphBuilder b(*g);
  std::vector<Value*> in;
  for (const auto& s : m.inputs) in.push_back(g->addInput(Type::tensor(s.dtype, s.sizes), s.name));
  VlGraph vg{b, in[0], in[1], in[2], in[3], {in.begin() + 4, in.end()}, c.numLayers, c.hiddenSize};
  LstmOutputs o = c.perSequence ? vg.perSequence(c.miniBatch) : vg.packed();
  g->registerOutput(o.output->setName("output"));
  g->registerOutput(o.hy->setName("hy"));
  g->registerOutput(o.cy->setName("cy"));
  m.outputs = {"output", "hy", "cy"};
  m.graph = g;
  const int64_t layers = c.numLayers;
  m.eagerAutograd = [layers](eager::Tape& tape, const std::vector<eager::Var>& v) { return eagerVlLstm(tape, v, layers); };
  m.eager = [f = m.eagerAutograd](const std::vector<Tensor>& v) { return eagerValues(f, v); };
  return m;
}

std::vector<eager::Var> eagerVlLstm(eager::Tape& tape, const std::vector<eager::Var>& in, int64_t numLayers) {
  USER_CHECK(in.size() == 4 + 4 * static_cast<size_t>(numLayers), "vl_lstm: {} inputs for {} layers", in.size(),
             numLayers);
  const Tensor& input = in[0].value;
  USER_CHECK(input.dim() == 3, "vl_lstm: the input must be [T, B, I], not {}", shapeStr(input.sizes()));
  const int64_t steps = input.size(0), batch = input.size(1);
  std::vector<int64_t> lengths = ops::hostInts(in[1].value, "vl_lstm lengths");
  USER_CHECK(static_cast<int64_t>(lengths.size()) == batch, "vl_lstm: {} lengths for a batch of {}", lengths.size(),
             batch);
  std::vector<eager::Var> outputs, hys, cys;
  for (int64_t s = 0; s < batch; ++s) {
    USER_CHECK(lengths[s] >= 1 && lengths[s] <= steps, "vl_lstm: length {} of sequence {} is not in [1, {}]",
               lengths[s], s, steps);
    // One sequence as an LSTM input of batch 1: [len, 1, I], its state [L, 1, H], the same weights.
    std::vector<eager::Var> one = {tape.narrow(tape.narrow(in[0], 1, s, 1), 0, 0, lengths[s]),
                                   tape.narrow(in[2], 1, s, 1), tape.narrow(in[3], 1, s, 1)};
    one.insert(one.end(), in.begin() + 4, in.end());
    std::vector<eager::Var> r = eagerLstm(tape, one, numLayers);
    const Tensor& out = r[0].value;
    eager::Var padding = tape.input(Tensor::zeros({steps - lengths[s], 1, out.size(2)}, out.dtype(), out.device()),
                                    false);
    outputs.push_back(tape.cat({r[0], padding}, 0));
    hys.push_back(r[1]);
    cys.push_back(r[2]);
  }
  return {tape.cat(outputs, 1), tape.cat(hys, 1), tape.cat(cys, 1)};
}

}  // namespace gj
