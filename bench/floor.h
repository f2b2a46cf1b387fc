#pragma once
// A row's GEMM floor: the time its float32 products take on their own, each shape timed alone at the
// rate the library runs it. A row at its floor spends nothing beyond its GEMMs; the ratio of a row's
// time to its floor says how far it is from that limit (graphbench's info column, docs/graphbench.md).
#include "bench/groups.h"
#include "runtime/gemm.h"

#include <map>
#include <memory>
#include <vector>

namespace gj::bench {

/// The products a row's forward and backward run: each once, under a GemmRecording.
struct RowGemms {
  std::map<GemmShape, int64_t> fwd, bwd;
};
RowGemms recordGemms(const Row& row);

/// Times product shapes, each on operands of its own (random, made once), and sums them into floors.
class GemmFloor {
 public:
  GemmFloor();
  ~GemmFloor();
  /// Shapes to time from now on.
  void add(const std::map<GemmShape, int64_t>& counts);
  /// One timed product of every shape added: between --interleave's rounds, so that the floors are
  /// measured through the same minutes as the rows.
  void round();
  /// The floor of `counts`, in ms: each shape's median time times the number of its products; 0 for none.
  /// A shape timed fewer than kMinRuns times, or for less than kMinMs in all, is timed until it has been.
  double ms(const std::map<GemmShape, int64_t>& counts);

 private:
  struct Timed;
  Timed& timed(const GemmShape& shape);
  std::map<GemmShape, std::unique_ptr<Timed>> shapes_;
};

}  // namespace gj::bench
