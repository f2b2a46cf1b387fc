// sgemm at the LSTM's shapes through oneDNN and OpenBLAS, 1 and 2 threads: which library the
// runtime uses (runtime/gemm.h, kDefaultGemmBackend) follows from these numbers.
//
//   build/bin/gemm_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include "runtime/gemm.h"
#include "runtime/tensor.h"
#include "runtime/threading.h"

#include <benchmark/benchmark.h>

namespace {

// args: m, n, k, threads, backend
void BM_Sgemm(benchmark::State& state) {
  const int64_t m = state.range(0), n = state.range(1), k = state.range(2);
  const auto backend = static_cast<gj::GemmBackendKind>(state.range(4));
  gj::setNumThreads(static_cast<int>(state.range(3)));
  gj::Tensor a = gj::Tensor::rand({m, k}, gj::DType::Float32, 1);
  gj::Tensor b = gj::Tensor::rand({k, n}, gj::DType::Float32, 2);
  gj::Tensor c = gj::Tensor::zeros({m, n}, gj::DType::Float32);
  // The LSTM multiplies by transposed weights (x W^T): B is stored [n, k] and passed transposed.
  gj::Tensor bt = b.t().contiguous();
  for (int i = 0; i < 2; ++i)  // warm-up: thread pools, JIT'd kernels
    gj::sgemm(backend, false, true, m, n, k, 1.f, a.data<float>(), k, bt.data<float>(), k, 0.f, c.data<float>(), n);
  for (auto _ : state) {
    gj::sgemm(backend, false, true, m, n, k, 1.f, a.data<float>(), k, bt.data<float>(), k, 0.f, c.data<float>(), n);
    benchmark::ClobberMemory();
  }
  state.counters["GFLOPs"] = benchmark::Counter(2.0 * m * n * k, benchmark::Counter::kIsIterationInvariantRate,
                                                benchmark::Counter::kIs1000);
  state.SetLabel(std::string(gj::gemmBackendName(backend)));
}

void shapes(benchmark::internal::Benchmark* b) {
  for (int threads : {1, 2})
    for (auto [m, n, k] : {std::tuple{64, 2048, 512}, {6400, 2048, 512}, {64, 512, 2048}})
      for (int backend : {0, 1}) b->Args({m, n, k, threads, backend});
  b->ArgNames({"m", "n", "k", "threads", "backend"})->Unit(benchmark::kMillisecond)->UseRealTime();
}

BENCHMARK(BM_Sgemm)->Apply(shapes);

}  // namespace

BENCHMARK_MAIN();
