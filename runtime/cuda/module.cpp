// Kernels: NVRTC output loaded as driver modules, a cache by source text, and launch.
#include "runtime/cuda/device.h"

#include "runtime/cuda/driver_api.h"
#include "runtime/cuda/emulator_jit.h"
#include "runtime/disk_cache.h"
#include "runtime/nvrtc.h"
#include "support/error.h"

#include <fmt/format.h>

#include <chrono>
#include <mutex>
#include <unordered_map>

namespace gj::cuda {

using detail::check;
using detail::driver;

/// A loaded module; unloaded when the last Kernel in it goes.
class Module {
 public:
  explicit Module(CUmodule m) : module_(m) {}
  ~Module() { driver().cuModuleUnload(module_); }
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  CUmodule handle() const { return module_; }

 private:
  CUmodule module_;
};

Result<Kernel> loadKernel(const std::string& image, const std::string& entry, const std::string& name) {
  const auto& api = driver();
  CUmodule m = nullptr;
  if (CUresult r = api.cuModuleLoadData(&m, image.c_str()); r != CUDA_SUCCESS)
    return Error(fmt::format("loading the module of {} failed: {}", name, detail::errorText(r)));
  Kernel k;
  k.module_ = std::make_shared<Module>(m);
  CUfunction f = nullptr;
  if (CUresult r = api.cuModuleGetFunction(&f, m, entry.c_str()); r != CUDA_SUCCESS)
    return Error(fmt::format("{} has no kernel named {}: {}", name, entry, detail::errorText(r)));
  k.function_ = f;
  return k;
}

void Kernel::launch(const LaunchShape& s, void** args) const {
  IR_CHECK(loaded()) << "launch of a kernel that was never loaded";
  const auto f = static_cast<CUfunction>(function_);
  if (s.cooperative) {
    check(driver().cuLaunchCooperativeKernel(f, s.grid[0], s.grid[1], s.grid[2], s.block[0], s.block[1], s.block[2],
                                             s.sharedBytes, currentStream(), args),
          "cuLaunchCooperativeKernel");
    return;
  }
  check(driver().cuLaunchKernel(f, s.grid[0], s.grid[1], s.grid[2], s.block[0], s.block[1], s.block[2], s.sharedBytes,
                                currentStream(), args, nullptr),
        "cuLaunchKernel");
}

int Kernel::blocksPerMultiprocessor(int threadsPerBlock, size_t sharedBytes) const {
  int n = 0;
  check(driver().cuOccupancyMaxActiveBlocksPerMultiprocessor(&n, static_cast<CUfunction>(function_), threadsPerBlock,
                                                              sharedBytes),
        "cuOccupancyMaxActiveBlocksPerMultiprocessor");
  return n;
}

void Kernel::allowSharedBytes(size_t bytes) const {
  check(driver().cuFuncSetAttribute(static_cast<CUfunction>(function_), CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                    static_cast<int>(bytes)),
        "cuFuncSetAttribute");
}

int Kernel::maxThreadsPerBlock() const {
  int n = 0;
  check(driver().cuFuncGetAttribute(&n, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, static_cast<CUfunction>(function_)),
        "cuFuncGetAttribute");
  return n;
}

namespace {
// compileKernel's kernels in a context (Context::state).
struct KernelCache {
  std::mutex mutex;
  std::unordered_map<std::string, Kernel> kernels;  ///< by entry name + source text
  KernelCacheStats stats;
};
}  // namespace

Result<Kernel> loadCompiled(const std::string& source, const std::string& name,
                            const std::function<Result<Kernel>(const std::string& image)>& load) {
  std::string arch;
  try {
    arch = nvrtcArch();  // "no CUDA device: ..." first
  } catch (const Error& e) {
    return e;
  }
  // The persistent cache keeps NVRTC's image by source, name, NVRTC and architecture.
  const std::string diskKey = fmt::format("graphjit {} | {} | {} | {}\n{}\n{}", GJ_VERSION, nvrtcVersionString(),
                                          arch, kNvrtcOptions, name, source);
  if (std::optional<std::string> cached = diskCacheLoad("cuda-image", diskKey))
    if (Result<Kernel> k = load(*cached)) return k;  // else the driver refused it: compiled again below
  Result<NvrtcOutput> out = nvrtcCompile(source, name, arch);
  if (!out) return out.error();
  const std::string& image = out.value().cubin.empty() ? out.value().ptx : out.value().cubin;
  Result<Kernel> k = load(image);
  if (k) diskCacheStore("cuda-image", diskKey, image);
  return k;
}

Result<Kernel> compileKernel(const std::string& source, const std::string& entry, Context& context) {
  KernelCache& c = context.state<KernelCache>();
  const ContextScope scope(context);  // the emulated driver keeps its host build there
  std::string key = entry + '\n' + source;
  std::lock_guard lock(c.mutex);
  if (auto it = c.kernels.find(key); it != c.kernels.end()) {
    ++c.stats.hits;
    return it->second;
  }
  auto start = std::chrono::steady_clock::now();
  Result<Kernel> k = loadCompiled(source, entry, [&](const std::string& image) {
    detail::setPendingModuleSource(&source);  // the emulated driver builds it for the host
    Result<Kernel> loaded = loadKernel(image, entry, entry);
    detail::setPendingModuleSource(nullptr);
    return loaded;
  });
  if (!k) return k.error();
  ++c.stats.compiles;
  c.stats.compileMs += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  c.kernels.emplace(std::move(key), k.value());
  return k;
}

KernelCacheStats kernelCacheStats(Context& context) {
  KernelCache& c = context.state<KernelCache>();
  std::lock_guard lock(c.mutex);
  return c.stats;
}

}  // namespace gj::cuda
