#pragma once
// Rules both fusers share for what a pointwise group may hold, and the graph rewrites around chunks.
#include "ir/graph.h"

#include <optional>
#include <string>
#include <vector>

namespace gj::fusion {

/// An elementwise op a group computes at its output's index: a pointwise op, or prim::philox_dropout (whose
/// numbers are those of the element's index in its output, so it never moves below a chunk).
bool isPointwise(const Node* n);
/// The sizes a fuser's group may hold: all static, or static but for the leading dimension of tensors of
/// rank 2 or more (kUnknownDim there), whose extent the kernel reads from its operands at run time: the
/// legacy fuser's rows, such as a packed sequence's shrinking batch (models/vl_lstm.h).
enum class SizeRule : uint8_t { Static, DynamicRows };
/// v's sizes under the rule; nullopt when it does not hold.
std::optional<std::vector<int64_t>> groupSizes(const Value* v, SizeRule rule);
/// Whether groupSizes(v, rule) holds, without copying the sizes.
bool hasGroupSizes(const Value* v, SizeRule rule);
/// The dtypes a fuser's pointwise groups take, each level those of the one before and more:
/// - Floats: float32 and float64, the dtypes the kernels compute in;
/// - Storage: float16 and bfloat16 too, computed in float32 (the fuser converts them at its loads and stores);
/// - Integers: integer ops too (integerOp's list), computed in int64 over integer and bool tensors, each op's
///   result truncated to its dtype (uint8 to int32 wrap in their own width, as the unfused ops do).
enum class Admit : uint8_t { Floats, Storage, Integers };
/// A float32 or float64 tensor whose sizes the rule admits; with `storage`, a float16 or bfloat16 one too (a
/// fuser that converts at its loads and stores, computing in float32).
bool floatTensor(const Value* v, SizeRule rule = SizeRule::Static, bool storage = false);
/// The pointwise ops whose rules (support/pointwise.def) are exact in int64 with wrapping: sums, differences,
/// products, neg, abs, sign, relu, the clamps, maximum, minimum, where, masked_fill, the comparisons, and
/// the divisions (trunc and floor, remainder, fmod) by a constant other than 0 and -1, whose float
/// primitives are integer ones there (div truncates, fmod is C's %, floor and trunc keep an integer).
bool integerOp(OpKind k);
/// Aligned from the right, each dim of `from` equals `to`'s or is 1 (an unknown leading dim matches only
/// an unknown one).
bool broadcastsTo(const std::vector<int64_t>& from, const std::vector<int64_t>& to);
/// The dtype a pointwise node computes in: its output's, or a comparison's operands' promoted dtype (its result
/// is bool); float32 for a storage float under Admit::Storage; int64 for an integer op of integers (or a
/// comparison of bools) under Admit::Integers; nullopt when the level does not take it.
std::optional<DType> computeDtype(const Node* n, Admit admit = Admit::Floats);
/// A pointwise node over tensors of the admitted dtypes and sizes, scalar operands constant, inputs
/// broadcasting to its output; its tensor inputs in its compute dtype unless `mixedDtypes` (type promotion
/// inside the kernel). In a float node bool tensors enter only as a condition operand (where's,
/// masked_fill's) and leave only as a comparison's result: the kernels compute them as 1 and 0 in the float
/// dtype. An integer node (Admit::Integers) reads integer and bool tensors and integral numbers of at most
/// 2^53 in magnitude (the kernel's constants are doubles).
bool fusiblePointwise(const Node* n, bool mixedDtypes = false, SizeRule rule = SizeRule::Static,
                      Admit admit = Admit::Floats);
/// Which of fusiblePointwise's conditions n fails, in words ("" when none does).
std::string pointwiseBlocker(const Node* n, bool mixedDtypes = false, SizeRule rule = SizeRule::Static,
                             Admit admit = Admit::Floats);
/// Operand i of pointwise node n when it is a constant number beside a storage dtype the node's operands meet
/// (float16, bfloat16, uint8 to int32): the number rounded or wrapped to that dtype first, as the unfused op
/// does (0.1 beside float16 is 0.0999755859375, 300 beside int8 is 44). nullopt otherwise: the kernel reads
/// the operand as it is.
std::optional<double> roundedNumber(const Node* n, size_t i);
/// chunk(x, n, d) with constants, an evenly divisible x of admitted sizes (never along an unknown dim),
/// unpacked once.
bool fusibleChunk(const Node* n, SizeRule rule = SizeRule::Static, Admit admit = Admit::Floats);

/// Moves aten::chunk above the pointwise ops that produce its input, so that chunks apply to tensors
/// computed outside any group (and a group partitions them as it loads them):
/// Given:  %g = aten::add(%a, %b, %one) ; %l = aten::chunk(%g, %4, %1) ; %x, %y = prim::ListUnpack(%l)
/// Result: %x = aten::add(%a0, %b0, %one) ; %y = aten::add(%a1, %b1, %one)   (%a0, %a1 chunks of %a ...)
/// An input that broadcasts along the chunked dimension is used whole. Returns true if g changed.
bool moveChunksUp(Graph& g, SizeRule rule = SizeRule::Static);

/// Moves each chunk (and its unpack) down to just before the first use of its pieces, chunks of later
/// values first, so a scan meets it next to its consumers.
void sinkChunks(Block* b, SizeRule rule = SizeRule::Static);

/// Drops from a region every chunk whose pieces are also read outside it.
void trimChunks(std::vector<Node*>& region);

}  // namespace gj::fusion
