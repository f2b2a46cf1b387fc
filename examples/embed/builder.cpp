// Builds an LSTM cell with the builder API, compiles it with the TE fuser under the profiling executor, runs
// forward and backward, and checks both against the unoptimized graph. Exits non-zero on a mismatch.
#include <graphjit/executors/function.h>
#include <graphjit/executors/interpreter.h>
#include <graphjit/ir/builder.h>
#include <graphjit/ir/printer.h>

#include <cmath>
#include <cstdio>

using namespace gj;

// hy, cy = cell(x, h, c, W_ih, W_hh, b_ih, b_hh); gates packed [i, f, g, o] as in nn.LSTM.
static std::unique_ptr<Graph> lstmCell(int64_t batch, int64_t in, int64_t hidden) {
  auto g = std::make_unique<Graph>();
  GraphBuilder b(*g);
  auto input = [&](const char* name, std::vector<int64_t> sizes) {
    return g->addInput(Type::tensor(DType::Float32, std::move(sizes)), name);
  };
  Value* x = input("input", {batch, in});
  Value* h = input("hx", {batch, hidden});
  Value* c = input("cx", {batch, hidden});
  Value* wih = input("weight_ih", {4 * hidden, in});
  Value* whh = input("weight_hh", {4 * hidden, hidden});
  Value* bih = input("bias_ih", {4 * hidden});
  Value* bhh = input("bias_hh", {4 * hidden});
  Value* one = b.i(1);
  Value* gates = b.op(OpKind::Add, {b.op(OpKind::Mm, {x, b.op(OpKind::T, {wih})}),
                                    b.op(OpKind::Mm, {h, b.op(OpKind::T, {whh})}), one});
  gates = b.op(OpKind::Add, {b.op(OpKind::Add, {gates, bih, one}), bhh, one});
  auto parts = b.unpack(b.op(OpKind::Chunk, {gates, b.i(4), one}, Type::of(TypeKind::TensorList)), 4);
  Value* i = b.op(OpKind::Sigmoid, {parts[0]});
  Value* f = b.op(OpKind::Sigmoid, {parts[1]});
  Value* gg = b.op(OpKind::Tanh, {parts[2]});
  Value* o = b.op(OpKind::Sigmoid, {parts[3]});
  Value* cy = b.op(OpKind::Add, {b.op(OpKind::Mul, {f, c}), b.op(OpKind::Mul, {i, gg}), one});
  Value* hy = b.op(OpKind::Mul, {o, b.op(OpKind::Tanh, {cy})});
  g->registerOutput(hy->setName("hy"));
  g->registerOutput(cy->setName("cy"));
  return g;
}

static double maxDiff(const Tensor& a, const Tensor& b) {
  double m = 0;
  for (int64_t k = 0; k < a.numel(); ++k) m = std::max(m, std::abs(a.item(k) - b.item(k)));
  return m;
}

int main() {
  auto g = lstmCell(4, 8, 16);
  std::vector<IValue> inputs;
  uint64_t seed = 1;
  for (Value* in : g->inputs()) inputs.push_back(Tensor::rand(*in->type().sizes, DType::Float32, seed++, -0.5, 0.5));
  std::vector<bool> requiresGrad(inputs.size(), true);

  Function f(*g, {.fuser = FuserKind::Te, .executor = ExecutorKind::Profiling});
  std::vector<IValue> outs;
  std::vector<Tensor> grads;
  for (int call = 0; call < 3; ++call) {  // the first call profiles, the next ones run the fused plan
    outs = f.forward(inputs, requiresGrad);
    std::vector<Tensor> gradOutputs;
    for (const IValue& o : outs) gradOutputs.push_back(Tensor::full(o.toTensor().sizes(), DType::Float32, 1.0));
    grads = f.backward(gradOutputs);
  }
  // The same computation unoptimized, as the reference.
  Function ref(*g, {.fuser = FuserKind::None, .executor = ExecutorKind::Legacy, .unrollLoops = false});
  auto refOuts = ref.forward(inputs, requiresGrad);
  std::vector<Tensor> ones;
  for (const IValue& o : refOuts) ones.push_back(Tensor::full(o.toTensor().sizes(), DType::Float32, 1.0));
  auto refGrads = ref.backward(ones);

  double worst = 0;
  for (size_t k = 0; k < outs.size(); ++k) worst = std::max(worst, maxDiff(outs[k].toTensor(), refOuts[k].toTensor()));
  for (size_t k = 0; k < grads.size(); ++k) worst = std::max(worst, maxDiff(grads[k], refGrads[k]));
  std::printf("%s\n", f.stats().str().c_str());
  std::printf("largest difference from the unoptimized graph: %.3g\n", worst);
  bool ok = worst < 1e-5 && f.stats().fusionGroups > 0;
  std::printf("%s\n", ok ? "ok" : "MISMATCH");
  return ok ? 0 : 1;
}
