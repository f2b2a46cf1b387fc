#pragma once
#include <cstddef>

namespace gj {
/// Alignment of every CPU allocation: one AVX-512 vector / cache line.
constexpr size_t kCpuAlignment = 64;
/// Blocks of this size or larger are cached when freed and handed out again for the same size: by default
/// while the blocks held and cached together stay within half the machine's memory (or within what is
/// held plus 2 GB, where that is more); GJ_CPU_CACHE_MB sets a fixed number of megabytes for the cached
/// blocks instead (0 turns the cache off). Off under AddressSanitizer.
constexpr size_t kCpuCacheMinBytes = size_t{1} << 20;

/// Allocates `nbytes` aligned to kCpuAlignment; throws gj::Error with the size when memory runs out
/// (after giving the cache's blocks back to the system and trying again).
void* cpuAllocate(size_t nbytes);
/// Smaller blocks, up to 256 KiB, are cached per thread (up to 16 MiB a thread; off under
/// AddressSanitizer): a small batch's step allocates and frees the same few sizes dozens of times.
/// Frees what cpuAllocate(nbytes) returned: into its cache when there is room.
void cpuFree(void* p, size_t nbytes);
/// Gives every cached large block, and the calling thread's small ones, back to the system.
void releaseCpuCache();

/// Bytes of tensor storage held now, and the most held since the last resetCpuPeak() (process-wide,
/// all threads; what graphbench reports as a row's peak memory); and the bytes of freed large blocks the
/// cache keeps (not counted as held, nor are the small blocks the threads keep).
struct CpuMemoryStats {
  size_t currentBytes = 0;
  size_t peakBytes = 0;
  size_t cachedBytes = 0;
  /// What cached blocks may hold now: GJ_CPU_CACHE_MB's number, or the default budget less what is held.
  size_t cacheBudgetBytes = 0;
};
CpuMemoryStats cpuMemoryStats();
/// Starts a new peak at the current level.
void resetCpuPeak();
}  // namespace gj
