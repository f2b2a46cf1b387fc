#pragma once
// A row's GEMM floor: the time its float32 products take on their own, each shape timed alone at the
// rate the library runs it. A row at its floor spends nothing beyond its GEMMs; the ratio of a row's
// time to its floor says how far it is from that limit (graphbench's info column, docs/graphbench.md).
#include "bench/groups.h"
#include "runtime/gemm.h"

#include <map>

namespace gj::bench {

/// The products a row's forward and backward run: each once, under a GemmRecording.
struct RowGemms {
  std::map<GemmShape, int64_t> fwd, bwd;
};
RowGemms recordGemms(const Row& row);

/// Times shapes once a process (the median of a few runs each, on random operands) and sums them.
class GemmFloor {
 public:
  /// The floor of `counts`, in ms: each shape's time times the number of its products; 0 for none.
  double ms(const std::map<GemmShape, int64_t>& counts);

 private:
  double timeOne(const GemmShape& shape);
  std::map<GemmShape, double> perCallMs_;
};

}  // namespace gj::bench
