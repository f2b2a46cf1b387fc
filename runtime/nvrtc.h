#pragma once
// NVRTC: CUDA C to PTX in-process, shared by both fusers. Needs the NVRTC library, not a GPU.
#include "support/result.h"

#include <string>

namespace gj {

struct NvrtcOutput {
  std::string ptx;
  std::string log;  ///< compiler messages (warnings included); empty when clean
};

/// Compiles `source` for `arch` ("sm_80", "sm_90", ...). Failure carries NVRTC's log.
Result<NvrtcOutput> nvrtcCompile(const std::string& source, const std::string& name, const std::string& arch);

/// True when this build includes NVRTC (GJ_WITH_CUDA).
bool haveNvrtc();

}  // namespace gj
