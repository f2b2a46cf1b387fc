#pragma once
// Element types and devices, shared by runtime/ (tensors) and ir/ (tensor types).
#include <cstddef>
#include <cstdint>
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
/// PyTorch's type promotion for the two tensor operands of a pointwise op, float32 and float64: a 0-dim
/// tensor does not raise the dtype of a tensor with dimensions (x32 * 0-dim x64 stays float32); otherwise
/// float64 wins. (Python scalars take the tensor's dtype before this is asked.)
inline DType promoteTypes(DType a, bool aIsZeroDim, DType b, bool bIsZeroDim) {
  if (aIsZeroDim != bIsZeroDim) return aIsZeroDim ? b : a;
  return a == DType::Float64 || b == DType::Float64 ? DType::Float64 : a;
}

enum class DeviceKind : uint8_t { Cpu, Cuda };
std::string_view deviceName(DeviceKind d);
std::optional<DeviceKind> deviceFromName(std::string_view name);

}  // namespace gj
