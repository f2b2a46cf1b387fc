// The unfused path's CUDA kernels: pointwise maps, strided copies, fills, sums and maxima, row
// gathers and scatter-adds by index, conv2d's im2col and col2im, and 2-d pooling. One source, used
// three ways:
//   - NVRTC compiles it at run time (ops.cpp embeds the text; kernel_source.cpp.in), once per process;
//   - host C++ includes the first part (GJ_KERNEL_TYPES_ONLY) for the argument structs, so that their
//     layout is written once;
//   - the emulated driver (emulator.cpp) compiles all of it as host C++ and runs each grid through its
//     scheduler (emulator_scheduler.h), so that tests exercise these kernels, and everything that launches
//     them, without a GPU.
// Hence plain C++ that both compilers accept: no headers but support/pointwise.h and .def (NVRTC is
// handed their text), and shared memory declared by GJ_SHARED(type, name, count), which the emulator
// makes a checked array (races, bounds; emulator_device.h). A kernel that waits for other threads
// (__syncthreads, warp shuffles) is marked as such in emulator.cpp's table, which runs it with block
// semantics; the others are grid-stride loops that any launch shape covers. Each kernel takes one
// parameter, a struct by value.
#ifndef GJ_CUDA_KERNELS_CUH
#define GJ_CUDA_KERNELS_CUH

#define GJ_MAX_RANK 8

typedef long long gj_i64;

// Element types, as support/dtype.h numbers them. Past GJ_BOOL the storage types, which only gj_copy and
// gj_fill (through gjLoad and gjStore) meet: every op computes them in float32 or int64.
enum GjType {
  GJ_F32 = 0, GJ_F64 = 1, GJ_I64 = 2, GJ_BOOL = 3,
  GJ_U8 = 4, GJ_I8 = 5, GJ_I16 = 6, GJ_I32 = 7, GJ_F16 = 8, GJ_BF16 = 9
};

// The iteration space of a kernel: row-major over `sizes`.
struct GjShape {
  gj_i64 sizes[GJ_MAX_RANK];
  int rank;
  gj_i64 numel;
};

// Where element i (a row-major index into a GjShape) of an operand lives: the sum of index * stride, in
// elements from the operand's pointer. A broadcast dimension has stride 0.
struct GjStrides {
  gj_i64 strides[GJ_MAX_RANK];
};

// The pointwise ops and their scalar rules (support/pointwise.def), shared with every code generator.
#include "support/pointwise.h"
// Dropout's generator and rule, shared with every code generator.
#include "support/philox.h"

// gj_map_f32 / gj_map_f64: out (contiguous) = op(a, b, scalar) over `shape`, op a GjPointwiseOp applied by
// its rule; b is read by ops of two or more operands, and `scalar` is a third operand (add's alpha,
// threshold_backward's threshold).
struct GjMapArgs {
  GjShape shape;
  int op;
  double scalar;
  void* out;
  const void* a;
  const void* b;
  const void* c;  // a third tensor operand in place of `scalar` (where's other), or null
  GjStrides sa, sb, sc;
};

// gj_map_i64: out (contiguous) = op(a, b[, c]) over int64 operands broadcast over `shape`, for the ops
// PyTorch computes in integers (cuda::mapIntegral); `scalar` is add's, sub's and rsub's alpha and clamp's
// upper bound.
struct GjMapIntArgs {
  GjShape shape;
  int op;
  gj_i64 scalar;
  gj_i64* out;
  const gj_i64* a;
  const gj_i64* b;
  const gj_i64* c;  // where's other operand (a the condition, 0 or 1), or null
  GjStrides sa, sb, sc;
};

// gj_dropout_f32 / gj_dropout_f64: out = prim::philox_dropout(in) (support/philox.h) over n contiguous
// elements in training mode, with the seed and offset read from rng (int64 [2], device memory).
struct GjDropoutArgs {
  gj_i64 n, stream;
  double p;
  const gj_i64* rng;
  const void* in;
  void* out;
};

// gj_copy: out[sout(i)] = in[sin(i)] over `shape`, converting the element type.
struct GjCopyArgs {
  GjShape shape;
  int outType, inType;
  void* out;
  const void* in;
  GjStrides sout, sin;
};

// gj_fill: n elements of out (contiguous) set to value.
struct GjFillArgs {
  gj_i64 n;
  int type;
  double value;
  void* out;
};

// Who folds one unit of work (an output's elements, a row) in gj_reduce, gj_extreme_rows and gj_softmax,
// whose threads cooperate (kernels.cuh's reductions below).
enum GjSchedule { GJ_WARPS = 0, GJ_BLOCKS = 1, GJ_COLUMNS = 2 };
// gj_softmax's rows that a warp holds in registers: up to 32 elements a lane (GJ_WARPS' 1024), or up to 4
// (rows of 128 or fewer, attention's) in fewer registers.
#define GJ_SOFTMAX_LANE_MOST 32
#define GJ_SOFTMAX_LANE_FEW 4
// Their blocks: 256 threads, 8 warps.
#define GJ_REDUCE_THREADS 256
#define GJ_REDUCE_WARPS (GJ_REDUCE_THREADS / 32)

// gj_reduce: sums, means and maxima, accumulated in double. Output o folds the elements of x at
// offset(o in kept) + offset(r in reduced); with `in2` (a second input of in's type, laid out as in is) the
// products in * in2, each formed in double (a batch norm's sums of squares and of gradient times input,
// with no tensor of them). With `max` the largest instead (NaN when any is, and for no elements). The
// result, times `scale` (1, or 1 / count for a mean), goes to out (contiguous, outType). With `splits` > 1
// each output's elements are cut into runs of `chunk` that separate units fold into out as doubles (unit
// o * splits + s, or s * outputs + o under GJ_COLUMNS), which a second launch folds: no atomics, so every
// run gives the same bits.
struct GjSumArgs {
  GjShape kept, reduced;
  GjStrides skept, sreduced;
  int type, outType;
  int max;
  int schedule;
  gj_i64 splits, chunk;
  double scale;
  const void* in;
  const void* in2;
  void* out;
};

// gj_softmax: softmax or log_softmax along the middle dim of x viewed [outer, n, inner] (contiguous, F32
// or F64): forward out from in; with `backward`, the gradient from in (the output's gradient g) and y (the
// forward's output): y * (g - sum(g * y)), or g - exp(y) * sum(g). The gradient folds in double (g - sum
// cancels where y is near 1); the forward too, but for a warp's row (below), in the row's own type as
// PyTorch's CUDA softmax computes it.
struct GjSoftmaxArgs {
  gj_i64 outer, n, inner;
  int type, log, backward, schedule;
  const void* in;
  const void* y;
  void* out;
};

// gj_extreme_rows: for each of `rows` contiguous rows of n elements (F32 or F64), the largest (the smallest
// with `min`) and the index of its first occurrence; a NaN, once met, is the row's (aten::max over a dim).
// `schedule`: GJ_WARPS or GJ_BLOCKS.
struct GjRowsArgs {
  gj_i64 rows, n;
  int type, min, schedule;
  const void* in;
  void* values;
  gj_i64* indices;
};

// Rows by int64 index, for embedding and nll_loss (and their gradients); `type` is F32 or F64.
// gj_gather: out[i * width + j] = in[(i * perRow + idx[i]) * width + j] for i < rows, j < width.
// gj_scatter_add: out[(i * perRow + idx[i]) * width + j] += scale * in[i * inRowStride + j], atomically.
// perRow 0 picks whole rows (embedding); perRow = classes with width 1 picks one element a row (nll_loss).
// An index outside [0, limit) touches nothing, writes NaN where gj_gather would have read, and sets *bad.
struct GjIndexArgs {
  gj_i64 rows, width, perRow, limit, inRowStride;
  int type;
  double scale;
  const gj_i64* idx;
  const void* in;
  void* out;
  gj_i64* bad;
};

// conv2d's unfolding of one image (`channels` planes of h x w, contiguous) for a GEMM, as
// runtime/ops/im2col.h does it on the host: col row (c * kh + i) * kw + j, column y * outW + x, holds the
// image element that kernel tap (i, j) of output pixel (y, x) reads, or 0 in the padding.
// gj_im2col: col = unfold(img), each thread one column element.
// gj_col2im: img = the adjoint (each image element the sum of the column elements that read it), each
// thread one image element, gathering: no atomics, and the same sums in the same order on every run.
//
// The same windows pool `channels` planes (N * C of them), as runtime/ops/cnn.cpp does on the host:
// gj_max_pool2d: each thread one output element, the maximum of its window (padding is -inf; NaN wins;
// the first on ties) and its position h * w + w in the plane, written to `indices`.
// gj_max_pool2d_backward: in the output gradient, out the input's; each thread one input element, summing
// the gradients of the outputs whose maximum it was (gathering, as gj_col2im).
// gj_adaptive_avg_pool2d (and _backward): output cell (i, j) is the mean of rows [i h / outH, ceil((i + 1)
// h / outH)) and the columns likewise; the backward gathers each input element's shares. The kernel,
// stride, padding and dilation fields are unused.
struct GjConvArgs {
  gj_i64 channels, h, w, kh, kw, outH, outW, strideH, strideW, padH, padW, dilationH, dilationW;
  int type;
  const void* in;
  void* out;
  gj_i64* indices;
};

#ifndef GJ_KERNEL_TYPES_ONLY

#ifndef GJ_KERNEL
#define GJ_KERNEL extern "C" __global__
#define GJ_DEVICE __device__ __forceinline__
#define GJ_SHARED(T, name, count) __shared__ T name[count]
#endif

// A loop the GPU's compiler unrolls (the host's compiler, for the emulator, decides for itself).
#ifdef __CUDACC__
#define GJ_UNROLL _Pragma("unroll")
#else
#define GJ_UNROLL
#endif

#define GJ_GRID_STRIDE(i, n)                                                                  \
  for (gj_i64 i = (gj_i64)blockIdx.x * blockDim.x + threadIdx.x; i < (n);                     \
       i += (gj_i64)blockDim.x * gridDim.x)

// Element i's offsets into three operands of one iteration space, its index split into coordinates once.
struct GjOffsets3 {
  gj_i64 a, b, c;
};

// The split, with the index and sizes in I.
template <typename I>
GJ_DEVICE GjOffsets3 gjSplit(I i, const GjShape& shape, const GjStrides& sa, const GjStrides& sb,
                             const GjStrides& sc) {
  GjOffsets3 o = {0, 0, 0};
  for (int d = shape.rank - 1; d >= 0; --d) {
    const I size = (I)shape.sizes[d], q = i / size;
    const gj_i64 at = (gj_i64)(i - q * size);
    o.a += at * sa.strides[d];
    o.b += at * sb.strides[d];
    o.c += at * sc.strides[d];
    i = q;
  }
  return o;
}

// In 32 bits where the iteration space allows it (nearly always): a 64-bit division is a long software
// sequence on a GPU, and this runs once a dimension an element.
GJ_DEVICE GjOffsets3 gjOffsets3(gj_i64 i, const GjShape& shape, const GjStrides& sa, const GjStrides& sb,
                                const GjStrides& sc) {
  if (shape.numel <= 0xffffffffLL) return gjSplit<unsigned>((unsigned)i, shape, sa, sb, sc);
  return gjSplit<gj_i64>(i, shape, sa, sb, sc);
}

GJ_DEVICE gj_i64 gjOffset(gj_i64 i, const GjShape& shape, const GjStrides& s) {
  if (shape.rank == 1) return i * s.strides[0];  // the common case once the host has merged dimensions
  return gjOffsets3(i, shape, s, s, s).a;
}

// The kernels, by kind.
#include "runtime/cuda/kernels_map.cuh"
#include "runtime/cuda/kernels_reduce.cuh"
#include "runtime/cuda/kernels_window.cuh"

#endif  // GJ_KERNEL_TYPES_ONLY
#endif  // GJ_CUDA_KERNELS_CUH
