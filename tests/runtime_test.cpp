// Tensor views and CPU kernels, checked against naive float64 loops written here.
#include "runtime/allocator.h"
#include "runtime/ops/ops.h"
#include "runtime/gemm.h"
#include "runtime/threading.h"
#include "support/philox.h"
#include "support/environment.h"
#include "support/error.h"
#include "tests/support/reference.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>
#include <thread>

namespace gj {
namespace {

using test::relError;

// C = A B computed with three loops in double.
Tensor naiveMm(const Tensor& a, const Tensor& b) {
  Tensor c = Tensor::zeros({a.size(0), b.size(1)}, DType::Float64);
  for (int64_t i = 0; i < a.size(0); ++i)
    for (int64_t j = 0; j < b.size(1); ++j) {
      double s = 0;
      for (int64_t k = 0; k < a.size(1); ++k) s += a.item(i * a.size(1) + k) * b.item(k * b.size(1) + j);
      c.data<double>()[i * b.size(1) + j] = s;
    }
  return c;
}

// Shape against std::vector doing the same edits, inline (up to five dims) and past it on the heap.
TEST(Shape, EditsMatchStdVectorInlineAndOnTheHeap) {
  Shape s;
  std::vector<int64_t> v;
  auto same = [&](const char* step) {
    SCOPED_TRACE(step);
    ASSERT_EQ(s.size(), v.size());
    EXPECT_TRUE(std::equal(s.begin(), s.end(), v.begin()));
    EXPECT_EQ(s, v);
    EXPECT_EQ(std::vector<int64_t>(s), v);
  };
  for (int64_t i = 1; i <= 4; ++i) s.push_back(7 * i), v.push_back(7 * i);
  same("push_back inline");
  s.insert(s.begin() + 1, 99), v.insert(v.begin() + 1, 99);
  same("insert to five");
  s.insert(s.begin(), {-1, -2}), v.insert(v.begin(), {-1, -2});
  same("insert past five: to the heap");
  EXPECT_GT(s.capacity(), Shape::kInlineDims);
  const std::vector<int64_t> head(v.begin(), v.begin() + 3);
  s.insert(s.begin() + 3, s.begin(), s.begin() + 3), v.insert(v.begin() + 3, head.begin(), head.end());
  same("insert a range of itself");
  s.erase(s.begin() + 2, s.begin() + 6), v.erase(v.begin() + 2, v.begin() + 6);
  same("erase a range");
  s.erase(s.end() - 1), v.erase(v.end() - 1);
  same("erase one");
  s.resize(9, 3), v.resize(9, 3);
  same("resize up");
  s.resize(2), v.resize(2);
  same("resize down");

  Shape heap(8, 5), copy = heap, moved = std::move(heap);
  EXPECT_EQ(copy, std::vector<int64_t>(8, 5));
  EXPECT_EQ(moved, copy);
  EXPECT_TRUE(heap.empty());  // NOLINT: a moved-from Shape is empty, and usable
  heap.push_back(4);
  EXPECT_EQ(heap, std::vector<int64_t>{4});
  Shape small{2, 3}, smallMoved = std::move(small);
  EXPECT_EQ(smallMoved, (std::vector<int64_t>{2, 3}));
  smallMoved = copy;  // inline <- heap
  EXPECT_EQ(smallMoved, copy);
  copy = Shape{1};  // heap <- inline
  EXPECT_EQ(copy, std::vector<int64_t>{1});
  EXPECT_LT((Shape{1, 2}), (Shape{1, 3}));
  EXPECT_NE((Shape{1, 2}), (Shape{1, 2, 0}));
}

// A tensor of more dims than Shape holds inline: sizes and strides on the heap, indexing unchanged.
TEST(Tensor, SixDimsIndexLikeTheirFlatCopy) {
  Tensor t = Tensor::rand({2, 1, 3, 1, 2, 2}, DType::Float32, 4);
  Tensor p = t.permute(std::vector<int64_t>{5, 4, 3, 2, 1, 0}).contiguous();
  ASSERT_EQ(p.sizes(), (std::vector<int64_t>{2, 2, 1, 3, 1, 2}));
  for (int64_t a = 0; a < 2; ++a)
    for (int64_t c = 0; c < 3; ++c)
      for (int64_t e = 0; e < 2; ++e)
        for (int64_t f = 0; f < 2; ++f)
          EXPECT_EQ(p.item(((f * 2 + e) * 3 + c) * 2 + a), t.item(((a * 3 + c) * 2 + e) * 2 + f));
}

TEST(Tensor, ViewsShareStorageAndIndexCorrectly) {
  Tensor x = Tensor::rand({4, 6}, DType::Float32, 1);
  Tensor t = x.t();
  EXPECT_EQ(t.sizes(), (Shape{6, 4}));
  EXPECT_EQ(t.storage(), x.storage());
  EXPECT_FALSE(t.isContiguous());
  EXPECT_EQ(t.item(1 * 4 + 2), x.item(2 * 6 + 1));
  auto chunks = x.chunk(3, 1);
  ASSERT_EQ(chunks.size(), 3u);
  EXPECT_EQ(chunks[2].sizes(), (Shape{4, 2}));
  EXPECT_EQ(chunks[2].item(3 * 2 + 1), x.item(3 * 6 + 5));
  Tensor s = x.select(0, 2);
  EXPECT_EQ(s.item(4), x.item(2 * 6 + 4));
  Tensor sl = x.slice(1, 1, 6, 2);
  EXPECT_EQ(sl.sizes(), (Shape{4, 3}));
  EXPECT_EQ(sl.item(2), x.item(5));
  Tensor e = x.select(1, 0).unsqueeze(1).expand(Shape{4, 3});
  EXPECT_EQ(e.strides()[1], 0);
  EXPECT_EQ(e.item(2 * 3 + 2), x.item(2 * 6));
  Tensor p = Tensor::rand({2, 3, 4}, DType::Float32, 2).permute(std::vector<int64_t>{2, 0, 1});
  EXPECT_EQ(p.sizes(), (Shape{4, 2, 3}));
}

TEST(Tensor, ViewAndReshape) {
  Tensor x = Tensor::rand({2, 3, 4}, DType::Float32, 3);
  Tensor v = x.view({6, -1});
  EXPECT_EQ(v.sizes(), (Shape{6, 4}));
  EXPECT_EQ(v.storage(), x.storage());
  EXPECT_THROW(x.transpose(0, 1).view({6, 4}), Error);  // incompatible strides
  Tensor r = x.transpose(0, 1).reshape({6, 4});          // copies
  EXPECT_NE(r.storage(), x.storage());
  EXPECT_EQ(r.item(1 * 4 + 0), x.item(1 * 12 + 0));       // row 1 of [3,2,4]^T is x[1, 0, :]
  EXPECT_THROW(x.view({5, -1}), Error);
  EXPECT_THROW(x.view({-1, -1}), Error);
}

// A fused kernel's small outputs come from one allocation: each its own shape, dtype and aligned span,
// none overlapping another, and the block lives while any of them does.
TEST(Tensor, TensorsMadeInOneBlockDoNotOverlap) {
  const std::vector<Shape> sizes = {{1, 3}, {5}, {2, 2, 3}, {}, {0, 4}, {7}};
  const std::vector<DType> dtypes = {DType::Float32, DType::Float64, DType::Int64, DType::Float32, DType::Float32,
                                     DType::Bool};
  std::vector<Tensor> ts = Tensor::emptyInOneBlock(sizes, dtypes);
  ASSERT_EQ(ts.size(), sizes.size());
  std::vector<std::pair<const char*, const char*>> spans;
  for (size_t i = 0; i < ts.size(); ++i) {
    EXPECT_EQ(ts[i].sizes(), sizes[i]);
    EXPECT_EQ(ts[i].dtype(), dtypes[i]);
    EXPECT_TRUE(ts[i].isContiguous());
    EXPECT_EQ(ts[i].storage(), ts[0].storage());
    EXPECT_EQ(reinterpret_cast<uintptr_t>(ts[i].rawData()) % 64, 0u) << i;
    const char* begin = static_cast<const char*>(ts[i].rawData());
    spans.emplace_back(begin, begin + ts[i].numel() * dtypeSize(dtypes[i]));
    EXPECT_LE(spans.back().second, static_cast<const char*>(ts[0].storage()->data()) + ts[0].storage()->nbytes());
  }
  for (size_t i = 0; i < spans.size(); ++i)
    for (size_t j = i + 1; j < spans.size(); ++j)
      EXPECT_TRUE(spans[i].second <= spans[j].first || spans[j].second <= spans[i].first) << i << " and " << j;
  // Written one after another, each keeps its own values.
  for (size_t i = 0; i < ts.size(); ++i) ts[i].copyFrom(Tensor::full(sizes[i], dtypes[i], i % 2 ? 1.0 : i + 2.0));
  for (size_t i = 0; i < ts.size(); ++i)
    for (int64_t k = 0; k < ts[i].numel(); ++k) EXPECT_EQ(ts[i].item(k), i % 2 ? 1.0 : i + 2.0) << i;
  Tensor last = ts[2];
  ts.clear();
  EXPECT_EQ(last.item(11), 4.0);  // the block outlives the others
  EXPECT_THROW(Tensor::emptyInOneBlock(std::vector<Shape>{{-1}}, std::vector<DType>{DType::Float32}), Error);
  EXPECT_THROW(Tensor::emptyInOneBlock(sizes, std::span<const DType>(dtypes).first(2)), Error);
}

TEST(Tensor, BadIndicesAreErrors) {
  Tensor x = Tensor::rand({2, 3}, DType::Float32, 4);
  EXPECT_THROW(x.select(0, 2), Error);
  EXPECT_THROW(x.size(2), Error);
  EXPECT_THROW(x.expand(Shape{4, 3}), Error);
  EXPECT_THROW(Tensor::empty({-1}, DType::Float32), Error);
}

TEST(Kernels, MmMatchesNaiveForTransposedAndSlicedOperands) {
  for (DType dt : {DType::Float32, DType::Float64}) {
    Tensor a = Tensor::rand({7, 5}, dt, 10), b = Tensor::rand({9, 5}, dt, 11);
    Tensor ref = naiveMm(a, b.t().contiguous());
    EXPECT_LE(relError(ops::mm(a, b.t()), ref), dt == DType::Float32 ? 1e-6 : 1e-14);
    Tensor wide = Tensor::rand({7, 12}, dt, 12);
    Tensor sliced = wide.narrow(1, 3, 5);  // row stride 12, not contiguous
    EXPECT_LE(relError(ops::mm(sliced, b.t()), naiveMm(sliced.contiguous(), b.t().contiguous())), 1e-6);
  }
}

TEST(Kernels, BothGemmBackendsAgree) {
  Tensor a = Tensor::rand({33, 17}, DType::Float32, 5), b = Tensor::rand({17, 29}, DType::Float32, 6);
  Tensor ref = naiveMm(a, b);
  for (GemmBackendKind k : {GemmBackendKind::OneDnn, GemmBackendKind::OpenBlas}) {
    if (!haveGemmBackend(k)) continue;
    Tensor c = Tensor::zeros({33, 29}, DType::Float32);
    sgemm(k, false, false, 33, 29, 17, 1.f, a.data<float>(), 17, b.data<float>(), 29, 0.f, c.data<float>(), 29);
    EXPECT_LE(relError(c, ref), 1e-6) << gemmBackendName(k);
  }
}

// A small-M GEMM by a transposed B is split over C's columns, one sgemm per thread (runtime/gemm.cpp):
// columns that do not divide evenly, alpha, beta and a C with a wider row stride must come out as unsplit.
TEST(Kernels, GemmSplitOverColumnsMatchesTheWholeGemm) {
  const int previous = numThreads();
  setNumThreads(2);
  const int64_t m = 24, n = 1003, k = 70, ldc = 1010;
  ASSERT_TRUE(gemmSplitsColumns(true, m, n, k, 2));
  ASSERT_FALSE(gemmSplitsColumns(false, m, n, k, 2));
  ASSERT_FALSE(gemmSplitsColumns(true, m, n, k, 1));
  Tensor a = Tensor::rand({m, k}, DType::Float32, 21), b = Tensor::rand({n, k}, DType::Float32, 22);
  Tensor c0 = Tensor::rand({m, ldc}, DType::Float32, 23);
  Tensor c = c0.contiguous().clone();
  sgemm(false, true, m, n, k, 0.5f, a.data<float>(), k, b.data<float>(), k, 2.f, c.data<float>(), ldc);
  Tensor expect = ops::add(ops::mul(naiveMm(a, b.t().contiguous()), Tensor::scalar(0.5, DType::Float32)),
                           ops::mul(c0.narrow(1, 0, n), Tensor::scalar(2.0, DType::Float32)));
  EXPECT_LE(relError(c.narrow(1, 0, n), expect), 1e-6);
  // Columns past n are left alone.
  EXPECT_LE(relError(c.narrow(1, n, ldc - n), c0.narrow(1, n, ldc - n)), 0.0);
  setNumThreads(previous);
}

TEST(Kernels, MatmulBatchesAndAddmmScales) {
  Tensor a = Tensor::rand({3, 4, 5}, DType::Float64, 7), w = Tensor::rand({5, 6}, DType::Float64, 8);
  Tensor out = ops::matmul(a, w);
  ASSERT_EQ(out.sizes(), (Shape{3, 4, 6}));
  for (int64_t i = 0; i < 3; ++i) EXPECT_LE(relError(out.select(0, i), naiveMm(a.select(0, i), w)), 1e-14);
  Tensor bias = Tensor::rand({6}, DType::Float64, 9);
  Tensor am = ops::addmm(bias, a.select(0, 1), w, 0.5, 2.0);
  Tensor expect = ops::add(ops::mul(naiveMm(a.select(0, 1), w), Tensor::scalar(2.0, DType::Float64)),
                           ops::mul(bias, Tensor::scalar(0.5, DType::Float64)));
  EXPECT_LE(relError(am, expect), 1e-14);
  Tensor b3 = Tensor::rand({3, 5, 2}, DType::Float64, 10);
  Tensor bm = ops::bmm(a, b3);
  for (int64_t i = 0; i < 3; ++i) EXPECT_LE(relError(bm.select(0, i), naiveMm(a.select(0, i), b3.select(0, i))), 1e-14);
}

// The allocator counts tensor storage: what graphbench reports as a row's peak memory.
TEST(Allocator, CountsCurrentAndPeakBytes) {
  resetCpuPeak();
  const size_t before = cpuMemoryStats().currentBytes;
  {
    Tensor a = Tensor::zeros({1000, 250}, DType::Float32);  // 1,000,000 bytes, a multiple of 64
    EXPECT_EQ(cpuMemoryStats().currentBytes, before + 1000000);
    Tensor b = Tensor::zeros({10}, DType::Float64);  // 80 bytes, rounded up to 128
    EXPECT_EQ(cpuMemoryStats().currentBytes, before + 1000128);
  }
  EXPECT_EQ(cpuMemoryStats().currentBytes, before);
  EXPECT_GE(cpuMemoryStats().peakBytes, before + 1000128);
  resetCpuPeak();
  EXPECT_EQ(cpuMemoryStats().peakBytes, before);
}

// A large block freed goes to the cache, is not counted as held, and comes back for the next allocation
// of its size; a kernel writing into it gives the right values; releaseCpuCache empties the cache.
TEST(Allocator, CachesLargeBlocksForTheNextAllocationOfTheirSize) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "the cache is off under AddressSanitizer (so that a use after free is caught)";
#endif
  releaseCpuCache();
  const size_t held = cpuMemoryStats().currentBytes;
  const void* first = nullptr;
  {
    Tensor a = Tensor::rand({1024, 1024}, DType::Float32, 3);  // 4 MiB
    ASSERT_GE(a.numel() * 4, kCpuCacheMinBytes);
    first = a.data<float>();
  }
  EXPECT_EQ(cpuMemoryStats().currentBytes, held);
  EXPECT_EQ(cpuMemoryStats().cachedBytes, size_t{4} << 20);
  Tensor x = Tensor::rand({1024, 1024}, DType::Float32, 4), y = Tensor::rand({1024, 1024}, DType::Float32, 5);
  EXPECT_EQ(x.data<float>(), first);  // the cached block, handed out again
  EXPECT_EQ(cpuMemoryStats().cachedBytes, 0u);
  Tensor sum = ops::add(x, y, 1.0);
  double err = 0;
  for (int64_t i = 0; i < x.numel(); i += 997)
    err = std::max(err, std::abs(double(sum.data<float>()[i]) - (double(x.data<float>()[i]) + y.data<float>()[i])));
  EXPECT_LE(err, 1e-6);
  { Tensor small = Tensor::zeros({100}, DType::Float32); }  // below the threshold: never cached
  EXPECT_EQ(cpuMemoryStats().cachedBytes, 0u);
  sum = Tensor();
  EXPECT_EQ(cpuMemoryStats().cachedBytes, size_t{4} << 20);
  releaseCpuCache();
  EXPECT_EQ(cpuMemoryStats().cachedBytes, 0u);
}

// Note [The large-block budget]: the cache keeps freed blocks beyond the old fixed 2 GB (two 2 GB blocks,
// both kept, both handed out again), and a block of a new size that would pass the budget with them makes
// kept ones go first. The blocks are never touched, so they cost address space, not memory.
TEST(Allocator, KeepsFreedBlocksWithinTheBudgetAndMakesRoomForNewSizes) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "the cache is off under AddressSanitizer (so that a use after free is caught)";
#endif
  if (environment().cpuCacheMb) GTEST_SKIP() << "GJ_CPU_CACHE_MB sets a fixed budget";
  releaseCpuCache();
  constexpr size_t kGb = size_t{1} << 30;
  const size_t budget = cpuMemoryStats().cacheBudgetBytes;  // half the machine's memory, less what is held
  if (budget < 5 * kGb) GTEST_SKIP() << "half this machine's memory is under 5 GB";
  constexpr int64_t kTwoGb = int64_t{1} << 29;  // float32 elements
  const void* pa = nullptr;
  const void* pb = nullptr;
  {
    Tensor a = Tensor::empty({kTwoGb}, DType::Float32), b = Tensor::empty({kTwoGb}, DType::Float32);
    pa = a.data<float>(), pb = b.data<float>();
  }
  EXPECT_EQ(cpuMemoryStats().cachedBytes, 4 * kGb) << "both 2 GB blocks kept";
  {
    Tensor a = Tensor::empty({kTwoGb}, DType::Float32), b = Tensor::empty({kTwoGb}, DType::Float32);
    EXPECT_EQ(std::set<const void*>({a.data<float>(), b.data<float>()}), std::set<const void*>({pa, pb}));
    EXPECT_EQ(cpuMemoryStats().cachedBytes, 0u);
  }
  {
    // Held, it leaves 2.5 GB of the budget: one of the kept 2 GB blocks goes.
    const auto elements = static_cast<int64_t>((budget - 5 * kGb / 2) / 4 / 16 * 16);
    Tensor c = Tensor::empty({elements}, DType::Float32);
    EXPECT_EQ(cpuMemoryStats().cachedBytes, 2 * kGb);
  }
  releaseCpuCache();
  EXPECT_EQ(cpuMemoryStats().cachedBytes, 0u);
}

TEST(Kernels, BroadcastingPointwise) {
  Tensor a = Tensor::rand({4, 1, 3}, DType::Float64, 1), b = Tensor::rand({5, 3}, DType::Float64, 2);
  Tensor s = ops::sub(a, b, 2.0);
  ASSERT_EQ(s.sizes(), (Shape{4, 5, 3}));
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 5; ++j)
      for (int64_t k = 0; k < 3; ++k)
        EXPECT_DOUBLE_EQ(s.item((i * 5 + j) * 3 + k), a.item(i * 3 + k) - 2.0 * b.item(j * 3 + k));
  EXPECT_THROW(ops::add(a, Tensor::rand({2, 4}, DType::Float64, 3)), Error);
  // An int64 operand is promoted to the float's dtype, as in PyTorch.
  Tensor n = Tensor::rand({5, 3}, DType::Int64, 3, -50, 50);
  Tensor mixed = ops::add(a, n);
  ASSERT_EQ(mixed.dtype(), DType::Float64);
  Tensor want = ops::add(a, n.to(DType::Float64));
  for (int64_t i = 0; i < want.numel(); ++i) EXPECT_EQ(mixed.item(i), want.item(i));
  EXPECT_NE(n.item(0), 0);
}

// PyTorch's type promotion: float32 with float64 computes in float64, except that a 0-dim float64
// tensor leaves a float32 tensor with dimensions in float32.
TEST(Kernels, PointwiseOpsPromoteFloat32WithFloat64) {
  Tensor a = Tensor::rand({4, 1, 3}, DType::Float64, 1), b = Tensor::rand({5, 3}, DType::Float32, 2, 0.5, 2);
  for (auto [m, ref] : {std::pair{ops::mul(a, b), ops::mul(a, b.to(DType::Float64))},
                        std::pair{ops::div(b, a), ops::div(b.to(DType::Float64), a)},
                        std::pair{ops::sub(b, a, 0.5), ops::sub(b.to(DType::Float64), a, 0.5)}}) {
    EXPECT_EQ(m.dtype(), DType::Float64);
    EXPECT_EQ(m.sizes(), (Shape{4, 5, 3}));
    EXPECT_EQ(relError(m, ref), 0.0);
  }
  Tensor s = Tensor::scalar(0.1, DType::Float64);
  Tensor r = ops::add(b, s);
  EXPECT_EQ(r.dtype(), DType::Float32);
  EXPECT_EQ(relError(r, ops::add(b, Tensor::scalar(0.1, DType::Float32))), 0.0);
  EXPECT_EQ(ops::mul(s, Tensor::scalar(2.0, DType::Float32)).dtype(), DType::Float64);  // both 0-dim
  Tensor y = ops::sigmoid(b);
  EXPECT_EQ(ops::sigmoidBackward(Tensor::rand({5, 3}, DType::Float64, 3), y).dtype(), DType::Float64);
}

TEST(Kernels, UnaryFunctionsMatchLibm) {
  Tensor x = Tensor::rand({5, 7}, DType::Float64, 4, -3, 3).t();  // non-contiguous
  Tensor sg = ops::sigmoid(x), th = ops::tanh(x), rl = ops::relu(x), ex = ops::exp(x), ng = ops::neg(x);
  for (int64_t i = 0; i < x.numel(); ++i) {
    double v = x.item(i);
    EXPECT_NEAR(sg.item(i), 1 / (1 + std::exp(-v)), 1e-15);
    EXPECT_NEAR(th.item(i), std::tanh(v), 1e-15);
    EXPECT_EQ(rl.item(i), v > 0 ? v : 0);
    EXPECT_NEAR(ex.item(i), std::exp(v), 1e-12);
    EXPECT_EQ(ng.item(i), -v);
  }
  Tensor nan = Tensor::full({2}, DType::Float32, std::nan(""));
  EXPECT_TRUE(std::isnan(ops::relu(nan).item(0)));
}

// A transposed view made contiguous goes through square tiles (runtime/ops/loops.h), float32 by 4 x 4
// register transposes: every element lands where an index walk puts it, for ragged tiles and blocks
// (130 x 70: neither a multiple of 4), a matrix past the parallel grain (300 x 200), a transposed slice
// with a row stride of its own, a dtype conversion, and a strided destination.
TEST(Tensor, TransposedCopiesMatchAnIndexWalk) {
  Tensor small = Tensor::rand({70, 130}, DType::Float32, 1, -1, 1);
  Tensor big = Tensor::rand({200, 300}, DType::Float32, 2, -1, 1);
  Tensor wide = Tensor::rand({40, 90}, DType::Float32, 3, -1, 1);
  for (const Tensor& src : {small.t(), big.t(), wide.slice(0, 3, 39, 2).t()}) {
    ASSERT_EQ(src.stride(0), 1);
    const int64_t rows = src.size(0), cols = src.size(1);
    for (DType dt : {DType::Float32, DType::Float64}) {
      Tensor out = dt == DType::Float32 ? src.contiguous() : src.to(dt);
      ASSERT_TRUE(out.isContiguous());
      int64_t wrong = 0;
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j)
          wrong += out.item(i * cols + j) != src.item(i * cols + j);
      EXPECT_EQ(wrong, 0) << shapeStr(src.sizes()) << " to " << dtypeName(dt);
    }
    Tensor wider = Tensor::zeros({rows, cols + 7}, DType::Float32);
    Tensor dst = wider.slice(1, 7, cols + 7);  // rows of stride cols + 7
    dst.copyFrom(src);
    EXPECT_LE(relError(dst.contiguous(), src.contiguous()), 0) << shapeStr(src.sizes());
    EXPECT_EQ(ops::sum(wider.slice(1, 0, 7), std::vector<int64_t>{0, 1}, false).item(0), 0.0);
  }
}

// cat and stack copy contiguous pieces as runs of bytes; element by element, they are what an index walk
// over the pieces gives (pieces of different extents, an empty one, every dim, float64 and int64 too).
TEST(Kernels, CatAndStackOfContiguousPiecesMatchAnIndexWalk) {
  for (DType dt : {DType::Float32, DType::Float64, DType::Int64}) {
    for (int64_t dim = 0; dim < 3; ++dim) {
      std::vector<Tensor> pieces;
      for (int64_t extent : {2, 0, 3}) {
        Shape sizes{4, 5, 6};
        sizes[dim] = extent;
        pieces.push_back(Tensor::rand(sizes, DType::Float64, 10 + extent, -3, 3).to(dt));
      }
      Tensor out = ops::cat(pieces, dim);
      ASSERT_EQ(out.size(dim), 5);
      int64_t wrong = 0, at = 0;
      for (const Tensor& piece : pieces) {
        for (int64_t i = 0; i < piece.numel(); ++i) {
          int64_t idx[3], rest = i;
          for (int64_t d = 2; d >= 0; --d) idx[d] = rest % piece.size(d), rest /= piece.size(d);
          idx[dim] += at;
          wrong += out.item((idx[0] * out.size(1) + idx[1]) * out.size(2) + idx[2]) != piece.item(i);
        }
        at += piece.size(dim);
      }
      EXPECT_EQ(wrong, 0) << "cat at dim " << dim << ", " << dtypeName(dt);

      std::vector<Tensor> same{pieces[0], pieces[2].narrow(dim, 1, 2).contiguous(),
                               Tensor::rand(pieces[0].sizes(), DType::Float64, 20, -3, 3).to(dt)};
      for (int64_t at2 = 0; at2 <= 3; ++at2) {
        Tensor stacked = ops::stack(same, at2);
        for (size_t k = 0; k < same.size(); ++k)
          EXPECT_LE(relError(stacked.select(at2, static_cast<int64_t>(k)).contiguous().to(DType::Float64),
                             same[k].to(DType::Float64)),
                    0)
              << "stack at dim " << at2 << ", piece " << k << ", " << dtypeName(dt);
      }
    }
  }
}

// A packed right operand (oneDNN's matmul primitive, runtime/gemm.h) gives the product a plain GEMM gives:
// ragged sizes, B row-major and transposed, each inside a wider matrix (a row stride of its own); the
// packed copy is a snapshot, so writing B afterwards changes nothing.
TEST(Kernels, PackedGemmMatchesAPlainProduct) {
  const int64_t m = 37, n = 300, k = 130;
  Tensor a = Tensor::rand({m, k}, DType::Float32, 1, -1, 1);
  Tensor wide = Tensor::rand({k, n + 11}, DType::Float32, 2, -1, 1);
  Tensor wideT = Tensor::rand({n, k + 5}, DType::Float32, 3, -1, 1);
  for (bool transB : {false, true}) {
    Tensor b = transB ? wideT.slice(1, 5, k + 5).t() : wide.slice(1, 0, n);  // [k, n] either way
    auto packed = PackedGemmB::pack(m, n, k, b.data<float>(), transB ? k + 5 : n + 11, transB);
    if (!packed) GTEST_SKIP() << "oneDNN's matmul has no packed layout on this CPU";
    EXPECT_EQ(packed->m(), m);
    Tensor want = naiveMm(a, b.contiguous());
    Tensor c = Tensor::empty({m, n}, DType::Float32);
    packed->multiply(a.data<float>(), c.data<float>());
    EXPECT_LE(relError(c, want), 1e-6) << (transB ? "transposed B" : "row-major B");
    Tensor(transB ? wideT : wide).copyFrom(Tensor::zeros((transB ? wideT : wide).sizes(), DType::Float32));
    packed->multiply(a.data<float>(), c.data<float>());
    EXPECT_LE(relError(c, want), 1e-6) << "after B was overwritten";
  }
}

// A GemmRecording counts the float32 products its thread runs, by shape: the innermost of two counts, and
// neither a product before it nor another thread's is its own.
TEST(Kernels, AGemmRecordingCountsItsThreadsProductsByShape) {
  Tensor a = Tensor::rand({5, 7}, DType::Float32, 1), b = Tensor::rand({7, 3}, DType::Float32, 2);
  Tensor c = Tensor::empty({5, 3}, DType::Float32);
  auto mm = [&](bool transA) {  // a^T is [7, 5] read as [5, 7] transposed: same sizes, another shape
    sgemm(transA, false, 5, 3, 7, 1.f, a.data<float>(), transA ? 5 : 7, b.data<float>(), 3, 0.f, c.data<float>(), 3);
  };
  const GemmShape plain{kDefaultGemmBackend, false, false, false, 5, 3, 7};
  GemmShape transposed = plain;
  transposed.transA = true;
  mm(false);
  GemmRecording outer;
  mm(false);
  {
    GemmRecording inner;
    mm(false);
    mm(false);
    mm(true);
    EXPECT_EQ(inner.counts(), (std::map<GemmShape, int64_t>{{plain, 2}, {transposed, 1}}));
  }
  std::thread([&] { mm(true); }).join();
  EXPECT_EQ(outer.counts(), (std::map<GemmShape, int64_t>{{plain, 1}}));
}

// The tape's in-place accumulation agrees with the out-of-place add for every layout it meets:
// contiguous, transposed (tiled, with ragged tiles at 130 x 70), a strided 3-D slice; float32 and 64.
TEST(Kernels, AddInPlaceMatchesAddForEveryLayout) {
  for (DType dt : {DType::Float32, DType::Float64}) {
    Tensor big = Tensor::rand({70, 130}, dt, 1, -1, 1);
    Tensor cube = Tensor::rand({4, 6, 10}, dt, 2, -1, 1);
    for (const Tensor& x : {Tensor::rand({130, 70}, dt, 3, -1, 1), big.t(), cube.slice(2, 1, 9, 2).transpose(0, 1)}) {
      Tensor acc = Tensor::rand(x.sizes(), dt, 4, -1, 1);
      Tensor want = ops::add(acc, x);
      ops::addInPlace(acc, x);
      EXPECT_LE(relError(acc, want), 0) << dtypeName(dt) << " " << shapeStr(x.sizes());
    }
  }
  Tensor acc = Tensor::rand({3, 4}, DType::Float32, 5);
  EXPECT_THROW(ops::addInPlace(acc, Tensor::rand({4, 3}, DType::Float32, 6)), Error);
  Tensor view = acc.t();
  EXPECT_THROW(ops::addInPlace(view, acc.t()), Error);  // not contiguous
}

TEST(Kernels, SumMeanOverDims) {
  Tensor x = Tensor::rand({3, 4, 5}, DType::Float64, 5);
  Tensor s = ops::sum(x, std::vector<int64_t>{0, 2}, false);
  ASSERT_EQ(s.sizes(), (Shape{4}));
  for (int64_t j = 0; j < 4; ++j) {
    double acc = 0;
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t k = 0; k < 5; ++k) acc += x.item((i * 4 + j) * 5 + k);
    EXPECT_NEAR(s.item(j), acc, 1e-12);
  }
  Tensor m = ops::mean(x, std::vector<int64_t>{-1}, true);
  ASSERT_EQ(m.sizes(), (Shape{3, 4, 1}));
  EXPECT_NEAR(m.item(0), ops::sum(x.select(0, 0).select(0, 0)).item() / 5, 1e-14);
  EXPECT_NEAR(ops::sum(x).item(), ops::sum(s).item(), 1e-12);
}

// var and std (the row loop over trailing dims, the composition over others) against a naive loop; a 0-dim
// tensor over its one dim; a dim listed twice is an error.
TEST(Kernels, VarAndStdOverDims) {
  Tensor x = Tensor::rand({3, 4, 5}, DType::Float64, 7, -2, 2);
  auto naive = [&](int64_t i, int64_t j, bool overRows, bool unbiased) {  // over k (trailing) or over i
    const int64_t n = overRows ? 3 : 5;
    double s = 0, ss = 0;
    for (int64_t t = 0; t < n; ++t) s += overRows ? x.item((t * 4 + j) * 5 + i) : x.item((i * 4 + j) * 5 + t);
    for (int64_t t = 0; t < n; ++t) {
      const double d = (overRows ? x.item((t * 4 + j) * 5 + i) : x.item((i * 4 + j) * 5 + t)) - s / n;
      ss += d * d;
    }
    return ss / (n - (unbiased ? 1 : 0));
  };
  for (bool unbiased : {false, true}) {
    Tensor trailing = ops::var(x, std::vector<int64_t>{-1}, unbiased, true);
    Tensor leading = ops::stdDev(x, std::vector<int64_t>{0}, unbiased, false);
    ASSERT_EQ(trailing.sizes(), (Shape{3, 4, 1}));
    ASSERT_EQ(leading.sizes(), (Shape{4, 5}));
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 4; ++j) EXPECT_NEAR(trailing.item(i * 4 + j), naive(i, j, false, unbiased), 1e-12);
    for (int64_t j = 0; j < 4; ++j)
      for (int64_t k = 0; k < 5; ++k)
        EXPECT_NEAR(leading.item(j * 5 + k), std::sqrt(naive(k, j, true, unbiased)), 1e-12);
  }
  Tensor scalar = Tensor::scalar(2.5, DType::Float64);
  EXPECT_EQ(ops::var(scalar, std::vector<int64_t>{0}, false, false).item(), 0.0);
  EXPECT_THROW(ops::var(x, std::vector<int64_t>{2, -1}, false, false), Error);
}

TEST(Kernels, SoftmaxAndLogSoftmaxAlongAnyDim) {
  Tensor x = Tensor::rand({3, 4, 2}, DType::Float64, 6, -5, 5);
  Tensor sm = ops::softmax(x, 1), lsm = ops::logSoftmax(x, 1);
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t k = 0; k < 2; ++k) {
      double denom = 0;
      for (int64_t j = 0; j < 4; ++j) denom += std::exp(x.item((i * 4 + j) * 2 + k));
      for (int64_t j = 0; j < 4; ++j) {
        int64_t at = (i * 4 + j) * 2 + k;
        EXPECT_NEAR(sm.item(at), std::exp(x.item(at)) / denom, 1e-14);
        EXPECT_NEAR(lsm.item(at), x.item(at) - std::log(denom), 1e-13);
      }
    }
}

// float32 softmax runs on oneDNN's primitive (where built in); the float64 loops are its reference, along
// every dim, forward and backward.
TEST(Kernels, Float32SoftmaxAgreesWithTheFloat64Loops) {
  Tensor x = Tensor::rand({7, 33, 5}, DType::Float64, 11, -6, 6);
  Tensor g = Tensor::rand({7, 33, 5}, DType::Float64, 12, -1, 1);
  Tensor x32 = x.to(DType::Float32), g32 = g.to(DType::Float32);
  auto expectClose = [](const Tensor& got, const Tensor& want, double tol, const char* what, int64_t dim) {
    ASSERT_EQ(got.dtype(), DType::Float32);
    for (int64_t i = 0; i < want.numel(); ++i)
      ASSERT_LE(std::abs(got.item(i) - want.item(i)), tol * std::max(1.0, std::abs(want.item(i))))
          << what << " along " << dim << " at " << i;
  };
  for (int64_t dim = 0; dim < 3; ++dim) {
    Tensor sm = ops::softmax(x, dim), lsm = ops::logSoftmax(x, dim);
    expectClose(ops::softmax(x32, dim), sm, 1e-5, "softmax", dim);
    expectClose(ops::logSoftmax(x32, dim), lsm, 1e-5, "log_softmax", dim);
    expectClose(ops::softmaxBackward(g32, sm.to(DType::Float32), dim), ops::softmaxBackward(g, sm, dim), 1e-4,
                "softmax backward", dim);
    expectClose(ops::logSoftmaxBackward(g32, lsm.to(DType::Float32), dim), ops::logSoftmaxBackward(g, lsm, dim),
                1e-4, "log_softmax backward", dim);
  }
}

// As in PyTorch, a row holding NaN or +inf is NaN throughout, in float32 as in float64; -inf is exp's 0.
TEST(Kernels, SoftmaxOfARowWithNanOrInfinityIsNan) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  for (DType dt : {DType::Float32, DType::Float64}) {
    Tensor x = Tensor::fromVector({3, 4}, {0.5, nan, 1, 2, inf, 0, 1, 2, -inf, 1, 2, 3}, dt);
    for (bool log : {false, true}) {
      Tensor y = log ? ops::logSoftmax(x, 1) : ops::softmax(x, 1);
      for (int64_t i = 0; i < 8; ++i) EXPECT_TRUE(std::isnan(y.item(i))) << dtypeName(dt) << " log " << log << " " << i;
      EXPECT_EQ(y.item(8), log ? -inf : 0.0);
      double denom = std::exp(1.0) + std::exp(2.0) + std::exp(3.0);
      EXPECT_NEAR(y.item(11), log ? 3 - std::log(denom) : std::exp(3.0) / denom, 1e-6);
    }
  }
}

TEST(Kernels, NllLossAndCrossEntropy) {
  Tensor logits = Tensor::rand({4, 3}, DType::Float64, 7, -2, 2);
  Tensor target = Tensor::fromVector({4}, {2, 0, 1, 2}, DType::Int64);
  Tensor lsm = ops::logSoftmax(logits, 1);
  double expect = -(lsm.item(0 * 3 + 2) + lsm.item(1 * 3 + 0) + lsm.item(2 * 3 + 1) + lsm.item(3 * 3 + 2)) / 4;
  EXPECT_NEAR(ops::crossEntropy(logits, target).item(), expect, 1e-14);
  EXPECT_THROW(ops::nllLoss(lsm, Tensor::fromVector({4}, {3, 0, 1, 2}, DType::Int64)), Error);
  EXPECT_THROW(ops::nllLoss(lsm, Tensor::fromVector({4}, {2, 0, 1, 2}, DType::Float32)), Error);
}

TEST(Kernels, CatStackEmbedding) {
  Tensor a = Tensor::rand({2, 3}, DType::Float32, 8), b = Tensor::rand({2, 1}, DType::Float32, 9);
  Tensor c = ops::cat(std::vector<Tensor>{a, b}, 1);
  ASSERT_EQ(c.sizes(), (Shape{2, 4}));
  EXPECT_EQ(c.item(1 * 4 + 3), b.item(1));
  EXPECT_EQ(c.item(1 * 4 + 2), a.item(1 * 3 + 2));
  Tensor s = ops::stack(std::vector<Tensor>{a, a}, 1);
  ASSERT_EQ(s.sizes(), (Shape{2, 2, 3}));
  EXPECT_EQ(s.item((1 * 2 + 1) * 3 + 2), a.item(1 * 3 + 2));
  EXPECT_THROW(ops::stack(std::vector<Tensor>{a, b}, 0), Error);
  Tensor w = Tensor::rand({5, 3}, DType::Float32, 10);
  Tensor e = ops::embedding(w, Tensor::fromVector({2, 2}, {4, 0, 4, 1}, DType::Int64));
  ASSERT_EQ(e.sizes(), (Shape{2, 2, 3}));
  EXPECT_EQ(e.item(3 * 3 + 1), w.item(1 * 3 + 1));
  EXPECT_THROW(ops::embedding(w, Tensor::fromVector({1}, {5}, DType::Int64)), Error);
}

TEST(Kernels, Conv2dMatchesDirectConvolutionWithStridePaddingDilationGroups) {
  ops::Conv2dParams p;
  p.strideH = 2, p.strideW = 1, p.padH = 1, p.padW = 2, p.dilationH = 1, p.dilationW = 2, p.groups = 2;
  Tensor x = Tensor::rand({2, 4, 7, 6}, DType::Float64, 11), w = Tensor::rand({6, 2, 3, 2}, DType::Float64, 12);
  Tensor bias = Tensor::rand({6}, DType::Float64, 13);
  Tensor out = ops::conv2d(x, w, bias, p);
  const int64_t oh = (7 + 2 - 2 - 1) / 2 + 1, ow = (6 + 4 - 2 - 1) / 1 + 1;
  ASSERT_EQ(out.sizes(), (Shape{2, 6, oh, ow}));
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t co = 0; co < 6; ++co)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t xx = 0; xx < ow; ++xx) {
          double acc = bias.item(co);
          int64_t g = co / 3;
          for (int64_t ci = 0; ci < 2; ++ci)
            for (int64_t i = 0; i < 3; ++i)
              for (int64_t j = 0; j < 2; ++j) {
                int64_t iy = y * 2 - 1 + i, ix = xx - 2 + 2 * j;
                if (iy < 0 || iy >= 7 || ix < 0 || ix >= 6) continue;
                acc += x.item(((n * 4 + g * 2 + ci) * 7 + iy) * 6 + ix) * w.item(((co * 2 + ci) * 3 + i) * 2 + j);
              }
          EXPECT_NEAR(out.item(((n * 6 + co) * oh + y) * ow + xx), acc, 1e-12);
        }
}

// A float32 convolution adds its bias inside oneDNN's primitive (as it stores each result): against the
// float64 loops on the same numbers, grouped, strided, padded and dilated, and against the convolution
// without a bias plus the bias added apart. A float64 bias of a float32 convolution promotes, as in PyTorch.
TEST(Kernels, Float32Conv2dWithBiasMatchesFloat64AndTheBiasAddedApart) {
  ops::Conv2dParams p;
  p.strideH = 2, p.strideW = 1, p.padH = 1, p.padW = 2, p.dilationH = 1, p.dilationW = 2, p.groups = 2;
  Tensor x = Tensor::rand({3, 4, 9, 8}, DType::Float32, 21), w = Tensor::rand({6, 2, 3, 2}, DType::Float32, 22);
  Tensor bias = Tensor::rand({6}, DType::Float32, 23, 1, 2);
  Tensor out = ops::conv2d(x, w, bias, p);
  Tensor ref = ops::conv2d(x.to(DType::Float64), w.to(DType::Float64), bias.to(DType::Float64), p);
  ASSERT_EQ(out.sizes(), ref.sizes());
  EXPECT_EQ(out.dtype(), DType::Float32);
  EXPECT_LE(relError(out.to(DType::Float64), ref), 1e-5);
  Tensor apart = ops::add(ops::conv2d(x, w, Tensor(), p), bias.view({1, -1, 1, 1}));
  EXPECT_LE(relError(out, apart), 1e-6);
  EXPECT_GT(relError(out, ops::conv2d(x, w, Tensor(), p)), 0.1) << "the bias was not added";
  Tensor promoted = ops::conv2d(x, w, bias.to(DType::Float64), p);
  EXPECT_EQ(promoted.dtype(), DType::Float64);
  EXPECT_LE(relError(promoted, ref), 1e-5);
  EXPECT_THROW(ops::conv2d(x, w, Tensor::rand({5}, DType::Float32, 24), p), Error);
}

// The float32 backward's bias gradient comes from oneDNN's weight-gradient primitive; input, weight and
// bias gradients against the float64 loops on the same numbers, and no bias gradient where none is asked.
TEST(Kernels, Float32Conv2dBackwardWithBiasMatchesFloat64) {
  ops::Conv2dParams p;
  p.strideH = 1, p.strideW = 2, p.padH = 2, p.padW = 1, p.dilationH = 2, p.dilationW = 1, p.groups = 2;
  Tensor x = Tensor::rand({3, 4, 9, 8}, DType::Float32, 31), w = Tensor::rand({6, 2, 3, 2}, DType::Float32, 32);
  const Shape outSizes = ops::conv2d(x, w, Tensor(), p).sizes();
  Tensor g = Tensor::rand(outSizes, DType::Float32, 33, 0.5, 1.5);
  ops::Conv2dGrads got = ops::conv2dBackward(g, x, w, p, /*withBias=*/true);
  ops::Conv2dGrads ref = ops::conv2dBackward(g.to(DType::Float64), x.to(DType::Float64), w.to(DType::Float64), p, true);
  ASSERT_TRUE(got.bias.defined());
  EXPECT_EQ(got.bias.sizes(), (Shape{6}));
  EXPECT_LE(relError(got.input.to(DType::Float64), ref.input), 1e-5);
  EXPECT_LE(relError(got.weight.to(DType::Float64), ref.weight), 1e-5);
  EXPECT_LE(relError(got.bias.to(DType::Float64), ref.bias), 1e-5);
  EXPECT_FALSE(ops::conv2dBackward(g, x, w, p, /*withBias=*/false).bias.defined());
}

// A first convolution's input is the data, and needs no gradient: without withInput the data gradient is
// neither made nor run (oneDNN's recording shows the backward without it), and the weight's is the same.
TEST(Kernels, Float32Conv2dBackwardWithoutTheInputsGradientSkipsIt) {
  ops::Conv2dParams p;
  p.strideH = 2, p.strideW = 2, p.padH = 3, p.padW = 3;
  Tensor x = Tensor::rand({2, 3, 17, 15}, DType::Float32, 51), w = Tensor::rand({8, 3, 7, 7}, DType::Float32, 52);
  Tensor g = Tensor::rand(ops::conv2d(x, w, Tensor(), p).sizes(), DType::Float32, 53, 0.5, 1.5);
  ops::Conv2dGrads both = ops::conv2dBackward(g, x, w, p, /*withBias=*/false);
  GemmRecording recording;
  ops::Conv2dGrads weightOnly = ops::conv2dBackward(g, x, w, p, /*withBias=*/false, /*withInput=*/false);
  EXPECT_FALSE(weightOnly.input.defined());
  ASSERT_TRUE(both.input.defined());
  EXPECT_EQ(relError(weightOnly.weight, both.weight), 0.0);
  ops::Conv2dGrads ref = ops::conv2dBackward(g.to(DType::Float64), x.to(DType::Float64), w.to(DType::Float64), p,
                                             false, false);
  EXPECT_FALSE(ref.input.defined());
  EXPECT_LE(relError(weightOnly.weight.to(DType::Float64), ref.weight), 1e-5);
  if (!recording.convolutions().empty()) {  // oneDNN in this build
    ASSERT_EQ(recording.convolutions().size(), 1u);
    const ConvShape& ran = recording.convolutions().begin()->first;
    EXPECT_TRUE(ran.backward);
    EXPECT_FALSE(ran.input);
  }
}

// Batch norm's moments come from one pass of sums about a shift (Note [One pass for a channel's
// moments]). Channels whose mean is thousands of deviations from zero, with few values (a late layer's
// planes) and many: float32's forward and backward against the textbook's two passes in double on the same
// numbers: the forward's saved statistics (its output is x * scale + shift in float, as PyTorch's, which
// at these means cancels to float's last digits whatever the statistics) and the backward's gradients. The
// backward handed a saved mean far from the batch's (the shift too far to use) gives the same.
TEST(Kernels, BatchNormMomentsInOnePassMatchTwoPassesInDouble) {
  for (const Shape& sizes : {Shape{4, 3, 1, 1}, Shape{5, 2, 7, 9}}) {
    const int64_t n = sizes[0], c = sizes[1], inner = sizes[2] * sizes[3];
    Tensor noise = Tensor::rand(sizes, DType::Float32, 41, -1, 1);
    Tensor offsets = Tensor::rand({1, c, 1, 1}, DType::Float32, 42, 200, 400);
    Tensor x = ops::add(ops::mul(noise, Tensor::scalar(0.01, DType::Float32)), offsets);
    Tensor w = Tensor::rand({c}, DType::Float32, 43, 0.5, 1.5), b = Tensor::rand({c}, DType::Float32, 44, -1, 1);
    Tensor g = Tensor::rand(sizes, DType::Float32, 45, -1, 1);
    const double eps = 1e-5;
    ops::BatchNormResult fwd = ops::batchNorm(x, w, b, Tensor(), Tensor(), /*training=*/true, 0.1, eps);
    ops::BatchNormGrads bwd = ops::batchNormBackward(g, x, w, fwd.mean, fwd.invstd, true, eps);

    // The textbook in double: the mean, then the squares about it.
    Tensor x64 = x.to(DType::Float64), g64 = g.to(DType::Float64);
    const double *xs = x64.data<double>(), *gs = g64.data<double>();
    Tensor w64 = w.to(DType::Float64);
    const double* ws = w64.data<double>();
    std::vector<double> means(c), invstds(c), dx(static_cast<size_t>(x.numel())), dw(c), db(c);
    const double count = static_cast<double>(n * inner);
    auto at = [&](int64_t i, int64_t ch, int64_t j) { return static_cast<size_t>((i * c + ch) * inner + j); };
    for (int64_t ch = 0; ch < c; ++ch) {
      double mean = 0, var = 0, sumG = 0, sumGX = 0;
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < inner; ++j) mean += xs[at(i, ch, j)] / count;
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < inner; ++j) var += (xs[at(i, ch, j)] - mean) * (xs[at(i, ch, j)] - mean) / count;
      const double invstd = 1 / std::sqrt(var + eps);
      means[ch] = mean, invstds[ch] = invstd;
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < inner; ++j) {
          const double xhat = (xs[at(i, ch, j)] - mean) * invstd;
          sumG += gs[at(i, ch, j)], sumGX += gs[at(i, ch, j)] * xhat;
        }
      dw[ch] = sumGX, db[ch] = sumG;
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < inner; ++j) {
          const double xhat = (xs[at(i, ch, j)] - mean) * invstd;
          dx[at(i, ch, j)] = ws[ch] * invstd * (gs[at(i, ch, j)] - sumG / count - xhat * sumGX / count);
        }
    }
    auto doubles = [](const std::vector<double>& v, const Shape& s) {
      return Tensor::fromVector(s, v, DType::Float64);
    };
    EXPECT_LE(relError(fwd.mean.to(DType::Float64), doubles(means, {c})), 1e-7) << shapeStr(sizes);
    EXPECT_LE(relError(fwd.invstd.to(DType::Float64), doubles(invstds, {c})), 1e-6) << shapeStr(sizes);
    EXPECT_LE(relError(bwd.input.to(DType::Float64), doubles(dx, sizes)), 1e-4) << shapeStr(sizes);
    EXPECT_LE(relError(bwd.weight.to(DType::Float64), doubles(dw, {c})), 1e-4) << shapeStr(sizes);
    EXPECT_LE(relError(bwd.bias.to(DType::Float64), doubles(db, {c})), 1e-4) << shapeStr(sizes);

    Tensor farMean = Tensor::rand({c}, DType::Float32, 46, -5, 5);
    ops::BatchNormGrads far = ops::batchNormBackward(g, x, w, farMean, fwd.invstd, true, eps);
    EXPECT_LE(relError(far.input, bwd.input), 1e-6) << shapeStr(sizes);
    EXPECT_LE(relError(far.weight, bwd.weight), 1e-6) << shapeStr(sizes);
  }
}

TEST(Threading, ResultsDoNotDependOnThreadCount) {
  Tensor a = Tensor::rand({300, 200}, DType::Float32, 14), b = Tensor::rand({200, 150}, DType::Float32, 15);
  Tensor big = Tensor::rand({1 << 17}, DType::Float32, 16);
  setNumThreads(1);
  Tensor m1 = ops::mm(a, b), t1 = ops::tanh(big);
  setNumThreads(2);
  EXPECT_EQ(numThreads(), 2);
  EXPECT_LE(relError(ops::mm(a, b), m1), 1e-6);
  EXPECT_EQ(relError(ops::tanh(big), t1), 0.0);
  EXPECT_THROW(setNumThreads(0), Error);
}

}  // namespace
}  // namespace gj

namespace gj {
namespace {

// support/philox.h against Random123's known-answer vectors for Philox4x32-10 (kat_vectors).
TEST(Philox, MatchesRandom123KnownAnswers) {
  struct Kat {
    unsigned ctr[4], key[2], out[4];
  };
  const Kat kats[] = {
      {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
      {{~0u, ~0u, ~0u, ~0u}, {~0u, ~0u}, {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
      {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0},
       {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
  };
  for (const Kat& k : kats) {
    unsigned ctr[4] = {k.ctr[0], k.ctr[1], k.ctr[2], k.ctr[3]}, key[2] = {k.key[0], k.key[1]};
    gjPhilox4x32_10(GjPhiloxWords(), ctr, key);
    for (int w = 0; w < 4; ++w) EXPECT_EQ(ctr[w], k.out[w]) << "word " << w;
  }
  // Element i reads lane i % 4 of the block i / 4 (support/philox.h's layout).
  unsigned ctr[4] = {1, 7, 0x89abcdef, 0x01234567}, key[2] = {0x9e3779b9, 0x0000beef};
  gjPhilox4x32_10(GjPhiloxWords(), ctr, key);
  const long long seed = (0x0000beefLL << 32) | 0x9e3779b9LL, offset = (0x01234567LL << 32) | 0x89abcdefLL;
  for (int lane = 0; lane < 4; ++lane) EXPECT_EQ(gjPhiloxBits(seed, offset, 7, 4 + lane), ctr[lane]) << lane;
}

Tensor rngState(int64_t seed, int64_t offset) {
  return Tensor::fromVector({2}, {static_cast<double>(seed), static_cast<double>(offset)}, DType::Int64);
}

// The host kernel: a rate within 4 sigma of p, kept elements scaled by exactly 1 / (1 - p), the same mask
// for one (seed, offset, stream) in float32 and float64, another for another seed, offset or stream; the
// identity out of training and for p = 0, zeros for p = 1.
TEST(Dropout, RateScaleAndStreams) {
  const int64_t n = 40000;
  const double p = 0.4;
  Tensor x = Tensor::rand({200, 200}, DType::Float32, 3, 0.5, 2.0);
  Tensor y = ops::dropout(x, p, true, rngState(17, 5), 2);
  int64_t dropped = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (y.item(i) == 0) {
      ++dropped;
      continue;
    }
    EXPECT_EQ(static_cast<float>(y.item(i)), static_cast<float>(x.item(i)) * (1.0f / (1.0f - 0.4f))) << i;
  }
  const double sigma = std::sqrt(n * p * (1 - p));
  EXPECT_LE(std::abs(static_cast<double>(dropped) - n * p), 4 * sigma) << dropped << " of " << n;

  auto mask = [](const Tensor& t) {
    std::vector<bool> m;
    for (int64_t i = 0; i < t.numel(); ++i) m.push_back(t.item(i) != 0);
    return m;
  };
  Tensor x64 = x.to(DType::Float64);
  EXPECT_EQ(mask(ops::dropout(x64, p, true, rngState(17, 5), 2)), mask(y));
  EXPECT_EQ(mask(ops::dropout(x, p, true, rngState(17, 5), 2)), mask(y));
  EXPECT_NE(mask(ops::dropout(x, p, true, rngState(18, 5), 2)), mask(y));
  EXPECT_NE(mask(ops::dropout(x, p, true, rngState(17, 6), 2)), mask(y));
  EXPECT_NE(mask(ops::dropout(x, p, true, rngState(17, 5), 3)), mask(y));

  EXPECT_EQ(relError(ops::dropout(x, p, false, rngState(17, 5), 2), x), 0.0);
  EXPECT_EQ(relError(ops::dropout(x, 0.0, true, rngState(17, 5), 2), x), 0.0);
  Tensor all = ops::dropout(x, 1.0, true, rngState(17, 5), 2);
  for (int64_t i = 0; i < n; i += 97) EXPECT_EQ(all.item(i), 0.0);
}

// prim::philox_uniform's host kernel: numbers in [0, 1) with a mean within 4 sigma of 1/2; dropout's
// numbers (element i dropped exactly where its number is below p); the same in float32 and float64; others
// for another seed, offset or stream.
TEST(Uniform, RangeMeanAndDropoutsNumbers) {
  const int64_t n = 40000;
  Tensor like = Tensor::rand({200, 200}, DType::Float32, 3, 0.5, 2.0);
  Tensor u = ops::uniform(like, rngState(17, 5), 2);
  ASSERT_EQ(u.sizes(), like.sizes());
  ASSERT_EQ(u.dtype(), DType::Float32);
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_GE(u.item(i), 0.0) << i;
    ASSERT_LT(u.item(i), 1.0) << i;
    sum += u.item(i);
  }
  EXPECT_LE(std::abs(sum / n - 0.5), 4 * std::sqrt(1.0 / 12 / n)) << sum / n;
  Tensor dropped = ops::dropout(Tensor::full({200, 200}, DType::Float32, 1.0), 0.3, true, rngState(17, 5), 2);
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(dropped.item(i) == 0, static_cast<float>(u.item(i)) < 0.3f) << i;
  EXPECT_EQ(relError(ops::uniform(like.to(DType::Float64), rngState(17, 5), 2), u.to(DType::Float64)), 0.0);
  auto first = [](const Tensor& t) { return std::vector<double>{t.item(0), t.item(1), t.item(2), t.item(3), t.item(4)}; };
  EXPECT_NE(first(ops::uniform(like, rngState(18, 5), 2)), first(u));
  EXPECT_NE(first(ops::uniform(like, rngState(17, 6), 2)), first(u));
  EXPECT_NE(first(ops::uniform(like, rngState(17, 5), 3)), first(u));
  EXPECT_THROW(ops::uniform(Tensor::fromVector({2}, {1, 2}, DType::Int64), rngState(1, 0), 0), Error);
  EXPECT_THROW(ops::uniform(like, Tensor::rand({3}, DType::Float32, 1), 0), Error);
}

TEST(Dropout, BadArgumentsAreErrors) {
  Tensor x = Tensor::rand({4, 4}, DType::Float32, 1);
  EXPECT_THROW(ops::dropout(x, 1.5, true, rngState(1, 0), 0), Error);
  EXPECT_THROW(ops::dropout(x, 0.5, true, Tensor::rand({3}, DType::Float32, 1), 0), Error);
  EXPECT_THROW(ops::dropout(Tensor::fromVector({2}, {1, 2}, DType::Int64), 0.5, true, rngState(1, 0), 0), Error);
}

}  // namespace
}  // namespace gj
