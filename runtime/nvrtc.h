#pragma once
// NVRTC: CUDA C to PTX in-process, shared by both fusers. Needs the NVRTC library, not a GPU.
#include "support/result.h"

#include <algorithm>
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

/// The theoretical occupancy on sm_90 (an H100) of a kernel with these resources launched with
/// `threadsPerBlock` (plus `dynamicShared` bytes of dynamic shared memory): the resident warps of the
/// blocks one multiprocessor holds at once (at most 32 blocks, 2048 threads, 65536 registers allocated
/// 256 to a warp, 228 KB of shared memory with 1 KB reserved a block) over its 64. 0 when one block does
/// not fit.
inline double sm90Occupancy(const KernelResources& r, int64_t threadsPerBlock, int64_t dynamicShared = 0) {
  if (threadsPerBlock <= 0 || threadsPerBlock > 1024) return 0;
  const int64_t warps = (threadsPerBlock + 31) / 32;
  const int64_t regsPerWarp = (std::max(r.registers, 1) * 32 + 255) / 256 * 256;
  const int64_t shared = r.sharedBytes + dynamicShared + 1024;
  int64_t blocks = std::min<int64_t>(32, 64 / warps);
  blocks = std::min(blocks, 65536 / regsPerWarp / warps);
  blocks = std::min<int64_t>(blocks, 228 * 1024 / shared);
  return static_cast<double>(std::max<int64_t>(blocks, 0) * warps) / 64.0;
}

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
