#pragma once
#include "ir/graph.h"

namespace gj {

/// Gives a right operand of aten::mm that several small products share (an unrolled RNN's transposed
/// recurrent weight, read by every step; a product inside a loop counts as several) a row-major copy
/// made once: an `aten::contiguous` right after its definition, which those products read instead.
/// With at most kRowMajorOperandMaxRows rows on the left (static sizes), a GEMM by a transposed B is
/// slower than by a row-major one at an LSTM step's shapes, while with many rows (an unrolled layer's
/// input product) the transposed B is faster (bench/gemm_bench), so larger products keep their operand. The copy
/// is one pass over the operand per run, and costs nothing when it is row-major already (contiguous()
/// is then the operand itself). Where the interpreter packs the operand for oneDNN's matmul primitive
/// (runtime/gemm.h, PackedGemmB), which reads either layout, it skips the copy. Returns true if g changed.
bool contiguousSharedOperands(Graph& g);

/// The most rows of a product that contiguousSharedOperands gives a row-major right operand, and that the
/// interpreter runs with a packed shared operand instead (executors/interpreter/gemm.cpp).
inline constexpr int64_t kRowMajorOperandMaxRows = 256;

}  // namespace gj
