// The unfused path's elementwise kernels: pointwise maps (float, double, int64), dropout and uniform numbers,
// typed loads and stores, strided copies and fills.
// A part of runtime/cuda/kernels.cuh, which includes it after its types and helpers (and splices its
// text in for NVRTC, runtime/CMakeLists.txt); not a header of its own.

// exp, log, sqrt, tanh, erf, sin, cos, expm1, log1p, atan, asin, acos, sinh, cosh, erfc, lgamma, the roundings
// and pow of T (float or double): each resolves to T's own overload.
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
