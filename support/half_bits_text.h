#pragma once
// support/half_bits.h's text, for CUDA C that NVRTC compiles: kernels.cuh and the legacy fuser's generated
// kernels paste it in where they include the header (CMake embeds it: support/CMakeLists.txt).
namespace gj {
extern const char* const kHalfBitsHeader;
}
