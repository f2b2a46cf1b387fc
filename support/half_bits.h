// float16 and bfloat16 bits from a float and back, rounded to nearest even as support/half.h rounds them on
// the host: for CUDA C, the unfused kernels (runtime/cuda/kernels.cuh) and the legacy fuser's generated
// kernels, which NVRTC and the emulated driver's host build compile (CMake embeds this text:
// support/half_bits_text.h). Hence plain C++ with no includes.
#ifndef GJ_SUPPORT_HALF_BITS_H
#define GJ_SUPPORT_HALF_BITS_H

#if defined(__CUDACC_RTC__) || defined(GJ_HALF_DEVICE)
#define GJ_HALF_FN __device__ inline
#else
#define GJ_HALF_FN static inline
#endif

// A float's bits and back (a union: the device's compiler and the emulator's both read it as intended).
GJ_HALF_FN unsigned gjBits(float f) {
  union { float f; unsigned u; } x;
  x.f = f;
  return x.u;
}
GJ_HALF_FN float gjFloatOfBits(unsigned u) {
  union { float f; unsigned u; } x;
  x.u = u;
  return x.f;
}

// float16 and bfloat16 bits, rounded to nearest even as support/half.h rounds them on the host.
GJ_HALF_FN unsigned short gjHalfBits(float f) {
  const unsigned x = gjBits(f);
  const unsigned short sign = (unsigned short)((x >> 16) & 0x8000u);
  const unsigned ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u) return sign | (ax > 0x7f800000u ? 0x7e00u : 0x7c00u);
  if (ax < 0x00800000u) return sign;
  const int e = (int)(ax >> 23) - 127;
  if (e > 15) return sign | 0x7c00u;
  const unsigned m = (ax & 0x7fffffu) | 0x800000u;
  const int shift = e >= -14 ? 13 : 13 + (-14 - e);
  if (shift > 24) return sign;
  unsigned kept = m >> shift;
  const unsigned rest = m & ((1u << shift) - 1), halfway = 1u << (shift - 1);
  if (rest > halfway || (rest == halfway && (kept & 1u))) ++kept;
  return (unsigned short)(sign | (e >= -14 ? ((unsigned)(e + 15) << 10) + kept - 0x400u : kept));
}

GJ_HALF_FN float gjHalfValue(unsigned short h) {
  const unsigned sign = (unsigned)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0x1f) return gjFloatOfBits(sign | 0x7f800000u | (m << 13));
  if (e == 0) return sign ? -(float)m * 5.9604644775390625e-8f : (float)m * 5.9604644775390625e-8f;  // 2^-24
  return gjFloatOfBits(sign | ((e + 112) << 23) | (m << 13));
}

GJ_HALF_FN unsigned short gjBFloat16Bits(float f) {
  const unsigned x = gjBits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((x >> 16) | 0x40u);
  return (unsigned short)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

GJ_HALF_FN float gjBFloat16Value(unsigned short b) { return gjFloatOfBits((unsigned)b << 16); }

#endif  // GJ_SUPPORT_HALF_BITS_H
