#pragma once
// NVRTC: CUDA C to PTX in-process, shared by both fusers. Needs the NVRTC library, not a GPU.
#include "support/result.h"

#include <string>
#include <vector>

namespace gj {

struct NvrtcOutput {
  std::string ptx;
  std::string cubin;  ///< machine code, when `arch` names a real architecture ("sm_90"); else empty
  std::string log;  ///< compiler messages (warnings included); empty when clean
};

/// Compiles `source` for `arch` ("sm_80", "sm_90", ...). Failure carries NVRTC's log.
Result<NvrtcOutput> nvrtcCompile(const std::string& source, const std::string& name, const std::string& arch);

/// The compute capabilities NVRTC compiles for, as 10 * major + minor (75, 80, 90, ...), ascending.
std::vector<int> nvrtcSupportedArchs();

/// "NVRTC 13.0" (the library's own report), or "no NVRTC".
std::string nvrtcVersionString();

/// The options nvrtcCompile passes besides the architecture (part of the persistent cache's keys).
inline constexpr const char* kNvrtcOptions = "--std=c++17";

/// True when this build includes NVRTC (GJ_WITH_CUDA).
bool haveNvrtc();

}  // namespace gj
