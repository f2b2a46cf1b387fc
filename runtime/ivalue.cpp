#include "runtime/ivalue.h"

#include "support/error.h"

namespace gj {

std::string IValue::kindName() const {
  static const char* kNames[] = {"None", "Tensor", "int", "float", "bool", "int[]", "Tensor[]"};
  return kNames[v_.index()];
}

std::string IValue::describe() const {
  switch (v_.index()) {
    case 1: {
      const Tensor& t = std::get<Tensor>(v_);
      return t.defined() ? fmt::format("Tensor({}, {})", dtypeName(t.dtype()), shapeStr(t.sizes())) : "undefined Tensor";
    }
    case 2: return fmt::format("int {}", std::get<int64_t>(v_));
    case 3: return fmt::format("float {}", std::get<double>(v_));
    case 4: return fmt::format("bool {}", std::get<bool>(v_));
    case 5: return fmt::format("int[] {}", shapeStr(std::get<std::vector<int64_t>>(v_)));
    case 6: return fmt::format("Tensor[] of {}", std::get<6>(v_)->size());
    default: return "None";
  }
}

const Tensor& IValue::toTensor(const char* what) const {
  USER_CHECK(isTensor(), "{}: expected a Tensor, got {}", what, describe());
  return std::get<Tensor>(v_);
}
int64_t IValue::toInt(const char* what) const {
  USER_CHECK(isInt(), "{}: expected an int, got {}", what, describe());
  return std::get<int64_t>(v_);
}
double IValue::toDouble(const char* what) const {
  if (isInt()) return static_cast<double>(std::get<int64_t>(v_));
  USER_CHECK(isDouble(), "{}: expected a number, got {}", what, describe());
  return std::get<double>(v_);
}
bool IValue::toBool(const char* what) const {
  USER_CHECK(isBool(), "{}: expected a bool, got {}", what, describe());
  return std::get<bool>(v_);
}
const std::vector<int64_t>& IValue::toIntList(const char* what) const {
  USER_CHECK(isIntList(), "{}: expected an int[], got {}", what, describe());
  return std::get<std::vector<int64_t>>(v_);
}
const TensorList& IValue::toTensorList(const char* what) const { return *tensorListPtr(what); }
const std::shared_ptr<TensorList>& IValue::tensorListPtr(const char* what) const {
  USER_CHECK(isTensorList(), "{}: expected a Tensor[], got {}", what, describe());
  return std::get<std::shared_ptr<TensorList>>(v_);
}

}  // namespace gj
