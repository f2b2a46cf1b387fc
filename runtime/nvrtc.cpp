#include "runtime/nvrtc.h"

#include <fmt/format.h>
#include <nvrtc.h>

#include <vector>

namespace gj {

bool haveNvrtc() { return true; }

std::string nvrtcVersionString() {
  int major = 0, minor = 0;
  if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) return "NVRTC (version unknown)";
  return fmt::format("NVRTC {}.{}", major, minor);
}

std::vector<int> nvrtcSupportedArchs() {
  int n = 0;
  if (nvrtcGetNumSupportedArchs(&n) != NVRTC_SUCCESS || n <= 0) return {};
  std::vector<int> archs(n);
  if (nvrtcGetSupportedArchs(archs.data()) != NVRTC_SUCCESS) return {};
  return archs;
}

Result<NvrtcOutput> nvrtcCompile(const std::string& source, const std::string& name, const std::string& arch) {
  nvrtcProgram prog;
  nvrtcResult r = nvrtcCreateProgram(&prog, source.c_str(), (name + ".cu").c_str(), 0, nullptr, nullptr);
  if (r != NVRTC_SUCCESS) return Error(fmt::format("nvrtcCreateProgram: {}", nvrtcGetErrorString(r)));
  std::string archOpt = "--gpu-architecture=" + arch;
  // No --use_fast_math: IEEE expf/tanhf, so results match the CPU paths.
  std::vector<const char*> opts = {archOpt.c_str(), kNvrtcOptions};
  r = nvrtcCompileProgram(prog, static_cast<int>(opts.size()), opts.data());
  size_t logSize = 0;
  nvrtcGetProgramLogSize(prog, &logSize);
  std::string log(logSize, '\0');
  if (logSize) nvrtcGetProgramLog(prog, log.data());
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  if (r != NVRTC_SUCCESS) {
    nvrtcDestroyProgram(&prog);
    return Error(fmt::format("NVRTC failed to compile {} for {}: {}\n{}", name, arch, nvrtcGetErrorString(r), log));
  }
  size_t ptxSize = 0;
  nvrtcGetPTXSize(prog, &ptxSize);
  std::string ptx(ptxSize, '\0');
  nvrtcGetPTX(prog, ptx.data());
  std::string cubin;
  if (arch.starts_with("sm_")) {
    size_t cubinSize = 0;
    nvrtcGetCUBINSize(prog, &cubinSize);
    cubin.resize(cubinSize);
    if (cubinSize) nvrtcGetCUBIN(prog, cubin.data());
  }
  nvrtcDestroyProgram(&prog);
  return NvrtcOutput{std::move(ptx), std::move(cubin), std::move(log)};
}

}  // namespace gj
