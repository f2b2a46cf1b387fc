// sgemm at the LSTM's shapes through oneDNN and OpenBLAS, 1 and 2 threads: which library the
// runtime uses (runtime/gemm.h, kDefaultGemmBackend) follows from these numbers; and the per-step
// shapes with B packed once (PackedGemmB), as the interpreter runs a shared weight.
//
//   build/bin/gemm_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include "runtime/gemm.h"
#include "runtime/tensor.h"
#include "runtime/threading.h"

#include <benchmark/benchmark.h>

#include <chrono>
#include <vector>

namespace {

// args: m, n, k, threads, backend, transA, transB (a transposed operand is stored the other way round and
// passed with its flag, as the LSTM's x W^T and its backward's dgates^T x pass them).
void BM_Sgemm(benchmark::State& state) {
  const int64_t m = state.range(0), n = state.range(1), k = state.range(2);
  const auto backend = static_cast<gj::GemmBackendKind>(state.range(4));
  const bool transA = state.range(5) != 0, transB = state.range(6) != 0;
  gj::setNumThreads(static_cast<int>(state.range(3)));
  gj::Tensor a = gj::Tensor::rand(transA ? std::vector<int64_t>{k, m} : std::vector<int64_t>{m, k}, gj::DType::Float32, 1);
  gj::Tensor b = gj::Tensor::rand(transB ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n}, gj::DType::Float32, 2);
  gj::Tensor c = gj::Tensor::zeros({m, n}, gj::DType::Float32);
  const int64_t lda = transA ? m : k, ldb = transB ? k : n;
  auto once = [&] {
    gj::sgemm(backend, transA, transB, m, n, k, 1.f, a.data<float>(), lda, b.data<float>(), ldb, 0.f, c.data<float>(), n);
  };
  for (int i = 0; i < 2; ++i) once();  // warm-up: thread pools, JIT'd kernels
  for (auto _ : state) {
    once();
    benchmark::ClobberMemory();
  }
  state.counters["GFLOPs"] = benchmark::Counter(2.0 * m * n * k, benchmark::Counter::kIsIterationInvariantRate,
                                                benchmark::Counter::kIs1000);
  state.SetLabel(std::string(gj::gemmBackendName(backend)));
}

// The LSTM's GEMMs at the fastrnns shape: forward x W_ih^T (all steps) and h W_hh^T (one step); backward
// dgates W_hh (one step), dgates W_ih (all steps) and the weight gradients x^T dgates (all steps); the
// all-steps GEMMs also over a quarter of the steps, as batch_mm chunks them (passes/batch_mm.h).
void shapes(benchmark::internal::Benchmark* b) {
  for (int threads : {1, 2}) {
    for (auto [m, n, k] : {std::tuple{64, 2048, 512}, {6400, 2048, 512}, {64, 512, 2048}})
      for (int backend : {0, 1}) b->Args({m, n, k, threads, backend, 0, 1});
    for (auto [m, n, k, ta, tb] : {std::tuple{64, 2048, 512, 0, 0}, {64, 512, 2048, 0, 0}, {6400, 512, 2048, 0, 0},
                                   {512, 2048, 6400, 1, 0}, {1600, 2048, 512, 0, 1}, {1600, 2048, 512, 0, 0}, {1600, 512, 2048, 0, 0},
                                   {512, 2048, 1600, 1, 0}})
      b->Args({m, n, k, threads, 0, ta, tb});
  }
  b->ArgNames({"m", "n", "k", "threads", "backend", "transA", "transB"})->Unit(benchmark::kMillisecond)->UseRealTime();
}

BENCHMARK(BM_Sgemm)->Apply(shapes);

// The same product with B packed once (gj::PackedGemmB, oneDNN's matmul primitive on its blocked layout), as
// the interpreter runs a weight that many small products share; the packing itself is timed apart.
// args: m, n, k, threads, transB.
void BM_PackedGemm(benchmark::State& state) {
  const int64_t m = state.range(0), n = state.range(1), k = state.range(2);
  const bool transB = state.range(4) != 0;
  gj::setNumThreads(static_cast<int>(state.range(3)));
  gj::Tensor a = gj::Tensor::rand({m, k}, gj::DType::Float32, 1);
  gj::Tensor b = gj::Tensor::rand(transB ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n}, gj::DType::Float32, 2);
  gj::Tensor c = gj::Tensor::zeros({m, n}, gj::DType::Float32);
  auto t0 = std::chrono::steady_clock::now();
  auto packed = gj::PackedGemmB::pack(m, n, k, b.data<float>(), transB ? k : n, transB);
  const double packMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (!packed) {
    state.SkipWithError("no packed layout on this CPU");
    return;
  }
  for (int i = 0; i < 2; ++i) packed->multiply(a.data<float>(), c.data<float>());
  for (auto _ : state) {
    packed->multiply(a.data<float>(), c.data<float>());
    benchmark::ClobberMemory();
  }
  state.counters["GFLOPs"] = benchmark::Counter(2.0 * m * n * k, benchmark::Counter::kIsIterationInvariantRate,
                                                benchmark::Counter::kIs1000);
  state.counters["pack_ms"] = packMs;
  state.SetLabel("onednn packed");
}

BENCHMARK(BM_PackedGemm)
    ->ArgsProduct({{64}, {2048}, {512}, {1, 2}, {0, 1}})
    ->Args({64, 512, 2048, 1, 0})
    ->Args({64, 512, 2048, 2, 0})
    ->ArgNames({"m", "n", "k", "threads", "transB"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
