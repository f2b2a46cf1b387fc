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

// A shape's median is taken over at least kMinRuns timed products and kMinMs of them.
constexpr int kMinRuns = 7;
constexpr double kMinMs = 10;

// One shape's operands and samples. The first two products are not timed (the first packs oneDNN's
// kernels and touches the operands' pages).
struct GemmFloor::Timed {
  explicit Timed(const GemmShape& shape)
      : s(shape),
        a(Tensor::rand(s.transA ? Shape{s.k, s.m} : Shape{s.m, s.k}, DType::Float32, 1)),
        b(Tensor::rand(s.transB ? Shape{s.n, s.k} : Shape{s.k, s.n}, DType::Float32, 2)),
        c(Tensor::rand({s.m, s.n}, DType::Float32, 3)) {
    if (s.packed) packed = PackedGemmB::pack(s.m, s.n, s.k, b.data<float>(), s.transB ? s.k : s.n, s.transB);
    once();
    once();
  }
  void once() const {
    if (packed)
      packed->multiply(a.data<float>(), c.data<float>());
    else
      sgemm(s.backend, s.transA, s.transB, s.m, s.n, s.k, 1.f, a.data<float>(), s.transA ? s.m : s.k, b.data<float>(),
            s.transB ? s.k : s.n, 0.f, c.data<float>(), s.n);
  }
  void time() {
    const auto t0 = std::chrono::steady_clock::now();
    once();
    samples.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    spent += samples.back();
  }

  GemmShape s;
  Tensor a, b, c;
  std::unique_ptr<PackedGemmB> packed;
  std::vector<double> samples;
  double spent = 0;
};

GemmFloor::GemmFloor() = default;
GemmFloor::~GemmFloor() = default;

GemmFloor::Timed& GemmFloor::timed(const GemmShape& shape) {
  auto it = shapes_.find(shape);
  if (it == shapes_.end()) it = shapes_.emplace(shape, std::make_unique<Timed>(shape)).first;
  return *it->second;
}

void GemmFloor::add(const std::map<GemmShape, int64_t>& counts) {
  for (const auto& [shape, n] : counts) timed(shape);
}

void GemmFloor::round() {
  for (auto& [shape, t] : shapes_) t->time();
}

double GemmFloor::ms(const std::map<GemmShape, int64_t>& counts) {
  double total = 0;
  for (const auto& [shape, n] : counts) {
    Timed& t = timed(shape);
    while (static_cast<int>(t.samples.size()) < kMinRuns || t.spent < kMinMs) t.time();
    total += summarize(t.samples).medianMs * static_cast<double>(n);
  }
  return total;
}

}  // namespace gj::bench
