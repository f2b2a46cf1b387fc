#pragma once
// The unfused path on CUDA: the primitives that runtime/ops's ops hand device tensors to. Pointwise maps,
// strided copies, fills, sums and maxima, gathers and scatter-adds are the kernels of kernels.cuh, compiled
// by NVRTC once (the persistent kernel cache keeps the image between processes); GEMMs go to cuBLAS
// (blas.cpp). Everything is queued on the calling thread's current stream.
//
// Operands are device tensors, except that a 0-dim host tensor (a scalar operand) is taken to the device.
// Results are new contiguous device tensors. Errors are gj::Error ("no CUDA device: ..." without one).
#include "runtime/kernel_time.h"
#include "runtime/tensor.h"
#include "support/pointwise.h"

#include <span>
#include <string>
#include <utility>

namespace gj::ops {
struct Conv2dParams;
struct Pool2dParams;
}

namespace gj::cuda {

/// op(a, b, scalar) with broadcasting, by the op's scalar rule (support/pointwise.def); `b` is undefined for
/// one-operand ops, and `scalar` is a third operand (alpha for Add and Sub, the threshold for
/// ThresholdBackward), or the tensor `c` when it is defined (where's other). Operands share a float dtype
/// (the caller promotes).
Tensor map(PointwiseOp op, const Tensor& a, const Tensor& b, double scalar = 1.0, const Tensor& c = {});

/// Sums x over the dimensions where `keptSizes` is 1 and x is not, times `scale` (1/count for a mean),
/// accumulating in double; the result has `outSizes` (keptSizes with or without those dims).
Tensor sum(const Tensor& x, std::span<const int64_t> keptSizes, std::span<const int64_t> outSizes, double scale);

/// sum() written as float64, the statistics kept at full precision; with y (x's sizes and dtype), the sum
/// of the products x * y, each formed in double, with no tensor of the products (a batch norm's sums of
/// squares, and of gradient times centred input).
Tensor sumInDouble(const Tensor& x, const Tensor& y, std::span<const int64_t> keptSizes,
                   std::span<const int64_t> outSizes, double scale);

/// The largest element over the same dimensions as sum() (NaN when any is NaN, or none is there).
Tensor amax(const Tensor& x, std::span<const int64_t> keptSizes, std::span<const int64_t> outSizes);

/// For each of the `rows` contiguous rows of n elements of x: the largest (the smallest with `min`) and its
/// int64 index, the first on a tie; a NaN wins (runtime/ops's extremeAlong on the device). Both [rows].
std::pair<Tensor, Tensor> extremeRows(const Tensor& x, int64_t rows, int64_t n, bool min);

/// softmax (log_softmax with `log`) of x along `dim`, in double as runtime/ops's: one kernel, each row
/// folded by a warp or a block (a row of -inf keeps its exponentials finite, as on the CPU).
Tensor softmax(const Tensor& x, int64_t dim, bool log);
/// Their gradient from the output's gradient g and the forward's output y: y * (g - sum(g * y)), or
/// g - exp(y) * sum(g) with `log`; one kernel.
Tensor softmaxBackward(const Tensor& g, const Tensor& y, int64_t dim, bool log);

/// Rows picked by int64 `indices` (n of them): out [n, width], row i = the `width` elements of `in`
/// (contiguous, viewed as rows of `width`) at row i * perRow + indices[i]. perRow 0 is embedding; perRow =
/// classes with width 1 picks one element a row (nll_loss). Indices must lie in [0, limit): an error
/// naming `what` otherwise (checked after the kernel, so the call waits for the device).
Tensor gather(const Tensor& in, const Tensor& indices, int64_t width, int64_t perRow, int64_t limit,
              const char* what);
/// The inverse: out's row i * perRow + indices[i] += scale * in's row i (in's rows `inRowStride` apart;
/// 0 repeats one row), atomically, for any repeats among the indices. `out` is contiguous.
void scatterAdd(const Tensor& out, const Tensor& in, int64_t inRowStride, const Tensor& indices, int64_t width,
                int64_t perRow, int64_t limit, double scale, const char* what);

/// ops::dropout on the device: x contiguous, rng the int64 [2] state (read by the kernel where it lies).
Tensor dropout(const Tensor& x, double p, const Tensor& rng, int64_t stream);
/// ops::uniform on the device: like a float32 or float64 device tensor.
Tensor uniform(const Tensor& like, const Tensor& rng, int64_t stream);

/// out = op(a, b) over int64 operands broadcast together, for the ops PyTorch computes in integers (add,
/// sub and rsub with an integral `scalar` alpha, mul, clamp_min, clamp_max, clamp with `scalar` its upper
/// bound, maximum, minimum, pow, the unary neg, abs, sign and relu of a, and where with a the condition
/// (0 or 1) and c the other operand): exact, wrapping on overflow.
Tensor mapIntegral(PointwiseOp op, const Tensor& a, const Tensor& b, int64_t scalar, const Tensor& c = Tensor());

/// dst = src (same sizes; any strides, src may broadcast), converting the dtype; both on the device.
void copy(const Tensor& dst, const Tensor& src);
/// Every element of a contiguous device tensor set to `value`.
void fill(const Tensor& dst, double value);

/// Before a timed launch (FuserOptions::timeKernels): writes a buffer of twice the L2's size, so that the
/// launch reads its operands from DRAM, then holds the current stream with a kernel that spins for
/// `microseconds`, so that an event recorded next is stamped when the hold ends, after the host has
/// issued the launch, rather than while the host still works on it (nvbench's blocking kernel). Events
/// around the launch then time the device's work alone. The hold lasts kTimingHoldMicroseconds (ops.cpp:
/// long enough for the host to issue a launch), or $GJ_KERNEL_TIMING_HOLD_US microseconds (0: no eviction
/// and no hold, so that the events time the host's work to issue the launch too).
/// Nothing on the emulated driver.
void holdForTiming();

/// The device's time for a copy (cuMemcpyDtoDAsync) that moves `bytes`, half read and half written,
/// timed as holdForTiming's kernels are: the median of 5, measured once a process per size. What a kernel
/// that moves as many bytes can hope for, where DRAM's peak cannot be reached at that size (a launch's
/// ramp; its writes may stay in L2). 0 on the emulated driver.
double copyCeilingMs(int64_t bytes);

/// The runtime's reductions timed (graphbench --kernel-bandwidth): while `times` is installed on this
/// thread, each sum, amax, max or min with indices, softmax and log_softmax and their gradients on the
/// device holds the stream (holdForTiming), times its launches between two events, waiting for them, and
/// adds them to `times` under the op and its shapes, with its bytes (its inputs read and its output
/// written once each). Returns the vector installed before; null uninstalls.
std::vector<KernelTime>* setReductionTimes(std::vector<KernelTime>* times);

/// A batch of equal GEMMs: product i reads A + i * strideA, B + i * strideB and writes C + i * strideC
/// (strides in elements; 0 repeats a broadcast operand).
struct GemmBatch {
  int64_t count = 1;
  int64_t strideA = 0, strideB = 0, strideC = 0;
};

/// Row-major C[M,N] = alpha * op(A)[M,K] * op(B)[K,N] + beta * C, as runtime/gemm.h's sgemm and dgemm,
/// on device pointers through cuBLAS (TF32 off: float32 results compare with the CPU's); float32 or float64.
/// A batch of more than one runs as one strided batched cuBLAS call (bmm's: one launch, not one a matrix).
void gemm(DType dtype, bool transA, bool transB, int64_t m, int64_t n, int64_t k, double alpha, const void* a,
          int64_t lda, const void* b, int64_t ldb, double beta, void* c, int64_t ldc, const GemmBatch& batch = {});

/// conv2d's unfolding of one image (`channels` planes of h x w, contiguous device memory) into col
/// [channels * kH * kW, outH * outW] (zeros in the padding), as runtime/ops/im2col.h; col2im writes the
/// adjoint into the image (each element the sum of the column elements that read it). float32 or float64.
void im2col(DType dtype, const void* image, int64_t channels, int64_t h, int64_t w, int64_t kh, int64_t kw,
            int64_t outH, int64_t outW, const ops::Conv2dParams& p, void* col);
void col2im(DType dtype, const void* col, int64_t channels, int64_t h, int64_t w, int64_t kh, int64_t kw,
            int64_t outH, int64_t outW, const ops::Conv2dParams& p, void* image);

/// How conv2d runs on the device: Auto takes cuDNN's convolution where cuDNN can run (cudnnUnavailable()
/// is empty) and Gemm otherwise; Gemm is im2col and a cuBLAS GEMM per image and group (the path under the
/// emulated driver, and a second opinion on cuDNN's in the GPU tests); Cudnn fails where cuDNN cannot run.
enum class ConvPath { Auto, Cudnn, Gemm };

/// conv2d without its bias: x [N, Cin, H, W], w [Cout, Cin/groups, kH, kW] on the device, one float dtype,
/// shapes as ops::conv2d has checked them; out [N, Cout, outH, outW] (ops::conv2d adds the bias).
Tensor conv2d(const Tensor& x, const Tensor& w, const ops::Conv2dParams& p, ConvPath path = ConvPath::Auto);
/// Its gradients with respect to x and w, for the output gradient g (ops::conv2dBackward sums the bias's).
std::pair<Tensor, Tensor> conv2dBackward(const Tensor& g, const Tensor& x, const Tensor& w, const ops::Conv2dParams& p,
                                         ConvPath path = ConvPath::Auto);

/// Max pooling of a contiguous device x [N, C, H, W] to [N, C, outH, outW] (sizes as ops::maxPool2d has
/// checked them): the maxima and their int64 positions in each plane; and its gradient for an input of
/// `inputSizes`, from the output gradient g, those positions and the forward's window (kernels.cuh's
/// pooling kernels).
std::pair<Tensor, Tensor> maxPool2d(const Tensor& x, const ops::Pool2dParams& p, int64_t outH, int64_t outW);
Tensor maxPool2dBackward(const Tensor& g, std::span<const int64_t> inputSizes, const Tensor& indices,
                         const ops::Pool2dParams& p);
/// Adaptive average pooling of a contiguous device x [N, C, H, W] to [N, C, outH, outW], and its gradient.
Tensor adaptiveAvgPool2d(const Tensor& x, int64_t outH, int64_t outW);
Tensor adaptiveAvgPool2dBackward(const Tensor& g, std::span<const int64_t> inputSizes);

/// The CUDA C of kernels.cuh, as NVRTC compiles it (support/pointwise.h and .def spliced in).
const std::string& kernelSource();

}  // namespace gj::cuda
