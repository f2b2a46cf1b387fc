#pragma once
// Types of IR values. Tensor types may be partial: dtype, sizes (whole or per dimension), device and
// requires_grad are each optional, and shape propagation fills them in.
//
// Text form:  Tensor | Float(3, 4) | Float(*, 4, device=cpu, requires_grad=1) | Float | Tensor(3, *)
//             int | float | bool | int[] | float[] | bool[] | Tensor[] | NoneType
// `Float` alone is a float32 tensor of unknown rank; `Float()` is a 0-dim float32 tensor.
//
// TorchScript's graphs bring types that only its frontend passes see (they lower them to the kinds
// above): tuples `(T1, T2)`, `T?` (read also as `Optional[T]`), `str`, `Device`, `Function`, a module's
// class type (`__torch__.M`), `float[]` and `bool[]`. No executor runs a value of these kinds.
#include "support/dtype.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gj {

enum class TypeKind : uint8_t {
  Tensor, Int, Float, Bool, IntList, TensorList, None,
  FloatList, BoolList,                                   // lists of the frontend (constants, returns)
  Tuple, Optional, Str, Device, Function, Class,        // TorchScript's, lowered by the frontend passes
};

/// An unknown dimension inside known sizes (printed `*`).
constexpr int64_t kUnknownDim = -1;

struct Type {
  TypeKind kind = TypeKind::Tensor;
  // Tensor properties; all empty for the other kinds.
  std::optional<DType> dtype;
  std::optional<std::vector<int64_t>> sizes;  ///< kUnknownDim for an unknown dimension
  std::optional<DeviceKind> device;
  std::optional<bool> requiresGrad;
  std::vector<Type> elements;  ///< a Tuple's element types; an Optional's one
  std::string name;            ///< a Class's qualified name (`__torch__.torch.nn.modules.linear.Linear`)

  static Type tensor() { return Type{}; }
  static Type tensor(DType dtype, std::vector<int64_t> sizes, std::optional<DeviceKind> device = std::nullopt);
  static Type of(TypeKind kind);
  static Type tuple(std::vector<Type> elements);
  static Type optional(Type element);
  static Type classNamed(std::string name);

  bool isTensor() const { return kind == TypeKind::Tensor; }
  /// Of a kind only TorchScript's graphs hold (a tuple, Optional, str, Device, Function, class, float[],
  /// bool[]): no executor runs it.
  bool isFrontendOnly() const;
  /// dtype and every dimension known.
  bool isComplete() const;
  std::string str() const;
  bool operator==(const Type&) const = default;
};

/// One value's type seen on two paths (loop iterations, if branches, profiled runs): what they agree on.
/// Differing dimensions become kUnknownDim; a differing rank, dtype or device becomes unknown.
Type mergeTypes(const Type& a, const Type& b);

}  // namespace gj
