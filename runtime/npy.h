#pragma once
// NumPy .npy files (format versions 1-3): float32, float64, int64 and bool, little-endian, C order.
// Anything else (Fortran order, other dtypes, bad magic, truncated data) is a gj::Error naming the file.
#include "runtime/tensor.h"

#include <string>

namespace gj {

Tensor readNpy(const std::string& path);
/// Parses .npy bytes; `what` names the source in error messages.
Tensor parseNpy(std::string_view bytes, const std::string& what);
/// Writes `t` (any strides) as a C-order .npy file.
void writeNpy(const std::string& path, const Tensor& t);

}  // namespace gj
