#pragma once
// Element types and devices, shared by runtime/ (tensors) and ir/ (tensor types).
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string_view>

namespace gj {

/// Element type of a tensor. Float64 exists for gradient checks; Int64 for token ids and labels.
enum class DType : uint8_t { Float32, Float64, Int64, Bool };
/// Every dtype, in enumerator order.
inline constexpr DType kAllDTypes[] = {DType::Float32, DType::Float64, DType::Int64, DType::Bool};

/// Bytes per element.
size_t dtypeSize(DType t);
/// The name used in IR text types: Float, Double, Long, Bool.
std::string_view dtypeIrName(DType t);
/// Inverse of dtypeIrName; nullopt for an unknown name.
std::optional<DType> dtypeFromIrName(std::string_view name);
/// The dtype whose code (its enumerator's value: prim::dtype's result, aten::to's argument) is `code`;
/// nullopt for any other number.
std::optional<DType> dtypeFromCode(int64_t code);
/// numpy-like short name: float32, float64, int64, bool.
std::string_view dtypeName(DType t);
inline bool isFloating(DType t) { return t == DType::Float32 || t == DType::Float64; }

/// How an operand takes part in type promotion: a tensor with dimensions, a 0-dim tensor, or a number
/// (a Python int, float or bool: PyTorch's wrapped scalar, whose dtype is Int64, Float64 or Bool here).
enum class OperandKind : uint8_t { Dimensioned, ZeroDim, Number };
struct PromotionOperand {
  DType dtype;
  OperandKind kind;
};

/// The dtype of two dtypes together: the wider, in the order bool < int64 < float32 < float64.
DType promoteTypes(DType a, DType b);

/// PyTorch's result_type: the dtype a pointwise op's operands meet in (a comparison's, before its bool
/// result). Categories rank bool < integer < floating. Tensors with dimensions decide unless a 0-dim tensor
/// or a number is of a higher category; 0-dim tensors decide over numbers likewise; within the deciding
/// group the widest dtype wins, and a number of a higher category raises it only to its category's default
/// (a float number: float32). So int64 [2] < 1.5 compares in float32, bool [2] >= -1 in int64, and float32
/// [2] * 0-dim float64 stays float32. One function for shape propagation, the interpreter, the fusers and
/// the kernels.
DType resultType(std::initializer_list<PromotionOperand> operands);
DType resultType(const PromotionOperand* operands, size_t count);

enum class DeviceKind : uint8_t { Cpu, Cuda };
std::string_view deviceName(DeviceKind d);
std::optional<DeviceKind> deviceFromName(std::string_view name);

}  // namespace gj
