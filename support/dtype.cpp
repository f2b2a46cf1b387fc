#include "support/dtype.h"

namespace gj {

size_t dtypeSize(DType t) {
  switch (t) {
    case DType::Float32: return 4;
    case DType::Float64: return 8;
    case DType::Int64: return 8;
    case DType::Bool: return 1;
  }
  return 0;
}

std::string_view dtypeIrName(DType t) {
  switch (t) {
    case DType::Float32: return "Float";
    case DType::Float64: return "Double";
    case DType::Int64: return "Long";
    case DType::Bool: return "Bool";
  }
  return "?";
}

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

std::string_view dtypeName(DType t) {
  switch (t) {
    case DType::Float32: return "float32";
    case DType::Float64: return "float64";
    case DType::Int64: return "int64";
    case DType::Bool: return "bool";
  }
  return "?";
}

static int promotionRank(DType t) {
  switch (t) {
    case DType::Bool: return 0;
    case DType::Int64: return 1;
    case DType::Float32: return 2;
    case DType::Float64: return 3;
  }
  return 0;
}

DType promoteTypes(DType a, DType b) { return promotionRank(a) >= promotionRank(b) ? a : b; }

namespace {

// 0 bool, 1 integer, 2 floating
int category(DType t) { return t == DType::Bool ? 0 : isFloating(t) ? 2 : 1; }

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
