#pragma once
// Eager autograd: the runtime's kernels called op by op, each recording its gradient as a closure on a
// tape; backward() runs the closures in reverse. No graph: the "aten" row of fastrnns (nn.LSTM with cuDNN
// off), and a reference for the compiled paths' gradients that shares none of their code but the kernels.
#include "runtime/tensor.h"

#include <functional>
#include <vector>

namespace gj::ops {
struct Conv2dParams;
struct Pool2dParams;
}  // namespace gj::ops

namespace gj::eager {

using ops::Conv2dParams;
using ops::Pool2dParams;

/// A tensor on a tape: its value, and its slot on the tape when it carries a gradient (-1: a constant).
struct Var {
  Tensor value;
  int slot = -1;
};

class Tape {
 public:
  /// A model input: `requiresGrad` ones get a gradient.
  Var input(const Tensor& t, bool requiresGrad);

  Var mm(const Var& a, const Var& b);
  Var t(const Var& a);
  Var add(const Var& a, const Var& b);  ///< broadcasting; gradients summed back to each operand's sizes
  Var sub(const Var& a, const Var& b);
  Var mul(const Var& a, const Var& b);
  Var div(const Var& a, const Var& b);
  Var sigmoid(const Var& a);
  Var tanh(const Var& a);
  Var select(const Var& a, int64_t dim, int64_t index);
  /// The slices of `a` along dim 0; their gradients are written into one gradient of `a`'s sizes (a
  /// select's each would be a tensor of those sizes: quadratic over a sequence).
  std::vector<Var> unbind(const Var& a);
  std::vector<Var> chunk(const Var& a, int64_t chunks, int64_t dim);
  Var stack(const std::vector<Var>& xs, int64_t dim);
  Var cat(const std::vector<Var>& xs, int64_t dim);
  Var narrow(const Var& a, int64_t dim, int64_t start, int64_t length);
  Var mean(const Var& a, const std::vector<int64_t>& dims, bool keepdim);
  Var std(const Var& a, const std::vector<int64_t>& dims, bool unbiased, bool keepdim);
  /// prim::philox_dropout in training (runtime/ops/ops.h's dropout); its gradient draws the same mask.
  Var dropout(const Var& a, double p, const Tensor& rng, int64_t stream);
  /// Over the trailing dims of normalizedShape; w and b may be constants with undefined values (none).
  Var layerNorm(const Var& x, const std::vector<int64_t>& normalizedShape, const Var& w, const Var& b, double eps);

  // The CNN ops (runtime/ops/ops.h's conv2d, batchNorm, pooling), for the ResNets' eager rows.
  Var conv2d(const Var& x, const Var& w, const Conv2dParams& p);  ///< without a bias
  /// In training the updated running statistics are written to *runningMean and *runningVar (they carry no
  /// gradient); not training, those are read.
  Var batchNorm(const Var& x, const Var& w, const Var& b, Tensor* runningMean, Tensor* runningVar, bool training,
                double momentum, double eps);
  Var relu(const Var& a);
  Var maxPool2d(const Var& x, const Pool2dParams& p);
  Var adaptiveAvgPool2d(const Var& x, int64_t outH, int64_t outW);
  Var flatten(const Var& a, int64_t start, int64_t end);
  Var linear(const Var& x, const Var& w, const Var& b);  ///< x w^T + b, x [N, in]: mm, t and add

  /// Runs the recorded gradients backwards from `outputs` with incoming gradients `grads` (one each);
  /// then grad(v) is the gradient of every input that required one. Once per tape.
  void backward(const std::vector<Var>& outputs, const std::vector<Tensor>& grads);
  /// The gradient of `v` after backward (undefined when nothing reached it).
  Tensor grad(const Var& v) const;

 private:
  using Backward = std::function<std::vector<Tensor>(const Tensor& g)>;
  Var record(Tensor value, std::vector<int> inputs, Backward backward);
  struct Entry {
    std::vector<int> inputs;  ///< slots of the operands (-1: a constant, which gets no gradient)
    Backward backward;        ///< the gradient of each operand from the output's
    int64_t slice = -1;       ///< unbind: the gradient goes to this slice (dim 0) of the operand's
    Shape operandSizes{};     ///< unbind: the operand's sizes
  };
  std::vector<Entry> entries_;  ///< by slot; an input's has no backward
  std::vector<Tensor> grads_;
  bool done_ = false;
};

}  // namespace gj::eager
