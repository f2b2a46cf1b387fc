// The emulated driver's block semantics (runtime/cuda/emulator_scheduler.h): kernels whose threads
// cooperate, each NVRTC-compiled and run (on the emulated driver in ctest's emulator_test.cuda_emulated, on
// a GPU by bench/gpu_run.sh), each result against a host loop; and the bugs a GPU hides, planted one per
// kernel, each an error that names the kernel, the threads and the lines.
#include "runtime/cuda/device.h"
#include "runtime/nvrtc.h"
#include "runtime/tensor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <string>
#include <vector>

namespace gj {
namespace {

using testing::AllOf;
using testing::HasSubstr;

#define SKIP_WITHOUT_DEVICE()                                       \
  if (auto d = cuda::device(); !d) GTEST_SKIP() << d.error().what(); \
  if (!haveNvrtc()) GTEST_SKIP() << "built without NVRTC"

// One block's sum of its grid-stride share of `in`: in registers, then a tree in shared memory (blocks
// of a power of 2 up to 256 threads). Every thread gets the sum.
constexpr const char* kBlockSum = R"(
__device__ float blockSum(const float* in, int n) {
  __shared__ float part[256];
  const int t = threadIdx.x;
  float acc = 0.0f;
  for (int i = blockIdx.x * blockDim.x + t; i < n; i += gridDim.x * blockDim.x) acc += in[i];
  part[t] = acc;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (t < s) part[t] += part[t + s];
    __syncthreads();
  }
  return part[0];
}
)";

// Cooperative kernels, correct ones.
const std::string kKernels = kBlockSum + std::string(R"(
extern "C" __global__ void block_sum(const float* in, float* out, int n) {
  const float s = blockSum(in, n);
  if (threadIdx.x == 0) out[blockIdx.x] = s;
}

// Each row (a block of n threads) reversed through dynamic shared memory sized at launch.
extern "C" __global__ void reverse_rows(const double* in, double* out, int n) {
  extern __shared__ double row[];
  const int t = threadIdx.x;
  row[t] = in[blockIdx.x * n + t];
  __syncthreads();
  out[blockIdx.x * n + t] = row[n - 1 - t];
}

// Every warp intrinsic, each lane's results in 11 ints.
extern "C" __global__ void warp_ops(const int* in, int* out) {
  const int lane = threadIdx.x % 32, i = blockIdx.x * blockDim.x + threadIdx.x;
  const int v = in[i];
  int* o = out + i * 11;
  o[0] = __shfl_sync(0xffffffffu, v, (lane * 7 + 3) % 32);
  o[1] = __shfl_up_sync(0xffffffffu, v, 3);
  o[2] = __shfl_down_sync(0xffffffffu, v, 5);
  o[3] = __shfl_xor_sync(0xffffffffu, v, 6);
  o[4] = __shfl_down_sync(0xffffffffu, v, 2, 8);
  o[5] = __shfl_xor_sync(0xffffffffu, v, 9, 16);
  o[6] = (int)__ballot_sync(0xffffffffu, v % 3 == 0);
  o[7] = __any_sync(0xffffffffu, v > 90);
  o[8] = __all_sync(0xffffffffu, v >= 0);
  o[9] = (int)__activemask();
  unsigned half = 0;
  if (lane < 16) half = __ballot_sync(0x0000ffffu, v & 1);
  o[10] = (int)half;
}

// A warp's lanes trade values through shared memory, apart by __syncwarp.
extern "C" __global__ void warp_exchange(const float* in, float* out) {
  __shared__ float slot[64];
  const int t = threadIdx.x;
  slot[t] = in[t];
  __syncwarp();
  out[t] = slot[t ^ 1];
}

// atomicAdd on float (global and shared), double, int and unsigned long long.
extern "C" __global__ void atomics(const float* x, float* fsum, double* dsum, int* count,
                                   unsigned long long* twice) {
  __shared__ float local[1];
  if (threadIdx.x == 0) local[0] = 0.0f;
  __syncthreads();
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  atomicAdd(&local[0], x[i]);
  atomicAdd(dsum, (double)x[i]);
  atomicAdd(count, 1);
  atomicAdd(twice, 2ull);
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) atomicAdd(fsum, local[0]);
}
)");

// A grid-wide barrier: every block's sum, then block 0 folds them (a cooperative launch).
const std::string kGridKernels = "#include <cooperative_groups.h>\n" + (kBlockSum + std::string(R"(
extern "C" __global__ void grid_sum(const float* in, float* partial, float* out, int n) {
  const float s = blockSum(in, n);
  if (threadIdx.x == 0) partial[blockIdx.x] = s;
  cooperative_groups::this_grid().sync();
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    float total = 0.0f;
    for (unsigned b = 0; b < gridDim.x; ++b) total += partial[b];
    *out = total;
  }
}
)"));

// The bugs, one a kernel (each launched with one block of 64 threads unless said otherwise).
constexpr const char* kBugs = R"(
extern "C" __global__ void read_before_barrier(float* out) {
  __shared__ float buf[64];
  buf[threadIdx.x] = threadIdx.x;
  out[threadIdx.x] = buf[(threadIdx.x + 1) % 64];
}
extern "C" __global__ void write_after_read(float* out) {
  __shared__ float buf[128];
  buf[threadIdx.x] = 1.0f;
  __syncthreads();
  const float v = buf[(threadIdx.x + 40) % 128];
  buf[threadIdx.x] = v + 1.0f;
  out[threadIdx.x] = v;
}
extern "C" __global__ void skipped_barrier(float* out) {
  __shared__ float buf[64];
  buf[threadIdx.x] = 1.0f;
  if (threadIdx.x < 32) __syncthreads();
  out[threadIdx.x] = buf[threadIdx.x];
}
extern "C" __global__ void divergent_barriers(float* out) {
  if (threadIdx.x % 2) {
    __syncthreads();
  } else {
    __syncthreads();
  }
  out[threadIdx.x] = 1.0f;
}
extern "C" __global__ void own_lane_left_out(float* out) {
  float v = threadIdx.x;
  v += __shfl_down_sync(0x0000ffffu, v, 1);
  out[threadIdx.x] = v;
}
extern "C" __global__ void lane_that_never_comes(float* out) {
  float v = threadIdx.x;
  if (threadIdx.x % 32 < 16) v += __shfl_down_sync(0xffffffffu, v, 1);
  out[threadIdx.x] = v;
}
extern "C" __global__ void shared_out_of_bounds(float* out) {
  __shared__ float buf[64];
  buf[threadIdx.x + 1] = 1.0f;
  __syncthreads();
  out[threadIdx.x] = buf[threadIdx.x];
}
extern "C" __global__ void uninitialized_shared(float* out) {
  __shared__ float buf[64];
  if (threadIdx.x != 5) buf[threadIdx.x] = 1.0f;
  __syncthreads();
  out[threadIdx.x] = buf[threadIdx.x];
}
)";

cuda::Kernel kernel(const std::string& source, const char* entry) {
  auto k = cuda::compileKernel(source, entry);
  if (!k.ok()) throw std::runtime_error(k.error().what());
  return k.value();
}

// The error the launch raised ("" when it ran), and its output.
std::string launchError(const char* entry, unsigned threads = 64) {
  Tensor out = Tensor::zeros({threads}, DType::Float32, DeviceKind::Cuda);
  void* p = out.rawData();
  void* args[] = {&p};
  try {
    kernel(kBugs, entry).launch({.block = {threads, 1, 1}}, args);
    (void)out.to(DeviceKind::Cpu);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(EmulatedBlocks, ASharedMemoryTreeSumsEveryBlock) {
  SKIP_WITHOUT_DEVICE();
  for (int n : {1, 31, 33, 1000, 4097}) {
    SCOPED_TRACE(n);
    const unsigned blocks = 3, threads = 128;
    Tensor x = Tensor::rand({n}, DType::Float32, static_cast<uint64_t>(n), 0.5, 1.5);
    Tensor dx = x.to(DeviceKind::Cuda), dout = Tensor::zeros({blocks}, DType::Float32, DeviceKind::Cuda);
    void* px = dx.rawData();
    void* po = dout.rawData();
    void* args[] = {&px, &po, &n};
    kernel(kKernels, "block_sum").launch({.grid = {blocks, 1, 1}, .block = {threads, 1, 1}}, args);
    Tensor out = dout.to(DeviceKind::Cpu);
    for (unsigned b = 0; b < blocks; ++b) {
      double want = 0;
      for (int i = static_cast<int>(b * threads); i < n; i += static_cast<int>(blocks * threads))
        for (int j = i; j < std::min(n, i + static_cast<int>(threads)); ++j) want += x.item(j);
      EXPECT_NEAR(out.item(b), want, 1e-5 * std::max(1.0, want)) << "block " << b;
    }
  }
}

TEST(EmulatedBlocks, DynamicSharedMemoryIsSizedByTheLaunch) {
  SKIP_WITHOUT_DEVICE();
  int n = 37;
  const unsigned rows = 4;
  Tensor x = Tensor::rand({rows, n}, DType::Float64, 3);
  Tensor dx = x.to(DeviceKind::Cuda), dout = Tensor::zeros({rows, n}, DType::Float64, DeviceKind::Cuda);
  void* px = dx.rawData();
  void* po = dout.rawData();
  void* args[] = {&px, &po, &n};
  kernel(kKernels, "reverse_rows")
      .launch({.grid = {rows, 1, 1}, .block = {static_cast<unsigned>(n), 1, 1}, .sharedBytes = n * 8u}, args);
  Tensor out = dout.to(DeviceKind::Cpu);
  for (unsigned r = 0; r < rows; ++r)
    for (int j = 0; j < n; ++j) EXPECT_EQ(out.item(r * n + j), x.item(r * n + (n - 1 - j)));
  // One element too few: the last thread's write is out of bounds (on a GPU, undefined: not run there).
  if (!cuda::requireDevice().emulated) return;
  try {
    kernel(kKernels, "reverse_rows")
        .launch({.grid = {rows, 1, 1}, .block = {static_cast<unsigned>(n), 1, 1}, .sharedBytes = (n - 1) * 8u}, args);
    (void)dout.to(DeviceKind::Cpu);
    ADD_FAILURE() << "the emulated driver ran past the dynamic shared memory";
  } catch (const Error& e) {
    EXPECT_THAT(std::string(e.what()), AllOf(HasSubstr("reverse_rows"), HasSubstr("'row' indexed at 36, outside its "
                                                                                  "36 elements")));
  }
}

// As on a GPU, a launch may ask for more than 48 KB of dynamic shared memory only once its kernel opted in.
TEST(EmulatedBlocks, MoreThan48KBOfDynamicSharedMemoryNeedsTheKernelToOptIn) {
  SKIP_WITHOUT_DEVICE();
  int n = 37;
  const unsigned rows = 2, bytes = 64 * 1024;
  ASSERT_GE(cuda::requireDevice().sharedPerBlockOptIn, bytes);
  Tensor x = Tensor::rand({rows, n}, DType::Float64, 5);
  Tensor dx = x.to(DeviceKind::Cuda), dout = Tensor::zeros({rows, n}, DType::Float64, DeviceKind::Cuda);
  void* px = dx.rawData();
  void* po = dout.rawData();
  void* args[] = {&px, &po, &n};
  // A kernel of its own (the source differs), so that no other test's launch sees the attribute set.
  const cuda::Kernel k = kernel(std::string(kKernels) + "\n// opts in\n", "reverse_rows");
  const cuda::LaunchShape shape{.grid = {rows, 1, 1}, .block = {static_cast<unsigned>(n), 1, 1}, .sharedBytes = bytes};
  EXPECT_THROW(k.launch(shape, args), Error);
  k.allowSharedBytes(bytes);
  k.launch(shape, args);
  Tensor out = dout.to(DeviceKind::Cpu);
  for (unsigned r = 0; r < rows; ++r)
    for (int j = 0; j < n; ++j) EXPECT_EQ(out.item(r * n + j), x.item(r * n + (n - 1 - j)));
}

// What a warp's lanes see, by CUDA's definition of each intrinsic, as a host loop.
TEST(EmulatedBlocks, EveryWarpIntrinsicMatchesItsDefinition) {
  SKIP_WITHOUT_DEVICE();
  const int threads = 64, blocks = 2, total = threads * blocks;
  std::vector<int> v(total);
  for (int i = 0; i < total; ++i) v[i] = (i * 37 + 11) % 97;
  Tensor din = Tensor::empty({total}, DType::Int64, DeviceKind::Cuda);  // room for the int32 values
  cuda::copyHostToDevice(din.rawData(), v.data(), v.size() * sizeof(int));
  Tensor dout = Tensor::zeros({total * 11}, DType::Int64, DeviceKind::Cuda);
  void* pi = din.rawData();
  void* po = dout.rawData();
  void* args[] = {&pi, &po};
  kernel(kKernels, "warp_ops").launch({.grid = {blocks, 1, 1}, .block = {threads, 1, 1}}, args);
  std::vector<int> out(static_cast<size_t>(total) * 11);
  cuda::copyDeviceToHost(out.data(), dout.rawData(), out.size() * sizeof(int));
  for (int i = 0; i < total; ++i) {
    SCOPED_TRACE(i);
    const int lane = i % 32, warp = i - lane;
    auto at = [&](int src) { return v[warp + src]; };
    unsigned ballot = 0, half = 0;
    bool any = false, all = true;
    for (int l = 0; l < 32; ++l) {
      ballot |= (v[warp + l] % 3 == 0 ? 1u : 0u) << l;
      any = any || v[warp + l] > 90;
      all = all && v[warp + l] >= 0;
      if (l < 16) half |= (v[warp + l] & 1 ? 1u : 0u) << l;
    }
    const int* o = out.data() + i * 11;
    EXPECT_EQ(o[0], at((lane * 7 + 3) % 32));
    EXPECT_EQ(o[1], at(lane >= 3 ? lane - 3 : lane));
    EXPECT_EQ(o[2], at(lane + 5 < 32 ? lane + 5 : lane));
    EXPECT_EQ(o[3], at(lane ^ 6));
    EXPECT_EQ(o[4], at(lane % 8 + 2 < 8 ? lane + 2 : lane));
    EXPECT_EQ(o[5], at(lane ^ 9));
    EXPECT_EQ(static_cast<unsigned>(o[6]), ballot);
    EXPECT_EQ(o[7], any ? 1 : 0);
    EXPECT_EQ(o[8], all ? 1 : 0);
    EXPECT_EQ(static_cast<unsigned>(o[9]), 0xffffffffu);
    EXPECT_EQ(static_cast<unsigned>(o[10]), lane < 16 ? half : 0u);
  }
}

TEST(EmulatedBlocks, SyncwarpOrdersAWarpsSharedMemory) {
  SKIP_WITHOUT_DEVICE();
  Tensor x = Tensor::rand({64}, DType::Float32, 5);
  Tensor dx = x.to(DeviceKind::Cuda), dout = Tensor::zeros({64}, DType::Float32, DeviceKind::Cuda);
  void* px = dx.rawData();
  void* po = dout.rawData();
  void* args[] = {&px, &po};
  kernel(kKernels, "warp_exchange").launch({.block = {64, 1, 1}}, args);
  Tensor out = dout.to(DeviceKind::Cpu);
  for (int t = 0; t < 64; ++t) EXPECT_EQ(out.item(t), x.item(t ^ 1));
}

TEST(EmulatedBlocks, AtomicsAddUpAcrossTheGrid) {
  SKIP_WITHOUT_DEVICE();
  const unsigned blocks = 5, threads = 96, n = blocks * threads;
  Tensor x = Tensor::rand({n}, DType::Float32, 9, 0.0, 1.0);
  Tensor dx = x.to(DeviceKind::Cuda);
  Tensor fsum = Tensor::zeros({1}, DType::Float32, DeviceKind::Cuda), dsum = Tensor::zeros({1}, DType::Float64, DeviceKind::Cuda);
  Tensor counts = Tensor::zeros({2}, DType::Int64, DeviceKind::Cuda);  // an int, then an unsigned long long
  void* px = dx.rawData();
  void* pf = fsum.rawData();
  void* pd = dsum.rawData();
  void* pc = counts.rawData();
  void* pt = static_cast<char*>(counts.rawData()) + 8;
  void* args[] = {&px, &pf, &pd, &pc, &pt};
  kernel(kKernels, "atomics").launch({.grid = {blocks, 1, 1}, .block = {threads, 1, 1}}, args);
  double want = 0;
  for (unsigned i = 0; i < n; ++i) want += x.item(i);
  EXPECT_NEAR(fsum.to(DeviceKind::Cpu).item(), want, 1e-5 * want);
  EXPECT_NEAR(dsum.to(DeviceKind::Cpu).item(), want, 1e-6 * want);
  std::vector<long long> c(2);
  cuda::copyDeviceToHost(c.data(), counts.rawData(), 16);
  EXPECT_EQ(static_cast<int>(c[0] & 0xffffffff), static_cast<int>(n));
  EXPECT_EQ(c[1], 2LL * n);
}

TEST(EmulatedBlocks, AGridWideBarrierInACooperativeLaunch) {
  SKIP_WITHOUT_DEVICE();
  const cuda::Kernel k = kernel(kGridKernels, "grid_sum");
  const unsigned threads = 128;
  const int perSm = k.blocksPerMultiprocessor(threads, 0);
  ASSERT_GE(perSm, 1);
  const unsigned blocks = std::min(4u, static_cast<unsigned>(perSm * cuda::requireDevice().multiprocessors));
  int n = 5000;
  Tensor x = Tensor::rand({n}, DType::Float32, 21, 0.0, 1.0);
  Tensor dx = x.to(DeviceKind::Cuda), partial = Tensor::zeros({blocks}, DType::Float32, DeviceKind::Cuda),
         out = Tensor::zeros({1}, DType::Float32, DeviceKind::Cuda);
  void* px = dx.rawData();
  void* pp = partial.rawData();
  void* po = out.rawData();
  void* args[] = {&px, &pp, &po, &n};
  k.launch({.grid = {blocks, 1, 1}, .block = {threads, 1, 1}, .cooperative = true}, args);
  double want = 0;
  for (int i = 0; i < n; ++i) want += x.item(i);
  EXPECT_NEAR(out.to(DeviceKind::Cpu).item(), want, 1e-5 * want);
  // More blocks than the device holds at once is refused, as on a GPU.
  const unsigned tooMany = static_cast<unsigned>(perSm * cuda::requireDevice().multiprocessors) + 1;
  try {
    k.launch({.grid = {tooMany, 1, 1}, .block = {threads, 1, 1}, .cooperative = true}, args);
    ADD_FAILURE() << "a cooperative launch of " << tooMany << " blocks ran";
  } catch (const Error& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE"));
  }
  // A grid sync needs a cooperative launch.
  if (!cuda::requireDevice().emulated) return;  // on a GPU, undefined
  try {
    k.launch({.grid = {2, 1, 1}, .block = {threads, 1, 1}}, args);
    ADD_FAILURE() << "a grid sync ran in a launch that is not cooperative";
  } catch (const Error& e) {
    EXPECT_THAT(std::string(e.what()), AllOf(HasSubstr("grid_sum"), HasSubstr("this_grid().sync()"),
                                             HasSubstr("not cooperative")));
  }
}

// ---- the planted bugs (on the emulated driver: a GPU may run them to some answer) ----

class PlantedBug : public testing::Test {
 protected:
  void SetUp() override {
    if (auto d = cuda::device(); !d || !d.value()->emulated) GTEST_SKIP() << "the emulated driver's checks";
    if (!haveNvrtc()) GTEST_SKIP() << "built without NVRTC";
  }
};

TEST_F(PlantedBug, AWriteOfWhatAnotherThreadReadWithNoBarrierIsARace) {
  // Thread 0 reads buf[1] before thread 1 writes it: one order of many a GPU may take.
  EXPECT_THAT(launchError("read_before_barrier"),
              AllOf(HasSubstr("kernel read_before_barrier"), HasSubstr("a race on shared memory"),
                    HasSubstr("thread (1, 0, 0) of block (0, 0, 0) writes buf[1] at line 4, which thread (0, 0, 0) "
                              "of block (0, 0, 0) read at line 5"),
                    HasSubstr("no __syncthreads or __syncwarp separates them")));
  EXPECT_THAT(launchError("write_after_read", 128),
              AllOf(HasSubstr("kernel write_after_read"),
                    HasSubstr("thread (40, 0, 0) of block (0, 0, 0) writes buf[40] at line 12, which thread (0, 0, 0) "
                              "of block (0, 0, 0) read at line 11"),
                    HasSubstr("no __syncthreads separates them")));
}

TEST_F(PlantedBug, ABarrierSomeThreadsSkip) {
  EXPECT_THAT(launchError("skipped_barrier"),
              AllOf(HasSubstr("kernel skipped_barrier"), HasSubstr("a barrier some threads skip"),
                    HasSubstr("thread (0, 0, 0) of block (0, 0, 0) waits at __syncthreads at line 18"),
                    HasSubstr("but thread (32, 0, 0) of block (0, 0, 0) ended without reaching it")));
  EXPECT_THAT(launchError("divergent_barriers"),
              AllOf(HasSubstr("kernel divergent_barriers"), HasSubstr("divergent __syncthreads"),
                    HasSubstr("thread (0, 0, 0) of block (0, 0, 0) waits at line 25"),
                    HasSubstr("thread (1, 0, 0) of block (0, 0, 0) at line 23")));
}

TEST_F(PlantedBug, AShuffleWhoseMaskLeavesOutALaneThatTakesPart) {
  EXPECT_THAT(launchError("own_lane_left_out"),
              AllOf(HasSubstr("kernel own_lane_left_out"),
                    HasSubstr("thread (16, 0, 0) of block (0, 0, 0) calls __shfl_down_sync at line 31 with mask "
                              "0x0000ffff, which leaves out its own lane 16")));
  EXPECT_THAT(launchError("lane_that_never_comes"),
              AllOf(HasSubstr("kernel lane_that_never_comes"),
                    HasSubstr("thread (0, 0, 0) of block (0, 0, 0) calls __shfl_down_sync at line 36 with mask "
                              "0xffffffff, which names lane 16, but thread (16, 0, 0) of block (0, 0, 0) ended")));
}

TEST_F(PlantedBug, ASharedIndexOutOfBounds) {
  EXPECT_THAT(launchError("shared_out_of_bounds"),
              AllOf(HasSubstr("kernel shared_out_of_bounds"),
                    HasSubstr("thread (63, 0, 0) of block (0, 0, 0) at line 41: shared array 'buf' indexed at 64, "
                              "outside its 64 elements")));
}

TEST_F(PlantedBug, AReadOfSharedMemoryNoThreadWrote) {
  EXPECT_THAT(launchError("uninitialized_shared"),
              AllOf(HasSubstr("kernel uninitialized_shared"),
                    HasSubstr("thread (5, 0, 0) of block (0, 0, 0) reads buf[5] at line 49, which no thread of its "
                              "block has written")));
}

}  // namespace
}  // namespace gj
