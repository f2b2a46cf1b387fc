#pragma once
// Result<T>: a value or a gj::Error, for failures that come from the environment (a JIT or NVRTC
// compile, a driver call), which callers are expected to handle (STYLE.md, rule 8).
#include "support/error.h"

#include <optional>
#include <utility>
#include <variant>

namespace gj {

template <typename T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}
  Result(Error error) : v_(std::move(error)) {}
  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  const T& value() const& {
    if (!ok()) throw std::get<1>(v_);
    return std::get<0>(v_);
  }
  T&& value() && {
    if (!ok()) throw std::get<1>(v_);
    return std::get<0>(std::move(v_));
  }
  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

}  // namespace gj
