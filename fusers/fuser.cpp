#include "fusers/fuser.h"

namespace gj {
CompiledKernel::~CompiledKernel() = default;
Fuser::~Fuser() = default;
}  // namespace gj
