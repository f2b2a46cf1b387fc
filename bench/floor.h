#pragma once
// A row's floor: the time its float32 products (and a CNN's convolutions) take on their own, each shape
// timed alone at the rate the library runs it. A row at its floor spends nothing beyond those library
// calls; the ratio of a row's time to its floor says how far it is from that limit (graphbench's info
// column, docs/graphbench.md).
#include "bench/groups.h"
#include "runtime/gemm.h"

#include <map>
#include <memory>
#include <vector>

namespace gj::bench {

/// What one pass of a row (its forward, or its backward) runs in libraries, by shape and count.
struct LibraryCalls {
  std::map<GemmShape, int64_t> gemms;
  std::map<ConvShape, int64_t> convolutions;
};

/// The library calls of a row's forward and backward: each run once, under a GemmRecording.
struct RowGemms {
  LibraryCalls fwd, bwd;
};
RowGemms recordGemms(const Row& row);

/// A floor in ms: its products' share and its convolutions'.
struct Floor {
  double gemmMs = 0, convolutionMs = 0;
  double ms() const { return gemmMs + convolutionMs; }
};

/// Times product and convolution shapes, each on operands of its own (random, made once), and sums them
/// into floors.
class GemmFloor {
 public:
  GemmFloor();
  ~GemmFloor();
  /// Shapes to time from now on.
  void add(const LibraryCalls& calls);
  /// One timed call of every shape added: between --interleave's rounds, so that the floors are
  /// measured through the same minutes as the rows.
  void round();
  /// The floor of `calls`: each shape's median time times the number of its calls; 0 for none. A shape
  /// timed fewer than kMinRuns times, or for less than kMinMs in all, is timed until it has been.
  Floor ms(const LibraryCalls& calls);

  struct Timed;

 private:
  Timed& timed(const GemmShape& shape);
  Timed& timed(const ConvShape& shape);
  std::map<GemmShape, std::unique_ptr<Timed>> gemms_;
  std::map<ConvShape, std::unique_ptr<Timed>> convolutions_;
};

}  // namespace gj::bench
