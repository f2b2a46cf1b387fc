// The CUDA path: the unfused ops on device tensors (kernels.cuh, cuBLAS) and Function with device cuda,
// compared with the CPU's kernels and with tests/data's PyTorch references. On a GPU it runs there; ctest
// runs it on the emulated driver (GJ_CUDA_DRIVER=emulated: the same kernels as host code, thread by
// thread, and the host's GEMM for cuBLAS), so that everything above the driver is tested on every build.
#include "executors/function.h"
#include "models/model.h"
#include "runtime/ops/ops.h"
#include "runtime/cuda/cudnn_lstm.h"
#include "runtime/cuda/device.h"
#include "runtime/cuda/ops.h"
#include "runtime/nvrtc.h"
#include "tests/support/library_lstm.h"
#include "tests/support/reference.h"
#include "tests/support/registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>

namespace gj {
namespace {

using ::testing::HasSubstr;

#define SKIP_WITHOUT_DEVICE()                                       \
  if (auto d = cuda::device(); !d) GTEST_SKIP() << d.error().what()

Tensor dev(const Tensor& t) { return t.to(DeviceKind::Cuda); }
Tensor host(const Tensor& t) { return t.to(DeviceKind::Cpu); }

// A device result against the CPU's: same sizes and dtype, and close (`tol`, relative, in the 2-norm).
void expectMatches(const Tensor& onDevice, const Tensor& onHost, double tol) {
  ASSERT_EQ(onDevice.device(), DeviceKind::Cuda);
  ASSERT_EQ(onDevice.sizes(), onHost.sizes());
  ASSERT_EQ(onDevice.dtype(), onHost.dtype());
  EXPECT_LE(test::relError(host(onDevice), onHost), tol);
}

double tolerance(DType t) { return t == DType::Float32 ? 2e-6 : 1e-13; }

// gj_copy's conversions (gjLoad, gjStore) against the host's convertElement for every pair of dtypes: every
// float16 bit pattern, float32 values at float16's and bfloat16's rounding ties and edges, and int64 values
// past 2^53 that narrower integers wrap.
// The same values element by element: bit for bit, but that any NaN matches any (the device converts
// through double, which quiets a signaling NaN).
void expectSameElements(const Tensor& got, const Tensor& want) {
  ASSERT_EQ(got.dtype(), want.dtype());
  ASSERT_EQ(got.numel(), want.numel());
  const size_t size = dtypeSize(want.dtype());
  for (int64_t i = 0; i < want.numel(); ++i) {
    if (std::isnan(got.item(i)) && std::isnan(want.item(i))) continue;
    ASSERT_EQ(std::memcmp(static_cast<const char*>(got.rawData()) + i * size,
                          static_cast<const char*>(want.rawData()) + i * size, size), 0)
        << "element " << i << ": " << got.item(i) << " (host " << want.item(i) << ")";
  }
}

TEST(CudaOps, CastsBetweenEveryPairOfDtypesMatchTheHost) {
  SKIP_WITHOUT_DEVICE();
  Tensor halves = Tensor::empty({65536}, DType::Float16);
  for (int b = 0; b < 65536; ++b) halves.data<Half>()[b].bits = static_cast<uint16_t>(b);
  expectSameElements(host(dev(halves).to(DType::Float32)), halves.to(DType::Float32));
  const std::vector<double> edges = {65519.0, 65520.0, 2049.0, 0x1.0p-25, 0x1.8p-25, 0x1.ffcp-15, -0.0, 300.7,
                                     -1.0, 1.0e-8, 3.3, 0x1.0101p0, 0x1.0103p0, 3.4e38, 0.5, -128.5};
  const Tensor values = Tensor::fromVector({static_cast<int64_t>(edges.size())}, edges, DType::Float32);
  Tensor wide = Tensor::fromVector({3}, {0, 0, 0}, DType::Int64);
  wide.data<int64_t>()[0] = (int64_t{1} << 62) + 0x12345;
  wide.data<int64_t>()[1] = -(int64_t{1} << 60) - 7;
  wide.data<int64_t>()[2] = 65536 + 255;
  for (const Tensor& from : {values, wide})
    for (DType to : kAllDTypes) {
      SCOPED_TRACE(std::string(dtypeName(from.dtype())) + " to " + std::string(dtypeName(to)));
      expectSameElements(host(dev(from).to(to)), from.to(to));
    }
}

// Every pointwise op of ops.def (ops::pointwise sends a device tensor's to the kernel's rule): a new op is
// tested here with no change to this file.
TEST(CudaOps, PointwiseOpsMatchTheCpuWithBroadcastsViewsAndScalars) {
  SKIP_WITHOUT_DEVICE();
  int tested = 0;
  for (DType t : {DType::Float32, DType::Float64}) {
    // Positive values (log, sqrt) of both signs after the shift; b is a permuted view of another layout.
    Tensor a = Tensor::rand({3, 4, 5}, t, 1, 0.2, 2.0);
    Tensor b = Tensor::rand({5, 4, 3}, t, 2, 0.2, 2.0).permute(std::vector<int64_t>{2, 1, 0});
    Tensor row = Tensor::rand({4, 1}, t, 3, -1.0, 1.0);  // broadcasts over dims 0 and 2
    Tensor shifted = ops::sub(a, Tensor::scalar(1.0, t));
    for (const OpInfo& info : allOps()) {
      const std::optional<PointwiseOp> op = info.pointwiseOp();
      if (!op) continue;
      SCOPED_TRACE(std::string(info.name) + " " + std::string(dtypeName(t)));
      // 0.7: a scalar operand; a condition operand (where's, masked_fill's) is a bool: where it is above 1
      auto run = [&](Tensor x, Tensor y) {
        const Tensor one = Tensor::scalar(1.0, t);
        if (conditionOperand(info.kind) == 0) x = ops::compare(PointwiseOp::Gt, x, one);
        if (conditionOperand(info.kind) == 1) y = ops::compare(PointwiseOp::Gt, y, one);
        return ops::pointwise(*op, x, y, 0.7);
      };
      // x and y on the device (y stays on the host when it is a scalar), where the CPU's result has no NaN
      // (log, sqrt, a fractional power below 0).
      auto check = [&](const Tensor& x, const Tensor& y) {
        const Tensor want = run(x, y);
        if (std::isnan(ops::sum(want.to(t)).item())) return;
        ++tested;
        expectMatches(run(dev(x), y.defined() && y.dim() > 0 ? dev(y) : y), want, tolerance(t));
      };
      if (pointwiseArity(*op) == 1) {
        check(b, Tensor());
        check(shifted, Tensor());
        continue;
      }
      check(a, b);
      check(shifted, b);
      if (op == PointwiseOp::SigmoidBackward || op == PointwiseOp::TanhBackward || op == PointwiseOp::ThresholdBackward)
        continue;  // operands of one shape
      check(a, row);
      check(row, b);
      check(b, Tensor::scalar(3.0, t));  // a host scalar among device operands
    }
  }
  EXPECT_GE(tested, 2 * 100);
  // Mixed float32 and float64 promote as on the CPU.
  Tensor f = Tensor::rand({2, 3}, DType::Float32, 4), d = Tensor::rand({2, 3}, DType::Float64, 5);
  expectMatches(ops::mul(dev(f), dev(d)), ops::mul(f, d), 1e-13);
}

// The block reductions (kernels.cuh's gj_reduce, gj_extreme_rows, gj_softmax: a warp a row up to 1024
// elements, a block a longer one, 32 columns a block when the kept elements are the contiguous ones, long
// rows over few outputs split over blocks) at odd row lengths, a batch of 1 and 3, contiguous and
// transposed, against the host computing in float64; on the emulated driver under its race checker.
TEST(CudaOps, BlockReductionsMatchTheCpuAtOddSizes) {
  SKIP_WITHOUT_DEVICE();
  auto f64 = [](const Tensor& a) { return a.to(DType::Float64); };
  for (DType t : {DType::Float32, DType::Float64})
    for (int64_t n : {1, 31, 33, 1000, 4097})
      for (int64_t rows : {1, 3}) {
        SCOPED_TRACE(fmt::format("{} rows of {} {}", rows, n, dtypeName(t)));
        const double tol = t == DType::Float32 ? 2e-6 : 1e-13;
        Tensor x = Tensor::rand({rows, n}, t, static_cast<uint64_t>(n * 7 + rows), -2.0, 2.0);
        Tensor xt = Tensor::rand({n, rows}, t, static_cast<uint64_t>(n * 11 + rows), -2.0, 2.0).t();  // a view
        for (const Tensor& in : {x, xt}) {
          for (int64_t dim : {1, 0}) {
            SCOPED_TRACE(fmt::format("dim {}{}", dim, in.isContiguous() ? "" : " of a transposed view"));
            const std::vector<int64_t> dims = {dim};
            expectMatches(ops::sum(dev(in), dims, false), ops::sum(f64(in), dims, false).to(t), tol);
            expectMatches(ops::mean(dev(in), dims, true), ops::mean(f64(in), dims, true).to(t), tol);
            expectMatches(ops::amax(dev(in), dims, false), ops::amax(in, dims, false), 0.0);
            const auto devMax = ops::extremeAlong(dev(in), dim, false, false);
            const auto hostMax = ops::extremeAlong(in, dim, false, false);
            expectMatches(devMax.values, hostMax.values, 0.0);
            EXPECT_EQ(test::relError(host(devMax.indices), hostMax.indices), 0.0);
            expectMatches(ops::softmax(dev(in), dim), ops::softmax(f64(in), dim).to(t), tol);
            expectMatches(ops::logSoftmax(dev(in), dim), ops::logSoftmax(f64(in), dim).to(t), tol);
            Tensor g = Tensor::rand(in.sizes(), t, 5, -1.0, 1.0), y = ops::softmax(in, dim);
            expectMatches(ops::softmaxBackward(dev(g), dev(y), dim), ops::softmaxBackward(f64(g), f64(y), dim).to(t),
                          tol);
            expectMatches(ops::var(dev(in), dims, true, false), ops::var(f64(in), dims, true, false).to(t), tol);
          }
        }
        const std::vector<int64_t> last = {n};
        auto ln = ops::layerNorm(dev(x), last, Tensor(), Tensor(), 1e-5);
        auto lnHost = ops::layerNorm(f64(x), last, Tensor(), Tensor(), 1e-5);
        expectMatches(ln.out, lnHost.out.to(t), t == DType::Float32 ? 1e-5 : 1e-12);
        expectMatches(ln.mean, lnHost.mean.to(ln.mean.dtype()), tol);
      }
}

// One sum under every schedule: rows folded by warps, by blocks, split over blocks, and the same numbers as
// columns; the float32 results agree to float32's rounding (all fold in double), the float64 ones to
// double summation's (64 ulp over 2^16 elements).
TEST(CudaOps, ReductionsDoNotDependOnTheLaunchShape) {
  SKIP_WITHOUT_DEVICE();
  for (DType t : {DType::Float32, DType::Float64}) {
    SCOPED_TRACE(dtypeName(t));
    const double tol = t == DType::Float32 ? 2.4e-7 : 1.5e-14;
    Tensor x = Tensor::rand({1 << 16}, t, 99, 0.5, 1.5);  // positive: no cancellation
    const double want = ops::sum(x.to(DType::Float64), {}, false).item();
    const std::vector<int64_t> all = {}, d0 = {0}, d1 = {1};
    const std::vector<Tensor> ways = {
        ops::sum(dev(x), all, false),                                         // one long row: split over blocks
        ops::sum(ops::sum(dev(x.view({64, 1024})), d1, false), all, false),   // warps, then one row
        ops::sum(ops::sum(dev(x.view({16, 4096})), d1, false), all, false),   // blocks, then one row
        ops::sum(ops::sum(dev(x.view({1024, 64})), d0, false), all, false),   // columns, then one row
    };
    for (size_t i = 0; i < ways.size(); ++i) EXPECT_NEAR(host(ways[i]).item(), want, tol * want) << "way " << i;
    // and each again: the same bits
    EXPECT_EQ(host(ops::sum(dev(x), all, false)).item(), host(ways[0]).item());
  }
}

TEST(CudaOps, SumsAndMeansMatchTheCpu) {
  SKIP_WITHOUT_DEVICE();
  for (DType t : {DType::Float32, DType::Float64}) {
    Tensor x = Tensor::rand({6, 7, 30}, t, 7);
    Tensor xt = Tensor::rand({30, 7, 6}, t, 8).permute(std::vector<int64_t>{2, 1, 0});
    for (const Tensor& in : {x, xt}) {
      for (std::vector<int64_t> dims : {std::vector<int64_t>{}, {0}, {2}, {0, 2}, {-1}, {1}})
        for (bool keep : {false, true}) {
          SCOPED_TRACE(fmt::format("{} dims {} keepdim {}", dtypeName(t), shapeStr(dims), keep));
          expectMatches(ops::sum(dev(in), dims, keep), ops::sum(in, dims, keep), tolerance(t));
          expectMatches(ops::mean(dev(in), dims, keep), ops::mean(in, dims, keep), tolerance(t));
        }
    }
    // Few outputs of many elements: each output's sum is split into parts that run side by side.
    Tensor wide = Tensor::rand({3, 20000}, t, 9);
    expectMatches(ops::sum(dev(wide), std::vector<int64_t>{1}), ops::sum(wide, std::vector<int64_t>{1}), tolerance(t));
    expectMatches(ops::sum(dev(wide)), ops::sum(wide), tolerance(t));
    // The bias gradient of a batch: sum_to_size over the leading dimension.
    Tensor g = Tensor::rand({64, 8, 12}, t, 10);
    expectMatches(ops::sumToSize(dev(g), std::vector<int64_t>{8, 1}), ops::sumToSize(g, std::vector<int64_t>{8, 1}),
                  tolerance(t));
  }
  // Nothing to sum: zeros of the kept shape; nothing kept: an empty result.
  Tensor none = Tensor::empty({4, 0}, DType::Float32);
  expectMatches(ops::sum(dev(none), std::vector<int64_t>{1}), ops::sum(none, std::vector<int64_t>{1}), 0);
  EXPECT_EQ(ops::sum(dev(none), std::vector<int64_t>{0}).sizes(), Shape({0}));
}

// Reductions large enough to fold their parts in several stages, along contiguous elements (a row's sum)
// and across them (a bias gradient over many rows, whose kept elements are the contiguous ones).
TEST(CudaOps, SumsFoldedInSeveralStagesMatchTheCpuAndRepeatBitForBit) {
  SKIP_WITHOUT_DEVICE();
  for (DType t : {DType::Float32, DType::Float64}) {
    SCOPED_TRACE(dtypeName(t));
    Tensor flat = Tensor::rand({600001}, t, 21);
    expectMatches(ops::sum(dev(flat)), ops::sum(flat), tolerance(t));
    expectMatches(ops::mean(dev(flat)), ops::mean(flat), tolerance(t));
    Tensor rows = Tensor::rand({6400, 40}, t, 22);
    expectMatches(ops::sumToSize(dev(rows), std::vector<int64_t>{40}), ops::sumToSize(rows, std::vector<int64_t>{40}),
                  tolerance(t));
    Tensor wide = Tensor::rand({5, 70001}, t, 23);
    expectMatches(ops::sum(dev(wide), std::vector<int64_t>{1}), ops::sum(wide, std::vector<int64_t>{1}), tolerance(t));
    // A transposed view: the reduced dimension strided, the kept one contiguous.
    Tensor tr = Tensor::rand({300, 2000}, t, 24).t();
    expectMatches(ops::sum(dev(tr), std::vector<int64_t>{1}), ops::sum(tr, std::vector<int64_t>{1}), tolerance(t));
  }
  Tensor x = dev(Tensor::rand({600001}, DType::Float32, 25));
  Tensor first = host(ops::sum(x)), second = host(ops::sum(x));
  EXPECT_EQ(first.item(0), second.item(0)) << "the same sum differs between runs";
}

// amax along rows and along columns, against a host loop: a NaN anywhere in a row makes its maximum NaN,
// a row of -inf has maximum -inf, and nothing to reduce gives NaN.
TEST(CudaOps, MaximaMatchAHostLoopWithNansAndInfinities) {
  SKIP_WITHOUT_DEVICE();
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  for (bool columns : {false, true}) {
    SCOPED_TRACE(columns ? "along columns" : "along rows");
    Tensor h = Tensor::rand({4, 5003}, DType::Float32, 31);
    h.data<float>()[1 * 5003 + 4321] = static_cast<float>(nan);
    for (int64_t j = 0; j < 5003; ++j) h.data<float>()[2 * 5003 + j] = static_cast<float>(-inf);
    h.data<float>()[3 * 5003 + 17] = 7.5f;  // the largest, far from the others
    Tensor in = columns ? dev(h.t().contiguous()).t() : dev(h);  // the same values, laid out by column
    const Shape kept{4, 1};
    Tensor got = host(cuda::amax(in, kept, Shape{4}));
    for (int64_t i = 0; i < 4; ++i) {
      double want = -inf;
      for (int64_t j = 0; j < 5003; ++j) {
        const double v = h.item(i * 5003 + j);
        want = std::isnan(want) || std::isnan(v) ? nan : std::max(want, v);
      }
      if (std::isnan(want))
        EXPECT_TRUE(std::isnan(got.item(i))) << "row " << i << ": " << got.item(i);
      else
        EXPECT_EQ(got.item(i), want) << "row " << i;
    }
  }
  Tensor none = dev(Tensor::empty({3, 0}, DType::Float32));
  Tensor got = host(cuda::amax(none, Shape{3, 1}, Shape{3}));
  for (int64_t i = 0; i < 3; ++i) EXPECT_TRUE(std::isnan(got.item(i))) << got.item(i);
}

// aten::max / aten::min over a dim: on the CPU against a host loop (the first index on a tie, a NaN's
// where a row has one), the gradient at exactly those indices; on the device, the same as the CPU.
TEST(CudaOps, MaxAndMinOverADimPickTheFirstTieAndNansOnTheCpuAndTheDevice) {
  Tensor x = Tensor::rand({3, 4, 5}, DType::Float64, 7, -1, 1);
  auto at = [&](int64_t i, int64_t j, int64_t k) -> double& { return x.data<double>()[i * 20 + j * 5 + k]; };
  for (int64_t k = 0; k < 5; ++k) at(0, 3, k) = at(0, 1, k);  // ties along dim 1
  for (int64_t j = 0; j < 4; ++j) at(1, j, 4) = at(1, j, 2);  // ties along dim 2
  at(2, 2, 1) = std::numeric_limits<double>::quiet_NaN();
  const Shape sizes{3, 4, 5};
  for (bool min : {false, true}) {
    for (int64_t dim : {1, 2}) {
      SCOPED_TRACE(fmt::format("{} over dim {}", min ? "min" : "max", dim));
      const auto r = ops::extremeAlong(x, dim == 2 ? -1 : dim, false, min);
      const int64_t other = dim == 1 ? 5 : 4, n = sizes[dim];
      ASSERT_EQ(r.values.sizes(), (Shape{3, other}));
      int64_t nans = 0;
      for (int64_t i = 0; i < 3; ++i) {
        for (int64_t o = 0; o < other; ++o) {
          auto elem = [&](int64_t e) { return dim == 1 ? at(i, e, o) : at(i, o, e); };
          int64_t best = 0;
          for (int64_t e = 1; e < n; ++e) {
            if (std::isnan(elem(best))) break;
            if (std::isnan(elem(e)) || (min ? elem(e) < elem(best) : elem(e) > elem(best))) best = e;
          }
          nans += std::isnan(elem(best));
          EXPECT_EQ(r.indices.data<int64_t>()[i * other + o], best) << i << ", " << o;
          if (!std::isnan(elem(best))) {
            EXPECT_EQ(r.values.data<double>()[i * other + o], elem(best));
          }
        }
      }
      EXPECT_EQ(nans, 1);
      const Tensor g = Tensor::rand({3, other}, DType::Float64, 8, 0.5, 1.5);
      const Tensor back = ops::valueSelectingBackward(g, dim, r.indices, sizes, false);
      ASSERT_EQ(back.sizes(), sizes);
      for (int64_t i = 0; i < 3; ++i)
        for (int64_t o = 0; o < other; ++o)
          for (int64_t e = 0; e < n; ++e) {
            const int64_t flat = dim == 1 ? i * 20 + e * 5 + o : i * 20 + o * 5 + e;
            const bool picked = r.indices.data<int64_t>()[i * other + o] == e;
            EXPECT_EQ(back.data<double>()[flat], picked ? g.data<double>()[i * other + o] : 0.0);
          }
      if (!cuda::device()) continue;
      for (bool keep : {false, true}) {
        const auto d = ops::extremeAlong(dev(x), dim, keep, min);
        const auto c = ops::extremeAlong(x, dim, keep, min);
        EXPECT_TRUE(ops::sum(ops::compare(PointwiseOp::Ne, host(d.indices), c.indices).to(DType::Float64)).item() == 0);
        const Tensor gk = keep ? g.unsqueeze(dim) : g;
        expectMatches(ops::valueSelectingBackward(dev(gk), dim, d.indices, sizes, keep),
                      ops::valueSelectingBackward(gk, dim, c.indices, sizes, keep), 0);
      }
    }
  }
}

TEST(CudaOps, CopiesConcatenationsAndConversionsMatchTheCpu) {
  SKIP_WITHOUT_DEVICE();
  Tensor a = Tensor::rand({4, 3, 5}, DType::Float32, 11);
  Tensor b = Tensor::rand({4, 2, 5}, DType::Float32, 12);
  expectMatches(ops::cat(std::vector<Tensor>{dev(a), dev(b)}, 1), ops::cat(std::vector<Tensor>{a, b}, 1), 0);
  expectMatches(ops::stack(std::vector<Tensor>{dev(a), dev(a.transpose(0, 1).contiguous().transpose(0, 1))}, 2),
                ops::stack(std::vector<Tensor>{a, a}, 2), 0);
  Tensor p = dev(a).permute(std::vector<int64_t>{2, 0, 1});
  ASSERT_FALSE(p.isContiguous());
  expectMatches(p.contiguous(), a.permute(std::vector<int64_t>{2, 0, 1}).contiguous(), 0);
  expectMatches(dev(a).to(DType::Float64), a.to(DType::Float64), 0);
  expectMatches(dev(a).select(1, 2).to(DType::Float64), a.select(1, 2).to(DType::Float64), 0);
  // int64 beyond 2^53 keeps every bit through a strided copy on the device.
  Tensor big = Tensor::fromVector({2, 2}, {0, 0, 0, 0}, DType::Int64);
  int64_t* bp = big.data<int64_t>();
  const int64_t values[] = {(int64_t{1} << 60) + 1, -3, (int64_t{1} << 55) + 7, 42};
  std::copy(std::begin(values), std::end(values), bp);
  Tensor back = host(dev(big).t().contiguous());
  EXPECT_EQ(back.data<int64_t>()[1], values[2]);
  EXPECT_EQ(back.data<int64_t>()[2], values[1]);
  EXPECT_EQ(back.data<int64_t>()[0], values[0]);
  // Gradients of views: zeros with the gradient in the selected or sliced place.
  Tensor g = Tensor::rand({4, 5}, DType::Float64, 13);
  expectMatches(ops::selectBackward(dev(g), std::vector<int64_t>{4, 3, 5}, 1, 2),
                ops::selectBackward(g, std::vector<int64_t>{4, 3, 5}, 1, 2), 0);
  Tensor gs = Tensor::rand({4, 2, 5}, DType::Float64, 14);
  expectMatches(ops::sliceBackward(dev(gs), std::vector<int64_t>{4, 7, 5}, 1, 1, 5, 2),
                ops::sliceBackward(gs, std::vector<int64_t>{4, 7, 5}, 1, 1, 5, 2), 0);
  expectMatches(Tensor::zeros({3, 2}, DType::Float32, DeviceKind::Cuda), Tensor::zeros({3, 2}, DType::Float32), 0);
}

TEST(CudaOps, MatrixProductsMatchTheCpu) {
  SKIP_WITHOUT_DEVICE();
  for (DType t : {DType::Float32, DType::Float64}) {
    SCOPED_TRACE(dtypeName(t));
    const double tol = t == DType::Float32 ? 1e-5 : 1e-12;
    Tensor a = Tensor::rand({7, 12}, t, 21), b = Tensor::rand({12, 9}, t, 22);
    Tensor at = Tensor::rand({12, 7}, t, 23).t(), bt = Tensor::rand({9, 12}, t, 24).t();
    for (const Tensor& x : {a, at})
      for (const Tensor& y : {b, bt}) expectMatches(ops::mm(dev(x), dev(y)), ops::mm(x, y), tol);
    Tensor bias = Tensor::rand({9}, t, 25);
    expectMatches(ops::addmm(dev(bias), dev(at), dev(b), 0.5, 2.0), ops::addmm(bias, at, b, 0.5, 2.0), tol);
    Tensor x3 = Tensor::rand({3, 7, 12}, t, 26), y3 = Tensor::rand({3, 12, 9}, t, 27);
    expectMatches(ops::bmm(dev(x3), dev(y3)), ops::bmm(x3, y3), tol);
    expectMatches(ops::matmul(dev(x3), dev(b)), ops::matmul(x3, b), tol);
    Tensor w = Tensor::rand({9, 12}, t, 28);
    expectMatches(ops::linear(dev(x3), dev(w), dev(bias)), ops::linear(x3, w, bias), tol);
  }
}

// Integer arithmetic (gj_map_i64) bit for bit against the CPU's: values beyond 2^53, where a float kernel
// would round, and at int64's ends, where add, mul, neg and abs wrap as two's complement (as PyTorch's);
// broadcasts, a transposed operand, where with an int64 and a bool result; and the errors.
TEST(CudaOps, IntegerArithmeticMatchesTheCpuBitForBit) {
  SKIP_WITHOUT_DEVICE();
  auto ints = [](Shape sizes, std::vector<int64_t> v) {
    Tensor t = Tensor::fromVector(std::move(sizes), std::vector<double>(v.size()), DType::Int64);
    std::copy(v.begin(), v.end(), t.data<int64_t>());
    return t;
  };
  const int64_t big = (int64_t{1} << 60) + 1, top = std::numeric_limits<int64_t>::max(),
                bottom = std::numeric_limits<int64_t>::min();
  Tensor a = ints({2, 3}, {big, -3, top, bottom, (int64_t{1} << 55) + 7, 42});
  Tensor b = ints({3}, {3, -(int64_t{1} << 53) - 1, 2});
  Tensor bt = ints({3, 2}, {5, -7, 11, 13, -17, 19}).t();
  auto same = [](const Tensor& onDevice, const Tensor& onHost) {
    ASSERT_EQ(onDevice.dtype(), onHost.dtype());
    Tensor got = host(onDevice).contiguous(), want = onHost.contiguous();
    ASSERT_EQ(got.sizes(), want.sizes());
    EXPECT_EQ(std::memcmp(got.rawData(), want.rawData(), want.numel() * dtypeSize(want.dtype())), 0);
  };
  for (const Tensor& y : {b, bt}) {
    same(ops::add(dev(a), dev(y), 3), ops::add(a, y, 3));
    same(ops::sub(dev(a), dev(y)), ops::sub(a, y));
    same(ops::mul(dev(a), dev(y)), ops::mul(a, y));
    for (PointwiseOp op : {PointwiseOp::Maximum, PointwiseOp::Minimum, PointwiseOp::ClampMin, PointwiseOp::ClampMax})
      same(ops::pointwise(op, dev(a), dev(y)), ops::pointwise(op, a, y));
    same(ops::pointwise(PointwiseOp::Clamp, dev(a), dev(y), 7), ops::pointwise(PointwiseOp::Clamp, a, y, 7));
  }
  for (PointwiseOp op : {PointwiseOp::Neg, PointwiseOp::Abs, PointwiseOp::Sign, PointwiseOp::Relu})
    same(ops::pointwise(op, dev(a), Tensor()), ops::pointwise(op, a, Tensor()));
  Tensor three = ints({}, {3});
  same(ops::pointwise(PointwiseOp::Pow, dev(a), three), ops::pointwise(PointwiseOp::Pow, a, three));
  // True division of integers gives float32, as PyTorch's.
  Tensor q = ops::div(dev(a), dev(b));
  EXPECT_EQ(q.dtype(), DType::Float32);
  expectMatches(q, ops::div(a, b), 1e-6);
  Tensor m = ops::compare(PointwiseOp::Gt, a, ints({}, {0}));
  same(ops::where(dev(m), dev(a), dev(b)), ops::where(m, a, b));
  same(ops::where(dev(m), dev(m), dev(ops::compare(PointwiseOp::Lt, b, ints({}, {0})))),
       ops::where(m, m, ops::compare(PointwiseOp::Lt, b, ints({}, {0}))));
  // Bool arithmetic through int64: add is or, mul is and; sub of two bools is refused, as in PyTorch.
  same(ops::add(dev(m), dev(m)), ops::add(m, m));
  same(ops::mul(dev(m), dev(m)), ops::mul(m, m));
  EXPECT_THROW(ops::sub(dev(m), dev(m)), Error);
  EXPECT_THROW(ops::sub(m, m), Error);
  // Integer tensors to integer tensor powers, negative elements among them: PyTorch's 1, -1 or 0 there
  // (a negative number as the exponent is the interpreter's error, as PyTorch's).
  same(ops::pointwise(PointwiseOp::Pow, dev(a), dev(ints({}, {-1}))), ops::pointwise(PointwiseOp::Pow, a, ints({}, {-1})));
  same(ops::pointwise(PointwiseOp::Pow, dev(a), dev(ops::pointwise(PointwiseOp::ClampMin, b, ints({}, {-3})))),
       ops::pointwise(PointwiseOp::Pow, a, ops::pointwise(PointwiseOp::ClampMin, b, ints({}, {-3}))));
}

// bmm is one strided batched GEMM on the device: each operand's batch layout must reach it whole, or be
// copied once where BLAS cannot read it. Every layout against the CPU's one GEMM a matrix.
TEST(CudaOps, BatchedProductsReadEveryBatchLayout) {
  SKIP_WITHOUT_DEVICE();
  for (DType t : {DType::Float32, DType::Float64}) {
    SCOPED_TRACE(dtypeName(t));
    const double tol = t == DType::Float32 ? 1e-5 : 1e-12;
    Tensor x = Tensor::rand({5, 7, 12}, t, 31), y = Tensor::rand({5, 12, 9}, t, 32);
    // Each batch transposed ([5, 12, 7] read as [5, 7, 12]): BLAS's transposed operand, no copy.
    Tensor xt = Tensor::rand({5, 12, 7}, t, 33), yt = Tensor::rand({5, 9, 12}, t, 34);
    // The batch dimension innermost: no matrix is row- or column-major, so it is copied.
    Tensor xp = Tensor::rand({7, 12, 5}, t, 35);
    const std::vector<std::pair<Tensor, Tensor>> lefts = {
        {x, dev(x)}, {xt.transpose(1, 2), dev(xt).transpose(1, 2)},
        {xp.permute(std::vector<int64_t>{2, 0, 1}), dev(xp).permute(std::vector<int64_t>{2, 0, 1})}};
    const std::vector<std::pair<Tensor, Tensor>> rights = {{y, dev(y)}, {yt.transpose(1, 2), dev(yt).transpose(1, 2)}};
    for (const auto& [l, dl] : lefts)
      for (const auto& [r, dr] : rights) expectMatches(ops::bmm(dl, dr), ops::bmm(l, r), tol);
    // A broadcast operand (batch stride 0), a batch of one, and a broadcasting matmul.
    Tensor w = Tensor::rand({1, 12, 9}, t, 36);
    const std::vector<int64_t> five{5, 12, 9};
    expectMatches(ops::bmm(dev(x), dev(w).expand(five)), ops::bmm(x, w.expand(five)), tol);
    Tensor x1 = Tensor::rand({1, 7, 12}, t, 37);
    expectMatches(ops::bmm(dev(x1), dev(w)), ops::bmm(x1, w), tol);
    Tensor x4 = Tensor::rand({2, 3, 7, 12}, t, 38), y4 = Tensor::rand({3, 12, 9}, t, 39);
    expectMatches(ops::matmul(dev(x4), dev(y4)), ops::matmul(x4, y4), tol);
  }
}

TEST(CudaOps, SoftmaxAndLogSoftmaxMatchTheCpuAlongEveryDimension) {
  SKIP_WITHOUT_DEVICE();
  for (DType t : {DType::Float32, DType::Float64}) {
    // Large values (exp overflows without the max shift), a row of -inf, and a NaN.
    Tensor x = ops::mul(ops::sub(Tensor::rand({4, 6, 5}, t, 81), Tensor::scalar(0.5, t)), Tensor::scalar(400.0, t));
    for (int64_t dim : {0, 1, 2, -1}) {
      SCOPED_TRACE(fmt::format("{} dim {}", dtypeName(t), dim));
      expectMatches(ops::softmax(dev(x), dim), ops::softmax(x, dim), tolerance(t));
      expectMatches(ops::logSoftmax(dev(x), dim), ops::logSoftmax(x, dim), tolerance(t));
      // The gradients against the host's in float64: y * (g - sum(g * y)) cancels where y is near 1 (x
      // spans +-200), which float32 arithmetic (the host's, oneDNN's) misses by 0.7 % here and the
      // device's kernel, in double, does not.
      Tensor g = Tensor::rand({4, 6, 5}, t, 82), y = ops::softmax(x, dim), ly = ops::logSoftmax(x, dim);
      auto f64 = [](const Tensor& a) { return a.to(DType::Float64); };
      expectMatches(ops::softmaxBackward(dev(g), dev(y), dim), ops::softmaxBackward(f64(g), f64(y), dim).to(t),
                    tolerance(t));
      expectMatches(ops::logSoftmaxBackward(dev(g), dev(ly), dim),
                    ops::logSoftmaxBackward(f64(g), f64(ly), dim).to(t), tolerance(t));
    }
    Tensor inf = Tensor::full({2, 3}, t, -std::numeric_limits<double>::infinity());
    Tensor hostInf = ops::softmax(inf, 1), devInf = host(ops::softmax(dev(inf), 1));
    for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(std::isnan(devInf.item(i)), std::isnan(hostInf.item(i))) << i;
  }
}

// var and std (the host's row loop for trailing dims, its composition otherwise; the device's composition
// always), var's gradient, and layer norm forward (its statistics too) and backward, with and without
// weight and bias, over one and two dims.
TEST(CudaOps, VarianceAndLayerNormMatchTheCpuForwardAndBackward) {
  SKIP_WITHOUT_DEVICE();
  for (DType t : {DType::Float32, DType::Float64}) {
    Tensor x = ops::mul(Tensor::rand({3, 4, 5}, t, 91, -2, 2), Tensor::scalar(3.0, t));
    for (const std::vector<int64_t>& dims : std::vector<std::vector<int64_t>>{{2}, {-1}, {1, 2}, {0}, {0, 2}, {}})
      for (bool unbiased : {false, true})
        for (bool keepdim : {false, true}) {
          SCOPED_TRACE(fmt::format("{} dims {} unbiased {} keepdim {}", dtypeName(t), fmt::join(dims, ","), unbiased,
                                   keepdim));
          expectMatches(ops::var(dev(x), dims, unbiased, keepdim), ops::var(x, dims, unbiased, keepdim), tolerance(t));
          expectMatches(ops::stdDev(dev(x), dims, unbiased, keepdim), ops::stdDev(x, dims, unbiased, keepdim),
                        tolerance(t));
          Tensor g = Tensor::rand(ops::var(x, dims, unbiased, keepdim).sizes(), t, 92);
          expectMatches(ops::varBackward(dev(g), dev(x), dims, unbiased, keepdim),
                        ops::varBackward(g, x, dims, unbiased, keepdim), tolerance(t) * 10);
        }
    for (const std::vector<int64_t>& shape : std::vector<std::vector<int64_t>>{{5}, {4, 5}})
      for (bool affine : {false, true}) {
        SCOPED_TRACE(fmt::format("{} layer norm over {} affine {}", dtypeName(t), fmt::join(shape, ","), affine));
        Tensor w = affine ? Tensor::rand(shape, t, 93, 0.5, 1.5) : Tensor(), b = affine ? Tensor::rand(shape, t, 94) : Tensor();
        auto onHost = ops::layerNorm(x, shape, w, b, 1e-5);
        auto onDevice = ops::layerNorm(dev(x), shape, affine ? dev(w) : w, affine ? dev(b) : b, 1e-5);
        expectMatches(onDevice.out, onHost.out, tolerance(t) * 10);
        expectMatches(onDevice.mean, onHost.mean, tolerance(t));
        expectMatches(onDevice.rstd, onHost.rstd, tolerance(t) * 10);
        Tensor g = Tensor::rand(x.sizes(), t, 95);
        auto gh = ops::layerNormBackward(g, x, shape, onHost.mean, onHost.rstd, w, b);
        auto gd = ops::layerNormBackward(dev(g), dev(x), shape, dev(onHost.mean), dev(onHost.rstd), affine ? dev(w) : w,
                                         affine ? dev(b) : b);
        expectMatches(gd.input, gh.input, tolerance(t) * 10);
        if (!affine) continue;
        expectMatches(gd.weight, gh.weight, tolerance(t) * 10);
        expectMatches(gd.bias, gh.bias, tolerance(t) * 10);
      }
  }
}

// The device's batch norm (per-channel sums in double and maps) against the host's loops (two passes in
// double), in training and eval, with and without the affine parameters; the input sits far from zero
// (mean 20, spread 1), where (x - mean) loses digits if either side cancels carelessly.
TEST(CudaOps, BatchNormMatchesTheCpuForwardAndBackward) {
  SKIP_WITHOUT_DEVICE();
  for (DType t : {DType::Float32, DType::Float64}) {
    Tensor x = ops::add(Tensor::rand({4, 3, 5, 6}, t, 101, -1, 1), Tensor::scalar(20.0, t));
    Tensor g = Tensor::rand(x.sizes(), t, 102, -1, 1);
    Tensor rm = Tensor::rand({3}, t, 103, 19, 21), rv = Tensor::rand({3}, t, 104, 0.5, 1.5);
    for (bool training : {true, false})
      for (bool affine : {true, false}) {
        SCOPED_TRACE(fmt::format("{} training {} affine {}", dtypeName(t), training, affine));
        Tensor w = affine ? Tensor::rand({3}, t, 105, 0.5, 1.5) : Tensor();
        Tensor b = affine ? Tensor::rand({3}, t, 106, -1, 1) : Tensor();
        auto onDev = [](const Tensor& v) { return v.defined() ? dev(v) : v; };
        auto h = ops::batchNorm(x, w, b, rm, rv, training, 0.1, 1e-5);
        auto d = ops::batchNorm(dev(x), onDev(w), onDev(b), dev(rm), dev(rv), training, 0.1, 1e-5);
        ASSERT_GT(ops::amax(ops::pointwise(PointwiseOp::Abs, h.out), {}, false).item(0), 0.5);  // not zeros
        expectMatches(d.out, h.out, tolerance(t) * 5);
        expectMatches(d.mean, h.mean, tolerance(t));
        expectMatches(d.invstd, h.invstd, tolerance(t) * 5);
        expectMatches(d.runningMean, h.runningMean, tolerance(t));
        expectMatches(d.runningVar, h.runningVar, tolerance(t) * 5);
        auto gh = ops::batchNormBackward(g, x, w, h.mean, h.invstd, training, 1e-5);
        auto gd = ops::batchNormBackward(dev(g), dev(x), onDev(w), dev(h.mean), dev(h.invstd), training, 1e-5);
        expectMatches(gd.input, gh.input, tolerance(t) * 50);
        if (!affine) continue;
        expectMatches(gd.weight, gh.weight, tolerance(t) * 50);
        expectMatches(gd.bias, gh.bias, tolerance(t) * 5);
      }
  }
}

TEST(CudaOps, NllLossCrossEntropyAndEmbeddingMatchTheCpuForwardAndBackward) {
  SKIP_WITHOUT_DEVICE();
  Tensor target = Tensor::empty({7}, DType::Int64);
  Tensor tokens = Tensor::empty({3, 4}, DType::Int64);
  for (int64_t i = 0; i < 7; ++i) target.data<int64_t>()[i] = (i * 5 + 2) % 9;
  for (int64_t i = 0; i < 12; ++i) tokens.data<int64_t>()[i] = (i * 7) % 5;  // repeats: the scatter adds
  for (DType t : {DType::Float32, DType::Float64}) {
    SCOPED_TRACE(dtypeName(t));
    Tensor logits = Tensor::rand({7, 9}, t, 91), logp = ops::logSoftmax(logits, 1);
    Tensor g = Tensor::scalar(1.5, t);
    expectMatches(ops::nllLoss(dev(logp), dev(target)), ops::nllLoss(logp, target), tolerance(t));
    expectMatches(ops::crossEntropy(dev(logits), dev(target)), ops::crossEntropy(logits, target), tolerance(t));
    expectMatches(ops::nllLossBackward(dev(g), dev(logp), dev(target)), ops::nllLossBackward(g, logp, target),
                  tolerance(t));
    Tensor w = Tensor::rand({5, 6}, t, 92), gy = Tensor::rand({3, 4, 6}, t, 93);
    expectMatches(ops::embedding(dev(w), dev(tokens)), ops::embedding(w, tokens), 0);
    expectMatches(ops::embeddingBackward(dev(gy), dev(tokens), 5), ops::embeddingBackward(gy, tokens, 5),
                  tolerance(t));
  }
}

TEST(CudaOps, AnIndexOutOfRangeIsAnErrorNotANan) {
  SKIP_WITHOUT_DEVICE();
  Tensor w = dev(Tensor::rand({5, 6}, DType::Float32, 94));
  Tensor tokens = Tensor::empty({3}, DType::Int64);
  tokens.data<int64_t>()[0] = 1;
  tokens.data<int64_t>()[1] = 5;
  tokens.data<int64_t>()[2] = -1;
  auto expectError = [](const std::function<void()>& f, const char* what) {
    try {
      f();
      ADD_FAILURE() << what << ": no error";
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), HasSubstr(std::string(what) + ": an index is out of range [0, "));
    }
  };
  expectError([&] { ops::embedding(w, dev(tokens)); }, "embedding");
  expectError([&] { ops::embeddingBackward(dev(Tensor::rand({3, 6}, DType::Float32, 95)), dev(tokens), 5); },
              "embedding backward");
  Tensor logp = dev(Tensor::rand({3, 5}, DType::Float32, 96));
  expectError([&] { ops::nllLoss(logp, dev(tokens)); }, "nll_loss");
}

// conv2d and its gradients on the device, by both paths where cuDNN runs (im2col and GEMMs elsewhere),
// against the CPU's: strides, padding, dilation and groups, a non-contiguous input, float32 and float64.
TEST(CudaOps, Conv2dMatchesTheCpuForwardAndBackward) {
  SKIP_WITHOUT_DEVICE();
  struct Shape4 {
    int64_t n, cin, h, w, cout, kh, kw;
    ops::Conv2dParams p;
  };
  const Shape4 shapes[] = {
      {2, 3, 7, 6, 4, 3, 3, {.padH = 1, .padW = 1}},
      {3, 4, 9, 8, 6, 3, 2, {.strideH = 2, .padH = 1, .dilationW = 2, .groups = 2}},
      {1, 6, 5, 5, 6, 1, 1, {.strideH = 2, .strideW = 2, .groups = 3}},
      {2, 2, 6, 5, 3, 5, 4, {.strideW = 3, .padH = 2, .padW = 1, .dilationH = 2}},
  };
  std::vector<cuda::ConvPath> paths = {cuda::ConvPath::Gemm};
  if (cuda::cudnnUnavailable().empty()) paths.push_back(cuda::ConvPath::Cudnn);
  for (DType t : {DType::Float32, DType::Float64})
    for (const Shape4& s : shapes)
      for (cuda::ConvPath path : paths) {
        const bool cudnn = path == cuda::ConvPath::Cudnn;
        SCOPED_TRACE(fmt::format("{} {}x{}x{}x{} * {}x{}x{}, {}", dtypeName(t), s.n, s.cin, s.h, s.w, s.cout, s.kh,
                                 s.kw, cudnn ? "cuDNN" : "im2col + GEMM"));
        // cuDNN may pick FFT or Winograd algorithms, whose float32 rounding differs more from the CPU's.
        const double tol = cudnn ? (t == DType::Float32 ? 1e-5 : 1e-12) : tolerance(t);
        uint64_t seed = 100 * s.n + 10 * s.cin + s.kh;
        Tensor xT = Tensor::rand({s.n, s.cin, s.w, s.h}, t, seed);  // transposed: x is a view with strides
        Tensor x = xT.transpose(2, 3);
        Tensor w = ops::sub(Tensor::rand({s.cout, s.cin / s.p.groups, s.kh, s.kw}, t, seed + 1), Tensor::scalar(0.5, t));
        Tensor y = ops::conv2d(x, w, Tensor(), s.p);
        expectMatches(cuda::conv2d(dev(xT).transpose(2, 3), dev(w), s.p, path), y, tol);
        Tensor g = Tensor::rand(y.sizes(), t, seed + 2);
        auto [gx, gw] = cuda::conv2dBackward(dev(g), dev(xT).transpose(2, 3), dev(w), s.p, path);
        ops::Conv2dGrads want = ops::conv2dBackward(g, x, w, s.p);
        expectMatches(gx, want.input, tol);
        expectMatches(gw, want.weight, tol);
      }
  // Through runtime/ops's entry points, with a bias, as the interpreter calls them.
  Tensor x = Tensor::rand({2, 3, 6, 6}, DType::Float32, 7), w = Tensor::rand({4, 3, 3, 3}, DType::Float32, 8);
  Tensor b = Tensor::rand({4}, DType::Float32, 9), g = Tensor::rand({2, 4, 4, 4}, DType::Float32, 10);
  expectMatches(ops::conv2d(dev(x), dev(w), dev(b), {}), ops::conv2d(x, w, b, {}), 1e-5);
  ops::Conv2dGrads got = ops::conv2dBackward(dev(g), dev(x), dev(w), {}), want = ops::conv2dBackward(g, x, w, {});
  expectMatches(got.input, want.input, 1e-5);
  expectMatches(got.weight, want.weight, 1e-5);
  expectMatches(got.bias, want.bias, 1e-5);
}

// In a context with deterministicConvolutions set, conv2d run again on the same operands gives the same output and
// gradients bit for bit, by both paths, at ResNet's shapes on a 64 x 64 image (the stem, a 3 x 3 and a
// 1 x 1 of a bottleneck, a strided downsample): cuDNN's fastest weight-gradient algorithms sum with atomics
// in a different order each run.
TEST(CudaOps, Conv2dIsReproducible) {
  SKIP_WITHOUT_DEVICE();
  Context deterministic;
  deterministic.deterministicConvolutions = true;
  const ContextScope scope(deterministic);
  struct Case {
    int64_t n, cin, hw, cout, k;
    ops::Conv2dParams p;
  };
  const Case cases[] = {
      {4, 3, 64, 64, 7, {.strideH = 2, .strideW = 2, .padH = 3, .padW = 3}},
      {4, 64, 16, 64, 3, {.padH = 1, .padW = 1}},
      {4, 256, 16, 64, 1, {}},
      {4, 256, 16, 512, 1, {.strideH = 2, .strideW = 2}},
  };
  std::vector<cuda::ConvPath> paths = {cuda::ConvPath::Gemm};
  if (cuda::cudnnUnavailable().empty()) paths.push_back(cuda::ConvPath::Cudnn);
  auto bits = [](const Tensor& t) {
    Tensor h = t.to(DeviceKind::Cpu).contiguous();
    const float* p = h.data<float>();
    return std::vector<float>(p, p + h.numel());
  };
  for (const Case& c : cases)
    for (cuda::ConvPath path : paths) {
      SCOPED_TRACE(fmt::format("{}x{}x{}x{} * {}x{}x{}, {}", c.n, c.cin, c.hw, c.hw, c.cout, c.k, c.k,
                               path == cuda::ConvPath::Cudnn ? "cuDNN" : "im2col + GEMM"));
      const uint64_t seed = c.cin + c.k;
      Tensor x = dev(Tensor::rand({c.n, c.cin, c.hw, c.hw}, DType::Float32, seed, -0.5, 0.5));
      Tensor w = dev(Tensor::rand({c.cout, c.cin, c.k, c.k}, DType::Float32, seed + 1, -0.5, 0.5));
      Tensor y = cuda::conv2d(x, w, c.p, path);
      Tensor g = dev(Tensor::rand(y.sizes(), DType::Float32, seed + 2, -0.5, 0.5));
      auto [gx, gw] = cuda::conv2dBackward(g, x, w, c.p, path);
      const std::vector<float> first = bits(gw);
      ASSERT_GT(std::abs(*std::ranges::max_element(first, {}, [](float v) { return std::abs(v); })), 1.f);  // not zeros
      for (int again = 0; again < 3; ++again) {
        EXPECT_EQ(bits(cuda::conv2d(x, w, c.p, path)), bits(y));
        auto [gx2, gw2] = cuda::conv2dBackward(g, x, w, c.p, path);
        EXPECT_EQ(bits(gx2), bits(gx));
        EXPECT_EQ(bits(gw2), first);
      }
    }
}

TEST(CudaOps, Conv2dErrorsNameTheProblem) {
  SKIP_WITHOUT_DEVICE();
  Tensor x = Tensor::rand({1, 2, 5, 5}, DType::Float32, 1), w = Tensor::rand({3, 2, 3, 3}, DType::Float32, 2);
  auto expectError = [](const std::function<void()>& f, const std::string& what) {
    try {
      f();
      ADD_FAILURE() << "no error; expected " << what;
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), HasSubstr(what));
    }
  };
  expectError([&] { ops::conv2d(x, dev(w), Tensor(), {}); }, "input and weight must both be on the device");
  expectError([&] { ops::conv2dBackward(dev(Tensor::rand({1, 3, 2, 2}, DType::Float32, 3)), dev(x), dev(w), {}); },
              "the output gradient must be a float32 device tensor [1, 3, 3, 3], got float32 [1, 3, 2, 2]");
  if (std::string why = cuda::cudnnUnavailable(); !why.empty())
    expectError([&] { cuda::conv2d(dev(x), dev(w), {}, cuda::ConvPath::Cudnn); }, "cuDNN conv2d: " + why);
}

// The emulated driver's device pointers are not host addresses: host code that reads device memory
// directly, which would crash on a GPU, crashes there too.
TEST(CudaOpsDeathTest, TheEmulatedDevicesMemoryIsNotHostMemory) {
  SKIP_WITHOUT_DEVICE();
  if (!cuda::requireDevice().emulated) GTEST_SKIP() << "a real device";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  Tensor t = dev(Tensor::rand({4}, DType::Float32, 1));
  EXPECT_DEATH({ volatile float v = t.data<float>()[0]; (void)v; }, "");
  EXPECT_FLOAT_EQ(static_cast<float>(t.item(2)), static_cast<float>(Tensor::rand({4}, DType::Float32, 1).item(2)));
}

// fastrnns' launch knobs (FunctionOptions::fuserOptions.cudaLaunch): fused kernels launched as one element per thread,
// and as few blocks that loop over the rest, by both fusers, still match PyTorch.
TEST(CudaOps, FusedKernelsMatchPyTorchUnderEveryLaunchShape) {
  SKIP_WITHOUT_DEVICE();
  auto c = test::loadCase("lstm_1layer");
  Model m = buildModel(c.model, c.config);
  auto inputs = test::inputsFor(m, c);
  std::vector<bool> requiresGrad(inputs.size(), true);
  std::vector<Tensor> gradOutputs;
  for (const auto& name : m.outputs) gradOutputs.push_back(c.gradOutputs.at(name));
  const CudaLaunchOptions launches[] = {
      {.blockSize = 32, .loopLevel = 2}, {.blockSize = 16, .blockCount = 3, .loopLevel = 3}, {.blockSize = 7}};
  for (FuserKind fuser : kernelFusers())
    for (const CudaLaunchOptions& launch : launches) {
      SCOPED_TRACE(fmt::format("{}: {}", fuserName(fuser), launch.str()));
      Function f(*m.graph, {.fuser = fuser, .device = DeviceKind::Cuda, .fuserOptions = {.cudaLaunch = launch}});
      for (int call = 0; call < 2; ++call) {
        auto outs = f.forward(std::vector<IValue>(inputs.begin(), inputs.end()), requiresGrad);
        std::vector<Tensor> grads = f.backward(gradOutputs);
        for (size_t i = 0; i < m.outputs.size(); ++i)
          EXPECT_LE(test::relError(host(outs[i].toTensor()), c.outputs.at(m.outputs[i])), 1e-5) << m.outputs[i];
        for (size_t i = 0; i < m.inputs.size(); ++i)
          if (auto it = c.grads.find(m.inputs[i].name); it != c.grads.end()) {
            EXPECT_LE(test::relError(host(grads[i]), it->second), 1e-4) << "gradient of " << m.inputs[i].name;
          }
      }
      FunctionStats s = f.stats();
      EXPECT_GT(s.fusionGroups, 0) << s.str();
      EXPECT_TRUE(s.warnings.empty()) << s.str();
    }
  // Knobs out of range, or for the wrong device, are refused up front.
  auto refused = [&](FunctionOptions o, const char* what) {
    try {
      Function f(*m.graph, o);
      ADD_FAILURE() << "no error; expected " << what;
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), HasSubstr(what));
    }
  };
  refused({.device = DeviceKind::Cuda, .fuserOptions = {.cudaLaunch = {.blockSize = 2048}}},
          "CUDA block size 2048 is out of range");
  refused({.device = DeviceKind::Cuda, .fuserOptions = {.cudaLaunch = {.loopLevel = 1}}},
          "CUDA loop level 1 must be 2 or 3");
  refused({.device = DeviceKind::Cuda, .fuserOptions = {.cudaLaunch = {.blockCount = 4}}},
          "applies to loop level 3 only");
  refused({.fuserOptions = {.cudaLaunch = {.blockSize = 64}}}, "apply to device cuda only");
}

// ---- CUDA graphs: capture once, replay on whatever the inputs hold then ----

TEST(CudaGraph, AReplayRunsTheCapturedKernelsOnTheInputsCurrentValues) {
  SKIP_WITHOUT_DEVICE();
  cuda::Stream stream;
  Tensor a = dev(Tensor::rand({5, 33}, DType::Float32, 31)), b = dev(Tensor::rand({33}, DType::Float32, 32));
  Tensor out;
  auto work = [&] { out = ops::tanh(ops::add(ops::mul(a, b), a, 0.5)); };
  {
    cuda::StreamGuard guard(stream);
    work();  // warm: the kernels load outside the capture
    stream.synchronize();
  }
  auto graph = cuda::Graph::capture(stream, work);
  ASSERT_TRUE(graph.ok()) << graph.error().what();
  EXPECT_EQ(graph.value().nodes(), 3u);  // mul, add, tanh
  for (uint64_t seed : {41, 42}) {
    Tensor ha = Tensor::rand({5, 33}, DType::Float32, seed), hb = Tensor::rand({33}, DType::Float32, seed + 10);
    a.copyFrom(dev(ha));
    b.copyFrom(dev(hb));
    cuda::synchronize();
    graph.value().replay();
    stream.synchronize();
    expectMatches(out, ops::tanh(ops::add(ops::mul(ha, hb), ha, 0.5)), 1e-6);
  }
}

// The training step of graphbench's --cuda-graphs: a Function's forward and its backward, each captured
// into one GraphMemory after warm-up runs, then replayed on new input values, against tests/data.
TEST(CudaGraph, AFunctionsForwardAndBackwardReplayAndMatchPyTorch) {
  SKIP_WITHOUT_DEVICE();
  auto c = test::loadCase("lstm_1layer");
  Model m = buildModel(c.model, c.config);
  for (FuserKind fuser : {FuserKind::None, FuserKind::Legacy}) {
    SCOPED_TRACE(std::string(fuserName(fuser)));
    Function f(*m.graph, {.fuser = fuser, .executor = ExecutorKind::Profiling, .device = DeviceKind::Cuda});
    auto reference = test::inputsFor(m, c);
    std::vector<IValue> inputs;
    std::vector<bool> requiresGrad;
    for (size_t i = 0; i < reference.size(); ++i) {
      const Tensor& t = reference[i];
      inputs.push_back(dev(Tensor::rand(t.sizes(), t.dtype(), 51 + i)));  // not the reference's values yet
      requiresGrad.push_back(true);
    }
    std::vector<Tensor> gradOutputs;
    for (const auto& name : m.outputs) gradOutputs.push_back(dev(c.gradOutputs.at(name)));
    std::vector<IValue> outs;
    std::vector<Tensor> grads;
    auto forward = [&] { outs = f.forward(inputs, requiresGrad); };
    auto backward = [&] { grads = f.backward(gradOutputs); };
    cuda::Stream stream;
    {
      cuda::StreamGuard guard(stream);
      for (int warm = 0; warm < 2; ++warm) {  // profile, then compile the specialization
        forward();
        backward();
      }
      stream.synchronize();
    }
    auto memory = cuda::Graph::newMemory();
    auto fwd = cuda::Graph::capture(stream, forward, memory);
    ASSERT_TRUE(fwd.ok()) << fwd.error().what();
    auto bwd = cuda::Graph::capture(stream, backward, memory);
    ASSERT_TRUE(bwd.ok()) << bwd.error().what();
    for (size_t i = 0; i < reference.size(); ++i) inputs[i].toTensor().copyFrom(dev(reference[i]));
    cuda::synchronize();
    fwd.value().replay();
    bwd.value().replay();
    stream.synchronize();
    for (size_t i = 0; i < m.outputs.size(); ++i)
      EXPECT_LE(test::relError(host(outs[i].toTensor()), c.outputs.at(m.outputs[i])), 1e-5) << m.outputs[i];
    for (size_t i = 0; i < m.inputs.size(); ++i) {
      auto it = c.grads.find(m.inputs[i].name);
      if (it == c.grads.end()) continue;
      ASSERT_TRUE(grads[i].defined()) << m.inputs[i].name;
      EXPECT_LE(test::relError(host(grads[i]), it->second), 1e-4) << "gradient of " << m.inputs[i].name;
    }
  }
}

TEST(CudaGraph, WorkThatWaitsForTheHostIsRefusedAndTheStreamStillWorks) {
  SKIP_WITHOUT_DEVICE();
  cuda::Stream stream;
  Tensor a = dev(Tensor::rand({16}, DType::Float32, 61));
  Tensor back;
  auto graph = cuda::Graph::capture(stream, [&] { back = host(ops::neg(a)); });
  ASSERT_FALSE(graph.ok());
  EXPECT_THAT(graph.error().what(), HasSubstr("CUDA graph capture failed"));
  EXPECT_THAT(graph.error().what(), HasSubstr("cannot be captured"));
  cuda::StreamGuard guard(stream);
  expectMatches(ops::neg(a), ops::neg(host(a)), 0);
}

// Tensor::full on CUDA fills on the stream (graphbench's gradients of ones): it matches the CPU for every
// dtype, and it can be captured, where a copy from the host could not; so can a 0-dim host scalar operand
// (attention's scale), filled in the same way.
TEST(CudaGraph, AFullTensorIsFilledOnTheDeviceAndCaptured) {
  SKIP_WITHOUT_DEVICE();
  for (DType t : {DType::Float32, DType::Float64, DType::Int64})
    expectMatches(Tensor::full({7, 3}, t, -2.75, DeviceKind::Cuda), Tensor::full({7, 3}, t, -2.75), 0);
  cuda::Stream stream;
  cuda::StreamGuard guard(stream);
  Tensor a = dev(Tensor::rand({4, 9}, DType::Float32, 81));
  Tensor warm = ops::mul(a, a);  // the kernels load outside the capture
  stream.synchronize();
  Tensor out;
  auto graph = cuda::Graph::capture(stream, [&] {
    out = ops::mul(ops::mul(a, Tensor::full({4, 9}, DType::Float32, 1.5, DeviceKind::Cuda)),
                   Tensor::scalar(0.125, DType::Float32));
  });
  ASSERT_TRUE(graph.ok()) << graph.error().what();
  Tensor ha = Tensor::rand({4, 9}, DType::Float32, 82);
  a.copyFrom(dev(ha));
  cuda::synchronize();
  graph.value().replay();
  stream.synchronize();
  expectMatches(out, ops::mul(ops::mul(ha, Tensor::full({4, 9}, DType::Float32, 1.5)), Tensor::scalar(0.125, DType::Float32)),
                0);
}

TEST(CudaGraph, WhatACaptureAllocatedIsKeptForItsReplaysUntilTheGraphIsGone) {
  SKIP_WITHOUT_DEVICE();
  cuda::Stream stream;
  cuda::StreamGuard guard(stream);
  Tensor a = dev(Tensor::rand({1000}, DType::Float32, 71));
  Tensor warm = ops::exp(a);
  const void* temporary = nullptr;
  Tensor out;
  auto graph = cuda::Graph::capture(stream, [&] {
    Tensor t = ops::exp(a);  // freed inside the capture; the replays still write it
    temporary = t.rawData();
    out = ops::neg(t);
  });
  ASSERT_TRUE(graph.ok()) << graph.error().what();
  std::vector<Tensor> others;
  for (int i = 0; i < 4; ++i) {
    others.push_back(ops::exp(a));
    EXPECT_NE(others.back().rawData(), temporary) << "a block of the graph handed to uncaptured work";
  }
  graph.value().replay();
  expectMatches(out, ops::neg(ops::exp(host(a))), 1e-6);
  others.clear();
  { auto gone = std::move(graph).value(); }
  bool reused = false;
  for (int i = 0; i < 8; ++i) {
    others.push_back(ops::exp(a));
    reused = reused || others.back().rawData() == temporary;
  }
  EXPECT_TRUE(reused) << "the graph's blocks never went back to the stream's cache";
}

TEST(CudaGraph, AnIndexCheckInCapturedWorkRunsAfterEachReplay) {
  SKIP_WITHOUT_DEVICE();
  cuda::Stream stream;
  Tensor w = dev(Tensor::rand({5, 6}, DType::Float32, 97));
  Tensor tokens = Tensor::empty({3}, DType::Int64);
  for (int64_t i = 0; i < 3; ++i) tokens.data<int64_t>()[i] = i + 1;
  Tensor onDevice = dev(tokens);
  Tensor out;
  auto graph = cuda::Graph::capture(stream, [&] { out = ops::embedding(w, onDevice); });
  ASSERT_TRUE(graph.ok()) << graph.error().what();  // the check waits for the replay, not the capture
  graph.value().replay();
  stream.synchronize();
  graph.value().verify();
  expectMatches(out, ops::embedding(host(w), tokens), 0);
  tokens.data<int64_t>()[1] = 7;  // out of range [0, 5)
  onDevice.copyFrom(dev(tokens));
  cuda::synchronize();
  graph.value().replay();
  stream.synchronize();
  try {
    graph.value().verify();
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("embedding: an index is out of range [0, 5)"));
  }
}

TEST(CudaGraph, OneGraphMemoryServesTheGraphsOfOneStream) {
  SKIP_WITHOUT_DEVICE();
  cuda::Stream stream;
  auto memory = cuda::Graph::newMemory();
  ASSERT_TRUE(cuda::Graph::capture(stream, [] {}, memory).ok());
  cuda::Stream other;
  auto wrong = cuda::Graph::capture(other, [] {}, memory);
  ASSERT_FALSE(wrong.ok());
  EXPECT_THAT(wrong.error().what(), HasSubstr("one stream"));
}

// ---- cuDNN's LSTM: the cudnn row on CUDA ----

#define SKIP_WITHOUT_CUDNN()                                                 \
  if (std::string why = cuda::cudnnUnavailable(); !why.empty()) GTEST_SKIP() << why

TEST(CudnnLstm, OneLayerMatchesPyTorch) {
  SKIP_WITHOUT_CUDNN();
  test::checkLibraryLstm<cuda::CudnnLstm>("lstm_1layer", DeviceKind::Cuda);
}

TEST(CudnnLstm, ThreeLayersMatchPyTorch) {
  SKIP_WITHOUT_CUDNN();
  test::checkLibraryLstm<cuda::CudnnLstm>("lstm_3layer", DeviceKind::Cuda);
}

TEST(CudnnLstm, WrongShapesAreClearErrors) {
  SKIP_WITHOUT_CUDNN();
  cuda::CudnnLstm lstm(3, 2, 4, 5, 1);
  Tensor x = dev(Tensor::rand({3, 2, 5}, DType::Float32, 1));
  Tensor h = dev(Tensor::rand({1, 2, 5}, DType::Float32, 2));
  EXPECT_THROW(lstm.forward(x, h, h, {}), Error);
  EXPECT_THROW(lstm.backward(x, h, h), Error);
}

TEST(CudnnLstm, WhereItCannotRunItSaysWhy) {
  std::string why = cuda::cudnnUnavailable();
  if (why.empty()) GTEST_SKIP() << "cuDNN runs here";
  try {
    cuda::CudnnLstm lstm(3, 2, 4, 5, 1);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("cuDNN LSTM: " + why));
  }
}

// ---- Function on the device: the reference cases, forward and backward ----

struct Param {
  std::string caseName, variant;
  ExecutorKind executor;
  FuserKind fuser;
};

std::string paramName(const testing::TestParamInfo<Param>& info) {
  const Param& p = info.param;
  return p.caseName + (p.variant.empty() ? "" : "_" + p.variant) + "_" + std::string(executorName(p.executor)) +
         "_fuser_" + std::string(fuserName(p.fuser));
}

class EveryCudaCase : public testing::TestWithParam<Param> {};

TEST_P(EveryCudaCase, ForwardAndBackwardMatchPyTorch) {
  SKIP_WITHOUT_DEVICE();
  const Param& p = GetParam();
  auto c = test::loadCase(p.caseName);
  ModelConfig cfg = c.config;
  if (!p.variant.empty()) cfg.variant = p.variant;
  Model m = buildModel(c.model, cfg);
  Function f(*m.graph, {.fuser = p.fuser, .executor = p.executor, .device = DeviceKind::Cuda, .verifyEach = true});
  auto inputs = test::inputsFor(m, c);  // on the host: forward copies them over
  std::vector<bool> requiresGrad;
  for (const Tensor& t : inputs) requiresGrad.push_back(isFloating(t.dtype()));
  for (int call = 0; call < 2; ++call) {  // profiling (or the first specialization), then the optimized plan
    SCOPED_TRACE("call " + std::to_string(call));
    auto outs = f.forward(std::vector<IValue>(inputs.begin(), inputs.end()), requiresGrad);
    std::vector<Tensor> gradOutputs;
    for (const auto& name : m.outputs) gradOutputs.push_back(c.gradOutputs.at(name));
    std::vector<Tensor> grads = f.backward(gradOutputs);
    for (size_t i = 0; i < m.outputs.size(); ++i) {
      const Tensor& o = outs[i].toTensor();
      EXPECT_EQ(o.device(), DeviceKind::Cuda) << m.outputs[i];
      EXPECT_LE(test::relError(host(o), c.outputs.at(m.outputs[i])), 1e-5) << "output " << m.outputs[i];
    }
    for (size_t i = 0; i < m.inputs.size(); ++i) {
      auto it = c.grads.find(m.inputs[i].name);
      if (it == c.grads.end()) continue;
      ASSERT_TRUE(grads[i].defined()) << m.inputs[i].name;
      EXPECT_EQ(grads[i].device(), DeviceKind::Cuda) << m.inputs[i].name;
      EXPECT_LE(test::relError(host(grads[i]), it->second), 1e-4) << "gradient of " << m.inputs[i].name;
    }
  }
  FunctionStats s = f.stats();
  EXPECT_EQ(s.specializations, 1) << s.str();
  // Every fused kernel compiled and ran (on the emulated driver, built for the host): a group that fell
  // back to the unfused path would have left a warning.
  EXPECT_TRUE(s.warnings.empty()) << s.str();
  if (test::compilesKernels(p.fuser) && p.caseName.starts_with("lstm")) {
    EXPECT_GT(s.fusionGroups, 0) << s.str();
  }
}

std::vector<Param> everyCudaCase() {
  std::vector<Param> ps;
  for (FuserKind f : allFusers())
    for (ExecutorKind e : allExecutors()) {
      for (const char* c : {"lstm_1layer", "lstm_3layer"})
        for (const char* v : {"jit", "jit_premul", "jit_multilayer"}) ps.push_back({c, v, e, f});
      for (const char* c :
           {"lstm_cell", "linear", "conv2d", "softmax", "multihead_attention", "lstm_lm", "lstm_classifier"})
        ps.push_back({c, "", e, f});
    }
  return ps;
}

INSTANTIATE_TEST_SUITE_P(Cuda, EveryCudaCase, testing::ValuesIn(everyCudaCase()), paramName);

}  // namespace
}  // namespace gj
