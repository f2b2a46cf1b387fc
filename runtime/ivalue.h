#pragma once
// IValue: a runtime value of any IR type (tensor, int, float, bool, int list, tensor list, None).
#include "runtime/tensor.h"

#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace gj {

using TensorList = std::vector<Tensor>;

class IValue {
 public:
  IValue() = default;  // None
  IValue(Tensor t) : v_(std::move(t)) {}
  IValue(int64_t i) : v_(i) {}
  IValue(int i) : v_(static_cast<int64_t>(i)) {}
  IValue(double d) : v_(d) {}
  IValue(bool b) : v_(b) {}
  IValue(std::vector<int64_t> xs) : v_(std::move(xs)) {}
  IValue(TensorList xs) : v_(std::make_shared<TensorList>(std::move(xs))) {}
  IValue(std::shared_ptr<TensorList> xs) : v_(std::move(xs)) {}
  /// A tensor stored in place: `slot = tensor` otherwise makes a temporary IValue and moves it in, three
  /// moves of a Tensor where one does (an interpreter frame stores every result so).
  IValue& operator=(Tensor&& t) {
    if (Tensor* held = std::get_if<Tensor>(&v_)) *held = std::move(t);
    else v_.emplace<Tensor>(std::move(t));
    return *this;
  }
  IValue& operator=(const Tensor& t) {
    if (Tensor* held = std::get_if<Tensor>(&v_)) *held = t;
    else v_.emplace<Tensor>(t);
    return *this;
  }

  bool isNone() const { return v_.index() == 0; }
  bool isTensor() const { return v_.index() == 1; }
  bool isInt() const { return v_.index() == 2; }
  bool isDouble() const { return v_.index() == 3; }
  bool isBool() const { return v_.index() == 4; }
  bool isIntList() const { return v_.index() == 5; }
  bool isTensorList() const { return v_.index() == 6; }

  /// Accessors throw gj::Error naming `what` and the actual kind on a mismatch.
  const Tensor& toTensor(const char* what = "value") const;
  int64_t toInt(const char* what = "value") const;
  double toDouble(const char* what = "value") const;  ///< accepts int too
  bool toBool(const char* what = "value") const;
  const std::vector<int64_t>& toIntList(const char* what = "value") const;
  const TensorList& toTensorList(const char* what = "value") const;
  /// The shared list itself, for copy-on-write appends.
  const std::shared_ptr<TensorList>& tensorListPtr(const char* what = "value") const;

  /// "Tensor(float32, [3, 4])", "int 3", ...
  std::string describe() const;
  std::string kindName() const;

 private:
  std::variant<std::monostate, Tensor, int64_t, double, bool, std::vector<int64_t>, std::shared_ptr<TensorList>> v_;
};

}  // namespace gj
