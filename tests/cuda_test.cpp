// runtime/cuda: without a device every request says why; with one, copies, the caching allocator,
// NVRTC kernels and events work. The GPU cases skip, with the reason, where there is no device.
#include "runtime/cuda/device.h"
#include "runtime/cuda/ops.h"
#include "runtime/nvrtc.h"

#include <fmt/format.h>
#include "runtime/tensor.h"
#include "support/environment.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>

namespace gj {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

#define SKIP_WITHOUT_DEVICE()                                       \
  if (auto d = cuda::device(); !d) GTEST_SKIP() << d.error().what()

TEST(CudaRuntime, WithoutADeviceEveryRequestSaysWhy) {
  if (cuda::available()) GTEST_SKIP() << "this machine has a CUDA device: " << cuda::requireDevice().name;
  auto d = cuda::device();
  ASSERT_FALSE(d.ok());
  EXPECT_THAT(d.error().what(), StartsWith("no CUDA device: "));
  auto expectNoDevice = [](auto&& request) {
    try {
      request();
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), StartsWith("no CUDA device: "));
    }
  };
  expectNoDevice([] { Tensor::empty({2, 3}, DType::Float32, DeviceKind::Cuda); });
  expectNoDevice([] { Tensor::rand({2, 3}, DType::Float32, 1).to(DeviceKind::Cuda); });
  expectNoDevice([] { cuda::Stream s; });
  expectNoDevice([] { cuda::nvrtcArch(); });
  auto k = cuda::compileKernel("extern \"C\" __global__ void k() {}", "k");
  ASSERT_FALSE(k.ok());
  EXPECT_THAT(k.error().what(), StartsWith("no CUDA device: "));
}

#ifdef GJ_CUDA_STUB_DRIVER
// The toolkit's stub libcuda has every entry point but no device: loading it runs the whole lookup,
// and cuInit's refusal comes back as the reason. In a fresh process (the device is found once per
// process), so it holds on a GPU machine too.
// The path is the build machine's toolkit; a machine the binary was carried to may keep its toolkit
// elsewhere (a GPU machine's image).
TEST(CudaRuntimeDeathTest, TheToolkitsStubDriverLoadsButHasNoDevice) {
  if (!std::filesystem::exists(GJ_CUDA_STUB_DRIVER))
    GTEST_SKIP() << "no stub driver at " << GJ_CUDA_STUB_DRIVER << " (the build machine's toolkit) on this machine";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        setenv("GJ_CUDA_DRIVER", GJ_CUDA_STUB_DRIVER, 1);
        refreshEnvironment();
        auto d = cuda::device();
        std::cerr << (d.ok() ? std::string("found ") + d.value()->name : d.error().what()) << "\n";
        std::exit(d.ok() ? 0 : 3);
      },
      ::testing::ExitedWithCode(3), "no CUDA device: cuInit failed: CUDA_ERROR_STUB_LIBRARY");
}
#endif

TEST(CudaRuntimeDeathTest, AMissingDriverLibraryIsNamed) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        setenv("GJ_CUDA_DRIVER", "/nonexistent/libcuda.so.1", 1);
        refreshEnvironment();
        auto d = cuda::device();
        std::cerr << (d.ok() ? "found a device" : d.error().what()) << "\n";
        std::exit(d.ok() ? 0 : 3);
      },
      ::testing::ExitedWithCode(3), "no CUDA device: .*/nonexistent/libcuda.so.1");
}

TEST(CudaRuntime, TheNvrtcArchitectureMatchesTheDevice) {
  SKIP_WITHOUT_DEVICE();
  const cuda::DeviceInfo& d = cuda::requireDevice();
  std::string arch = cuda::nvrtcArch();
  std::cerr << d.name << ", compute capability " << d.major << "." << d.minor << ", " << d.multiprocessors
            << " SMs, driver " << d.driverVersion << ": NVRTC compiles for " << arch << "\n";
  if (arch.starts_with("sm_")) EXPECT_EQ(arch, "sm_" + std::to_string(d.major * 10 + d.minor));
  else EXPECT_THAT(arch, StartsWith("compute_"));
}

TEST(CudaRuntime, CopiesRoundTripEveryDTypeAndView) {
  SKIP_WITHOUT_DEVICE();
  for (DType dt : {DType::Float32, DType::Float64, DType::Int64}) {
    Tensor x = Tensor::rand({37, 129}, dt, 7, -100, 100);
    Tensor d = x.to(DeviceKind::Cuda);
    ASSERT_EQ(d.device(), DeviceKind::Cuda);
    Tensor back = d.to(DeviceKind::Cpu);
    ASSERT_EQ(back.device(), DeviceKind::Cpu);
    for (int64_t i = 0; i < x.numel(); ++i) ASSERT_EQ(back.item(i), x.item(i)) << dtypeName(dt) << " at " << i;
    // A strided view of device memory comes back as the view's values.
    Tensor view = d.transpose(0, 1).slice(0, 3, 100, 2);
    Tensor want = x.transpose(0, 1).slice(0, 3, 100, 2);
    Tensor got = view.to(DeviceKind::Cpu);
    ASSERT_EQ(got.sizes(), want.sizes());
    for (int64_t i = 0; i < want.numel(); ++i) ASSERT_EQ(got.item(i), want.item(i)) << dtypeName(dt) << " at " << i;
  }
  // Into a device view, converting the dtype on the way.
  Tensor x = Tensor::rand({8, 10}, DType::Float64, 3);
  Tensor d = Tensor::rand({8, 10}, DType::Float32, 4).to(DeviceKind::Cuda);
  Tensor before = d.to(DeviceKind::Cpu);
  d.slice(1, 2, 7).copyFrom(x.slice(1, 0, 5));
  Tensor after = d.to(DeviceKind::Cpu);
  for (int64_t r = 0; r < 8; ++r)
    for (int64_t c = 0; c < 10; ++c) {
      double want = c >= 2 && c < 7 ? static_cast<float>(x.item(r * 10 + c - 2)) : before.item(r * 10 + c);
      ASSERT_EQ(after.item(r * 10 + c), want) << r << "," << c;
    }
}

TEST(CudaRuntime, TheAllocatorHandsAFreedBlockOutAgain) {
  SKIP_WITHOUT_DEVICE();
  cuda::releaseDeviceCache();
  const size_t before = cuda::deviceMemoryStats().driverAllocations;
  void* first = nullptr;
  {
    Tensor t = Tensor::empty({1000, 1000}, DType::Float32, DeviceKind::Cuda);
    first = t.rawData();
    EXPECT_EQ(cuda::deviceMemoryStats().driverAllocations, before + 1);
  }
  EXPECT_GE(cuda::deviceMemoryStats().cachedBytes, size_t{4000000});
  {
    Tensor t = Tensor::empty({1000, 1000}, DType::Float32, DeviceKind::Cuda);
    EXPECT_EQ(t.rawData(), first);
    EXPECT_EQ(cuda::deviceMemoryStats().driverAllocations, before + 1);
  }
  cuda::releaseDeviceCache();
  EXPECT_EQ(cuda::deviceMemoryStats().cachedBytes, 0u);
}

TEST(CudaRuntime, ACompiledKernelRunsOnAStreamAndIsCompiledOnce) {
  SKIP_WITHOUT_DEVICE();
  const std::string source = R"(
extern "C" __global__ void axpy(const float* x, float* y, float a, long long n) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    y[i] = a * x[i] + y[i];
})";
  auto k = cuda::compileKernel(source, "axpy");
  ASSERT_TRUE(k.ok()) << k.error().what();
  const size_t compiles = cuda::kernelCacheStats().compiles;
  ASSERT_TRUE(cuda::compileKernel(source, "axpy").ok());
  EXPECT_EQ(cuda::kernelCacheStats().compiles, compiles);
  EXPECT_GE(k.value().maxThreadsPerBlock(), 256);

  cuda::Stream stream;
  cuda::StreamGuard guard(stream);
  long long n = 100003;
  Tensor x = Tensor::rand({n}, DType::Float32, 11), y = Tensor::rand({n}, DType::Float32, 12);
  Tensor dx = x.to(DeviceKind::Cuda), dy = y.to(DeviceKind::Cuda);
  void* px = dx.rawData();
  void* py = dy.rawData();
  float a = 2.5f;
  void* args[] = {&px, &py, &a, &n};
  cuda::Event start, stop;
  start.record();
  k.value().launch({.grid = {64, 1, 1}, .block = {256, 1, 1}}, args);
  stop.record();
  EXPECT_GE(stop.elapsedMsSince(start), 0.0f);
  Tensor got = dy.to(DeviceKind::Cpu);
  // A GPU contracts a * x + y into one fused multiply-add (NVRTC's default) and the emulated driver's host
  // build may not: the two differ in the last bit, so the check is float32's rounding, not equality.
  for (int64_t i = 0; i < n; i += 97) {
    const double want = 2.5 * x.item(i) + y.item(i);
    ASSERT_NEAR(got.item(i), want, 1e-6 * std::max(1.0, std::abs(want))) << "element " << i;
  }
}

TEST(CudaRuntime, AKernelThatFailsToCompileCarriesNvrtcsLog) {
  SKIP_WITHOUT_DEVICE();
  auto k = cuda::compileKernel("extern \"C\" __global__ void k() { not_declared(); }", "k");
  ASSERT_FALSE(k.ok());
  EXPECT_THAT(k.error().what(), HasSubstr("not_declared"));
  auto missing = cuda::compileKernel("extern \"C\" __global__ void k() {}", "other");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.error().what(), HasSubstr("no kernel named other"));
}

// The unfused path's kernels (kernels.cuh), compiled as a GPU would get them, for the oldest and the newest
// architecture this NVRTC knows and for Hopper: no device needed, and no warning either.
TEST(CudaKernels, TheUnfusedKernelsCompileWithNvrtcForEveryArchitecture) {
  if (!haveNvrtc()) GTEST_SKIP() << "this build has no NVRTC";
  std::vector<int> archs = nvrtcSupportedArchs();
  ASSERT_FALSE(archs.empty());
  for (int arch : {archs.front(), 90, archs.back()}) {
    SCOPED_TRACE(arch);
    auto out = nvrtcCompile(cuda::kernelSource(), "graphjit_kernels.cu", fmt::format("sm_{}", arch));
    ASSERT_TRUE(out.ok()) << out.error().what();
    EXPECT_EQ(out.value().log, "");
    for (const char* entry : {"gj_map_f32", "gj_map_f64", "gj_copy", "gj_fill", "gj_reduce", "gj_extreme_rows",
                              "gj_softmax", "gj_softmax_rows4_f32", "gj_softmax_rows32_f32",
                              "gj_softmax_rows4_f64", "gj_softmax_rows32_f64", "gj_gather", "gj_scatter_add", "gj_im2col", "gj_col2im"})
      EXPECT_THAT(out.value().ptx, HasSubstr(std::string(".entry ") + entry)) << entry;
  }
}

}  // namespace
}  // namespace gj
