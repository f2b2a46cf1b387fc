#include "runtime/allocator.h"

#include "support/error.h"

#include <cstdlib>

namespace gj {

void* cpuAllocate(size_t nbytes) {
  size_t rounded = (nbytes + kCpuAlignment - 1) / kCpuAlignment * kCpuAlignment;
  if (rounded == 0) rounded = kCpuAlignment;
  void* p = std::aligned_alloc(kCpuAlignment, rounded);
  USER_CHECK(p != nullptr, "out of memory: could not allocate {} bytes on cpu", nbytes);
  return p;
}

void cpuFree(void* p) { std::free(p); }

}  // namespace gj
