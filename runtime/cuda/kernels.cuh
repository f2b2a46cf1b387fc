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

// exp, log, sqrt, tanh, erf, sin, cos, expm1, log1p, atan, asin, acos, sinh, cosh, erfc, lgamma, the roundings and pow of T (float or double): each resolves to T's own overload.
template <typename T> GJ_DEVICE T gjExp(T x) { return exp(x); }
template <typename T> GJ_DEVICE T gjLog(T x) { return log(x); }
template <typename T> GJ_DEVICE T gjSqrt(T x) { return sqrt(x); }
template <typename T> GJ_DEVICE T gjTanh(T x) { return tanh(x); }
template <typename T> GJ_DEVICE T gjErf(T x) { return erf(x); }
template <typename T> GJ_DEVICE T gjSin(T x) { return sin(x); }
template <typename T> GJ_DEVICE T gjCos(T x) { return cos(x); }
template <typename T> GJ_DEVICE T gjExpm1(T x) { return expm1(x); }
template <typename T> GJ_DEVICE T gjLog1p(T x) { return log1p(x); }
template <typename T> GJ_DEVICE T gjAtan(T x) { return atan(x); }
template <typename T> GJ_DEVICE T gjAsin(T x) { return asin(x); }
template <typename T> GJ_DEVICE T gjAcos(T x) { return acos(x); }
template <typename T> GJ_DEVICE T gjSinh(T x) { return sinh(x); }
template <typename T> GJ_DEVICE T gjCosh(T x) { return cosh(x); }
template <typename T> GJ_DEVICE T gjErfc(T x) { return erfc(x); }
template <typename T> GJ_DEVICE T gjLgamma(T x) { return lgamma(x); }
template <typename T> GJ_DEVICE T gjFloor(T x) { return floor(x); }
template <typename T> GJ_DEVICE T gjCeil(T x) { return ceil(x); }
template <typename T> GJ_DEVICE T gjTrunc(T x) { return trunc(x); }
template <typename T> GJ_DEVICE T gjRound(T x) { return rint(x); }  // halves to even
template <typename T> GJ_DEVICE T gjPow(T x, T y) { return pow(x, y); }
template <typename T> GJ_DEVICE T gjAtan2(T x, T y) { return atan2(x, y); }
template <typename T> GJ_DEVICE T gjFmod(T x, T y) { return fmod(x, y); }

// Member functions on the device (GJ_DEVICE may be `static`, which members cannot be).
#ifndef GJ_METHOD
#ifdef __CUDACC__
#define GJ_METHOD __device__ __forceinline__
#else
#define GJ_METHOD inline
#endif
#endif

// The primitives support/pointwise.def's rules are written in, over T.
template <typename T>
struct GjMath {
  GJ_METHOD T c(double v) const { return (T)v; }
  GJ_METHOD T add(T x, T y) const { return x + y; }
  GJ_METHOD T sub(T x, T y) const { return x - y; }
  GJ_METHOD T mul(T x, T y) const { return x * y; }
  GJ_METHOD T div(T x, T y) const { return x / y; }
  GJ_METHOD T neg(T x) const { return -x; }
  GJ_METHOD T exp(T x) const { return gjExp(x); }
  GJ_METHOD T log(T x) const { return gjLog(x); }
  GJ_METHOD T sqrt(T x) const { return gjSqrt(x); }
  GJ_METHOD T tanh(T x) const { return gjTanh(x); }
  GJ_METHOD T sigmoid(T x) const { return T(1) / (T(1) + gjExp(-x)); }
  GJ_METHOD T erf(T x) const { return gjErf(x); }
  GJ_METHOD T sin(T x) const { return gjSin(x); }
  GJ_METHOD T cos(T x) const { return gjCos(x); }
  GJ_METHOD T expm1(T x) const { return gjExpm1(x); }
  GJ_METHOD T log1p(T x) const { return gjLog1p(x); }
  GJ_METHOD T atan(T x) const { return gjAtan(x); }
  GJ_METHOD T asin(T x) const { return gjAsin(x); }
  GJ_METHOD T acos(T x) const { return gjAcos(x); }
  GJ_METHOD T sinh(T x) const { return gjSinh(x); }
  GJ_METHOD T cosh(T x) const { return gjCosh(x); }
  GJ_METHOD T erfc(T x) const { return gjErfc(x); }
  GJ_METHOD T lgamma(T x) const { return gjLgamma(x); }
  GJ_METHOD T floor(T x) const { return gjFloor(x); }
  GJ_METHOD T ceil(T x) const { return gjCeil(x); }
  GJ_METHOD T trunc(T x) const { return gjTrunc(x); }
  GJ_METHOD T round(T x) const { return gjRound(x); }
  GJ_METHOD T pow(T x, T y) const { return gjPow(x, y); }
  GJ_METHOD T atan2(T x, T y) const { return gjAtan2(x, y); }
  GJ_METHOD T fmod(T x, T y) const { return gjFmod(x, y); }
  GJ_METHOD T max(T x, T y) const { return x != x || x > y ? x : y; }  // NaN when either is
  GJ_METHOD T min(T x, T y) const { return x != x || x < y ? x : y; }
  GJ_METHOD bool lt(T x, T y) const { return x < y; }
  GJ_METHOD bool gt(T x, T y) const { return x > y; }
  GJ_METHOD bool le(T x, T y) const { return x <= y; }
  GJ_METHOD bool ge(T x, T y) const { return x >= y; }
  GJ_METHOD bool eq(T x, T y) const { return x == y; }
  GJ_METHOD bool ne(T x, T y) const { return x != y; }
  GJ_METHOD T select(bool cond, T x, T y) const { return cond ? x : y; }
};

template <typename T>
GJ_DEVICE void gjMap(const GjMapArgs& p) {
  const T* a = (const T*)p.a;
  const T* b = (const T*)p.b;
  T* out = (T*)p.out;
  const bool two = gjPointwiseArity(p.op) >= 2;
  const T scalar = (T)p.scalar, zero = 0;
  const GjMath<T> m;
  GJ_GRID_STRIDE(i, p.shape.numel) {
    const GjOffsets3 at = gjOffsets3(i, p.shape, p.sa, p.sb, p.sc);
    const T x = a[at.a];
    const T y = two ? b[at.b] : zero;
    const T z = p.c ? ((const T*)p.c)[at.c] : scalar;
    out[i] = gjPointwise(p.op, m, x, y, z, zero / zero);
  }
}

GJ_KERNEL void gj_map_f32(GjMapArgs p) { gjMap<float>(p); }
GJ_KERNEL void gj_map_f64(GjMapArgs p) { gjMap<double>(p); }

// x op y in int64 as PyTorch's integer kernels compute it: wrapping on overflow (in unsigned, where C++
// defines it); pow's exponent is not negative (the host checks).
GJ_DEVICE gj_i64 gjIntegral(int op, gj_i64 x, gj_i64 y, gj_i64 z, gj_i64 s) {
  typedef unsigned long long U;
  switch (op) {
    case GJ_PW_Where: return x ? y : z;
    case GJ_PW_Add: return (gj_i64)((U)x + (U)s * (U)y);
    case GJ_PW_Sub: return (gj_i64)((U)x - (U)s * (U)y);
    case GJ_PW_Rsub: return (gj_i64)((U)y - (U)s * (U)x);
    case GJ_PW_Mul: return (gj_i64)((U)x * (U)y);
    case GJ_PW_ClampMin: return x < y ? y : x;
    case GJ_PW_ClampMax: return x > y ? y : x;
    case GJ_PW_Clamp: case GJ_PW_Hardtanh: return x < y ? (y > s ? s : y) : x > s ? s : x;
    case GJ_PW_Maximum: return x > y ? x : y;
    case GJ_PW_Minimum: return x < y ? x : y;
    case GJ_PW_Pow: {  // by a negative exponent: 1 and -1 keep their magnitude, all else 0 (as the host's)
      if (y < 0) return x == 1 ? 1 : x == -1 ? ((y & 1) ? -1 : 1) : 0;
      U result = 1, base = (U)x;
      for (gj_i64 n = y; n > 0; n >>= 1, base *= base)
        if (n & 1) result *= base;
      return (gj_i64)result;
    }
    case GJ_PW_Neg: return (gj_i64)(0 - (U)x);
    case GJ_PW_Abs: return x < 0 ? (gj_i64)(0 - (U)x) : x;
    case GJ_PW_Sign: return (gj_i64)((x > 0) - (x < 0));
    case GJ_PW_Relu: return x < 0 ? 0 : x;
  }
  return 0;
}

GJ_KERNEL void gj_map_i64(GjMapIntArgs p) {
  GJ_GRID_STRIDE(i, p.shape.numel) {
    const GjOffsets3 at = gjOffsets3(i, p.shape, p.sa, p.sb, p.sc);
    p.out[i] = gjIntegral(p.op, p.a[at.a], p.b[at.b], p.c ? p.c[at.c] : 0, p.scalar);
  }
}

template <typename T>
GJ_DEVICE void gjDropoutMap(const GjDropoutArgs& a) {
  const T* in = (const T*)a.in;
  T* out = (T*)a.out;
  const gj_i64 seed = a.rng[0], offset = a.rng[1];
  const T p = (T)a.p;
  const GjMath<T> m;
  GJ_GRID_STRIDE(i, a.n) out[i] = gjDropout(m, in[i], gjPhiloxUniform<T>(seed, offset, a.stream, i), p);
}

GJ_KERNEL void gj_dropout_f32(GjDropoutArgs p) { gjDropoutMap<float>(p); }
GJ_KERNEL void gj_dropout_f64(GjDropoutArgs p) { gjDropoutMap<double>(p); }

// gj_uniform_f32 / gj_uniform_f64: out[i] = element i's uniform number in [0, 1) (prim::philox_uniform); of
// dropout's arguments, `in` and `p` are not read.
template <typename T>
GJ_DEVICE void gjUniformMap(const GjDropoutArgs& a) {
  T* out = (T*)a.out;
  const gj_i64 seed = a.rng[0], offset = a.rng[1];
  GJ_GRID_STRIDE(i, a.n) out[i] = gjPhiloxUniform<T>(seed, offset, a.stream, i);
}

GJ_KERNEL void gj_uniform_f32(GjDropoutArgs p) { gjUniformMap<float>(p); }
GJ_KERNEL void gj_uniform_f64(GjDropoutArgs p) { gjUniformMap<double>(p); }

#include "support/half_bits.h"

GJ_DEVICE double gjLoad(const void* base, int type, gj_i64 at) {
  switch (type) {
    case GJ_F32: return ((const float*)base)[at];
    case GJ_F64: return ((const double*)base)[at];
    case GJ_I64: return (double)((const gj_i64*)base)[at];
    case GJ_U8: return ((const unsigned char*)base)[at];
    case GJ_I8: return ((const signed char*)base)[at];
    case GJ_I16: return ((const short*)base)[at];
    case GJ_I32: return ((const int*)base)[at];
    case GJ_F16: return gjHalfValue(((const unsigned short*)base)[at]);
    case GJ_BF16: return gjBFloat16Value(((const unsigned short*)base)[at]);
    default: return ((const bool*)base)[at] ? 1.0 : 0.0;
  }
}

// A float truncated toward zero as the host's convertElement (x86's conversion, PyTorch's CPU casts):
// into int64, or through int32 for the narrower integers, NaN and values out of range the smallest value
// (where the GPU's own conversion would saturate); double reaches float16 and bfloat16 through float.
GJ_DEVICE gj_i64 gjTruncate(double v, bool wide) {
  const double limit = wide ? 9223372036854775808.0 : 2147483648.0;
  if (!(v > -limit - 1.0 && v < limit)) return wide ? (gj_i64)(-9223372036854775807LL - 1) : -2147483647LL - 1;
  return (gj_i64)v;
}

GJ_DEVICE void gjStore(void* base, int type, gj_i64 at, double v) {
  switch (type) {
    case GJ_F32: ((float*)base)[at] = (float)v; return;
    case GJ_F64: ((double*)base)[at] = v; return;
    case GJ_I64: ((gj_i64*)base)[at] = gjTruncate(v, true); return;
    case GJ_U8: ((unsigned char*)base)[at] = (unsigned char)gjTruncate(v, false); return;
    case GJ_I8: ((signed char*)base)[at] = (signed char)gjTruncate(v, false); return;
    case GJ_I16: ((short*)base)[at] = (short)gjTruncate(v, false); return;
    case GJ_I32: ((int*)base)[at] = (int)gjTruncate(v, false); return;
    case GJ_F16: ((unsigned short*)base)[at] = gjHalfBits((float)v); return;
    case GJ_BF16: ((unsigned short*)base)[at] = gjBFloat16Bits((float)v); return;
    default: ((bool*)base)[at] = v != 0.0; return;
  }
}

// Integer types (bool among them) convert through int64, where a double would round past 2^53.
GJ_DEVICE bool gjIntegerType(int type) { return type == GJ_I64 || type == GJ_BOOL || (type >= GJ_U8 && type <= GJ_I32); }

GJ_DEVICE gj_i64 gjLoadInteger(const void* base, int type, gj_i64 at) {
  switch (type) {
    case GJ_I64: return ((const gj_i64*)base)[at];
    case GJ_U8: return ((const unsigned char*)base)[at];
    case GJ_I8: return ((const signed char*)base)[at];
    case GJ_I16: return ((const short*)base)[at];
    case GJ_I32: return ((const int*)base)[at];
    default: return ((const bool*)base)[at] ? 1 : 0;
  }
}

GJ_DEVICE void gjStoreInteger(void* base, int type, gj_i64 at, gj_i64 v) {
  switch (type) {
    case GJ_I64: ((gj_i64*)base)[at] = v; return;
    case GJ_U8: ((unsigned char*)base)[at] = (unsigned char)v; return;
    case GJ_I8: ((signed char*)base)[at] = (signed char)v; return;
    case GJ_I16: ((short*)base)[at] = (short)v; return;
    case GJ_I32: ((int*)base)[at] = (int)v; return;
    default: ((bool*)base)[at] = v != 0; return;
  }
}

GJ_KERNEL void gj_copy(GjCopyArgs p) {
  GJ_GRID_STRIDE(i, p.shape.numel) {
    const gj_i64 from = gjOffset(i, p.shape, p.sin);
    const gj_i64 to = gjOffset(i, p.shape, p.sout);
    if (p.inType == p.outType) {  // bit for bit: int64 beyond 2^53 survives
      switch (p.inType) {
        case GJ_F32: case GJ_I32: ((unsigned*)p.out)[to] = ((const unsigned*)p.in)[from]; break;
        case GJ_BOOL: case GJ_U8: case GJ_I8:
          ((unsigned char*)p.out)[to] = ((const unsigned char*)p.in)[from];
          break;
        case GJ_I16: case GJ_F16: case GJ_BF16:
          ((unsigned short*)p.out)[to] = ((const unsigned short*)p.in)[from];
          break;
        default: ((gj_i64*)p.out)[to] = ((const gj_i64*)p.in)[from]; break;  // 8 bytes: double or int64
      }
    } else if (gjIntegerType(p.inType) && gjIntegerType(p.outType)) {
      gjStoreInteger(p.out, p.outType, to, gjLoadInteger(p.in, p.inType, from));
    } else {
      gjStore(p.out, p.outType, to, gjLoad(p.in, p.inType, from));
    }
  }
}

GJ_KERNEL void gj_fill(GjFillArgs p) {
  GJ_GRID_STRIDE(i, p.n) gjStore(p.out, p.type, i, p.value);
}

// gj_hold: one thread spins for `cycles` of its clock, holding the stream (holdForTiming, ops.h).
GJ_KERNEL void gj_hold(gj_i64 cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

// acc and v folded by the reductions: their sum, or their maximum (a NaN, once met, stays).
// In T: double for gj_reduce's and gj_softmax's folds, the row's own type for gj_softmax_rows*'s forward
// (v is converted to T first: a shared scratch's element, on the emulator, is a checked reference).
template <typename T, typename U>
GJ_DEVICE T gjFold(int max, T acc, U u) {
  const T v = u;
  if (!max) return acc + v;
  return acc == acc && (v != v || v > acc) ? v : acc;
}

// The element gj_reduce folds at offset `at`: in's, or the product of in's and in2's.
GJ_DEVICE double gjSumLoad(const GjSumArgs& p, gj_i64 at) {
  const double v = gjLoad(p.in, p.type, at);
  return p.in2 ? v * gjLoad(p.in2, p.type, at) : v;
}

// ---- reductions whose threads cooperate: in-thread folds, then warp shuffles, then shared memory ----

// Who folds one unit of work (an output's elements, a softmax row), for gj_reduce, gj_extreme_rows and
// gj_softmax; blocks of 256 threads (8 warps) throughout:
//   GJ_WARPS: a warp a unit (up to 1024 elements), its lanes on neighbouring elements;
//   GJ_BLOCKS: a block a unit (longer ones);
//   GJ_COLUMNS: 32 neighbouring units a block, one a lane, each warp folding every 8th element (the units'
//     elements `stride` apart and the units side by side: a bias gradient over the batch, a softmax along
//     dim 0), so that a warp reads 32 neighbours at once.
// A thread folds its elements in registers (four accumulators side by side), then gjUnitFold combines a
// unit's threads: a butterfly of shuffles across a warp, then the warps' results through shared memory.
// The order depends only on the schedule and the sizes: every run gives the same bits.
// A unit's threads: the first element this thread folds and the step to its next; the unit of the
// block's `round`-th turn; whether it is one of the work's `units`.
struct GjUnit {
  gj_i64 unit, first, step;
  bool valid;
};

GJ_DEVICE GjUnit gjUnitOf(int schedule, gj_i64 round, gj_i64 units) {
  const gj_i64 t = threadIdx.x, lane = t % 32, warp = t / 32;
  GjUnit u;
  if (schedule == GJ_WARPS) {
    u.unit = (round * gridDim.x + blockIdx.x) * GJ_REDUCE_WARPS + warp;
    u.first = lane;
    u.step = 32;
  } else if (schedule == GJ_BLOCKS) {
    u.unit = round * gridDim.x + blockIdx.x;
    u.first = t;
    u.step = GJ_REDUCE_THREADS;
  } else {
    u.unit = (round * gridDim.x + blockIdx.x) * 32 + lane;
    u.first = warp;
    u.step = GJ_REDUCE_WARPS;
  }
  u.valid = u.unit < units;
  return u;
}

// How many turns each block takes: every block the same count, so that barriers stay uniform.
GJ_DEVICE gj_i64 gjRounds(int schedule, gj_i64 units) {
  const gj_i64 perTurn = (gj_i64)gridDim.x * (schedule == GJ_WARPS ? GJ_REDUCE_WARPS : schedule == GJ_BLOCKS ? 1 : 32);
  return (units + perTurn - 1) / perTurn;
}

// A warp's fold of v, every lane getting it.
template <typename T>
GJ_DEVICE T gjWarpFold(int max, T v) {
  for (int o = 16; o > 0; o >>= 1) v = gjFold(max, v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// The fold of a unit's threads' partial folds v, every thread of the unit getting it; `folds` is the
// block's shared scratch of GJ_REDUCE_THREADS doubles.
template <typename A>
GJ_DEVICE double gjUnitFold(int schedule, int max, double v, A& folds) {
  const unsigned t = threadIdx.x, lane = t % 32, warp = t / 32;
  if (schedule == GJ_WARPS) return gjWarpFold(max, v);
  if (schedule == GJ_BLOCKS) {
    v = gjWarpFold(max, v);
    if (lane == 0) folds[warp] = v;
    __syncthreads();
    v = folds[0];
    for (unsigned w = 1; w < GJ_REDUCE_WARPS; ++w) v = gjFold(max, v, folds[w]);
    __syncthreads();
    return v;
  }
  folds[t] = v;
  __syncthreads();
  v = folds[lane];
  for (unsigned w = 1; w < GJ_REDUCE_WARPS; ++w) v = gjFold(max, v, folds[w * 32 + lane]);
  __syncthreads();
  return v;
}

// gj_reduce: sums, means and maxima (GjSumArgs).
GJ_KERNEL void gj_reduce(GjSumArgs p) {
  GJ_SHARED(double, folds, GJ_REDUCE_THREADS);
  const double zero = 0.0, init = p.max ? -1.0 / zero : 0.0;
  const gj_i64 kept = p.kept.numel, units = kept * p.splits, n = p.reduced.numel;
  const gj_i64 rounds = gjRounds(p.schedule, units);
  for (gj_i64 round = 0; round < rounds; ++round) {
    const GjUnit u = gjUnitOf(p.schedule, round, units);
    // the unit's output and run of its elements: o * splits + s, or s * kept + o for GJ_COLUMNS
    const gj_i64 o = p.schedule == GJ_COLUMNS ? u.unit % kept : u.unit / p.splits;
    const gj_i64 s = p.schedule == GJ_COLUMNS ? u.unit / kept : u.unit % p.splits;
    double acc = init;
    if (u.valid) {
      const gj_i64 base = gjOffset(o, p.kept, p.skept), begin = s * p.chunk;
      const gj_i64 end = begin + p.chunk < n ? begin + p.chunk : n, step = u.step;
#define GJ_SUM_AT(r) gjSumLoad(p, base + gjOffset((r), p.reduced, p.sreduced))
      // Four folds side by side keep four loads in flight.
      double a0 = init, a1 = init, a2 = init, a3 = init;
      gj_i64 r = begin + u.first;
      for (; r + 3 * step < end; r += 4 * step) {
        a0 = gjFold(p.max, a0, GJ_SUM_AT(r));
        a1 = gjFold(p.max, a1, GJ_SUM_AT(r + step));
        a2 = gjFold(p.max, a2, GJ_SUM_AT(r + 2 * step));
        a3 = gjFold(p.max, a3, GJ_SUM_AT(r + 3 * step));
      }
      for (; r < end; r += step) a0 = gjFold(p.max, a0, GJ_SUM_AT(r));
#undef GJ_SUM_AT
      acc = gjFold(p.max, gjFold(p.max, a0, a1), gjFold(p.max, a2, a3));
    }
    acc = gjUnitFold(p.schedule, p.max, acc, folds);
    if (u.valid && u.first == 0) {
      if (n == 0 && p.max) acc = zero / zero;  // the maximum of nothing is NaN
      if (p.splits > 1) ((double*)p.out)[u.unit] = acc;
      else gjStore(p.out, p.outType, o, p.max ? acc : acc * p.scale);
    }
  }
}

// Whether (b, ib) is a row's pick over (a, ia): the first NaN, else the largest (smallest with `min`), the
// first on a tie; an index below 0 is no element. A choice of the whole set, whatever order it is asked in.
GJ_DEVICE bool gjTakes(int min, double a, gj_i64 ia, double b, gj_i64 ib) {
  if (ib < 0) return false;
  if (ia < 0) return true;
  const bool na = a != a, nb = b != b;
  if (na || nb) return nb && (!na || ib < ia);
  if (a != b) return min ? b < a : b > a;
  return ib < ia;
}

GJ_KERNEL void gj_extreme_rows(GjRowsArgs p) {
  GJ_SHARED(double, values, GJ_REDUCE_THREADS);
  GJ_SHARED(gj_i64, indices, GJ_REDUCE_THREADS);
  const gj_i64 rounds = gjRounds(p.schedule, p.rows);
  for (gj_i64 round = 0; round < rounds; ++round) {
    const GjUnit u = gjUnitOf(p.schedule, round, p.rows);
    double v = 0.0;
    gj_i64 best = -1;
    for (gj_i64 j = u.first; u.valid && j < p.n; j += u.step) {
      const double x = gjLoad(p.in, p.type, u.unit * p.n + j);
      if (gjTakes(p.min, v, best, x, j)) v = x, best = j;
    }
    for (int o = 16; o > 0; o >>= 1) {
      const double w = __shfl_xor_sync(0xffffffffu, v, o);
      const gj_i64 iw = __shfl_xor_sync(0xffffffffu, best, o);
      if (gjTakes(p.min, v, best, w, iw)) v = w, best = iw;
    }
    if (p.schedule == GJ_BLOCKS) {
      const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
      if (lane == 0) values[warp] = v, indices[warp] = best;
      __syncthreads();
      v = values[0];
      best = indices[0];
      for (unsigned w = 1; w < GJ_REDUCE_WARPS; ++w)
        if (gjTakes(p.min, v, best, values[w], indices[w])) v = values[w], best = indices[w];
      __syncthreads();
    }
    if (u.valid && u.first == 0) {
      gjStore(p.values, p.type, u.unit, v);
      p.indices[u.unit] = best;
    }
  }
}

// A row that a warp folds (GJ_WARPS, inner 1: contiguous), held in registers: each lane loads its up to
// K elements (lane, lane + 32, ...) all at once, so that a warp keeps K loads in flight, and the row is
// read from memory once, not once a pass. The forward computes in T (each exponential once); the
// gradient in double.
template <typename T, int K>
GJ_DEVICE void gjSoftmaxWarpRow(const GjSoftmaxArgs& p, gj_i64 row, bool valid) {
  const int lane = threadIdx.x % 32, n = valid ? (int)p.n : 0;
  const T* in = (const T*)p.in + row * p.n;
  T* out = (T*)p.out + row * p.n;
  const T zero = 0, inf = (T)1 / zero;
  // Past the row's end: what leaves the folds unchanged (-inf for the maximum, 0 for the gradient's sum).
  const T none = p.backward ? zero : -inf;
  T x[K];
  GJ_UNROLL
  for (int k = 0; k < K; ++k) x[k] = k * 32 + lane < n ? in[k * 32 + lane] : none;
  if (!p.backward) {
    T m = -inf;
    GJ_UNROLL
    for (int k = 0; k < K; ++k) m = gjFold(1, m, x[k]);
    m = gjWarpFold(1, m);
    const T shift = m == -inf ? zero : m;  // a row of -inf: keep exp finite
    T s = 0;
    GJ_UNROLL
    for (int k = 0; k < K; ++k) {
      x[k] -= shift;
      const T e = k * 32 + lane < n ? gjExp(x[k]) : zero;
      s += e;
      if (!p.log) x[k] = e;
    }
    s = gjWarpFold(0, s);
    const T lse = gjLog(s), scale = (T)1 / s;
    GJ_UNROLL
    for (int k = 0; k < K; ++k)
      if (k * 32 + lane < n) out[k * 32 + lane] = p.log ? x[k] - lse : x[k] * scale;
    return;
  }
  const T* yin = (const T*)p.y + row * p.n;
  T y[K];
  GJ_UNROLL
  for (int k = 0; k < K; ++k) y[k] = k * 32 + lane < n ? yin[k * 32 + lane] : zero;
  double d = 0.0;
  GJ_UNROLL
  for (int k = 0; k < K; ++k) d += p.log ? (double)x[k] : (double)x[k] * (double)y[k];
  d = gjWarpFold(0, d);
  GJ_UNROLL
  for (int k = 0; k < K; ++k)
    if (k * 32 + lane < n) {
      const double g = x[k], yk = y[k];
      out[k * 32 + lane] = (T)(p.log ? g - exp(yk) * d : yk * (g - d));
    }
}

// The rows of a GJ_WARPS launch over contiguous rows, K elements a lane.
template <typename T, int K>
GJ_DEVICE void gjSoftmaxWarpRows(const GjSoftmaxArgs& p) {
  const gj_i64 rounds = gjRounds(GJ_WARPS, p.outer);
  for (gj_i64 round = 0; round < rounds; ++round) {
    const GjUnit u = gjUnitOf(GJ_WARPS, round, p.outer);
    gjSoftmaxWarpRow<T, K>(p, u.unit, u.valid);
  }
}

// gj_softmax_rows{4,32}_f{32,64} (GjSoftmaxArgs): contiguous rows (inner 1) of up to 4 x 32 or 32 x 32
// elements, a warp each, in registers; entries of their own, so that the registers each takes do not
// lower the occupancy of another (nor of gj_softmax's other schedules).
#define GJ_SOFTMAX_ROWS(entry, T, K) \
  GJ_KERNEL void entry(GjSoftmaxArgs p) { gjSoftmaxWarpRows<T, K>(p); }
GJ_SOFTMAX_ROWS(gj_softmax_rows4_f32, float, GJ_SOFTMAX_LANE_FEW)
GJ_SOFTMAX_ROWS(gj_softmax_rows32_f32, float, GJ_SOFTMAX_LANE_MOST)
GJ_SOFTMAX_ROWS(gj_softmax_rows4_f64, double, GJ_SOFTMAX_LANE_FEW)
GJ_SOFTMAX_ROWS(gj_softmax_rows32_f64, double, GJ_SOFTMAX_LANE_MOST)
#undef GJ_SOFTMAX_ROWS

// gj_softmax (GjSoftmaxArgs): rows of x viewed [outer, n, inner], under any schedule.
GJ_KERNEL void gj_softmax(GjSoftmaxArgs p) {
  GJ_SHARED(double, folds, GJ_REDUCE_THREADS);
  const gj_i64 units = p.outer * p.inner, rounds = gjRounds(p.schedule, units);
  const double zero = 0.0;
  for (gj_i64 round = 0; round < rounds; ++round) {
    const GjUnit u = gjUnitOf(p.schedule, round, units);
    const gj_i64 n = u.valid ? p.n : 0, base = (u.unit / p.inner) * p.n * p.inner + u.unit % p.inner;
#define GJ_AT(j) (base + (j) * p.inner)
    if (!p.backward) {
      double m = -1.0 / zero;
      for (gj_i64 j = u.first; j < n; j += u.step) m = gjFold(1, m, gjLoad(p.in, p.type, GJ_AT(j)));
      m = gjUnitFold(p.schedule, 1, m, folds);
      const double shift = m == -1.0 / zero ? 0.0 : m;  // a row of -inf: keep exp finite
      double s = 0.0;
      for (gj_i64 j = u.first; j < n; j += u.step) s += exp(gjLoad(p.in, p.type, GJ_AT(j)) - shift);
      s = gjUnitFold(p.schedule, 0, s, folds);
      const double lse = log(s);
      for (gj_i64 j = u.first; j < n; j += u.step) {
        const double z = gjLoad(p.in, p.type, GJ_AT(j)) - shift;
        gjStore(p.out, p.type, GJ_AT(j), p.log ? z - lse : exp(z - lse));
      }
    } else {
      double d = 0.0;
      for (gj_i64 j = u.first; j < n; j += u.step) {
        const double g = gjLoad(p.in, p.type, GJ_AT(j));
        d += p.log ? g : g * gjLoad(p.y, p.type, GJ_AT(j));
      }
      d = gjUnitFold(p.schedule, 0, d, folds);
      for (gj_i64 j = u.first; j < n; j += u.step) {
        const double g = gjLoad(p.in, p.type, GJ_AT(j)), y = gjLoad(p.y, p.type, GJ_AT(j));
        gjStore(p.out, p.type, GJ_AT(j), p.log ? g - exp(y) * d : y * (g - d));
      }
    }
#undef GJ_AT
  }
}

GJ_KERNEL void gj_gather(GjIndexArgs p) {
  GJ_GRID_STRIDE(e, p.rows * p.width) {
    const gj_i64 i = e / p.width, j = e - i * p.width, k = p.idx[i];
    double v;
    if (k < 0 || k >= p.limit) {
      const double zero = 0.0;
      v = zero / zero;
      *p.bad = 1;
    } else {
      v = gjLoad(p.in, p.type, (i * p.perRow + k) * p.width + j);
    }
    gjStore(p.out, p.type, e, v);
  }
}

GJ_KERNEL void gj_scatter_add(GjIndexArgs p) {
  GJ_GRID_STRIDE(e, p.rows * p.width) {
    const gj_i64 i = e / p.width, j = e - i * p.width, k = p.idx[i];
    if (k < 0 || k >= p.limit) {
      *p.bad = 1;
      continue;
    }
    const gj_i64 to = (i * p.perRow + k) * p.width + j, from = i * p.inRowStride + j;
    if (p.type == GJ_F32)
      atomicAdd((float*)p.out + to, (float)(p.scale * ((const float*)p.in)[from]));
    else
      atomicAdd((double*)p.out + to, p.scale * ((const double*)p.in)[from]);
  }
}

GJ_KERNEL void gj_im2col(GjConvArgs p) {
  const gj_i64 pix = p.outH * p.outW;
  GJ_GRID_STRIDE(e, p.channels * p.kh * p.kw * pix) {
    const gj_i64 row = e / pix, at = e - row * pix;
    const gj_i64 c = row / (p.kh * p.kw), tap = row - c * p.kh * p.kw, i = tap / p.kw, j = tap - i * p.kw;
    const gj_i64 y = at / p.outW, x = at - y * p.outW;
    const gj_i64 iy = y * p.strideH - p.padH + i * p.dilationH, ix = x * p.strideW - p.padW + j * p.dilationW;
    const bool inside = iy >= 0 && iy < p.h && ix >= 0 && ix < p.w;
    gjStore(p.out, p.type, e, inside ? gjLoad(p.in, p.type, (c * p.h + iy) * p.w + ix) : 0.0);
  }
}

// Along one dimension: the output position whose window reads input position `at` through tap `tap`, or
// -1 when none does (the gathering backward kernels' inverse of a window).
GJ_DEVICE gj_i64 gjReader(gj_i64 at, gj_i64 pad, gj_i64 tap, gj_i64 dilation, gj_i64 stride, gj_i64 out) {
  const gj_i64 t = at + pad - tap * dilation;  // the reader's position times the stride
  return t < 0 || t % stride != 0 || t / stride >= out ? -1 : t / stride;
}

GJ_KERNEL void gj_col2im(GjConvArgs p) {
  const gj_i64 pix = p.outH * p.outW;
  GJ_GRID_STRIDE(e, p.channels * p.h * p.w) {
    const gj_i64 c = e / (p.h * p.w), at = e - c * p.h * p.w, iy = at / p.w, ix = at - iy * p.w;
    double acc = 0.0;
    for (gj_i64 i = 0; i < p.kh; ++i) {
      const gj_i64 y = gjReader(iy, p.padH, i, p.dilationH, p.strideH, p.outH);
      if (y < 0) continue;
      for (gj_i64 j = 0; j < p.kw; ++j) {
        const gj_i64 x = gjReader(ix, p.padW, j, p.dilationW, p.strideW, p.outW);
        if (x >= 0) acc += gjLoad(p.in, p.type, ((c * p.kh + i) * p.kw + j) * pix + y * p.outW + x);
      }
    }
    gjStore(p.out, p.type, e, acc);
  }
}

GJ_KERNEL void gj_max_pool2d(GjConvArgs p) {
  const gj_i64 pix = p.outH * p.outW;
  GJ_GRID_STRIDE(e, p.channels * pix) {
    const gj_i64 c = e / pix, at = e - c * pix, y = at / p.outW, x = at - y * p.outW;
    double best = 0.0;
    gj_i64 arg = -1;
    for (gj_i64 i = 0; i < p.kh; ++i) {
      const gj_i64 iy = y * p.strideH - p.padH + i * p.dilationH;
      if (iy < 0 || iy >= p.h) continue;
      for (gj_i64 j = 0; j < p.kw; ++j) {
        const gj_i64 ix = x * p.strideW - p.padW + j * p.dilationW;
        if (ix < 0 || ix >= p.w) continue;
        const double v = gjLoad(p.in, p.type, (c * p.h + iy) * p.w + ix);
        if (arg >= 0 && best != best) continue;  // a NaN already won
        if (arg < 0 || v > best || v != v) {
          best = v;
          arg = iy * p.w + ix;
        }
      }
    }
    gjStore(p.out, p.type, e, best);
    p.indices[e] = arg;
  }
}

GJ_KERNEL void gj_max_pool2d_backward(GjConvArgs p) {
  const gj_i64 pix = p.outH * p.outW;
  GJ_GRID_STRIDE(e, p.channels * p.h * p.w) {
    const gj_i64 c = e / (p.h * p.w), at = e - c * p.h * p.w, iy = at / p.w, ix = at - iy * p.w;
    double acc = 0.0;
    for (gj_i64 i = 0; i < p.kh; ++i) {
      const gj_i64 y = gjReader(iy, p.padH, i, p.dilationH, p.strideH, p.outH);
      if (y < 0) continue;
      for (gj_i64 j = 0; j < p.kw; ++j) {
        const gj_i64 x = gjReader(ix, p.padW, j, p.dilationW, p.strideW, p.outW);
        const gj_i64 o = c * pix + y * p.outW + x;
        if (x >= 0 && p.indices[o] == at) acc += gjLoad(p.in, p.type, o);
      }
    }
    gjStore(p.out, p.type, e, acc);
  }
}

GJ_DEVICE gj_i64 gjWindowStart(gj_i64 i, gj_i64 in, gj_i64 out) { return i * in / out; }
GJ_DEVICE gj_i64 gjWindowEnd(gj_i64 i, gj_i64 in, gj_i64 out) { return ((i + 1) * in + out - 1) / out; }

GJ_KERNEL void gj_adaptive_avg_pool2d(GjConvArgs p) {
  const gj_i64 pix = p.outH * p.outW;
  GJ_GRID_STRIDE(e, p.channels * pix) {
    const gj_i64 c = e / pix, at = e - c * pix, i = at / p.outW, j = at - i * p.outW;
    const gj_i64 y0 = gjWindowStart(i, p.h, p.outH), y1 = gjWindowEnd(i, p.h, p.outH);
    const gj_i64 x0 = gjWindowStart(j, p.w, p.outW), x1 = gjWindowEnd(j, p.w, p.outW);
    double acc = 0.0;
    for (gj_i64 y = y0; y < y1; ++y)
      for (gj_i64 x = x0; x < x1; ++x) acc += gjLoad(p.in, p.type, (c * p.h + y) * p.w + x);
    gjStore(p.out, p.type, e, acc / (double)((y1 - y0) * (x1 - x0)));
  }
}

GJ_KERNEL void gj_adaptive_avg_pool2d_backward(GjConvArgs p) {
  GJ_GRID_STRIDE(e, p.channels * p.h * p.w) {
    const gj_i64 c = e / (p.h * p.w), at = e - c * p.h * p.w, y = at / p.w, x = at - y * p.w;
    double acc = 0.0;
    // The cells whose windows hold row y: from the one that starts at or before it to the last that does.
    for (gj_i64 i = y * p.outH / p.h; i < p.outH && gjWindowStart(i, p.h, p.outH) <= y; ++i) {
      const gj_i64 y0 = gjWindowStart(i, p.h, p.outH), y1 = gjWindowEnd(i, p.h, p.outH);
      if (y >= y1) continue;
      for (gj_i64 j = x * p.outW / p.w; j < p.outW && gjWindowStart(j, p.w, p.outW) <= x; ++j) {
        const gj_i64 x0 = gjWindowStart(j, p.w, p.outW), x1 = gjWindowEnd(j, p.w, p.outW);
        if (x >= x1) continue;
        acc += gjLoad(p.in, p.type, (c * p.outH + i) * p.outW + j) / (double)((y1 - y0) * (x1 - x0));
      }
    }
    gjStore(p.out, p.type, e, acc);
  }
}

#endif  // GJ_KERNEL_TYPES_ONLY
#endif  // GJ_CUDA_KERNELS_CUH
