#pragma once
#include <cstddef>

namespace gj {
/// Alignment of every CPU allocation: one AVX-512 vector / cache line.
constexpr size_t kCpuAlignment = 64;
/// Allocates `nbytes` aligned to kCpuAlignment; throws gj::Error with the size when memory runs out.
void* cpuAllocate(size_t nbytes);
void cpuFree(void* p);
}  // namespace gj
