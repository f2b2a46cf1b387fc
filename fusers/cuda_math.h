#pragma once
// CUDA C both fusers' generated kernels call (internal; included only by their CUDA printers).

namespace gj::fusion {

/// min and max as the TE interpreter and LLVM's minimum / maximum compute them: a when it is NaN or wins,
/// else b, so NaN when either operand is (ints are never NaN). A kernel that calls gjMin or gjMax starts
/// with this text.
inline constexpr const char* kCudaMinMaxHeader =
    "template <typename T> __device__ __forceinline__ T gjMin(T a, T b) { return (a != a || a < b) ? a : b; }\n"
    "template <typename T> __device__ __forceinline__ T gjMax(T a, T b) { return (a != a || a > b) ? a : b; }\n";

}  // namespace gj::fusion
