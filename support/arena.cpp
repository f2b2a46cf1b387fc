#include "support/arena.h"

#include <mutex>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace gj::arena_detail {

// Note [Arena chunks]
// An unrolled model's pipeline makes its nodes and values many times over: the unrolled graph, its copy
// into the differentiable graph, the forward and backward graphs, and what the fusers' rewrites make and
// erase. Their slots are most of the compile's memory, and every fresh 4 KB page of it costs a page fault
// (dearer in a VM, where the host faults too). So a chunk
// grows to one huge page (2 MB) and is asked to be backed by one (MADV_HUGEPAGE: Linux's transparent
// huge pages in their default `madvise` mode; ignored where they are off): a fault then maps 2 MB. The
// smaller chunks before it, up to 1 MB, come from malloc as before, so a fusion group's small graph
// takes no more memory than it did.
//
// A graph's huge chunks go back to a pool when it dies, not to the system: the pipeline makes graphs and
// drops them over and over (clones, a fusion's rewrites, the guarded copy), and a chunk from the system is
// 2 MB the kernel must zero again at its first touch. The pool keeps at most kPooledChunks; the chunks
// beyond go back to the system. Under AddressSanitizer it keeps none, so that a node used after its graph
// died is still caught.
namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr size_t kPooledChunks = 0;
#else
constexpr size_t kPooledChunks = 64;
#endif

struct ChunkPool {
  ChunkPool() { free.reserve(kPooledChunks); }
  std::mutex mu;
  std::vector<void*> free;
};

// Never destroyed: arenas in static storage may free their chunks after it would be.
ChunkPool& pool() {
  static ChunkPool* p = new ChunkPool;
  return *p;
}

}  // namespace

void* allocateChunk(size_t bytes) {
  if (bytes != kHugePage) {
    void* p = std::malloc(bytes);
    if (!p) throw std::bad_alloc();
    return p;
  }
  {
    ChunkPool& pl = pool();
    std::lock_guard<std::mutex> lock(pl.mu);
    if (!pl.free.empty()) {
      void* p = pl.free.back();
      pl.free.pop_back();
      return p;
    }
  }
  void* p = std::aligned_alloc(kHugePage, kHugePage);
  if (!p) throw std::bad_alloc();
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  madvise(p, kHugePage, MADV_HUGEPAGE);  // advice: the chunk works the same without it
#endif
  return p;
}

void freeChunk(void* p, size_t bytes) noexcept {
  if (bytes == kHugePage) {
    ChunkPool& pl = pool();
    std::lock_guard<std::mutex> lock(pl.mu);
    if (pl.free.size() < kPooledChunks) {
      pl.free.push_back(p);  // reserved up front: never throws
      return;
    }
  }
  std::free(p);
}

}  // namespace gj::arena_detail
