#include "runtime/allocator.h"

#include "support/error.h"

#include <atomic>
#include <cstdlib>

namespace gj {

namespace {

std::atomic<size_t> gCurrent{0}, gPeak{0};

size_t rounded(size_t nbytes) {
  size_t r = (nbytes + kCpuAlignment - 1) / kCpuAlignment * kCpuAlignment;
  return r == 0 ? kCpuAlignment : r;
}

}  // namespace

void* cpuAllocate(size_t nbytes) {
  const size_t size = rounded(nbytes);
  void* p = std::aligned_alloc(kCpuAlignment, size);
  USER_CHECK(p != nullptr, "out of memory: could not allocate {} bytes on cpu", nbytes);
  size_t now = gCurrent.fetch_add(size, std::memory_order_relaxed) + size;
  size_t peak = gPeak.load(std::memory_order_relaxed);
  while (now > peak && !gPeak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
  return p;
}

void cpuFree(void* p, size_t nbytes) {
  if (!p) return;
  gCurrent.fetch_sub(rounded(nbytes), std::memory_order_relaxed);
  std::free(p);
}

CpuMemoryStats cpuMemoryStats() {
  return {gCurrent.load(std::memory_order_relaxed), gPeak.load(std::memory_order_relaxed)};
}

void resetCpuPeak() { gPeak.store(gCurrent.load(std::memory_order_relaxed), std::memory_order_relaxed); }

}  // namespace gj
