#pragma once
// Element types and devices, shared by runtime/ (tensors) and ir/ (tensor types).
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string_view>

namespace gj {

/// Element type of a tensor: PyTorch's ten common dtypes. Float32, Float64, Int64 and Bool are compute
/// dtypes, which every kernel takes. The other six are storage dtypes: tensors hold them, casts, copies and
/// .npy files carry them, and every op computes on them in their compute dtype (computeDType) and stores its
/// result back, as PyTorch's kernels and NNC do: float16 and bfloat16 in float32, the narrower integers in
/// int64, whose wrapping truncates to theirs. The enumerator's value is graphjit's dtype code (IR text's
/// prim::dtype results and aten::to arguments); the first four keep the codes they always had.
enum class DType : uint8_t { Float32, Float64, Int64, Bool, UInt8, Int8, Int16, Int32, Float16, BFloat16 };
/// Every dtype, in enumerator order.
inline constexpr DType kAllDTypes[] = {DType::Float32, DType::Float64, DType::Int64, DType::Bool,
                                       DType::UInt8,   DType::Int8,    DType::Int16, DType::Int32,
                                       DType::Float16, DType::BFloat16};

/// Bytes per element.
size_t dtypeSize(DType t);
/// The name used in IR text types, as PyTorch prints them: Float, Double, Long, Bool, Byte, Char, Short,
/// Int, Half, BFloat16.
std::string_view dtypeIrName(DType t);
/// Inverse of dtypeIrName; nullopt for an unknown name.
std::optional<DType> dtypeFromIrName(std::string_view name);
/// The dtype whose code (its enumerator's value: prim::dtype's result, aten::to's argument) is `code`;
/// nullopt for any other number.
std::optional<DType> dtypeFromCode(int64_t code);
/// numpy-like short name: float32, float64, int64, bool, uint8, int8, int16, int32, float16, bfloat16.
std::string_view dtypeName(DType t);
/// Of the floating category (float16, bfloat16, float32, float64).
bool isFloating(DType t);
/// Of the integer category (uint8 to int64; not bool).
bool isIntegral(DType t);
/// The dtype kernels compute a storage dtype in: float32 for float16 and bfloat16, int64 for the narrower
/// integers; a compute dtype itself.
DType computeDType(DType t);
/// A dtype that kernels do not take: computed in computeDType(t) and stored back.
inline bool isStorageOnly(DType t) { return computeDType(t) != t; }

/// How an operand takes part in type promotion: a tensor with dimensions, a 0-dim tensor, or a number
/// (a Python int, float or bool: PyTorch's wrapped scalar, whose dtype is Int64, Float64 or Bool here).
enum class OperandKind : uint8_t { Dimensioned, ZeroDim, Number };
struct PromotionOperand {
  DType dtype;
  OperandKind kind;
};

/// PyTorch's promote_types: the dtype two dtypes meet in. Bool gives way to anything; a higher category
/// wins; within a category the wider, except that uint8 with int8 meets in int16 and float16 with bfloat16
/// in float32.
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
