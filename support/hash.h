#pragma once

#include <cstddef>

namespace gj {

/// Folds v into the running hash h (boost's hash_combine mix, 64-bit constant): the hashes of argument
/// specs, of CSE's nodes and of graphs' structure combine their parts with it.
inline void hashMix(size_t& h, size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); }

}  // namespace gj
