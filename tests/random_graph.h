#pragma once
// A seeded generator of random graphs for differential testing: pointwise chains with broadcasting and
// scalars, chunk, cat, reductions, mm, transposes, and loops with carried values, over float64 inputs.
#include "ir/graph.h"

#include <cstdint>
#include <memory>

namespace gj::test {

/// A verified graph; every input is a float64 tensor of static sizes. Same seed, same graph.
std::unique_ptr<Graph> randomGraph(uint64_t seed);

}  // namespace gj::test
