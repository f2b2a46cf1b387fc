#pragma once
// Reference cases in the layout of tests/data (and ../shared/fixtures): a folder with manifest.json,
// inputs/, outputs/, grad_outputs/ and grads/ of .npy files. graphir check and the tests read them.
#include "models/model.h"
#include "runtime/tensor.h"

#include <map>
#include <string>
#include <vector>

namespace gj {

struct ReferenceCase {
  std::string dir;
  std::string model;                        ///< manifest "model": a buildModel name
  ModelConfig config;                       ///< manifest "params", and sizes read off the inputs
  double sgdLr = 0;                         ///< params.sgd_lr, when present
  std::vector<std::string> inputNames, outputNames, gradNames;
  std::map<std::string, Tensor> inputs, outputs, gradOutputs, grads;
};

/// Reads a case folder; a missing or malformed manifest or .npy is a gj::Error naming the file.
ReferenceCase readReferenceCase(const std::string& dir);

/// The case's inputs in the order of the model's inputs (a gj::Error names a missing one).
std::vector<Tensor> caseInputs(const Model& m, const ReferenceCase& c);

/// ||out - ref|| / ||ref|| in float64 over the elements where ref is finite (ref may be float64, out float32),
/// the absolute norm where ref's is 0. Infinity where out differs from ref otherwise: a NaN or an infinity
/// of either that the other does not have at that element, or any difference of integers or bools. Shapes
/// must match.
double relativeError(const Tensor& out, const Tensor& ref);

}  // namespace gj
