#pragma once
// CUDA C both fusers' generated kernels call (internal; included only by their CUDA printers).

#include "support/dtype.h"

#include <fmt/format.h>

#include <string>

namespace gj::fusion {

/// The C type of a kernel's elements of dtype t: float16 and bfloat16 as their 16 bits (support/half_bits.h).
inline const char* cudaElementType(DType t) {
  switch (t) {
    case DType::Float32: return "float";
    case DType::Float64: return "double";
    case DType::Int64: return "long long";
    case DType::Bool: return "bool";
    case DType::UInt8: return "unsigned char";
    case DType::Int8: return "signed char";
    case DType::Int16: return "short";
    case DType::Int32: return "int";
    case DType::Float16: case DType::BFloat16: return "unsigned short";
  }
  return "void";
}

/// The wrapping sum, difference or product (`op` "+", "-" or "*") of two long long expressions, computed in
/// unsigned long long: PyTorch's integers wrap, and signed overflow is undefined in C.
inline std::string cudaWrapping(const std::string& x, const char* op, const std::string& y) {
  return fmt::format("((long long)((unsigned long long)({}) {} (unsigned long long)({})))", x, op, y);
}

/// support/half_bits.h's functions a kernel calls for a float16 or bfloat16 element: the one that widens its
/// 16 bits to a float, and the one that rounds a float to them. A kernel that calls them starts with that
/// header's text (kHalfBitsHeader).
inline const char* cudaWidenFn(DType t) { return t == DType::Float16 ? "gjHalfValue" : "gjBFloat16Value"; }
inline const char* cudaNarrowFn(DType t) { return t == DType::Float16 ? "gjHalfBits" : "gjBFloat16Bits"; }

/// min and max as the TE interpreter and LLVM's minimum / maximum compute them: a when it is NaN or wins,
/// else b, so NaN when either operand is (ints are never NaN). A kernel that calls gjMin or gjMax starts
/// with this text.
inline constexpr const char* kCudaMinMaxHeader =
    "template <typename T> __device__ __forceinline__ T gjMin(T a, T b) { return (a != a || a < b) ? a : b; }\n"
    "template <typename T> __device__ __forceinline__ T gjMax(T a, T b) { return (a != a || a > b) ? a : b; }\n";

/// A block's sum or maximum of v over threadIdx.x (te::ThreadReduce), every thread getting it: a warp's
/// butterfly of shuffles (gjWarpFold, alone for a warp's), then the warps' results through `red`, 32
/// elements of shared memory, which every thread folds in the same order; gjColumnFold the same over the
/// threads of one lane only, through `cols`. F is GjAdd or GjMaxOf. Every thread of the block calls them; blockDim.x is a multiple of 32.
/// The barrier ahead of the store keeps a later call from overwriting what an earlier one still reads. A
/// kernel that calls them starts with this text (after kCudaMinMaxHeader, for gjMax).
inline constexpr const char* kCudaBlockReduceHeader =
    "struct GjAdd { template <typename T> __device__ static T fold(T a, T b) { return a + b; } };\n"
    "struct GjMaxOf { template <typename T> __device__ static T fold(T a, T b) { return gjMax(a, b); } };\n"
    "template <typename F, typename T> __device__ __forceinline__ T gjWarpFold(T v) {\n"
    "  for (int o = 16; o > 0; o >>= 1) v = F::fold(v, __shfl_xor_sync(0xffffffffu, v, o));\n"
    "  return v;\n"
    "}\n"
    "template <typename F, typename T, typename A> __device__ __forceinline__ T gjBlockFold(T v, A& red) {\n"
    "  v = gjWarpFold<F>(v);\n"
    "  if (blockDim.x == 32) return v;\n"
    "  __syncthreads();\n"
    "  if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = v;\n"
    "  __syncthreads();\n"
    "  v = red[0];\n"
    "  for (unsigned w = 1; w < blockDim.x / 32; ++w) v = F::fold(v, (T)red[w]);\n"
    "  return v;\n"
    "}\n"
    // the fold over the threads of one lane (te::ThreadReduce's columns): `cols` is blockDim.x elements
    "template <typename F, typename T, typename A> __device__ __forceinline__ T gjColumnFold(T v, A& cols) {\n"
    "  __syncthreads();\n"
    "  cols[threadIdx.x] = v;\n"
    "  __syncthreads();\n"
    "  v = cols[threadIdx.x % 32];\n"
    "  for (unsigned w = 1; w < blockDim.x / 32; ++w) v = F::fold(v, (T)cols[w * 32 + threadIdx.x % 32]);\n"
    "  return v;\n"
    "}\n";

}  // namespace gj::fusion
