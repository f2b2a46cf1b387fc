#include "ir/type.h"

#include <fmt/format.h>

namespace gj {

Type Type::tensor(DType dtype, std::vector<int64_t> sizes, std::optional<DeviceKind> device) {
  Type t;
  t.dtype = dtype;
  t.sizes = std::move(sizes);
  t.device = device;
  return t;
}

Type Type::of(TypeKind kind) {
  Type t;
  t.kind = kind;
  return t;
}

Type Type::tuple(std::vector<Type> elements) {
  Type t = of(TypeKind::Tuple);
  t.elements = std::move(elements);
  return t;
}

Type Type::optional(Type element) {
  Type t = of(TypeKind::Optional);
  t.elements.push_back(std::move(element));
  return t;
}

Type Type::classNamed(std::string name) {
  Type t = of(TypeKind::Class);
  t.name = std::move(name);
  return t;
}

bool Type::isFrontendOnly() const {
  switch (kind) {
    case TypeKind::Tuple: case TypeKind::Optional: case TypeKind::Str: case TypeKind::Device:
    case TypeKind::Function: case TypeKind::Class: case TypeKind::FloatList: case TypeKind::BoolList:
      return true;
    case TypeKind::Tensor: case TypeKind::Int: case TypeKind::Float: case TypeKind::Bool: case TypeKind::IntList:
    case TypeKind::TensorList: case TypeKind::None:
      return false;
  }
  return false;
}

bool Type::isComplete() const {
  if (!isTensor()) return true;
  if (!dtype || !sizes) return false;
  for (int64_t s : *sizes)
    if (s == kUnknownDim) return false;
  return true;
}

std::string Type::str() const {
  switch (kind) {
    case TypeKind::Int: return "int";
    case TypeKind::Float: return "float";
    case TypeKind::Bool: return "bool";
    case TypeKind::IntList: return "int[]";
    case TypeKind::TensorList: return "Tensor[]";
    case TypeKind::None: return "NoneType";
    case TypeKind::FloatList: return "float[]";
    case TypeKind::BoolList: return "bool[]";
    case TypeKind::Str: return "str";
    case TypeKind::Device: return "Device";
    case TypeKind::Function: return "Function";
    case TypeKind::Class: return name;
    case TypeKind::Optional: return fmt::format("{}?", elements.at(0).str());  // as PyTorch prints it
    case TypeKind::Tuple: {
      std::vector<std::string> parts;
      for (const Type& e : elements) parts.push_back(e.str());
      return fmt::format("({})", fmt::join(parts, ", "));
    }
    case TypeKind::Tensor: break;
  }
  std::string s(dtype ? dtypeIrName(*dtype) : "Tensor");
  std::vector<std::string> parts;
  if (sizes)
    for (int64_t d : *sizes) parts.push_back(d == kUnknownDim ? "*" : std::to_string(d));
  if (device) parts.push_back(fmt::format("device={}", deviceName(*device)));
  if (requiresGrad) parts.push_back(fmt::format("requires_grad={}", *requiresGrad ? 1 : 0));
  if (!sizes && parts.empty()) return s;
  if (!sizes) parts.insert(parts.begin(), "...");  // sizes unknown but other properties known
  return fmt::format("{}({})", s, fmt::join(parts, ", "));
}

Type mergeTypes(const Type& a, const Type& b) {
  if (a.kind != b.kind) return Type::of(a.kind);
  if (a.kind == TypeKind::Tuple || a.kind == TypeKind::Optional) {
    if (a.elements.size() != b.elements.size()) return Type::of(a.kind);
    Type t = a;
    for (size_t i = 0; i < a.elements.size(); ++i) t.elements[i] = mergeTypes(a.elements[i], b.elements[i]);
    return t;
  }
  if (a.kind == TypeKind::Class && a.name != b.name) return Type::of(a.kind);
  Type t = a;
  if (a.dtype != b.dtype) t.dtype.reset();
  if (a.device != b.device) t.device.reset();
  if (a.requiresGrad != b.requiresGrad) t.requiresGrad.reset();
  if (!a.sizes || !b.sizes || a.sizes->size() != b.sizes->size()) {
    t.sizes.reset();
  } else {
    for (size_t i = 0; i < a.sizes->size(); ++i)
      if ((*a.sizes)[i] != (*b.sizes)[i]) (*t.sizes)[i] = kUnknownDim;
  }
  return t;
}

}  // namespace gj
