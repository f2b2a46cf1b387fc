#pragma once
// The reference cases of tests/data (PyTorch results, see tests/data/README.md) and comparisons.
#include "models/model.h"
#include "runtime/tensor.h"

#include <map>
#include <string>
#include <vector>

namespace gj::test {

struct ReferenceCase {
  std::string dir;
  std::string model;                        ///< manifest "model"
  ModelConfig config;                       ///< manifest "params" mapped onto ModelConfig
  double sgdLr = 0;                         ///< manifest params.sgd_lr, when present
  std::vector<std::string> inputNames, outputNames, gradNames;
  std::map<std::string, Tensor> inputs, outputs, gradOutputs, grads;
};

/// Loads tests/data/<name>.
ReferenceCase loadCase(const std::string& name);
std::string dataDir();

/// ||out - ref|| / ||ref|| in float64 (ref may be float64, out float32). Shapes must match.
double relError(const Tensor& out, const Tensor& ref);

/// The case's inputs in the order of the model's input specs.
std::vector<Tensor> inputsFor(const Model& m, const ReferenceCase& c);

}  // namespace gj::test
