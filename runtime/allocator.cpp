#include "runtime/allocator.h"
#include "support/environment.h"

#include "support/error.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

namespace gj {

namespace {

std::atomic<size_t> gCurrent{0}, gPeak{0};

size_t rounded(size_t nbytes) {
  size_t r = (nbytes + kCpuAlignment - 1) / kCpuAlignment * kCpuAlignment;
  return r == 0 ? kCpuAlignment : r;
}

// Note [The large-block budget]
// Freed blocks of kCpuCacheMinBytes or more, by exact size, kept for the next allocation of that size. A
// training step allocates the same large buffers on every call (activations, the stacked gate
// gradients); from the system each would be fresh pages, zeroed by the kernel at the first touch, a page
// fault each 4 KB (dearer on a VM, the host faulting too). A fixed few gigabytes are too little for a CNN
// step at a realistic batch, which then refaults its activations every step. Nor does the most a process
// has held bound what it needs kept: blocks are matched by exact size, and the sizes freed in one part of
// a step are not those asked for in the next. So by default freed blocks are kept while the blocks held and kept
// together stay within half the machine's memory (or within what is held plus 2 GB, where that is more);
// a block that does not fit evicts kept ones (the largest first), and before a block of a size none
// kept has comes from the system, kept blocks beyond the budget go first. GJ_CPU_CACHE_MB sets a fixed
// budget for the kept blocks instead (0: no cache). Under AddressSanitizer nothing is cached, so that a
// use after free is still caught.
constexpr size_t kCacheBudgetFloor = size_t{2} << 30;

size_t halfTheMachinesMemory() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<size_t>(pages) * static_cast<size_t>(page) / 2 : kCacheBudgetFloor;
}

std::optional<size_t> fixedCacheLimit() {
#if defined(__SANITIZE_ADDRESS__)
  return 0;
#endif
  if (const std::optional<std::string> env = environment().cpuCacheMb) {
    char* end = nullptr;
    unsigned long long mb = std::strtoull(env->c_str(), &end, 10);
    if (end != env->c_str() && *end == '\0') return static_cast<size_t>(mb) << 20;
  }
  return std::nullopt;
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
  /// False when the block does not fit in the budget even alone (the caller frees it).
  bool give(void* p, size_t size) {
    const size_t budget = this->budget(0);
    if (size > budget) return false;
    std::lock_guard<std::mutex> lock(mu_);
    evictTo(budget - size);
    free_.emplace(size, p);
    cached_ += size;
    return true;
  }
  /// Before `size` more bytes come from the system (no kept block has that size): kept blocks beyond the
  /// budget once they are held go back first, so that a process whose sizes change (another model) does
  /// not keep the last one's blocks on top of the new ones.
  void makeRoom(size_t size) {
    const size_t budget = this->budget(size);
    std::lock_guard<std::mutex> lock(mu_);
    evictTo(budget);
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
  // What the kept blocks may hold once `more` bytes are held beyond today's (Note [The large-block budget]).
  size_t budget(size_t more) const {
    if (fixed_) return *fixed_;
    const size_t held = gCurrent.load(std::memory_order_relaxed) + more;
    return std::max(kCacheBudgetFloor, limit_ > held ? limit_ - held : 0);
  }
 private:
  // Frees the largest kept blocks until at most `bytes` are kept. Pre: mu_ held.
  void evictTo(size_t bytes) {
    while (cached_ > bytes) {
      auto largest = std::prev(free_.end());
      std::free(largest->second);
      cached_ -= largest->first;
      free_.erase(largest);
    }
  }

  std::mutex mu_;
  std::multimap<size_t, void*> free_;
  size_t cached_ = 0;
  const std::optional<size_t> fixed_ = fixedCacheLimit();
  const size_t limit_ = halfTheMachinesMemory();  // of held and kept blocks together, unless fixed_
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

// Freed blocks of up to kSmallCacheMaxBytes, per thread, by size (a multiple of kCpuAlignment): a small
// batch's step allocates and frees the same few sizes dozens of times, and glibc's malloc serves blocks
// over 1 KiB from its bins, consolidating its fast bins first (a quarter of a batch-1 LSTM step went to
// malloc and free). A thread keeps at most kSmallCacheBytes in all (a forward's saved activations come
// back in the backward, hundreds of one size); a block freed on another thread than its allocator's
// joins the freeing thread's lists. Off under AddressSanitizer, as the large cache is.
constexpr size_t kSmallCacheMaxBytes = size_t{256} << 10;
constexpr size_t kSmallCacheBytes = size_t{16} << 20;

class SmallBlockCache {
 public:
  ~SmallBlockCache() {
    release();
    gone = true;
  }
  void* take(size_t size) {
    std::vector<void*>* list = listFor(size);
    if (!list || list->empty()) return nullptr;
    void* p = list->back();
    list->pop_back();
    bytes_ -= size;
    return p;
  }
  bool give(void* p, size_t size) {
    std::vector<void*>* list = listFor(size);
    if (!list || bytes_ + size > kSmallCacheBytes) return false;
    list->push_back(p);
    bytes_ += size;
    return true;
  }
  void release() {
    for (std::vector<void*>& list : lists_) {
      for (void* p : list) std::free(p);
      list.clear();
    }
    bytes_ = 0;
  }

  // Set once this thread's cache is destroyed: what the thread frees later (thread_local or static storage
  // destroyed after it) goes straight to the system.
  static thread_local bool gone;

 private:
  std::vector<void*>* listFor(size_t size) {
#if defined(__SANITIZE_ADDRESS__)
    (void)size;
    return nullptr;
#else
    if (size > kSmallCacheMaxBytes) return nullptr;
    if (lists_.empty()) lists_.resize(kSmallCacheMaxBytes / kCpuAlignment);
    return &lists_[size / kCpuAlignment - 1];
#endif
  }

  std::vector<std::vector<void*>> lists_;
  size_t bytes_ = 0;
};

thread_local bool SmallBlockCache::gone = false;

// This thread's cache, or null once it is destroyed.
SmallBlockCache* smallCache() {
  static thread_local SmallBlockCache c;
  return SmallBlockCache::gone ? nullptr : &c;
}

// A cached block of `size` bytes, or null: the large blocks' shared cache, or this thread's small one.
void* takeCached(size_t size) {
  if (size >= kCpuCacheMinBytes) return cache().take(size);
  SmallBlockCache* small = smallCache();
  return small ? small->take(size) : nullptr;
}

// Whether the cache for `size` kept p (else the caller frees it).
bool keepCached(void* p, size_t size) {
  if (size >= kCpuCacheMinBytes) return cache().give(p, size);
  SmallBlockCache* small = smallCache();
  return small && small->give(p, size);
}

}  // namespace

void* cpuAllocate(size_t nbytes) {
  const size_t size = rounded(nbytes);
  void* p = takeCached(size);
  if (!p && size >= kCpuCacheMinBytes) cache().makeRoom(size);
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
  if (!keepCached(p, size)) std::free(p);
}

void releaseCpuCache() {
  cache().release();
  if (SmallBlockCache* small = smallCache()) small->release();
}

CpuMemoryStats cpuMemoryStats() {
  return {gCurrent.load(std::memory_order_relaxed), gPeak.load(std::memory_order_relaxed), cache().cachedBytes(),
          cache().budget(0)};
}

void resetCpuPeak() { gPeak.store(gCurrent.load(std::memory_order_relaxed), std::memory_order_relaxed); }

}  // namespace gj
