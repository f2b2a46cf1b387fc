#include "bench/floor.h"

#include "bench/timing.h"
#include "runtime/tensor.h"

#include <chrono>

namespace gj::bench {

RowGemms recordGemms(const Row& row) {
  RowGemms g;
  {
    GemmRecording r;
    row.forward();
    g.fwd = r.counts();
  }
  if (row.backward) {
    GemmRecording r;
    row.backward();
    g.bwd = r.counts();
  }
  return g;
}

double GemmFloor::ms(const std::map<GemmShape, int64_t>& counts) {
  double total = 0;
  for (const auto& [shape, n] : counts) {
    auto it = perCallMs_.find(shape);
    if (it == perCallMs_.end()) it = perCallMs_.emplace(shape, timeOne(shape)).first;
    total += it->second * static_cast<double>(n);
  }
  return total;
}

// At least kMinRuns timed products and kMinMs of them, after two untimed ones (the first packs oneDNN's
// kernels and touches the operands' pages).
constexpr int kMinRuns = 7;
constexpr double kMinMs = 10;

double GemmFloor::timeOne(const GemmShape& s) {
  const Tensor a = Tensor::rand(s.transA ? Shape{s.k, s.m} : Shape{s.m, s.k}, DType::Float32, 1);
  const Tensor b = Tensor::rand(s.transB ? Shape{s.n, s.k} : Shape{s.k, s.n}, DType::Float32, 2);
  Tensor c = Tensor::rand({s.m, s.n}, DType::Float32, 3);
  const int64_t lda = s.transA ? s.m : s.k, ldb = s.transB ? s.k : s.n;
  std::unique_ptr<PackedGemmB> packed;
  if (s.packed) packed = PackedGemmB::pack(s.m, s.n, s.k, b.data<float>(), ldb, s.transB);
  auto once = [&] {
    if (packed)
      packed->multiply(a.data<float>(), c.data<float>());
    else
      sgemm(s.backend, s.transA, s.transB, s.m, s.n, s.k, 1.f, a.data<float>(), lda, b.data<float>(), ldb, 0.f,
            c.data<float>(), s.n);
  };
  once();
  once();
  std::vector<double> samples;
  double spent = 0;
  while (static_cast<int>(samples.size()) < kMinRuns || spent < kMinMs) {
    const auto t0 = std::chrono::steady_clock::now();
    once();
    samples.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    spent += samples.back();
  }
  return summarize(samples).medianMs;
}

}  // namespace gj::bench
