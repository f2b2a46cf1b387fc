#pragma once
// A device kernel's launches timed (graphbench's --kernel-bandwidth): a fused kernel's
// (FuserOptions::timeKernels) or one of the runtime's reductions (cuda::setReductionTimes).
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace gj {

struct KernelTime {
  std::string kernel;   ///< the fusion group's node (Node::describe), or the runtime op with its shapes
  int64_t launches = 0;
  int64_t bytes = 0;    ///< per launch: its inputs read and its outputs written, once each
  double ms = 0;        ///< summed over the launches
};

/// One more launch of `kernel`, moving `bytes` in `ms`, added to its entry of `times` (made on its first).
inline void addKernelTime(std::vector<KernelTime>& times, const std::string& kernel, int64_t bytes, double ms) {
  auto it = std::find_if(times.begin(), times.end(), [&](const KernelTime& k) { return k.kernel == kernel; });
  if (it == times.end()) it = times.insert(it, KernelTime{.kernel = kernel});
  ++it->launches;
  it->bytes = bytes;
  it->ms += ms;
}

}  // namespace gj
