#pragma once
// A device kernel's launches timed (graphbench's --kernel-bandwidth): a fused kernel's
// (FuserOptions::timeKernels) or one of the runtime's reductions (cuda::setReductionTimes).
#include <cstdint>
#include <string>

namespace gj {

struct KernelTime {
  std::string kernel;   ///< the fusion group's node (Node::describe), or the runtime op with its shapes
  int64_t launches = 0;
  int64_t bytes = 0;    ///< per launch: its inputs read and its outputs written, once each
  double ms = 0;        ///< summed over the launches
};

}  // namespace gj
