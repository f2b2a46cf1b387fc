#include "executors/argument_spec.h"

#include "support/hash.h"

#include <fmt/format.h>

namespace gj {

ArgumentSpec ArgumentSpec::of(const std::vector<IValue>& inputs, const std::vector<bool>& requiresGrad) {
  ArgumentSpec spec;
  for (size_t i = 0; i < inputs.size(); ++i) {
    Arg a;
    a.kind = inputs[i].kindName();
    if (inputs[i].isTensor()) {
      const Tensor& t = inputs[i].toTensor();
      a.dtype = t.dtype();
      a.device = t.device();
      a.sizes = t.sizes();
      a.requiresGrad = i < requiresGrad.size() && requiresGrad[i];
    }
    spec.args_.push_back(std::move(a));
  }
  return spec;
}

size_t ArgumentSpec::hash() const {
  size_t h = args_.size();
  for (const Arg& a : args_) {
    hashMix(h, std::hash<std::string>()(a.kind));
    hashMix(h, static_cast<size_t>(a.dtype) * 31 + static_cast<size_t>(a.device) * 7 + a.requiresGrad);
    for (int64_t s : a.sizes) hashMix(h, static_cast<size_t>(s));
  }
  return h;
}

void ArgumentSpec::applyTo(Graph& g) const {
  for (size_t i = 0; i < args_.size() && i < g.inputs().size(); ++i) {
    const Arg& a = args_[i];
    if (a.kind != "Tensor") continue;
    Type t = Type::tensor(a.dtype, a.sizes, a.device);
    t.requiresGrad = a.requiresGrad;
    g.inputs()[i]->setType(t);
  }
}

std::string ArgumentSpec::str() const {
  std::string s;
  for (const Arg& a : args_)
    s += (s.empty() ? "" : ", ") + (a.kind == "Tensor" ? fmt::format("{}{}{}", dtypeName(a.dtype), shapeStr(a.sizes),
                                                                      a.requiresGrad ? " requires_grad" : "")
                                                        : a.kind);
  return s;
}

}  // namespace gj
