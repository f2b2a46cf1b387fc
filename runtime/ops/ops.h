#pragma once
// The ops: the unfused path of every op the models use, for tensors on either device. The host's kernels
// are here (runtime/ops/*.cpp); a CUDA tensor's op goes to the device's primitives (runtime/cuda/ops.h).
// Each takes and returns tensors; inputs may be non-contiguous views; outputs are new contiguous tensors
// unless the op is a view.
// Float ops accept float32 and float64 (operands of one op share a dtype); errors are gj::Error.
#include "runtime/tensor.h"
#include "support/pointwise.h"
#include "support/window.h"

#include <span>
#include <vector>

namespace gj::ops {

// ---- GEMM family (BLAS underneath) ----
Tensor mm(const Tensor& a, const Tensor& b);                      ///< [M,K] x [K,N]
Tensor bmm(const Tensor& a, const Tensor& b);                     ///< [B,M,K] x [B,K,N]
Tensor matmul(const Tensor& a, const Tensor& b);                  ///< numpy matmul semantics, ranks 1..4
Tensor addmm(const Tensor& bias, const Tensor& a, const Tensor& b, double beta = 1.0, double alpha = 1.0);
/// c += a b, in place: c contiguous, [M, N], of a's and b's dtype and device.
void addmmInPlace(const Tensor& c, const Tensor& a, const Tensor& b);
Tensor linear(const Tensor& x, const Tensor& w, const Tensor& bias);  ///< x W^T + b; bias may be undefined

// ---- pointwise (broadcasting) ----
Shape broadcastShapes(std::span<const int64_t> a, std::span<const int64_t> b);
Tensor add(const Tensor& a, const Tensor& b, double alpha = 1.0);  ///< a + alpha * b
Tensor sub(const Tensor& a, const Tensor& b, double alpha = 1.0);  ///< a - alpha * b
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
/// Pointwise op `op` (support/pointwise.h) on the CPU's reference kernels: `a` and, for ops of two or more
/// operands, `b` tensors (broadcasting; b may be 0-dim), `scalar` a third operand (add's alpha).
Tensor pointwise(PointwiseOp op, const Tensor& a, const Tensor& b = {}, double scalar = 0);
/// A comparison (PointwiseOp::Gt, Lt, Ge, Le, Eq, Ne) of a and b, broadcasting: a bool tensor. The operands
/// are compared in their common dtype (float32, float64 or int64; bool only with bool).
Tensor compare(PointwiseOp op, const Tensor& a, const Tensor& b);
/// aten::where: a where the bool `cond` holds, else b; the three broadcast together, a and b in their
/// common dtype (aten::masked_fill(x, mask, v) is where(mask, v, x)).
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
/// The bitwise ops of integer tensors (logical ones of bools): a and b broadcast, in their promoted dtype.
enum class BitwiseOp : uint8_t { And, Or, Xor, LeftShift, RightShift };
Tensor bitwise(BitwiseOp op, const Tensor& a, const Tensor& b);
/// ~x of an integer tensor, not of a bool one.
Tensor bitwiseNot(const Tensor& x);
Tensor neg(const Tensor& x);
Tensor sigmoid(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor relu(const Tensor& x);
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor sqrt(const Tensor& x);

// ---- reductions and normalizations ----
/// Sum over `dims` (all dims when empty); keepdim keeps them as size 1. Accumulates in double.
Tensor sum(const Tensor& x, std::span<const int64_t> dims = {}, bool keepdim = false);
Tensor mean(const Tensor& x, std::span<const int64_t> dims = {}, bool keepdim = false);
/// The largest (smallest) element over `dims` (all when empty): NaN where any is.
Tensor amax(const Tensor& x, std::span<const int64_t> dims, bool keepdim);
Tensor amin(const Tensor& x, std::span<const int64_t> dims, bool keepdim);
/// aten::max / aten::min over `dim`: the largest (smallest, with `min`) element and its int64 index, the
/// first on a tie; NaN, at its first index, where any is.
struct ExtremeResult {
  Tensor values, indices;
};
ExtremeResult extremeAlong(const Tensor& x, int64_t dim, bool keepdim, bool min);
/// Their gradient: zeros of `sizes` but `grad` at `indices` along dim.
Tensor valueSelectingBackward(const Tensor& grad, int64_t dim, const Tensor& indices, std::span<const int64_t> sizes,
                              bool keepdim);
Tensor softmax(const Tensor& x, int64_t dim);
Tensor logSoftmax(const Tensor& x, int64_t dim);
/// Variance over `dims` (all when empty), dividing by count - 1 when unbiased; its square root.
Tensor var(const Tensor& x, std::span<const int64_t> dims, bool unbiased, bool keepdim);
Tensor stdDev(const Tensor& x, std::span<const int64_t> dims, bool unbiased, bool keepdim);
/// Layer norm over the trailing dims `normalizedShape` names: (x - mean) * rstd * weight + bias, rstd =
/// 1 / sqrt(biased var + eps); weight and bias may be undefined. mean and rstd have x's sizes with the
/// normalized dims as 1.
struct LayerNormResult {
  Tensor out, mean, rstd;
};
LayerNormResult layerNorm(const Tensor& x, std::span<const int64_t> normalizedShape, const Tensor& weight,
                          const Tensor& bias, double eps);
/// Mean negative log-likelihood: logp [N, C], target [N] int64 with values in [0, C).
Tensor nllLoss(const Tensor& logp, const Tensor& target);
Tensor crossEntropy(const Tensor& logits, const Tensor& target);

// ---- random ----
/// A Philox generator's state as prim::philox_dropout reads it from its int64 [2] rng tensor (host or device).
struct PhiloxState {
  int64_t seed, offset;
};
PhiloxState philoxState(const Tensor& rng);
/// prim::philox_dropout: in training each element dropped with probability p, the rest scaled by 1 / (1 - p),
/// by the numbers support/philox.h draws for element i from rng's seed and offset and `stream`; x itself
/// when not training. On the host or the device (the mask is the same).
Tensor dropout(const Tensor& x, double p, bool train, const Tensor& rng, int64_t stream);
/// prim::philox_uniform: a tensor of like's sizes, dtype and device whose element i is the uniform number in
/// [0, 1) support/philox.h draws for i (dropout's, so one seed gives the same numbers on either device).
/// like must be float32 or float64 (float16 and bfloat16 the interpreter widens first).
Tensor uniform(const Tensor& like, const Tensor& rng, int64_t stream);

// ---- data movement ----
Tensor cat(std::span<const Tensor> xs, int64_t dim);
Tensor stack(std::span<const Tensor> xs, int64_t dim);
/// aten::sort along dim, stable: the values and their int64 indices (on the host, as x is small here: the
/// lengths of a batch).
struct SortResult {
  Tensor values, indices;
};
SortResult sort(const Tensor& x, int64_t dim, bool descending);
/// The slices of x along dim at the int64 1-D `index`; its gradient adds each slice back at its index.
Tensor indexSelect(const Tensor& x, int64_t dim, const Tensor& index);
Tensor indexSelectBackward(const Tensor& g, std::span<const int64_t> sizes, int64_t dim, const Tensor& index);
/// PyTorch's _pack_padded_sequence: input [T, B, *] ([B, T, *] batchFirst) with int64 lengths [B] sorted
/// descending, each in [1, T] -> data [sum(lengths), *] (step t's rows of the sequences longer than t, step
/// after step) and batchSizes, a host int64 [max(lengths)] (how many sequences run at each step).
struct PackedSequence {
  Tensor data, batchSizes;
};
PackedSequence packPaddedSequence(const Tensor& input, const Tensor& lengths, bool batchFirst);
/// The packed rows of g put back where they came from in zeros of inputSizes.
Tensor packPaddedSequenceBackward(const Tensor& g, std::span<const int64_t> inputSizes, const Tensor& batchSizes,
                                  bool batchFirst);
/// The values of an int64 tensor, read on the host; `what` names the op in the error for another dtype.
std::vector<int64_t> hostInts(const Tensor& x, const char* what);
/// Rows of weight [V, D] gathered by int64 indices of any shape: result indices.shape + [D].
Tensor embedding(const Tensor& weight, const Tensor& indices);

// ---- convolution ----
struct Conv2dParams {
  int64_t strideH = 1, strideW = 1, padH = 0, padW = 0, dilationH = 1, dilationW = 1, groups = 1;
};
using gj::convOutputSize;  // support/window.h
/// x [N, Cin, H, W], w [Cout, Cin/groups, kH, kW], bias [Cout] or undefined; on the host or the device
/// (cuda::conv2d: cuDNN, or im2col and GEMMs).
Tensor conv2d(const Tensor& x, const Tensor& w, const Tensor& bias, const Conv2dParams& p);

// ---- the CNN ops: batch norm and pooling (cnn.cpp) ----
/// Batch norm of x [N, C, *] per channel. In training: the batch's mean and biased variance, and the
/// running statistics updated as (1 - momentum) * running + momentum * batch (the variance unbiased);
/// otherwise the running ones, returned as they are. weight and bias [C] may be undefined; in training the
/// running statistics may be too (none kept). mean and invstd [C] are what normalized: (x - mean) * invstd.
struct BatchNormResult {
  Tensor out, mean, invstd, runningMean, runningVar;
};
BatchNormResult batchNorm(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& runningMean,
                          const Tensor& runningVar, bool training, double momentum, double eps);
/// Its gradients: in training through the batch's statistics (recomputed in double from x with eps on the
/// host, where the saved mean is only where the sums start and invstd is only checked), otherwise
/// g * weight * invstd. weight's and bias's only for a defined weight (a None bias's is unused).
struct BatchNormGrads {
  Tensor input, weight, bias;
};
BatchNormGrads batchNormBackward(const Tensor& g, const Tensor& x, const Tensor& weight, const Tensor& mean,
                                 const Tensor& invstd, bool training, double eps);
/// 2-d pooling windows: kernel, stride (an empty stride in the op is the kernel), padding, dilation.
struct Pool2dParams {
  int64_t kH = 1, kW = 1, strideH = 1, strideW = 1, padH = 0, padW = 0, dilationH = 1, dilationW = 1;
  bool ceilMode = false;
};
/// The op's int[] arguments as PyTorch reads them: one element or two (H, W); an empty stride is the
/// kernel. `op` names the op in errors.
Pool2dParams pool2dParams(const char* op, std::span<const int64_t> kernel, std::span<const int64_t> stride,
                          std::span<const int64_t> padding, std::span<const int64_t> dilation, bool ceilMode);
/// Max pooling of x [N, C, H, W] (padding counts as -inf): the maxima and their int64 positions h * W + w
/// in each plane (the first maximum in window order; NaN wins).
struct MaxPoolResult {
  Tensor out, indices;
};
MaxPoolResult maxPool2d(const Tensor& x, const Pool2dParams& p);
/// Zeros of x's sizes with each element of g added at its maximum's position (p: the forward's window).
Tensor maxPool2dBackward(const Tensor& g, const Tensor& x, const Tensor& indices, const Pool2dParams& p);
/// Dims start..end of x (negative counts from the back) as one: a view when x's strides allow, else a copy.
Tensor flatten(const Tensor& x, int64_t start, int64_t end);
/// Adaptive average pooling of x [N, C, H, W] to [N, C, oH, oW]: cell (i, j) averages rows
/// [floor(i H / oH), ceil((i + 1) H / oH)) and the columns likewise.
Tensor adaptiveAvgPool2d(const Tensor& x, int64_t outH, int64_t outW);
/// Its gradient: each cell's gradient spread evenly over its window, for an input of x's sizes.
Tensor adaptiveAvgPool2dBackward(const Tensor& g, const Tensor& x);

// ---- gradient kernels (the ops that autodiff's formulas emit) ----
/// Sums `g` over its broadcast dimensions so that it has `sizes` (the inverse of expand).
Tensor sumToSize(const Tensor& g, std::span<const int64_t> sizes);
Tensor sigmoidBackward(const Tensor& g, const Tensor& y);            ///< g * y * (1 - y)
Tensor tanhBackward(const Tensor& g, const Tensor& y);               ///< g * (1 - y^2)
Tensor thresholdBackward(const Tensor& g, const Tensor& x, double threshold);  ///< x <= threshold ? 0 : g
/// maximum(x, y)'s gradient of x: g where x > y, 0 where x < y, g / 2 where x == y, g where either is NaN;
/// the three broadcast together (minimum's: maximumBackward(g, y, x)).
Tensor maximumBackward(const Tensor& g, const Tensor& x, const Tensor& y);
Tensor selectBackward(const Tensor& g, std::span<const int64_t> sizes, int64_t dim, int64_t index);
/// Zeros of `sizes` with g in the slice; g itself (no copy) when the slice covers the whole dimension.
Tensor sliceBackward(const Tensor& g, std::span<const int64_t> sizes, int64_t dim, int64_t start, int64_t end,
                     int64_t step);
Tensor embeddingBackward(const Tensor& g, const Tensor& indices, int64_t numWeights);
Tensor softmaxBackward(const Tensor& g, const Tensor& y, int64_t dim);     ///< y * (g - sum(g * y))
Tensor logSoftmaxBackward(const Tensor& g, const Tensor& y, int64_t dim);  ///< g - exp(y) * sum(g)
Tensor nllLossBackward(const Tensor& g, const Tensor& logp, const Tensor& target);
struct Conv2dGrads {
  Tensor input, weight, bias;  ///< bias undefined unless asked for
};
/// The gradients of a convolution's input and weight, and of its bias (g summed over all but the channels)
/// where `withBias`: a convolution without one (every ResNet's) need not read g once more. Without
/// `withInput` the input's is left undefined and not computed: a network's first convolution reads the
/// data, which needs no gradient, and its data gradient is as dear as its forward.
Conv2dGrads conv2dBackward(const Tensor& g, const Tensor& x, const Tensor& w, const Conv2dParams& p,
                           bool withBias = true, bool withInput = true);
std::vector<Tensor> splitWithSizes(const Tensor& x, std::span<const int64_t> sizes, int64_t dim);
/// Broadcasts g back over the reduced `dims` (all when empty) of an input of `sizes`; mean divides by the count.
Tensor sumBackward(const Tensor& g, std::span<const int64_t> sizes, std::span<const int64_t> dims, bool keepdim);
Tensor meanBackward(const Tensor& g, std::span<const int64_t> sizes, std::span<const int64_t> dims, bool keepdim);
/// var's gradient: g (broadcast back over `dims`) * 2 (x - mean) / (count - unbiased).
Tensor varBackward(const Tensor& g, const Tensor& x, std::span<const int64_t> dims, bool unbiased, bool keepdim);
/// Layer norm's gradients from the forward's statistics; weight and bias gradients only for defined ones.
struct LayerNormGrads {
  Tensor input, weight, bias;
};
LayerNormGrads layerNormBackward(const Tensor& g, const Tensor& x, std::span<const int64_t> normalizedShape,
                                 const Tensor& mean, const Tensor& rstd, const Tensor& weight, const Tensor& bias);
/// a + b where an undefined tensor counts as zero (gradient accumulation).
Tensor autogradAdd(const Tensor& a, const Tensor& b);
/// acc += x, in place: `acc` contiguous, `x` of the same sizes and dtype, any strides (a transposed
/// weight gradient is read in tiles). The caller guarantees nothing else sees acc's storage.
void addInPlace(Tensor& acc, const Tensor& x);

}  // namespace gj::ops
