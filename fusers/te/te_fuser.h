#pragma once
// The TE fuser's graph pass: prim::TensorExprGroup around pointwise regions and the reductions of their
// values (the gradient-of-broadcast sums), so a backward's bias gradients stay inside the group.
#include "fusers/fuser.h"
#include "fusers/te/loopnest.h"
#include "ir/graph.h"

#include <memory>
#include <string>

namespace gj::te {

/// Groups, in every block, pointwise ops over one static shape (inputs broadcasting, chunks of outside
/// tensors read as partitions) with sum_to_size / sum reductions of their values at the group's edge,
/// and, for the CPU, the small products (a batch-1 step's h W^T) whose results only the group reads.
/// Pre: complete types. Returns the number of groups.
int64_t fuseTensorExprGroups(Graph& g, DeviceKind device = DeviceKind::Cpu);
/// Why the TE fuser leaves `n` outside its groups, by its rules (`products`: it groups for the CPU).
std::string fusionBlocker(const Node* n, bool products);

/// A GPU-scheduled nest (gpuLoopNest, or any scheduleGpu) as CUDA C, compiled by NVRTC for this device,
/// as the kernel the TE fuser runs on CUDA: one launch shaped by gpu.gpuLaunch(). Throws gj::Error ("no
/// CUDA device: ..." first) when it cannot be compiled or loaded. Kept in `context`'s CUDA modules.
std::shared_ptr<const CompiledKernel> compileGpuNest(LoopNest gpu, const std::string& name,
                                                     Context& context = Context::current());

}  // namespace gj::te
