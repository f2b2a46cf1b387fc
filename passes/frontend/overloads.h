#pragma once
// The overloads PyTorch prints with more arguments than graphjit's rows take, and the rows they stand for:
// lower-overloads (overloads.cpp) reads them one way, the TorchScript export (export.cpp) writes them back.
#include "ir/op.h"

#include <span>
#include <string_view>

namespace gj::frontend {

/// aten::gelu's `approximate` argument for the exact gelu (graphjit's aten::gelu without it).
inline constexpr std::string_view kGeluExact = "none";

/// The rows with a trailing `ScalarType? dtype` and theirs without: aten::sum(self, dtype) -> aten::sum(self).
/// A dtype that is not None casts the operand first, as PyTorch does.
struct DTypeOverload {
  OpKind overload, plain;
};
inline constexpr DTypeOverload kDTypeOverloads[] = {
    {OpKind::SumDType, OpKind::Sum},           {OpKind::SumDimDType, OpKind::SumDim},
    {OpKind::MeanDType, OpKind::Mean},         {OpKind::MeanDimDType, OpKind::MeanDim},
    {OpKind::SoftmaxDType, OpKind::Softmax},   {OpKind::LogSoftmaxDType, OpKind::LogSoftmax}};

/// The factories with options (dtype, layout, device, pin_memory[, memory_format]) and their rows without:
/// aten::zeros_like(self, dtype, layout, device, pin_memory, memory_format) -> aten::zeros_like(self).
/// `options` is where the dtype is.
struct Factory {
  OpKind overload, plain;
  size_t options;
};
inline constexpr Factory kFactories[] = {{OpKind::ZerosLikeOptions, OpKind::ZerosLike, 1},
                                         {OpKind::OnesLikeOptions, OpKind::OnesLike, 1},
                                         {OpKind::FullLikeOptions, OpKind::FullLike, 2},
                                         {OpKind::NewZerosOptions, OpKind::NewZeros, 2},
                                         {OpKind::EmptyLikeOptions, OpKind::ZerosLike, 1}};

/// A trailing argument's default: None, an int, a float, a bool or a str.
struct Default {
  enum class Kind : uint8_t { None, Int, Float, Bool, Str } kind = Kind::None;
  double number = 0;
  std::string_view text = {};
  bool anyValue = false;  ///< the argument does not change the values (expand's implicit): any is taken
};

/// The rows whose trailing arguments graphjit takes at their defaults only: aten::embedding(weight, indices,
/// -1, false, false) -> aten::embedding(weight, indices).
struct DefaultsOverload {
  OpKind overload, plain;
  std::span<const Default> defaults;  ///< the trailing arguments, after the plain row's
};
inline constexpr Default kNone{};
inline constexpr Default kEmbeddingDefaults[] = {{Default::Kind::Int, -1}, {Default::Kind::Bool, 0}, {Default::Kind::Bool, 0}};
inline constexpr Default kNllLossDefaults[] = {kNone, {Default::Kind::Int, 1}, {Default::Kind::Int, -100}};
inline constexpr Default kCrossEntropyDefaults[] = {kNone, {Default::Kind::Int, 1}, {Default::Kind::Int, -100},
                                                    {Default::Kind::Float, 0}};
inline constexpr Default kContiguousDefaults[] = {{Default::Kind::Int, 0}};
inline constexpr Default kExpandDefaults[] = {{Default::Kind::Bool, 0, {}, true}};
inline constexpr Default kEluDefaults[] = {{Default::Kind::Int, 1}};  // input_scale
inline constexpr DefaultsOverload kDefaultsOverloads[] = {
    {OpKind::EmbeddingOptions, OpKind::Embedding, kEmbeddingDefaults},
    {OpKind::NllLossOptions, OpKind::NllLoss, kNllLossDefaults},
    {OpKind::CrossEntropyLoss, OpKind::CrossEntropy, kCrossEntropyDefaults},
    {OpKind::ContiguousFormat, OpKind::Contiguous, kContiguousDefaults},
    {OpKind::ExpandImplicit, OpKind::Expand, kExpandDefaults},
    {OpKind::EluScaled, OpKind::Elu, kEluDefaults}};

/// PyTorch's ScalarType codes (c10/core/ScalarType.h) of the dtypes graphjit has, and back.
std::optional<DType> fromScalarType(int64_t code);
int64_t scalarTypeOf(DType d);

}  // namespace gj::frontend
