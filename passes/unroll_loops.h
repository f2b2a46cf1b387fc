#pragma once
#include "ir/graph.h"

#include <string>
#include <string_view>

namespace gj {

struct UnrollOptions {
  int64_t maxFullUnroll = 20000;  ///< full unroll up to this many iterations (sequence length)
  int64_t factor = 8;             ///< partial unroll factor for other loops; 1 disables

  /// The parameters as a person writes them (passes.def): "full=N;by=K", either or both ("" for the
  /// defaults); a gj::Error names a malformed one.
  static UnrollOptions parse(std::string_view text);
  std::string str() const;  ///< "full=N;by=K"
};
bool unrollLoops(Graph& g, const UnrollOptions& opts);

/// Unrolls loops. A loop with a constant trip count of at most UnrollOptions::maxFullUnroll runs is
/// replaced by that many copies of its body; any other loop whose body always continues gets a body of
/// `factor` copies plus a remainder loop. Run constant propagation first so trip counts are constants.
/// Returns true if g changed.
///
/// Given:  %y = prim::Loop(%two, %true, %x) block0(%i, %a): %b = aten::tanh(%a) -> (%true, %b)
/// Result: %b.1 = aten::tanh(%x) ; %b.2 = aten::tanh(%b.1)     (uses of %y now use %b.2)
bool unrollLoops(Graph& g);

}  // namespace gj
