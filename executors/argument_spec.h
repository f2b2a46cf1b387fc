#pragma once
// ArgumentSpec: what the legacy executor specializes a graph on.
#include "ir/graph.h"
#include "runtime/ivalue.h"

#include <string>
#include <vector>

namespace gj {

class ArgumentSpec {
 public:
  /// Records, for every input: its kind and, for tensors, dtype, sizes, device and requires_grad.
  static ArgumentSpec of(const std::vector<IValue>& inputs, const std::vector<bool>& requiresGrad);
  bool operator==(const ArgumentSpec& o) const { return args_ == o.args_; }
  size_t hash() const;
  /// Gives g's inputs the complete types this spec records (requires_grad included).
  void applyTo(Graph& g) const;
  std::string str() const;

 private:
  struct Arg {
    std::string kind;  // IValue kind name
    DType dtype = DType::Float32;
    DeviceKind device = DeviceKind::Cpu;
    bool requiresGrad = false;
    Shape sizes;
    bool operator==(const Arg&) const = default;
  };
  std::vector<Arg> args_;
};

struct ArgumentSpecHash {
  size_t operator()(const ArgumentSpec& s) const { return s.hash(); }
};

}  // namespace gj
