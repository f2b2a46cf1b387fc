// The interpreter's kernels (executors/interpreter/kernels.h) for ops.def's Reduction group: sums, means,
// extremes, softmaxes, norms and losses, and their gradients.
#include "executors/interpreter/kernels.h"

#include "runtime/ops/ops.h"

namespace gj::interp {

namespace {

void sumKernel(Frame& f, const Node* n, const Operands& in) { f.set(n, ops::sum(in.tensor(0))); }

void sumDimKernel(Frame& f, const Node* n, const Operands& in) {
  f.set(n, ops::sum(in.tensor(0), in.ints(1), in[2].toBool("keepdim")));
}

void meanKernel(Frame& f, const Node* n, const Operands& in) { f.set(n, ops::mean(in.tensor(0))); }

void meanDimKernel(Frame& f, const Node* n, const Operands& in) {
  f.set(n, ops::mean(in.tensor(0), in.ints(1), in[2].toBool("keepdim")));
}

void amaxKernel(Frame& f, const Node* n, const Operands& in) {
  f.set(n, ops::amax(in.tensor(0), in.ints(1), in[2].toBool("keepdim")));
}

void aminKernel(Frame& f, const Node* n, const Operands& in) {
  f.set(n, ops::amin(in.tensor(0), in.ints(1), in[2].toBool("keepdim")));
}

void softmaxKernel(Frame& f, const Node* n, const Operands& in) {
  f.set(n, ops::softmax(in.tensor(0), in.integer(1)));
}

void varKernel(Frame& f, const Node* n, const Operands& in) {
  f.set(n, ops::var(in.tensor(0), in.ints(1), in[2].toBool("unbiased"), in[3].toBool("keepdim")));
}

void stdKernel(Frame& f, const Node* n, const Operands& in) {
  f.set(n, ops::stdDev(in.tensor(0), in.ints(1), in[2].toBool("unbiased"), in[3].toBool("keepdim")));
}

void layerNormKernel(Frame& f, const Node* n, const Operands& in) {
  auto r = ops::layerNorm(in.tensor(0), in.ints(1), in.optionalTensor(2), in.optionalTensor(3), in[4].toDouble("eps"));
  f.output(0) = r.out;
  if (n->kind() == OpKind::NativeLayerNorm) f.output(1) = r.mean, f.output(2) = r.rstd;
}

void logSoftmaxKernel(Frame& f, const Node* n, const Operands& in) {
  f.set(n, ops::logSoftmax(in.tensor(0), in.integer(1)));
}

void nllLossKernel(Frame& f, const Node* n, const Operands& in) { f.set(n, ops::nllLoss(in.tensor(0), in.tensor(1))); }

void crossEntropyKernel(Frame& f, const Node* n, const Operands& in) {
  f.set(n, ops::crossEntropy(in.tensor(0), in.tensor(1)));
}

void batchNormKernel(Frame& f, const Node* n, const Operands& in) {
  auto r = ops::batchNorm(in.tensor(0), in.optionalTensor(1), in.optionalTensor(2), in.optionalTensor(3),
                          in.optionalTensor(4), in[5].toBool("training"), in[6].toDouble("momentum"),
                          in[7].toDouble("eps"));
  f.output(0) = r.out;
  if (n->kind() == OpKind::NativeBatchNorm) {
    f.output(1) = r.mean, f.output(2) = r.invstd;
    f.output(3) = r.runningMean, f.output(4) = r.runningVar;
  }
}

void maxDimKernel(Frame& f, const Node* n, const Operands& in) {
  auto r = ops::extremeAlong(in.tensor(0), in.integer(1), in[2].toBool("keepdim"), n->kind() == OpKind::MinDim);
  f.output(0) = r.values;
  f.output(1) = r.indices;
}

void sumToSizeKernel(Frame& f, const Node* n, const Operands& in) {
  f.set(n, ops::sumToSize(in.tensor(0), in.ints(1)));
}

void softmaxBackwardKernel(Frame& f, const Node* n, const Operands& in) {
  f.set(n, ops::softmaxBackward(in.tensor(0), in.tensor(1), in.integer(2)));
}

void logSoftmaxBackwardKernel(Frame& f, const Node* n, const Operands& in) {
  f.set(n, ops::logSoftmaxBackward(in.tensor(0), in.tensor(1), in.integer(2)));
}

void nativeBatchNormBackwardKernel(Frame& f, const Node*, const Operands& in) {
  auto r = ops::batchNormBackward(in.tensor(0), in.tensor(1), in.optionalTensor(2), in.tensor(5), in.tensor(6),
                                  in[7].toBool("train"), in[8].toDouble("eps"));
  f.output(0) = r.input, f.output(1) = r.weight, f.output(2) = r.bias;
}

void nativeLayerNormBackwardKernel(Frame& f, const Node*, const Operands& in) {
  auto g = ops::layerNormBackward(in.tensor(0), in.tensor(1), in.ints(2), in.tensor(3), in.tensor(4),
                                  in.optionalTensor(5), in.optionalTensor(6));
  f.output(0) = g.input;
  f.output(1) = g.weight;
  f.output(2) = g.bias;
}

void varBackwardKernel(Frame& f, const Node* n, const Operands& in) {
  f.set(n, ops::varBackward(in.tensor(0), in.tensor(1), in.ints(2), in[3].toBool("unbiased"), in[4].toBool("keepdim")));
}

}  // namespace

std::span<const KernelRow> reductionKernels() {
  static const KernelRow rows[] = {
      {OpKind::Sum, sumKernel},
      {OpKind::SumDim, sumDimKernel},
      {OpKind::Mean, meanKernel},
      {OpKind::MeanDim, meanDimKernel},
      {OpKind::Amax, amaxKernel},
      {OpKind::Amin, aminKernel},
      {OpKind::Softmax, softmaxKernel},
      {OpKind::Var, varKernel},
      {OpKind::Std, stdKernel},
      {OpKind::LayerNorm, layerNormKernel},
      {OpKind::NativeLayerNorm, layerNormKernel},
      {OpKind::LogSoftmax, logSoftmaxKernel},
      {OpKind::NllLoss, nllLossKernel},
      {OpKind::CrossEntropy, crossEntropyKernel},
      {OpKind::BatchNorm, batchNormKernel},
      {OpKind::NativeBatchNorm, batchNormKernel},
      {OpKind::MaxDim, maxDimKernel},
      {OpKind::MinDim, maxDimKernel},
      {OpKind::SumToSize, sumToSizeKernel},
      {OpKind::SoftmaxBackward, softmaxBackwardKernel},
      {OpKind::LogSoftmaxBackward, logSoftmaxBackwardKernel},
      {OpKind::NativeBatchNormBackward, nativeBatchNormBackwardKernel},
      {OpKind::NativeLayerNormBackward, nativeLayerNormBackwardKernel},
      {OpKind::VarBackward, varBackwardKernel},
  };
  return rows;
}

}  // namespace gj::interp
