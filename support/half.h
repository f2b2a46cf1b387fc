#pragma once
// The element types of the storage dtypes without a C++ type of their own: float16 and bfloat16, held as
// their bits and converted to and from float with round-to-nearest-even, as PyTorch's c10::Half and
// c10::BFloat16 do. convertElement is the one element conversion every dtype cast uses.
#include <bit>
#include <cmath>
#include <climits>
#include <cstdint>
#include <type_traits>

namespace gj {

/// IEEE binary16 bits from a float, rounded to nearest even; NaN stays a (quiet) NaN, overflow is inf.
constexpr uint16_t halfBitsFromFloat(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const auto sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u) return sign | (ax > 0x7f800000u ? 0x7e00u : 0x7c00u);
  if (ax < 0x00800000u) return sign;  // a float subnormal is far below half's least subnormal
  const int exponent = static_cast<int>(ax >> 23) - 127;
  if (exponent > 15) return sign | 0x7c00u;
  const uint32_t mantissa = (ax & 0x7fffffu) | 0x800000u;  // 24 bits, the implicit one included
  // a half normal keeps 11 of the 24 bits; a half subnormal (exponent below -14) fewer
  const int shift = exponent >= -14 ? 13 : 13 + (-14 - exponent);
  if (shift > 24) return sign;  // below half the least subnormal: rounds to zero
  uint32_t kept = mantissa >> shift;
  const uint32_t rest = mantissa & ((1u << shift) - 1), halfway = 1u << (shift - 1);
  if (rest > halfway || (rest == halfway && (kept & 1u))) ++kept;
  // A normal's exponent field plus its mantissa without the implicit one; a carry out of the mantissa
  // moves into the exponent (up to inf), and a subnormal that rounds up to 0x400 is the least normal.
  const uint32_t bits = exponent >= -14 ? ((static_cast<uint32_t>(exponent + 15) << 10) + kept - 0x400u) : kept;
  return static_cast<uint16_t>(sign | bits);
}

constexpr float floatFromHalfBits(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu;
  if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24, exact in float
    const float magnitude = static_cast<float>(mantissa) * 0x1.0p-24f;
    return sign ? -magnitude : magnitude;
  }
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

/// bfloat16 bits (a float's upper half) from a float, rounded to nearest even; NaN stays a quiet NaN.
constexpr uint16_t bfloat16BitsFromFloat(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

constexpr float floatFromBFloat16Bits(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }

/// A float16 element. Converts to float exactly and from float by rounding.
struct Half {
  uint16_t bits = 0;
  Half() = default;
  constexpr explicit Half(float f) : bits(halfBitsFromFloat(f)) {}
  constexpr operator float() const { return floatFromHalfBits(bits); }  // NOLINT(google-explicit-constructor)
};

/// A bfloat16 element. Converts to float exactly and from float by rounding.
struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  constexpr explicit BFloat16(float f) : bits(bfloat16BitsFromFloat(f)) {}
  constexpr operator float() const { return floatFromBFloat16Bits(bits); }  // NOLINT(google-explicit-constructor)
};

template <typename T>
inline constexpr bool kIsHalfLike = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

/// A float truncated toward zero into an integer of `Bits` bits (32 or 64) as x86's conversion does, which
/// PyTorch's CPU casts are: NaN and values out of range give the smallest value (INT32_MIN, INT64_MIN).
template <int Bits>
constexpr int64_t truncateLikeX86(double v) {
  constexpr double limit = Bits == 32 ? 0x1.0p31 : 0x1.0p63;
  constexpr int64_t smallest = Bits == 32 ? INT32_MIN : INT64_MIN;
  if (!(v > -limit - 1.0 && v < limit)) return smallest;  // NaN fails both comparisons
  return static_cast<int64_t>(v);
}

/// An element of type S as type D, as PyTorch casts on the CPU: a float to an integer truncates toward zero
/// (through int32 for the integers of 32 bits and fewer, which then wrap into theirs, as a C++ cast
/// compiles on x86; NaN and out-of-range values give INT32_MIN there, INT64_MIN for int64); an integer
/// wraps; anything nonzero (NaN included) is true; double reaches float16 and bfloat16 through float.
template <typename D, typename S>
constexpr D convertElement(S s) {
  if constexpr (std::is_same_v<D, S>) {
    return s;
  } else if constexpr (std::is_same_v<D, bool>) {
    if constexpr (kIsHalfLike<S>) return static_cast<float>(s) != 0.0f;
    else return s != S{};
  } else if constexpr (kIsHalfLike<D>) {
    return D(static_cast<float>(s));
  } else if constexpr (std::is_integral_v<D> && (std::is_floating_point_v<S> || kIsHalfLike<S>)) {
    return static_cast<D>(truncateLikeX86<sizeof(D) == 8 ? 64 : 32>(static_cast<double>(s)));
  } else if constexpr (kIsHalfLike<S>) {
    return static_cast<D>(static_cast<float>(s));
  } else {
    return static_cast<D>(s);
  }
}

}  // namespace gj
