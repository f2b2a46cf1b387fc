#include "runtime/threading.h"

#include "support/error.h"

#include <cblas.h>
#include <omp.h>

namespace gj {

void setNumThreads(int n) {
  USER_CHECK(n >= 1, "thread count must be at least 1, got {}", n);
  omp_set_num_threads(n);
  openblas_set_num_threads(n);
}

int numThreads() { return omp_get_max_threads(); }

OneThreadScope::OneThreadScope(bool engaged) : saved_(engaged ? omp_get_max_threads() : 0) {
  if (engaged) omp_set_num_threads(1);
}
OneThreadScope::~OneThreadScope() {
  if (saved_ > 0) omp_set_num_threads(saved_);
}

}  // namespace gj
