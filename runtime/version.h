#pragma once
#include <string>

namespace gj {
/// The libraries the runtime was built with and their versions, for benchmark headers:
/// "oneDNN 2.6.3 (cpu, omp); OpenBLAS 0.3.21 ...; threads 2".
std::string runtimeVersions();
}  // namespace gj
