#pragma once
// NVRTC: CUDA C to PTX in-process, shared by both fusers. Needs the NVRTC library, not a GPU.
#include "support/result.h"

#include <cstdint>
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

/// What ptxas reports for one kernel entry of a program compiled for a real architecture.
struct KernelResources {
  std::string entry;
  int registers = 0;
  int64_t spillStoreBytes = 0, spillLoadBytes = 0;
  int64_t stackBytes = 0;   ///< the stack frame (local arrays, spills)
  int64_t sharedBytes = 0;  ///< static shared memory
  /// "24 registers, 0 B spill stores, 0 B spill loads, 0 B stack, 0 B shared"
  std::string str() const {
    return std::to_string(registers) + " registers, " + std::to_string(spillStoreBytes) + " B spill stores, " +
           std::to_string(spillLoadBytes) + " B spill loads, " + std::to_string(stackBytes) + " B stack, " +
           std::to_string(sharedBytes) + " B shared";
  }
};

/// Compiles `source` for the real architecture `arch` ("sm_90") with ptxas' verbose report (NVRTC runs
/// ptxas in-process, so no GPU and no toolkit binary is needed) and reads the report: one row per kernel
/// entry. Failure carries NVRTC's log; a report it cannot read is a failure that quotes it.
Result<std::vector<KernelResources>> nvrtcResourceUsage(const std::string& source, const std::string& name,
                                                        const std::string& arch);

/// The compute capabilities NVRTC compiles for, as 10 * major + minor (75, 80, 90, ...), ascending.
std::vector<int> nvrtcSupportedArchs();

/// "NVRTC 13.0" (the library's own report), or "no NVRTC".
std::string nvrtcVersionString();

/// The options nvrtcCompile passes besides the architecture (part of the persistent cache's keys).
inline constexpr const char* kNvrtcOptions = "--std=c++17";

/// True when this build includes NVRTC (GJ_WITH_CUDA).
bool haveNvrtc();

}  // namespace gj
