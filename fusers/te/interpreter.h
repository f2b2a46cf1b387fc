#pragma once
// The reference interpreter of TE statements: the oracle the LLVM and CUDA backends are checked
// against. Values are computed in double and rounded to each buffer's type when stored.
#include "fusers/te/loopnest.h"
#include "runtime/tensor.h"

#include <vector>

namespace gj::te {

/// Runs `nest` on contiguous input tensors (the nest's input buffers, in order) and returns its outputs.
std::vector<Tensor> interpret(const LoopNest& nest, const std::vector<Tensor>& inputs);

}  // namespace gj::te
