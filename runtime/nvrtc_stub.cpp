// NVRTC entry points for builds without CUDA (GJ_WITH_CUDA=OFF).
#include "runtime/nvrtc.h"

namespace gj {

bool haveNvrtc() { return false; }

std::string nvrtcVersionString() { return "no NVRTC"; }

std::vector<int> nvrtcSupportedArchs() { return {}; }

Result<NvrtcOutput> nvrtcCompile(const std::string&, const std::string& name, const std::string&) {
  return Error("NVRTC is not in this build (configured with GJ_WITH_CUDA=OFF); cannot compile " + name);
}

Result<std::vector<KernelResources>> nvrtcResourceUsage(const std::string&, const std::string& name,
                                                        const std::string&) {
  return Error("NVRTC is not in this build (configured with GJ_WITH_CUDA=OFF); cannot compile " + name);
}

}  // namespace gj
