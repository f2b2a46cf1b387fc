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
