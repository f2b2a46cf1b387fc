#include "support/dtype.h"

namespace gj {

namespace {

struct DTypeInfo {
  size_t bytes;
  std::string_view irName, name;
  int category;  // 0 bool, 1 integer, 2 floating
  DType compute;
};

constexpr DTypeInfo info(DType t) {
  switch (t) {
    case DType::Float32: return {4, "Float", "float32", 2, DType::Float32};
    case DType::Float64: return {8, "Double", "float64", 2, DType::Float64};
    case DType::Int64: return {8, "Long", "int64", 1, DType::Int64};
    case DType::Bool: return {1, "Bool", "bool", 0, DType::Bool};
    case DType::UInt8: return {1, "Byte", "uint8", 1, DType::Int64};
    case DType::Int8: return {1, "Char", "int8", 1, DType::Int64};
    case DType::Int16: return {2, "Short", "int16", 1, DType::Int64};
    case DType::Int32: return {4, "Int", "int32", 1, DType::Int64};
    case DType::Float16: return {2, "Half", "float16", 2, DType::Float32};
    case DType::BFloat16: return {2, "BFloat16", "bfloat16", 2, DType::Float32};
  }
  return {0, "?", "?", 0, t};
}

int category(DType t) { return info(t).category; }

}  // namespace

size_t dtypeSize(DType t) { return info(t).bytes; }
std::string_view dtypeIrName(DType t) { return info(t).irName; }
std::string_view dtypeName(DType t) { return info(t).name; }
bool isFloating(DType t) { return category(t) == 2; }
bool isIntegral(DType t) { return category(t) == 1; }
DType computeDType(DType t) { return info(t).compute; }

std::optional<DType> dtypeFromIrName(std::string_view name) {
  for (DType t : kAllDTypes)
    if (dtypeIrName(t) == name) return t;
  return std::nullopt;
}

std::optional<DType> dtypeFromCode(int64_t code) {
  for (DType t : kAllDTypes)
    if (static_cast<int64_t>(t) == code) return t;
  return std::nullopt;
}

DType promoteTypes(DType a, DType b) {
  if (a == b) return a;
  if (category(a) != category(b)) return category(a) > category(b) ? a : b;
  if (isFloating(a)) {
    const bool halves = dtypeSize(a) == 2 && dtypeSize(b) == 2;  // float16 with bfloat16
    if (halves) return DType::Float32;
    return dtypeSize(a) > dtypeSize(b) ? a : b;
  }
  // integers: uint8 holds no negatives, so with int8 both fit only in int16
  const bool unsignedByte = a == DType::UInt8 || b == DType::UInt8;
  if (unsignedByte && dtypeSize(a) == 1 && dtypeSize(b) == 1) return DType::Int16;
  return dtypeSize(a) > dtypeSize(b) ? a : b;
}

namespace {

// The deciding group's dtype `higher` against the groups below it (`lower`); nullopt: no operand there.
std::optional<DType> combine(std::optional<DType> higher, std::optional<DType> lower) {
  if (!higher) return lower;
  if (!lower) return higher;
  if (category(*lower) > category(*higher)) return promoteTypes(*higher, *lower);
  return higher;
}

}  // namespace

DType resultType(const PromotionOperand* operands, size_t count) {
  std::optional<DType> groups[3];  // by OperandKind
  for (size_t i = 0; i < count; ++i) {
    DType t = operands[i].dtype;
    if (operands[i].kind == OperandKind::Number && isFloating(t)) t = DType::Float32;  // the default dtype
    std::optional<DType>& g = groups[static_cast<int>(operands[i].kind)];
    g = g ? promoteTypes(*g, t) : t;
  }
  const std::optional<DType> r = combine(groups[0], combine(groups[1], groups[2]));
  return r.value_or(DType::Float32);
}

DType resultType(std::initializer_list<PromotionOperand> operands) {
  return resultType(operands.begin(), operands.size());
}

std::string_view deviceName(DeviceKind d) {
  switch (d) {
    case DeviceKind::Cpu: return "cpu";
    case DeviceKind::Cuda: return "cuda";
  }
  return "?";
}

std::optional<DeviceKind> deviceFromName(std::string_view name) {
  if (name == "cpu") return DeviceKind::Cpu;
  if (name == "cuda") return DeviceKind::Cuda;
  return std::nullopt;
}

}  // namespace gj
