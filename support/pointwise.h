// The pointwise ops of support/pointwise.def: their numbering and arity, and gjPointwise, which applies an
// op's rule over an algebra (a set of primitives: add, exp, select, constants...). Each code generator
// brings its own algebra: TE expressions, LLVM IR, CUDA C text, or plain float and double in the unfused
// CUDA kernels, which NVRTC compiles with this header: hence plain C++ with no includes, C-style names
// (GjPointwiseOp), and an enum class for the rest of the host code (gj::PointwiseOp).
#ifndef GJ_SUPPORT_POINTWISE_H
#define GJ_SUPPORT_POINTWISE_H

#if defined(__CUDACC_RTC__)
#define GJ_POINTWISE_FN __device__ inline
#elif defined(__CUDACC__)
#define GJ_POINTWISE_FN __host__ __device__ inline
#else
#define GJ_POINTWISE_FN inline
#endif
#define GJ_POINTWISE_CONSTEXPR_FN GJ_POINTWISE_FN constexpr

enum GjPointwiseOp {
#define POINTWISE(NAME, ARITY, RULE) GJ_PW_##NAME,
#include "support/pointwise.def"
#undef POINTWISE
  GJ_PW_COUNT
};

/// How many operands op's rule reads (1 to 3); 0 for a number that is no op.
GJ_POINTWISE_CONSTEXPR_FN int gjPointwiseArity(int op) {
  switch (op) {
#define POINTWISE(NAME, ARITY, RULE) \
  case GJ_PW_##NAME:                 \
    return ARITY;
#include "support/pointwise.def"
#undef POINTWISE
  }
  return 0;
}

/// Op's rule over algebra m on operands a, b, c (those past its arity are not read). `nan` is returned for
/// a number that is no op.
template <class M, class V>
GJ_POINTWISE_FN V gjPointwise(int op, const M& m, V a, V b, V c, V nan) {
  (void)b;
  (void)c;
  switch (op) {
#define POINTWISE(NAME, ARITY, RULE) \
  case GJ_PW_##NAME:                 \
    return RULE;
#include "support/pointwise.def"
#undef POINTWISE
  }
  return nan;
}

#if !defined(__CUDACC_RTC__)
namespace gj {

/// The pointwise ops, numbered as GjPointwiseOp; `Name` is the ops.def OpKind of the same name.
enum class PointwiseOp : int {
#define POINTWISE(NAME, ARITY, RULE) NAME = GJ_PW_##NAME,
#include "support/pointwise.def"
#undef POINTWISE
};

inline int pointwiseArity(PointwiseOp op) { return gjPointwiseArity(static_cast<int>(op)); }

/// Whether PyTorch computes op in the default float dtype (float32) where its operands promote to an
/// integer or bool dtype, as its float-valued functions do: exp of int64 is float32, integer true division
/// too; neg, abs, clamp or mul of int64 stay int64. One list for shape propagation and the kernels.
inline bool promotesIntegersToFloat(PointwiseOp op) {
  switch (op) {
    case PointwiseOp::Div: case PointwiseOp::Sigmoid: case PointwiseOp::Tanh: case PointwiseOp::Exp:
    case PointwiseOp::Log: case PointwiseOp::Sqrt: case PointwiseOp::Rsqrt: case PointwiseOp::Reciprocal:
    case PointwiseOp::Erf: case PointwiseOp::Sin: case PointwiseOp::Cos: case PointwiseOp::Expm1:
    case PointwiseOp::Log1p: case PointwiseOp::Atan: case PointwiseOp::Asin: case PointwiseOp::Acos:
    case PointwiseOp::Sinh: case PointwiseOp::Cosh: case PointwiseOp::Erfc: case PointwiseOp::Atan2:
    case PointwiseOp::Lgamma: case PointwiseOp::Digamma:
      return true;
    default: return false;
  }
}

/// Op's rule over algebra m: m's value type V for every operand (the ones past the op's arity are ignored).
template <class M, class V>
V applyPointwise(PointwiseOp op, const M& m, const V& a, const V& b, const V& c) {
  return gjPointwise(static_cast<int>(op), m, a, b, c, m.c(0));
}

}  // namespace gj
#endif

#endif  // GJ_SUPPORT_POINTWISE_H
