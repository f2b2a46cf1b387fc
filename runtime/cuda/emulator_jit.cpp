// The emulated driver's host builds of NVRTC sources (emulator_jit.h).
#include "runtime/cuda/emulator_jit.h"

#include "runtime/context.h"
#include "runtime/cuda/emulator_scheduler.h"
#include "runtime/disk_cache.h"
#include "support/environment.h"

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

namespace gj::cuda {
extern const char* const kEmulatorDeviceH;  // emulator_device.h's text (kernel_source.cpp.in)
}  // namespace gj::cuda

namespace gj::cuda::detail {
namespace {

// CUDA C's names, as host C++ (C++17) has them: emulator_device.h's text (kEmulatorDeviceH) between the two
// parts of the prelude. Thread indices, barriers, warp operations and shared memory call the scheduler
// through the table gj_emu_bind hands the library when it is loaded.
constexpr const char* kPreludeHead = R"(// graphjit's emulated driver: a CUDA C module built for the host.
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
#define __launch_bounds__(...)
)";
constexpr const char* kPreludeTail = R"(
namespace {
inline float __int_as_float(int v) { float f; memcpy(&f, &v, sizeof f); return f; }
inline double __longlong_as_double(long long v) { double d; memcpy(&d, &v, sizeof d); return d; }
template <typename T> inline T __ldg(const T* p) { return *p; }
}  // namespace
#line 1 "module.cu"
)";

// Per kernel: run one thread (the scheduler's current one), each parameter read from its pointer (a device
// pointer made a host one); and the parameters' sizes.
constexpr const char* kTrampolines = R"(
namespace {
typedef void* (*GjEmuUntag)(const void*);
template <typename T> T gjEmuHost(T v, GjEmuUntag untag) {
  if constexpr (std::is_pointer_v<T>) return v ? (T)untag((const void*)v) : v;
  else return v;
}
template <typename... A, size_t... I>
void gjEmuThread(void (*k)(A...), void* const* p, GjEmuUntag untag, std::index_sequence<I...>) {
  k(gjEmuHost(*static_cast<A*>(p[I]), untag)...);
}
template <typename... A>
void gjEmuThread(void (*k)(A...), void* const* p, GjEmuUntag untag) {
  gjEmuThread(k, p, untag, std::index_sequence_for<A...>{});
}
template <typename... A>
int gjEmuParams(void (*)(A...), size_t* sizes, int capacity) {
  const size_t s[] = {sizeof(A)..., 0};
  for (size_t i = 0; i < sizeof...(A) && i < (size_t)capacity; ++i) sizes[i] = s[i];
  return (int)sizeof...(A);
}
}  // namespace
extern "C" void gj_emu_bind(const GjEmuApi* api) { gjEmuApi = api; }
)";

// The module's __shared__ declarations as emulator_device.h's checked arrays, each on its own line still:
//   __shared__ float buf[256];  ->  GJ_EMU_SHARED(float, buf, 256);
//   extern __shared__ double dyn[];  ->  GJ_EMU_EXTERN_SHARED(double, dyn);
// (also [R][C] arrays and single variables; alignment specifiers are dropped: the arena aligns to 16).
std::string rewriteShared(const std::string& source) {
  static const std::regex decl(
      R"((extern[ \t]+)?__shared__[ \t]+(?:(?:__align__|alignas)[ \t]*\([ \t]*\d+[ \t]*\)[ \t]+)?)"
      R"(([A-Za-z_][A-Za-z_0-9 \t]*?)[ \t]+([A-Za-z_][A-Za-z_0-9]*)[ \t]*((?:\[[^\]\n]*\][ \t]*)*);)");
  static const std::regex dim(R"(\[([^\]]*)\])");
  std::string out;
  auto last = source.cbegin();
  for (auto it = std::sregex_iterator(source.begin(), source.end(), decl); it != std::sregex_iterator(); ++it) {
    const std::smatch& m = *it;
    out.append(last, m[0].first);
    last = m[0].second;
    const std::string type = m[2], name = m[3], dims = m[4];
    std::vector<std::string> sizes;
    for (auto d = std::sregex_iterator(dims.begin(), dims.end(), dim); d != std::sregex_iterator(); ++d)
      sizes.push_back((*d)[1]);
    if (m[1].matched) out += fmt::format("GJ_EMU_EXTERN_SHARED({}, {});", type, name);
    else if (sizes.empty()) out += fmt::format("GJ_EMU_SHARED_SCALAR({}, {});", type, name);
    else if (sizes.size() == 1) out += fmt::format("GJ_EMU_SHARED({}, {}, {});", type, name, sizes[0]);
    else if (sizes.size() == 2) out += fmt::format("GJ_EMU_SHARED2({}, {}, {}, {});", type, name, sizes[0], sizes[1]);
    else out += m.str();  // more dimensions: left as written, which the host compiler rejects
  }
  out.append(last, source.cend());
  return out;
}

// The module's text for the host: its __shared__ declarations checked, and its #include of
// cooperative_groups.h left to the prelude's (kept as a comment, so that lines stay where they were).
std::string hostSource(const std::string& source) {
  static const std::regex cg(R"(#[ \t]*include[ \t]*<cooperative_groups\.h>)");
  return rewriteShared(std::regex_replace(source, cg, "// (cooperative_groups: the prelude's)"));
}

// Whether the module's threads wait for one another (a barrier, a warp operation, a grid sync): its
// kernels then run with block semantics, as fibers; others one thread after another.
bool cooperates(const std::string& source) {
  static const std::regex sync(R"(__syncthreads|__syncwarp|_sync[ \t]*\(|this_grid|this_thread_block|__activemask)");
  return std::regex_search(source, sync);
}

constexpr int kMaxParams = 256;

// The kernels' names: each `extern "C" __global__ void [__launch_bounds__(...)] NAME(`.
std::vector<std::string> kernelNames(const std::string& source) {
  static const std::regex entry(
      R"(extern\s+"C"\s+__global__\s+void\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?([A-Za-z_][A-Za-z0-9_]*)\s*\()");
  std::vector<std::string> names;
  for (auto it = std::sregex_iterator(source.begin(), source.end(), entry); it != std::sregex_iterator(); ++it)
    names.push_back((*it)[1]);
  return names;
}

std::filesystem::path cacheDir() {
  const Environment env = environment();
  if (env.emulatorCache) return *env.emulatorCache;
  return std::filesystem::path(env.tmpDir.value_or("/tmp")) / fmt::format("graphjit-emulator-{}", getuid());
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
  std::string text = std::string(kPreludeHead) + kEmulatorDeviceH + kPreludeTail + hostSource(source) + kTrampolines;
  for (const std::string& n : names)
    text += fmt::format(
        "extern \"C\" void {0}__gj_emu_thread(void* const* p, GjEmuUntag u) {{ gjEmuThread({0}, p, u); }}\n"
        "extern \"C\" int {0}__gj_emu_params(size_t* s, int capacity) {{ return gjEmuParams({0}, s, capacity); }}\n",
        n);
  const std::string cxx = environment().emulatorCxx.value_or("c++");
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
  auto bind = reinterpret_cast<void (*)(const GjEmuApi*)>(dlsym(h, "gj_emu_bind"));
  if (!bind) return Error(fmt::format("the emulated driver's build {} lacks gj_emu_bind", lib.string()));
  bind(emulatorApi());
  auto m = std::make_shared<LoadedModule>();
  const bool fibers = cooperates(source);
  for (const std::string& n : names) {
    auto thread = reinterpret_cast<decltype(HostKernel::thread)>(dlsym(h, (n + "__gj_emu_thread").c_str()));
    auto params = reinterpret_cast<int (*)(size_t*, int)>(dlsym(h, (n + "__gj_emu_params").c_str()));
    if (!thread || !params) return Error(fmt::format("the emulated driver's build of {} lacks its entry points", n));
    HostKernel k{n, thread, std::vector<size_t>(kMaxParams), fibers};
    const int count = params(k.paramSizes.data(), kMaxParams);
    if (count > kMaxParams) return Error(fmt::format("kernel {} has {} parameters", n, count));
    k.paramSizes.resize(count);
    m->kernels_.emplace(n, std::move(k));
  }
  return std::shared_ptr<const HostModule>(std::move(m));
}

thread_local const std::string* tPendingSource = nullptr;

}  // namespace

namespace {
// The host builds made in a context (Context::state), by source, failures too.
struct HostBuilds {
  std::mutex mutex;
  std::unordered_map<std::string, Result<std::shared_ptr<const HostModule>>> built;
};
}  // namespace

Result<std::shared_ptr<const HostModule>> hostModule(const std::string& source) {
  HostBuilds& c = Context::current().state<HostBuilds>();
  std::lock_guard lock(c.mutex);
  if (auto it = c.built.find(source); it != c.built.end()) return it->second;
  return c.built.emplace(source, build(source)).first->second;
}

void setPendingModuleSource(const std::string* source) { tPendingSource = source; }
const std::string* pendingModuleSource() { return tPendingSource; }

}  // namespace gj::cuda::detail
