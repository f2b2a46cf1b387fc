// The interpreter's kernels (executors/interpreter/kernels.h) for ops.def's View group: aliases of their
// input (transposes, slices, reshapes).
#include "executors/interpreter/kernels.h"

#include "runtime/ops/ops.h"

namespace gj::interp {

namespace {

void tKernel(Frame& f, const Node* n, const Operands& in) { f.set(n, in.tensor(0).t()); }

void transposeKernel(Frame& f, const Node* n, const Operands& in) {
  f.set(n, in.tensor(0).transpose(in.integer(1), in.integer(2)));
}

void permuteKernel(Frame& f, const Node* n, const Operands& in) { f.set(n, in.tensor(0).permute(in.ints(1))); }

void selectKernel(Frame& f, const Node* n, const Operands& in) {
  f.set(n, in.tensor(0).select(in.integer(1), in.integer(2)));
}

void sliceKernel(Frame& f, const Node* n, const Operands& in) {
  f.set(n, in.tensor(0).slice(in.integer(1), in.integer(2), in.integer(3), in.integer(4)));
}

void viewKernel(Frame& f, const Node* n, const Operands& in) { f.set(n, in.tensor(0).view(in.ints(1))); }

void reshapeKernel(Frame& f, const Node* n, const Operands& in) { f.set(n, in.tensor(0).reshape(in.ints(1))); }

void unsqueezeKernel(Frame& f, const Node* n, const Operands& in) { f.set(n, in.tensor(0).unsqueeze(in.integer(1))); }

void squeezeKernel(Frame& f, const Node* n, const Operands& in) { f.set(n, in.tensor(0).squeeze(in.integer(1))); }

void expandKernel(Frame& f, const Node* n, const Operands& in) { f.set(n, in.tensor(0).expand(in.ints(1))); }

void chunkKernel(Frame& f, const Node* n, const Operands& in) {
  f.set(n, IValue(in.tensor(0).chunk(in.integer(1), in.integer(2))));
}

void unbindKernel(Frame& f, const Node* n, const Operands& in) {
  f.set(n, IValue(in.tensor(0).unbind(in.integer(1))));
}

void flattenKernel(Frame& f, const Node* n, const Operands& in) {
  f.set(n, ops::flatten(in.tensor(0), in.integer(1), in.integer(2)));
}

void splitWithSizesKernel(Frame& f, const Node* n, const Operands& in) {
  f.set(n, IValue(ops::splitWithSizes(in.tensor(0), in.ints(1), in.integer(2))));
}

}  // namespace

std::span<const KernelRow> viewKernels() {
  static const KernelRow rows[] = {
      {OpKind::T, tKernel},
      {OpKind::Transpose, transposeKernel},
      {OpKind::Permute, permuteKernel},
      {OpKind::Select, selectKernel},
      {OpKind::Slice, sliceKernel},
      {OpKind::View, viewKernel},
      {OpKind::Reshape, reshapeKernel},
      {OpKind::Unsqueeze, unsqueezeKernel},
      {OpKind::Squeeze, squeezeKernel},
      {OpKind::Expand, expandKernel},
      {OpKind::Chunk, chunkKernel},
      {OpKind::Unbind, unbindKernel},
      {OpKind::Flatten, flattenKernel},
      {OpKind::SplitWithSizes, splitWithSizesKernel},
  };
  return rows;
}

}  // namespace gj::interp
