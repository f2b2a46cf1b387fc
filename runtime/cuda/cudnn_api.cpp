// cuDNN's loader (cudnn_api.h) and cudnnUnavailable().
#include "runtime/cuda/cudnn_api.h"
#include "support/environment.h"

#include "runtime/cuda/cudnn_lstm.h"
#include "runtime/cuda/device.h"
#include "runtime/cuda/driver_api.h"
#include "support/error.h"

#include <fmt/format.h>

#include <climits>
#include <mutex>

namespace gj::cuda {
namespace detail {

const Cudnn& cudnn() {
  static Cudnn c;
  static std::once_flag once;
  std::call_once(once, [] {
    void* lib = openLibrary("cuDNN", "GJ_CUDNN", environment().cudnn, {"libcudnn.so.9"}, c.failure);
    if (!lib) return;
    std::string missing;
#define GJ_CUDNN_FIND(name) findEntry(lib, #name, c.name, missing);
    GJ_CUDNN_ENTRIES(GJ_CUDNN_FIND)
#undef GJ_CUDNN_FIND
    if (!missing.empty()) c.failure = fmt::format("the cuDNN library lacks {} (cuDNN 9 is needed)", missing);
  });
  return c;
}

void check(cudnnStatus_t s, const char* what) {
  if (s != CUDNN_STATUS_SUCCESS) throw Error(fmt::format("{} failed: {}", what, cudnn().cudnnGetErrorString(s)));
}

cudnnHandle_t cudnnHandle() {
  const Cudnn& c = cudnn();
  thread_local cudnnHandle_t h = nullptr;
  if (!h) check(c.cudnnCreate(&h), "cudnnCreate");
  check(c.cudnnSetStream(h, currentStream()), "cudnnSetStream");
  return h;
}

int32_t cudnnInt(int64_t v, const char* who, const char* what) {
  USER_CHECK(v > 0 && v <= INT32_MAX, "{}: {} {} is out of cuDNN's range", who, what, v);
  return static_cast<int32_t>(v);
}

}  // namespace detail

std::string cudnnUnavailable() {
  auto d = device();
  if (!d) return d.error().what();
  if (d.value()->emulated) return "cuDNN needs a real GPU; the emulated driver has none";
  return detail::cudnn().failure;
}

}  // namespace gj::cuda
