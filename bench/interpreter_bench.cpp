// What the interpreter adds per node, apart from the kernel it calls (issue #10: "interpreter overhead
// per node measured and kept small"). Each benchmark runs a chain of N nodes; the counter per_node
// divides the time of one run by N.
//
//   build/bin/interpreter_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//
// - Views: a chain of aten::t (no kernel, no allocation): dispatch, argument gathering, frame slots.
//   The chains run with a RunPlanCache, as an executor's graphs do (without one every run makes the
//   graph's run plan again).
// - Pointwise, interpreted against the same ops:: kernels called directly on the same tensor: the
//   difference is the interpreter's share of a small op.
// - LstmStep: one step of the interpreted `py` row's cell (as built, types unknown), at a small and at
//   the fastrnns size, with and without the autodiff tape.
// - ManyOutputs: a graph returning 700 views of its input, per output: what a forward graph that saves
//   hundreds of values for its backward pays to hand them over.
// - CompiledLayerStep: graphbench's cells layer rows (jit_premul, one layer, seq 100, batch 1) through a
//   Function (profiling executor, TE fuser), forward with gradients on and backward; per_step divides a
//   run by its 100 steps. The third argument 1 writes 64 MB before each timed run, leaving nothing of the
//   last run in the caches, as graphbench's interleaved rounds (`--interleave`) do; OnednnLayer is
//   oneDNN's LSTM on the same sizes, warm and so evicted, to set it against. Beside them, the step's
//   product alone (PackedGemm: h W^T on the packed weight), to set the rest of the step against, and
//   pieces of the rest: a step kernel's launch arguments (KernelArgs: six inputs checked, seven outputs
//   made in one block, the product's scratch), the transposed copy of W_hh that contiguous-operands asks
//   for once a forward (TransposedCopy: [4H, H] viewed as [H, 4H]) and the stack of the step outputs
//   (StackSteps: 100 of [1, 128]).
#include "executors/autograd.h"
#include "executors/function.h"
#include "executors/interpreter.h"
#include "fusers/fuser.h"
#include "ir/builder.h"
#include "models/lstm.h"
#include "runtime/ops/onednn_lstm.h"
#include "runtime/ops/ops.h"
#include "runtime/gemm.h"
#include "runtime/threading.h"

#include <benchmark/benchmark.h>

#include <memory>
#include <vector>

namespace {

using namespace gj;

// graph(%x): N nodes of `kind`, each applied to the previous result.
std::unique_ptr<Graph> chain(OpKind kind, int64_t n, const Shape& sizes) {
  auto g = std::make_unique<Graph>();
  Value* v = g->addInput(Type::tensor(DType::Float32, sizes), "x");
  GraphBuilder b(*g);
  for (int64_t i = 0; i < n; ++i) v = b.op(kind, {v});
  g->registerOutput(v);
  return g;
}

// Seconds per node, printed with an SI prefix ("265n": 265e-9 seconds).
void perNode(benchmark::State& state, int64_t nodes) {
  state.counters["per_node"] = benchmark::Counter(
      static_cast<double>(nodes), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

void BM_InterpretedViews(benchmark::State& state) {
  const int64_t n = state.range(0);
  auto g = chain(OpKind::T, n, {8, 8});
  RunPlanCache plans;
  Interpreter interp(*g, nullptr, nullptr, &plans);
  Tensor x = Tensor::rand({8, 8}, DType::Float32, 1);
  for (auto _ : state) benchmark::DoNotOptimize(interp.run({x}));
  perNode(state, n);
}

// A graph returning n views of its input: what a forward graph that saves hundreds of values for its
// backward pays to hand them over (an unrolled 100-step layer returns about 700), per output.
void BM_ManyOutputs(benchmark::State& state) {
  const int64_t n = state.range(0);
  auto g = std::make_unique<Graph>();
  Value* x = g->addInput(Type::tensor(DType::Float32, {8, 8}), "x");
  GraphBuilder b(*g);
  for (int64_t i = 0; i < n; ++i) g->registerOutput(b.op(OpKind::T, {x}));
  RunPlanCache plans;
  Interpreter interp(*g, nullptr, nullptr, &plans);
  Tensor t = Tensor::rand({8, 8}, DType::Float32, 1);
  for (auto _ : state) benchmark::DoNotOptimize(interp.run({t}));
  perNode(state, n);
}

void BM_InterpretedPointwise(benchmark::State& state) {
  const int64_t n = state.range(0), elems = state.range(1);
  auto g = chain(OpKind::Neg, n, {elems});
  RunPlanCache plans;
  Interpreter interp(*g, nullptr, nullptr, &plans);
  Tensor x = Tensor::rand({elems}, DType::Float32, 1);
  for (auto _ : state) benchmark::DoNotOptimize(interp.run({x}));
  perNode(state, n);
}

void BM_DirectPointwise(benchmark::State& state) {
  const int64_t n = state.range(0), elems = state.range(1);
  Tensor x = Tensor::rand({elems}, DType::Float32, 1);
  for (auto _ : state) {
    Tensor v = x;
    for (int64_t i = 0; i < n; ++i) v = ops::neg(v);
    benchmark::DoNotOptimize(v);
  }
  perNode(state, n);
}

// A model's seeded inputs, every float one requiring grad.
struct TrainingInputs {
  std::vector<IValue> values;
  std::vector<bool> requiresGrad;
};
TrainingInputs trainingInputs(const Model& m) {
  TrainingInputs in;
  for (const Tensor& t : randomInputs(m, 3)) {
    in.values.push_back(t);
    in.requiresGrad.push_back(isFloating(t.dtype()));
  }
  return in;
}

// One step of the py row: the LSTM graph at seqLength 1, as built, prepared for autodiff.
void BM_LstmStep(benchmark::State& state) {
  const int64_t hidden = state.range(0), batch = state.range(1);
  const bool tape = state.range(2) != 0;
  setNumThreads(1);
  Model m = buildLstm(LstmVariantKind::Jit, {1, batch, hidden, hidden, 1});
  const auto [in, rg] = trainingInputs(m);
  AutodiffGraph ag = prepareAutodiff(std::shared_ptr<Graph>(m.graph->clone()), rg);
  Interpreter interp(*ag.graph, &ag.gradients);
  size_t nodes = 0;
  for (const auto& [node, grad] : ag.gradients)
    for ([[maybe_unused]] const Node* n : *grad->forward->block()) ++nodes;
  for (auto _ : state) {
    if (tape) {
      Tape t(in.size());
      benchmark::DoNotOptimize(interp.runWithTape(in, rg, t));
    } else {
      benchmark::DoNotOptimize(interp.run(in));
    }
  }
  state.counters["forward_nodes"] = static_cast<double>(nodes);
}

// Writes 64 MB, leaving nothing of a run in the caches (as graphbench's interleaved rounds do).
void evictCaches() {
  static std::vector<char> junk(64 << 20);
  static char v = 0;
  std::fill(junk.begin(), junk.end(), ++v);
  benchmark::ClobberMemory();
}

// oneDNN's LSTM on the same layer, forward timed, caches evicted before each run where range 1 == 1.
void BM_OnednnLayer(benchmark::State& state) {
  const int64_t hidden = state.range(0), steps = 100;
  const bool flush = state.range(1) != 0;
  ops::OnednnLstm lstm(steps, 1, hidden, hidden, 1);
  Tensor x = Tensor::rand({steps, 1, hidden}, DType::Float32, 1), hx = Tensor::rand({1, 1, hidden}, DType::Float32, 2),
         cx = Tensor::rand({1, 1, hidden}, DType::Float32, 3);
  std::vector<Tensor> w{Tensor::rand({4 * hidden, hidden}, DType::Float32, 4),
                        Tensor::rand({4 * hidden, hidden}, DType::Float32, 5),
                        Tensor::rand({4 * hidden}, DType::Float32, 6), Tensor::rand({4 * hidden}, DType::Float32, 7)};
  Tensor gy = Tensor::rand({steps, 1, hidden}, DType::Float32, 8), gh = Tensor::rand({1, 1, hidden}, DType::Float32, 9);
  for (auto _ : state) {
    if (flush) {
      state.PauseTiming();
      evictCaches();
      state.ResumeTiming();
    }
    benchmark::DoNotOptimize(lstm.forward(x, hx, cx, w));
    state.PauseTiming();
    lstm.backward(gy, gh, gh);
    state.ResumeTiming();
  }
  state.counters["per_step"] = benchmark::Counter(
      static_cast<double>(steps), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

// A run of the layer (100 steps) through a compiled Function: forward (range 1 == 0) or forward and
// backward (range 1 == 1), with the caches evicted before each run where range 2 == 1.
void BM_CompiledLayerStep(benchmark::State& state) {
  const int64_t hidden = state.range(0), steps = 100;
  const bool backward = state.range(1) != 0, flush = state.range(2) != 0;
  Model m = buildLstm(LstmVariantKind::JitPremul, {steps, 1, hidden, hidden, 1});
  FunctionOptions fo;
  fo.fuser = FuserKind::Te;
  Function f(*m.graph, fo);
  const auto [in, rg] = trainingInputs(m);
  std::vector<Tensor> gradOutputs;
  for (const IValue& v : f.forward(in, rg)) {
    const Tensor& t = v.toTensor();
    gradOutputs.push_back(Tensor::full(t.sizes(), t.dtype(), 1.0));
  }
  f.backward(gradOutputs);
  for (auto _ : state) {
    if (flush) {
      state.PauseTiming();
      evictCaches();
      state.ResumeTiming();
    }
    benchmark::DoNotOptimize(f.forward(in, rg));
    if (backward) {
      benchmark::DoNotOptimize(f.backward(gradOutputs));
    } else {
      state.PauseTiming();
      f.backward(gradOutputs);  // consumes the forward
      state.ResumeTiming();
    }
  }
  state.counters["per_step"] = benchmark::Counter(
      static_cast<double>(steps), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

// The step's product alone: h [1, H] times the packed W_hh^T [H, 4H].
void BM_PackedGemm(benchmark::State& state) {
  const int64_t hidden = state.range(0);
  Tensor w = Tensor::rand({hidden, 4 * hidden}, DType::Float32, 1), h = Tensor::rand({1, hidden}, DType::Float32, 2);
  Tensor out = Tensor::empty({1, 4 * hidden}, DType::Float32);
  auto packed = PackedGemmB::pack(1, 4 * hidden, hidden, w.data<float>(), 4 * hidden, false);
  if (!packed) return state.SkipWithError("no packed GEMM in this build");
  for (auto _ : state) packed->multiply(h.data<float>(), out.data<float>());
}

// contiguous(t(W)), W [4H, H].
void BM_TransposedCopy(benchmark::State& state) {
  Tensor w = Tensor::rand({4 * state.range(0), state.range(0)}, DType::Float32, 1);
  for (auto _ : state) benchmark::DoNotOptimize(w.t().contiguous());
}

// The launch arguments of the batch-1 h128 step's forward kernel: its inputs (x W_ih^T's row, h, W_hh^T,
// two biases, c), outputs (seven [1, 128]) and the product's [1, 512] scratch.
void BM_KernelArgs(benchmark::State& state) {
  std::vector<Tensor> in{Tensor::rand({1, 512}, DType::Float32, 1), Tensor::rand({1, 128}, DType::Float32, 1),
                         Tensor::rand({128, 512}, DType::Float32, 1), Tensor::rand({512}, DType::Float32, 1),
                         Tensor::rand({512}, DType::Float32, 1), Tensor::rand({1, 128}, DType::Float32, 1)};
  std::vector<TensorSignature> ins, outs;
  for (const Tensor& t : in) ins.push_back({t.dtype(), t.sizes()});
  for (int i = 0; i < 7; ++i) outs.push_back({DType::Float32, Shape{1, 128}});
  outs.push_back({DType::Float32, Shape{1, 512}});
  const KernelSignature sig(ins, outs, 1);
  std::vector<const Tensor*> ptrs;
  for (const Tensor& t : in) ptrs.push_back(&t);
  for (auto _ : state) {
    KernelArgs a = kernelArgs("k", DeviceKind::Cpu, ptrs, sig);
    benchmark::DoNotOptimize(a.outputs);
  }
}

// aten::stack of an unrolled layer's 100 step outputs, [1, 128] each.
void BM_StackSteps(benchmark::State& state) {
  std::vector<Tensor> steps;
  for (int i = 0; i < 100; ++i) steps.push_back(Tensor::rand({1, 128}, DType::Float32, i + 1));
  for (auto _ : state) benchmark::DoNotOptimize(ops::stack(steps, 0));
}

BENCHMARK(BM_InterpretedViews)->Arg(1000);
BENCHMARK(BM_ManyOutputs)->Arg(700);
BENCHMARK(BM_InterpretedPointwise)->Args({1000, 1})->Args({1000, 4096});
BENCHMARK(BM_DirectPointwise)->Args({1000, 1})->Args({1000, 4096});
BENCHMARK(BM_LstmStep)->Args({8, 2, 0})->Args({8, 2, 1})->Args({512, 64, 0})->Args({512, 64, 1})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_CompiledLayerStep)
    ->Args({128, 0, 0})
    ->Args({128, 0, 1})
    ->Args({128, 1, 0})
    ->Args({256, 0, 0})
    ->Args({512, 0, 0})
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_OnednnLayer)->Args({128, 0})->Args({128, 1})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_PackedGemm)->Arg(128)->Arg(512)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_KernelArgs);
BENCHMARK(BM_StackSteps)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_TransposedCopy)->Arg(128)->Arg(512)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
