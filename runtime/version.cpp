#include "runtime/version.h"

#include "runtime/threading.h"

#include <cblas.h>
#include <dnnl.h>
#include <fmt/format.h>

namespace gj {

std::string runtimeVersions() {
  const dnnl_version_t* v = dnnl_version();
  std::string blas = openblas_get_config();
  while (!blas.empty() && blas.back() == ' ') blas.pop_back();
  return fmt::format("oneDNN {}.{}.{}; {}; threads {}", v->major, v->minor, v->patch, blas, numThreads());
}

}  // namespace gj
