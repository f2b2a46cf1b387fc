// The emulated driver's host builds of NVRTC sources (emulator_jit.h).
#include "runtime/cuda/emulator_jit.h"

#include "runtime/disk_cache.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <regex>
#include <sstream>
#include <unordered_map>

namespace gj::cuda::detail {
namespace {

// CUDA C's names, as host C++ (C++17) has them. One thread runs at a time, so the indices are plain
// thread-locals of the library.
constexpr const char* kPrelude = R"(// graphjit's emulated driver: a CUDA C module built for the host.
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <type_traits>
#include <utility>
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
namespace {
struct GjEmuDim3 { unsigned x, y, z; };
thread_local GjEmuDim3 threadIdx, blockIdx, blockDim, gridDim;
inline float __int_as_float(int v) { float f; memcpy(&f, &v, sizeof f); return f; }
inline double __longlong_as_double(long long v) { double d; memcpy(&d, &v, sizeof d); return d; }
}  // namespace
#line 1 "module.cu"
)";

// Per kernel: run the grid with each parameter read from its pointer (a device pointer made a host one),
// and the parameters' sizes.
constexpr const char* kTrampolines = R"(
namespace {
typedef void* (*GjEmuUntag)(const void*);
template <typename T> T gjEmuHost(T v, GjEmuUntag untag) {
  if constexpr (std::is_pointer_v<T>) return v ? (T)untag((const void*)v) : v;
  else return v;
}
template <typename... A, size_t... I>
void gjEmuRun(void (*k)(A...), void* const* p, const unsigned* g, const unsigned* b, GjEmuUntag untag,
              std::index_sequence<I...>) {
  gridDim = {g[0], g[1], g[2]};
  blockDim = {b[0], b[1], b[2]};
  for (blockIdx.z = 0; blockIdx.z < g[2]; ++blockIdx.z)
    for (blockIdx.y = 0; blockIdx.y < g[1]; ++blockIdx.y)
      for (blockIdx.x = 0; blockIdx.x < g[0]; ++blockIdx.x)
        for (threadIdx.z = 0; threadIdx.z < b[2]; ++threadIdx.z)
          for (threadIdx.y = 0; threadIdx.y < b[1]; ++threadIdx.y)
            for (threadIdx.x = 0; threadIdx.x < b[0]; ++threadIdx.x)
              k(gjEmuHost(*static_cast<A*>(p[I]), untag)...);
}
template <typename... A>
void gjEmuRun(void (*k)(A...), void* const* p, const unsigned* g, const unsigned* b, GjEmuUntag untag) {
  gjEmuRun(k, p, g, b, untag, std::index_sequence_for<A...>{});
}
template <typename... A>
int gjEmuParams(void (*)(A...), size_t* sizes, int capacity) {
  const size_t s[] = {sizeof(A)..., 0};
  for (size_t i = 0; i < sizeof...(A) && i < (size_t)capacity; ++i) sizes[i] = s[i];
  return (int)sizeof...(A);
}
}  // namespace
)";

constexpr int kMaxParams = 256;

// The kernels' names: each `extern "C" __global__ void NAME(`.
std::vector<std::string> kernelNames(const std::string& source) {
  static const std::regex entry(R"(extern\s+"C"\s+__global__\s+void\s+([A-Za-z_][A-Za-z0-9_]*)\s*\()");
  std::vector<std::string> names;
  for (auto it = std::sregex_iterator(source.begin(), source.end(), entry); it != std::sregex_iterator(); ++it)
    names.push_back((*it)[1]);
  return names;
}

std::filesystem::path cacheDir() {
  if (const char* d = std::getenv("GJ_EMULATOR_CACHE"); d && *d) return d;
  const char* tmp = std::getenv("TMPDIR");
  return std::filesystem::path(tmp && *tmp ? tmp : "/tmp") / fmt::format("graphjit-emulator-{}", getuid());
}

class LoadedModule final : public HostModule {
 public:
  const HostKernel* find(const std::string& name) const override {
    auto it = kernels_.find(name);
    return it == kernels_.end() ? nullptr : &it->second;
  }
  std::unordered_map<std::string, HostKernel> kernels_;
};

// Builds `source` into a shared library (or finds it built) and loads it.
Result<std::shared_ptr<const HostModule>> build(const std::string& source) {
  const std::vector<std::string> names = kernelNames(source);
  std::string text = std::string(kPrelude) + source + kTrampolines;
  for (const std::string& n : names)
    text += fmt::format(
        "extern \"C\" void {0}__gj_emu_run(void* const* p, const unsigned* g, const unsigned* b, GjEmuUntag u) "
        "{{ gjEmuRun({0}, p, g, b, u); }}\n"
        "extern \"C\" int {0}__gj_emu_params(size_t* s, int capacity) {{ return gjEmuParams({0}, s, capacity); }}\n",
        n);
  const char* cxxEnv = std::getenv("GJ_EMULATOR_CXX");
  const std::string cxx = cxxEnv && *cxxEnv ? cxxEnv : "c++";
  const std::string key = fmt::format("{:016x}-{}", std::hash<std::string>{}(text + '\n' + cxx), text.size());
  std::error_code ec;
  const std::filesystem::path dir = cacheDir();
  std::filesystem::create_directories(dir, ec);
  // The libraries are loaded into this process: only from a folder of this user's that no one else may
  // write to.
  if (std::string why = privateFolderProblem(dir); !why.empty())
    return Error(fmt::format("the emulated driver's cache {} is not a folder of this user's that only it may "
                             "write to ({}); remove it or set GJ_EMULATOR_CACHE",
                             dir.string(), why));
  const std::filesystem::path lib = dir / (key + ".so");
  if (!std::filesystem::exists(lib)) {
    // Built under a name of this process's own, then renamed: processes that build one source side by
    // side (ctest -j) each load a whole library.
    const std::string tmp = fmt::format("{}.{}", (dir / key).string(), getpid());
    std::ofstream(tmp + ".cpp") << text;
    const std::string cmd = fmt::format("'{}' -std=c++17 -O1 -fPIC -shared -w -o '{}.so' '{}.cpp' > '{}.log' 2>&1",
                                        cxx, tmp, tmp, tmp);
    const int status = std::system(cmd.c_str());
    std::stringstream log;
    log << std::ifstream(tmp + ".log").rdbuf();
    std::filesystem::remove(tmp + ".cpp", ec);
    std::filesystem::remove(tmp + ".log", ec);
    if (status != 0) {
      std::filesystem::remove(tmp + ".so", ec);
      return Error(fmt::format("the emulated driver could not build a module for the host ({} exited with {}): {}",
                               cxx, status, log.str()));
    }
    std::filesystem::rename(tmp + ".so", lib, ec);
    if (ec) return Error(fmt::format("the emulated driver could not store {}: {}", lib.string(), ec.message()));
  }
  void* h = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);  // kept open: launches may be recorded in graphs
  if (!h) return Error(fmt::format("the emulated driver could not load {}: {}", lib.string(), dlerror()));
  auto m = std::make_shared<LoadedModule>();
  for (const std::string& n : names) {
    auto run = reinterpret_cast<decltype(HostKernel::run)>(dlsym(h, (n + "__gj_emu_run").c_str()));
    auto params = reinterpret_cast<int (*)(size_t*, int)>(dlsym(h, (n + "__gj_emu_params").c_str()));
    if (!run || !params) return Error(fmt::format("the emulated driver's build of {} lacks its entry points", n));
    HostKernel k{run, std::vector<size_t>(kMaxParams)};
    const int count = params(k.paramSizes.data(), kMaxParams);
    if (count > kMaxParams) return Error(fmt::format("kernel {} has {} parameters", n, count));
    k.paramSizes.resize(count);
    m->kernels_.emplace(n, std::move(k));
  }
  return std::shared_ptr<const HostModule>(std::move(m));
}

thread_local const std::string* tPendingSource = nullptr;

}  // namespace

Result<std::shared_ptr<const HostModule>> hostModule(const std::string& source) {
  static std::mutex mutex;
  static std::unordered_map<std::string, Result<std::shared_ptr<const HostModule>>> built;
  std::lock_guard lock(mutex);
  if (auto it = built.find(source); it != built.end()) return it->second;
  return built.emplace(source, build(source)).first->second;
}

void setPendingModuleSource(const std::string* source) { tPendingSource = source; }
const std::string* pendingModuleSource() { return tPendingSource; }

}  // namespace gj::cuda::detail
