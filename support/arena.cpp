#include "support/arena.h"

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
void* allocateChunk(size_t bytes) {
  if (bytes != kHugePage) {
    void* p = std::malloc(bytes);
    if (!p) throw std::bad_alloc();
    return p;
  }
  void* p = std::aligned_alloc(kHugePage, kHugePage);
  if (!p) throw std::bad_alloc();
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  madvise(p, kHugePage, MADV_HUGEPAGE);  // advice: the chunk works the same without it
#endif
  return p;
}

void freeChunk(void* p) noexcept { std::free(p); }

}  // namespace gj::arena_detail
