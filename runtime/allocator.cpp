#include "runtime/allocator.h"

#include "support/error.h"

#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>

namespace gj {

namespace {

std::atomic<size_t> gCurrent{0}, gPeak{0};

size_t rounded(size_t nbytes) {
  size_t r = (nbytes + kCpuAlignment - 1) / kCpuAlignment * kCpuAlignment;
  return r == 0 ? kCpuAlignment : r;
}

// Freed blocks of kCpuCacheMinBytes or more, by exact size, kept for the next allocation of that size. A
// training step allocates the same large buffers on every call (activations, the stacked gate
// gradients); from the system each would be fresh pages, zeroed by the kernel at the first touch.
// Under AddressSanitizer nothing is cached, so that a use after free is still caught.
size_t cacheLimitFromEnvironment() {
#if defined(__SANITIZE_ADDRESS__)
  return 0;
#endif
  if (const char* env = std::getenv("GJ_CPU_CACHE_MB")) {
    char* end = nullptr;
    unsigned long long mb = std::strtoull(env, &end, 10);
    if (end != env && *end == '\0') return static_cast<size_t>(mb) << 20;
  }
  return size_t{2} << 30;
}

class BlockCache {
 public:
  void* take(size_t size) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = free_.find(size);
    if (it == free_.end()) return nullptr;
    void* p = it->second;
    free_.erase(it);
    cached_ -= size;
    return p;
  }
  /// False when the block does not fit under the limit (the caller frees it).
  bool give(void* p, size_t size) {
    std::lock_guard<std::mutex> lock(mu_);
    if (cached_ + size > limit_) return false;
    free_.emplace(size, p);
    cached_ += size;
    return true;
  }
  void release() {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [size, p] : free_) std::free(p);
    free_.clear();
    cached_ = 0;
  }
  size_t cachedBytes() {
    std::lock_guard<std::mutex> lock(mu_);
    return cached_;
  }
 private:
  std::mutex mu_;
  std::multimap<size_t, void*> free_;
  size_t cached_ = 0;
  const size_t limit_ = cacheLimitFromEnvironment();
};

// Never destroyed: tensors in static storage may be freed after it would be.
BlockCache& cache() {
  static BlockCache* c = new BlockCache;
  return *c;
}

void countAllocated(size_t size) {
  size_t now = gCurrent.fetch_add(size, std::memory_order_relaxed) + size;
  size_t peak = gPeak.load(std::memory_order_relaxed);
  while (now > peak && !gPeak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
}

}  // namespace

void* cpuAllocate(size_t nbytes) {
  const size_t size = rounded(nbytes);
  void* p = size >= kCpuCacheMinBytes ? cache().take(size) : nullptr;
  if (!p) p = std::aligned_alloc(kCpuAlignment, size);
  if (!p && size >= kCpuCacheMinBytes) {  // what the cache holds may be what is missing
    cache().release();
    p = std::aligned_alloc(kCpuAlignment, size);
  }
  USER_CHECK(p != nullptr, "out of memory: could not allocate {} bytes on cpu", nbytes);
  countAllocated(size);
  return p;
}

void cpuFree(void* p, size_t nbytes) {
  if (!p) return;
  const size_t size = rounded(nbytes);
  gCurrent.fetch_sub(size, std::memory_order_relaxed);
  if (size < kCpuCacheMinBytes || !cache().give(p, size)) std::free(p);
}

void releaseCpuCache() { cache().release(); }

CpuMemoryStats cpuMemoryStats() {
  return {gCurrent.load(std::memory_order_relaxed), gPeak.load(std::memory_order_relaxed), cache().cachedBytes()};
}

void resetCpuPeak() { gPeak.store(gCurrent.load(std::memory_order_relaxed), std::memory_order_relaxed); }

}  // namespace gj
