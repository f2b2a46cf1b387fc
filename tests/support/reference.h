#pragma once
// The reference cases of tests/data (PyTorch results, see tests/data/README.md).
#include "models/reference_case.h"
#include "support/environment.h"

#include <cstdlib>
#include <string>

namespace gj::test {

using ReferenceCase = gj::ReferenceCase;

/// tests/data: where the build found it, or $GJ_TEST_DATA_DIR (a build carried to another machine).
inline std::string dataDir() {
  return environment().testDataDir.value_or(GJ_TEST_DATA_DIR);
}
/// Loads tests/data/<name>.
inline ReferenceCase loadCase(const std::string& name) { return readReferenceCase(dataDir() + "/" + name); }
inline double relError(const Tensor& out, const Tensor& ref) { return relativeError(out, ref); }
inline std::vector<Tensor> inputsFor(const Model& m, const ReferenceCase& c) { return caseInputs(m, c); }

}  // namespace gj::test
