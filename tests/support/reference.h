#pragma once
// The reference cases of tests/data (PyTorch results, see tests/data/README.md).
#include "models/reference_case.h"

#include <string>

namespace gj::test {

using ReferenceCase = gj::ReferenceCase;

/// Loads tests/data/<name>.
inline ReferenceCase loadCase(const std::string& name) { return readReferenceCase(std::string(GJ_TEST_DATA_DIR) + "/" + name); }
inline std::string dataDir() { return GJ_TEST_DATA_DIR; }
inline double relError(const Tensor& out, const Tensor& ref) { return relativeError(out, ref); }
inline std::vector<Tensor> inputsFor(const Model& m, const ReferenceCase& c) { return caseInputs(m, c); }

}  // namespace gj::test
