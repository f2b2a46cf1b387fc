#pragma once
// graphbench --check: fastrnns' test.py. Every selected rnns row (each compiled one under every fuser x
// executor) runs once on the same inputs (seed 17) and output gradients as its twin: the jit rows, aten and
// py against the library LSTM (cudnn); cudnn against the eager autograd (aten); the layer-norm rows, which
// no library has, against the eager autograd of their own model. Outputs and every input's gradient must
// agree to fastrnns' tolerance, max |diff| <= 1e-3.
#include "bench/groups.h"

#include <string>
#include <utility>
#include <vector>

namespace gj::bench {

/// Prints one line per row; returns 0 when every row agrees with its twin, 1 otherwise.
/// GJ_CHECK_PLANT_ERROR=ROW (the test of --check itself) adds 2e-3 to one element of that row's first
/// parameter gradient, which must then fail.
int runCheck(const Options& o, const std::vector<FuserExecutor>& fuserExecutorPairs);

}  // namespace gj::bench
