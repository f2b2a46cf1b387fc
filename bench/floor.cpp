#include "bench/floor.h"

#include "bench/timing.h"
#include "runtime/ops/onednn_conv.h"
#include "runtime/tensor.h"

#include <chrono>

namespace gj::bench {

RowGemms recordGemms(const Row& row) {
  RowGemms g;
  auto take = [](const GemmRecording& r) { return LibraryCalls{r.counts(), r.convolutions()}; };
  {
    GemmRecording r;
    row.forward();
    g.fwd = take(r);
  }
  if (row.backward) {
    GemmRecording r;
    row.backward();
    g.bwd = take(r);
  }
  return g;
}

// A shape's median is taken over at least kMinRuns timed calls and kMinMs of them.
constexpr int kMinRuns = 7;
constexpr double kMinMs = 10;

// One shape's operands and samples. The first two calls are not timed (the first packs oneDNN's kernels
// and touches the operands' pages).
struct GemmFloor::Timed {
  virtual ~Timed() = default;
  virtual void once() = 0;
  void warmUp() {
    once();
    once();
  }
  void time() {
    const auto t0 = std::chrono::steady_clock::now();
    once();
    samples.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    spent += samples.back();
  }
  // The median of a sample count and time enough for it.
  double medianMs() {
    while (static_cast<int>(samples.size()) < kMinRuns || spent < kMinMs) time();
    return summarize(samples).medianMs;
  }

  std::vector<double> samples;
  double spent = 0;
};

namespace {

struct TimedGemm final : GemmFloor::Timed {
  explicit TimedGemm(const GemmShape& shape)
      : s(shape),
        a(Tensor::rand(s.transA ? Shape{s.k, s.m} : Shape{s.m, s.k}, DType::Float32, 1)),
        b(Tensor::rand(s.transB ? Shape{s.n, s.k} : Shape{s.k, s.n}, DType::Float32, 2)),
        c(Tensor::rand({s.m, s.n}, DType::Float32, 3)) {
    if (s.packed) packed = PackedGemmB::pack(s.m, s.n, s.k, b.data<float>(), s.transB ? s.k : s.n, s.transB);
    warmUp();
  }
  void once() override {
    if (packed)
      packed->multiply(a.data<float>(), c.data<float>());
    else
      sgemm(s.backend, s.transA, s.transB, s.m, s.n, s.k, 1.f, a.data<float>(), s.transA ? s.m : s.k, b.data<float>(),
            s.transB ? s.k : s.n, 0.f, c.data<float>(), s.n);
  }

  GemmShape s;
  Tensor a, b, c;
  std::unique_ptr<PackedGemmB> packed;
};

// A convolution through the same oneDNN call the row made: the forward into a result of its own, or the
// backward's gradients (two, or three with the bias's) from a random output gradient.
struct TimedConvolution final : GemmFloor::Timed {
  explicit TimedConvolution(const ConvShape& shape)
      : s(shape),
        p{s.params[0], s.params[1], s.params[2], s.params[3], s.params[4], s.params[5], s.params[6]},
        x(Tensor::rand({s.x.begin(), s.x.end()}, DType::Float32, 1)),
        w(Tensor::rand({s.w.begin(), s.w.end()}, DType::Float32, 2)) {
    const Shape out = {s.x[0], s.w[0], ops::convOutputSize(s.x[2], s.w[2], p.strideH, p.padH, p.dilationH),
                       ops::convOutputSize(s.x[3], s.w[3], p.strideW, p.padW, p.dilationW)};
    y = s.backward ? Tensor::rand(out, DType::Float32, 3) : Tensor::empty(out, DType::Float32);
    if (s.bias && !s.backward) bias = Tensor::rand({s.w[0]}, DType::Float32, 4);
    if (s.backward) {
      if (s.input) gx = Tensor::empty(x.sizes(), DType::Float32);
      gw = Tensor::empty(w.sizes(), DType::Float32);
      if (s.bias) gb = Tensor::empty({s.w[0]}, DType::Float32);
    }
    warmUp();
  }
  void once() override {
    if (s.backward)
      ops::onednnConv2dBackward(y, x, w, p, gx, gw, gb);
    else
      ops::onednnConv2d(x, w, bias, y, p);
  }

  ConvShape s;
  ops::Conv2dParams p;
  Tensor x, w, y, bias, gx, gw, gb;
};

}  // namespace

GemmFloor::GemmFloor() = default;
GemmFloor::~GemmFloor() = default;

GemmFloor::Timed& GemmFloor::timed(const GemmShape& shape) {
  auto it = gemms_.find(shape);
  if (it == gemms_.end()) it = gemms_.emplace(shape, std::make_unique<TimedGemm>(shape)).first;
  return *it->second;
}

GemmFloor::Timed& GemmFloor::timed(const ConvShape& shape) {
  auto it = convolutions_.find(shape);
  if (it == convolutions_.end()) it = convolutions_.emplace(shape, std::make_unique<TimedConvolution>(shape)).first;
  return *it->second;
}

void GemmFloor::add(const LibraryCalls& calls) {
  for (const auto& [shape, n] : calls.gemms) timed(shape);
  for (const auto& [shape, n] : calls.convolutions) timed(shape);
}

void GemmFloor::round() {
  for (auto& [shape, t] : gemms_) t->time();
  for (auto& [shape, t] : convolutions_) t->time();
}

Floor GemmFloor::ms(const LibraryCalls& calls) {
  Floor f;
  for (const auto& [shape, n] : calls.gemms) f.gemmMs += timed(shape).medianMs() * static_cast<double>(n);
  for (const auto& [shape, n] : calls.convolutions)
    f.convolutionMs += timed(shape).medianMs() * static_cast<double>(n);
  return f;
}

}  // namespace gj::bench
