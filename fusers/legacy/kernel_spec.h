#pragma once
// KernelSpec: a fusion group's subgraph as a flat expression list over one static iteration shape,
// which both code generators (LLVM IR, CUDA C) walk.
#include "ir/graph.h"

#include <optional>
#include <string>
#include <vector>

namespace gj::legacy {

struct KernelSpec {
  /// What every expr computes in: float32, float64 or int64 (a bool is 1 or 0 there; float16 in float32, the
  /// narrower integers in int64).
  DType dtype = DType::Float32;
  /// The iteration shape: every output's. Its leading size may be kUnknownDim (dynamicRows): the kernel then
  /// runs as many rows as its operands bring, the same in every input that has that dim unknown.
  std::vector<int64_t> shape;
  std::vector<std::vector<int64_t>> argSizes;  ///< static sizes of each input (the kernel reads them contiguous)
  /// Each input's: `dtype`, a storage dtype computing in it (float16 and bfloat16, converted as they load; in
  /// an int64 group uint8 to int32, extended as they load), Bool (read as 1 or 0), or Int64 for a dropout's rng.
  std::vector<DType> argDtypes;
  /// Each output's: `dtype`, a storage dtype (rounded or truncated as it is stored), or Bool (stored as
  /// value != 0).
  std::vector<DType> outDtypes;

  /// A read of input `arg` at the iteration index: element offset = offset + sum_d index[d] * strides[d]
  /// (strides per iteration dimension; 0 where the input broadcasts). Chunks of an input are such views.
  struct Load {
    size_t arg;
    int64_t offset;
    std::vector<int64_t> strides;
  };
  /// Dropout: prim::philox_dropout of args {x, p} at the iteration index (the group's shape is its output's),
  /// with the seed and offset of input `rngArg` (int64 [2]) and `stream` (support/philox.h).
  enum class ExprKind : uint8_t { Load, Scalar, Op, Dropout };
  struct Expr {
    ExprKind kind;
    OpKind op = OpKind::Add;   ///< for Op
    std::vector<int> args;     ///< for Op and Dropout: indices of earlier exprs
    size_t load = 0;           ///< for Load
    double scalar = 0;         ///< for Scalar
    size_t rngArg = 0;         ///< for Dropout
    int64_t stream = 0;        ///< for Dropout
    /// For Op: the storage dtype (float16, bfloat16; uint8 to int32) its node's result has, which the value
    /// is rounded or truncated to at once, as the unfused op stores it; nullopt for a result in `dtype` or bool.
    std::optional<DType> roundTo;
  };
  std::vector<Load> loads;
  std::vector<Expr> exprs;    ///< in evaluation order
  std::vector<int> outputs;   ///< the expr each output stores

  int64_t numel() const;
  bool dynamicRows() const { return !shape.empty() && shape.front() == kUnknownDim; }
  /// The elements of a launch whose leading size is `rows` (numel() for a static shape).
  int64_t numel(int64_t rows) const;
  /// Canonical text of everything the generated code depends on: the kernel cache key.
  std::string key() const;
};

/// Builds the spec of a prim::FusionGroup's subgraph. Throws gj::Error for anything the legacy fuser
/// cannot compile (the caller then leaves the group to the interpreter).
KernelSpec buildKernelSpec(const Graph& sub);

}  // namespace gj::legacy
