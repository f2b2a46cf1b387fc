#pragma once
#include <cstddef>

namespace gj {
/// Alignment of every CPU allocation: one AVX-512 vector / cache line.
constexpr size_t kCpuAlignment = 64;
/// Allocates `nbytes` aligned to kCpuAlignment; throws gj::Error with the size when memory runs out.
void* cpuAllocate(size_t nbytes);
/// Frees what cpuAllocate(nbytes) returned.
void cpuFree(void* p, size_t nbytes);

/// Bytes of tensor storage held now, and the most held since the last resetCpuPeak() (process-wide,
/// all threads; what graphbench reports as a row's peak memory).
struct CpuMemoryStats {
  size_t currentBytes = 0;
  size_t peakBytes = 0;
};
CpuMemoryStats cpuMemoryStats();
/// Starts a new peak at the current level.
void resetCpuPeak();
}  // namespace gj
