// The CUDA driver loaded at run time, device 0, streams and events.
#include "runtime/cuda/device.h"
#include "support/environment.h"

#include "runtime/cuda/driver_api.h"
#include "runtime/nvrtc.h"
#include "support/error.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>

namespace gj::cuda {
namespace detail {
namespace {

struct Loaded {
  DriverApi api;
  DeviceInfo info;
  CUcontext context = nullptr;
  std::string failure;  ///< empty when the device is usable
};

std::string resultText(const DriverApi& api, CUresult r) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (api.cuGetErrorName) api.cuGetErrorName(r, &name);
  if (api.cuGetErrorString) api.cuGetErrorString(r, &text);
  if (!name) {
    // A driver that cannot name its own errors (the toolkit's stub cannot): the ones set-up meets.
    switch (r) {
      case CUDA_ERROR_STUB_LIBRARY: return "CUDA_ERROR_STUB_LIBRARY (this is the toolkit's stub libcuda, not a driver)";
      case CUDA_ERROR_NO_DEVICE: return "CUDA_ERROR_NO_DEVICE";
      default: return fmt::format("CUDA error {}", static_cast<int>(r));
    }
  }
  return text ? fmt::format("{} ({})", name, text) : std::string(name);
}

void setUp(Loaded& l);

// Fills `l`, or says in l.failure why there is no device. Never throws: the answer is kept for the
// process, and every later request gives the same reason.
void load(Loaded& l) {
  const std::string path = environment().cudaDriver.value_or("libcuda.so.1");
  if (path == "emulated") {
    installEmulatedDriver(l.api);
    l.info.driverPath = path;
    l.info.emulated = true;
    return setUp(l);
  }
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* why = dlerror();
    l.failure = fmt::format("the CUDA driver library {} could not be loaded ({}); is the NVIDIA driver installed?",
                            path, why ? why : "unknown reason");
    return;
  }
  l.info.driverPath = path;
  // Each entry point by the exact symbol the headers name (cuMemAlloc is cuMemAlloc_v2, ...): the one
  // a program linked against libcuda would call.
  DriverApi& api = l.api;
  std::string missing;
#define GJ_CUDA_SYMBOL(name) #name
#define GJ_CUDA_DRIVER_ENTRY(name) findEntry(lib, GJ_CUDA_SYMBOL(name), api.name, missing);
#include "runtime/cuda/driver_entries.def"
#undef GJ_CUDA_DRIVER_ENTRY
#undef GJ_CUDA_SYMBOL
  if (!missing.empty()) {
    l.failure = fmt::format("{} lacks {} (built against CUDA {}.{}; update the driver)", path, missing,
                            CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10);
    return;
  }
  setUp(l);
}

// Initializes the driver and device 0 through l.api, or says in l.failure why not.
void setUp(Loaded& l) {
  const DriverApi& api = l.api;
  CUresult r = api.cuInit(0);
  if (r != CUDA_SUCCESS) {
    l.failure = fmt::format("cuInit failed: {}", resultText(api, r));
    return;
  }
  api.cuDriverGetVersion(&l.info.driverVersion);
  int count = 0;
  r = api.cuDeviceGetCount(&count);
  if (r != CUDA_SUCCESS || count == 0) {
    l.failure = r != CUDA_SUCCESS ? fmt::format("cuDeviceGetCount failed: {}", resultText(api, r))
                                  : std::string("the driver sees no GPU");
    return;
  }
  CUdevice dev = 0;
  char name[256] = {};
  if ((r = api.cuDeviceGet(&dev, 0)) != CUDA_SUCCESS || (r = api.cuDeviceGetName(name, sizeof name, dev)) ||
      (r = api.cuDeviceGetAttribute(&l.info.major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev)) ||
      (r = api.cuDeviceGetAttribute(&l.info.minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev)) ||
      (r = api.cuDeviceGetAttribute(&l.info.multiprocessors, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev)) ||
      (r = api.cuDeviceTotalMem(&l.info.totalMemory, dev)) ||
      (r = api.cuDevicePrimaryCtxRetain(&l.context, dev))) {
    l.failure = fmt::format("device 0 could not be set up: {}", resultText(api, r));
    return;
  }
  l.info.name = name;
  int memoryKHz = 0, busBits = 0;
  if (api.cuDeviceGetAttribute(&memoryKHz, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, dev) == CUDA_SUCCESS &&
      api.cuDeviceGetAttribute(&busBits, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, dev) == CUDA_SUCCESS)
    l.info.dramGBs = 2.0 * memoryKHz * 1e3 * (busBits / 8.0) / 1e9;
  int l2 = 0;
  if (api.cuDeviceGetAttribute(&l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, dev) == CUDA_SUCCESS && l2 > 0)
    l.info.l2Bytes = static_cast<size_t>(l2);
  api.cuDeviceGetAttribute(&l.info.clockKHz, CU_DEVICE_ATTRIBUTE_CLOCK_RATE, dev);
  if (int optIn = 0; api.cuDeviceGetAttribute(&optIn, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev) ==
                         CUDA_SUCCESS && optIn > 0)
    l.info.sharedPerBlockOptIn = static_cast<size_t>(optIn);
}

Loaded& loaded() {
  static Loaded l;
  static std::once_flag once;
  std::call_once(once, [] { load(l); });
  return l;
}

}  // namespace

const DriverApi& driver() {
  Loaded& l = loaded();
  USER_CHECK(l.failure.empty(), "no CUDA device: {}", l.failure);
  // The primary context, current on each thread that calls in.
  thread_local bool current = false;
  if (!current) {
    check(l.api.cuCtxSetCurrent(l.context), "cuCtxSetCurrent");
    current = true;
  }
  return l.api;
}

std::string errorText(CUresult r) { return resultText(loaded().api, r); }

void* openLibrary(const char* what, const char* env, const std::optional<std::string>& given,
                  std::initializer_list<const char*> names, std::string& failure) {
  std::string tried;
  std::vector<const char*> candidates;
  if (given) candidates.push_back(given->c_str());
  candidates.insert(candidates.end(), names.begin(), names.end());
  for (const char* name : candidates) {
    if (void* lib = dlopen(name, RTLD_NOW | RTLD_LOCAL)) return lib;
    tried += fmt::format("{}{}", tried.empty() ? "" : ", ", name);
  }
  failure = fmt::format("{} could not be loaded (tried {}); set {} to its path or add its folder to LD_LIBRARY_PATH",
                        what, tried, env);
  return nullptr;
}

void check(CUresult r, const char* what) {
  if (r != CUDA_SUCCESS) throw Error(fmt::format("{} failed: {}", what, errorText(r)));
}

}  // namespace detail

using detail::check;
using detail::driver;

Result<const DeviceInfo*> device() {
  try {
    driver();
  } catch (const Error& e) {
    return e;
  }
  return &detail::loaded().info;
}

const DeviceInfo& requireDevice() { return *device().value(); }

bool available() { return device().ok(); }

std::string nvrtcArch() {
  const DeviceInfo& d = requireDevice();
  int want = d.major * 10 + d.minor;
  std::vector<int> archs = nvrtcSupportedArchs();
  USER_CHECK(!archs.empty(), "NVRTC reports no architectures it can compile for");
  if (std::ranges::find(archs, want) != archs.end()) return fmt::format("sm_{}", want);
  // A device newer than this NVRTC: the newest PTX it knows, which the driver compiles further on load.
  // (One older than every arch NVRTC knows cannot run its code at all.)
  USER_CHECK(want > archs.front(), "{} (compute capability {}.{}) is older than anything this NVRTC compiles for "
             "(sm_{} and up)", d.name, d.major, d.minor, archs.front());
  int best = *std::ranges::max_element(archs);
  return fmt::format("compute_{}", best);
}

// ---- streams and events ----

namespace {
thread_local StreamHandle tCurrentStream = nullptr;
}

Stream::Stream() { check(driver().cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING), "cuStreamCreate"); }

Stream::~Stream() {
  if (stream_) driver().cuStreamDestroy(stream_);
}

void Stream::synchronize() const { check(driver().cuStreamSynchronize(stream_), "cuStreamSynchronize"); }

StreamHandle currentStream() { return tCurrentStream; }

void synchronize() { check(driver().cuStreamSynchronize(tCurrentStream), "cuStreamSynchronize"); }

StreamGuard::StreamGuard(const Stream& stream) : previous_(tCurrentStream) { tCurrentStream = stream.handle(); }

StreamGuard::~StreamGuard() { tCurrentStream = previous_; }

Event::Event() { check(driver().cuEventCreate(&event_, CU_EVENT_DEFAULT), "cuEventCreate"); }

Event::~Event() {
  if (event_) driver().cuEventDestroy(event_);
}

void Event::record() { check(driver().cuEventRecord(event_, tCurrentStream), "cuEventRecord"); }

float Event::elapsedMsSince(const Event& start) const {
  check(driver().cuEventSynchronize(event_), "cuEventSynchronize");
  float ms = 0;
  check(driver().cuEventElapsedTime(&ms, start.event_, event_), "cuEventElapsedTime");
  return ms;
}

}  // namespace gj::cuda
