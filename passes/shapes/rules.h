#pragma once
// Shape propagation's rules (passes/shape_propagation.h), one per op, each in the file of its ops.def group:
// view.cpp, reduction.cpp, gemm.cpp and data.cpp list their ops' rules in a table; every pointwise op
// broadcasts its operands (pointwiseType), and control ops and TorchScript's forms keep the type their node
// declares. ruleFor assembles the table once and checks that every op has exactly one rule, from the
// file of its own group: a new row of ops.def without one fails the first propagation, and every test.
#include "ir/graph.h"
#include "ir/op_table.h"

#include <optional>
#include <span>
#include <vector>

namespace gj::shapes {

using Sizes = std::vector<int64_t>;

/// A tensor type with `in`'s dtype and device and the given sizes (unknown: nullopt).
Type tensorLike(const Type& in, std::optional<Sizes> sizes);
/// A value's sizes: a tensor's as its type knows them, [] for a scalar (which broadcasts as 0-dim).
std::optional<Sizes> sizesOf(const Value* v);
/// The rank sizesOf gives, when known.
std::optional<int64_t> rankOf(const Value* v);
/// Dim d of a tensor of `rank` (negative from the end; a 0-dim tensor takes 0 and -1), or nullopt when
/// either is unknown or d is out of range.
std::optional<int64_t> normDim(std::optional<int64_t> d, std::optional<int64_t> rank);
/// a and b broadcast together; a size unknown in one takes the other's.
std::optional<Sizes> broadcast(std::optional<Sizes> a, std::optional<Sizes> b);
/// s without dim d.
Sizes dropDim(Sizes s, int64_t d);
/// Sizes of the reshape target `shape` (with one -1 inferred when the input is static).
std::optional<Sizes> reshapeSizes(const Value* x, const Value* shapeValue);
/// Sizes given as an int[] value: its constants, or a list built from ints some of which are known (the others
/// unknown sizes).
std::optional<Sizes> listedSizes(const Value* sizes);
/// The sizes of element k of a list produced by chunk / unbind / split_with_sizes, when known.
std::optional<Type> listElement(const Value* list, int64_t k);
/// The type of the elements appended to a list built by prim::ListAppend, possibly across a loop.
std::optional<Type> appendedElement(const Value* list, int depth = 0);
/// The elements of a list built by a chain of prim::ListAppend onto a prim::ListConstruct (an unrolled
/// loop's), in order; nullopt for any other list.
std::optional<std::vector<const Value*>> appendChain(const Value* list);
/// Output types of the tensors stacked or concatenated from `list` along d.
std::optional<Sizes> stackCat(const Value* list, std::optional<int64_t> dim, bool stack);
/// The sizes of mm, bmm or matmul (`k`) of a and b, when their ranks are known.
std::optional<Sizes> matmulSizes(const Value* a, const Value* b, OpKind k);
/// The sizes of a reduction of x over `dims` (an int[] value; none or empty: all), keeping them as 1 with
/// `keepdim`.
std::optional<Sizes> reduceSizes(const Value* x, const Value* dims, const Value* keepdim);
/// Whether a size is known (not kUnknownDim).
bool knownDim(int64_t d);
/// An int[] argument of one element or two, element i (H, W).
int64_t pairAt(const std::vector<int64_t>& v, size_t i);
/// conv2d (input, weight, bias, stride, padding, dilation, groups): N, the weight's output channels, H, W.
std::optional<Sizes> conv2dSizes(const Node* n);
/// max_pool2d (self, kernel_size, stride, padding, dilation, ceil_mode): the N and C of self, pooled H, W.
std::optional<Sizes> maxPool2dSizes(const Node* n);
/// flatten (self, start_dim, end_dim): the dims from start to end as one.
std::optional<Sizes> flattenSizes(const Node* n);

/// A rule's view of node n: its operand i, and a tensor type with operand i's dtype and device and the
/// given sizes (`like`) or its own (`same`).
struct Args {
  const Node* n;
  const Value* in(size_t i) const { return n->input(i); }
  Type like(size_t i, std::optional<Sizes> sizes) const { return tensorLike(in(i)->type(), std::move(sizes)); }
  Type same(size_t i) const { return like(i, sizesOf(in(i))); }
};

/// The type of output k of n from its inputs' types (and the constants among them).
using Rule = Type (*)(const Node* n, size_t k, const Args& op);
using RuleRow = OpTable<Rule>::Row;

/// The rows of each group's file.
std::span<const RuleRow> viewRules();
std::span<const RuleRow> reductionRules();
std::span<const RuleRow> gemmRules();
std::span<const RuleRow> dataRules();

/// Rules more than one group's ops share.
/// The type the node declares for output k (control ops, TorchScript's forms, prim::TypeCheck).
Type declaredType(const Node* n, size_t k, const Args& op);
/// Operand 0's type (contiguous, softmax and the like).
Type likeFirstOperandType(const Node* n, size_t k, const Args& op);
/// Operand 0's dtype and device with the sizes operand 1 lists (sum_to_size and the gradients that
/// scatter back into a given shape).
Type sizedByListType(const Node* n, size_t k, const Args& op);
/// A pointwise op's result: its tensor operands broadcast together (a scalar operand broadcasts as 0-dim),
/// in the dtype of pointwiseOperandDtype (bool for a comparison).
Type pointwiseType(const Node* n);
/// A sum's type: a sum of integers or bools is int64, as PyTorch's.
Type integersSumInInt64(Type t);

/// The rule of ops of kind k.
Rule ruleFor(OpKind k);

}  // namespace gj::shapes
