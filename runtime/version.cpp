#include "runtime/version.h"

#include "runtime/cuda/device.h"
#include "runtime/threading.h"

#include <cblas.h>
#ifdef GJ_WITH_ONEDNN
#include <dnnl.h>
#endif
#include <fmt/format.h>

namespace gj {

std::string runtimeVersions() {
#ifdef GJ_WITH_ONEDNN
  const dnnl_version_t* v = dnnl_version();
  std::string onednn = fmt::format("oneDNN {}.{}.{}", v->major, v->minor, v->patch);
#else
  std::string onednn = "no oneDNN";
#endif
  std::string blas = openblas_get_config();
  while (!blas.empty() && blas.back() == ' ') blas.pop_back();
  auto d = cuda::device();
  std::string gpu = d ? fmt::format("CUDA: {} (sm_{}{}, driver {}.{})", d.value()->name, d.value()->major,
                                    d.value()->minor, d.value()->driverVersion / 1000,
                                    d.value()->driverVersion % 1000 / 10)
                      : std::string("no CUDA device");
  return fmt::format("{}; {}; threads {}; {}", onednn, blas, numThreads(), gpu);
}

}  // namespace gj
