#include "runtime/nvrtc.h"
#include "support/environment.h"

#include <fmt/format.h>
#include <nvrtc.h>

#include <cctype>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <string_view>
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

namespace {

// The toolkit's headers: $GJ_CUDA_INCLUDE, else where the build found the toolkit.
std::string cudaIncludeDir() {
  return environment().cudaInclude.value_or(GJ_CUDA_INCLUDE_DIR);
}

Result<NvrtcOutput> compileWith(const std::string& source, const std::string& name, const std::string& arch,
                                const std::vector<const char*>& extra) {
  nvrtcProgram prog;
  nvrtcResult r = nvrtcCreateProgram(&prog, source.c_str(), (name + ".cu").c_str(), 0, nullptr, nullptr);
  if (r != NVRTC_SUCCESS) return Error(fmt::format("nvrtcCreateProgram: {}", nvrtcGetErrorString(r)));
  std::string archOpt = "--gpu-architecture=" + arch;
  // No --use_fast_math: IEEE expf/tanhf, so results match the CPU paths.
  std::vector<const char*> opts = {archOpt.c_str(), kNvrtcOptions};
  opts.insert(opts.end(), extra.begin(), extra.end());
  // cooperative_groups.h (a grid-wide barrier) is the toolkit's, with libcu++ under cccl/ beside it.
  const std::string include = cudaIncludeDir(), includeOpt = "--include-path=" + include,
                    cccl = "--include-path=" + include + "/cccl";
  if (source.find("<cooperative_groups.h>") != std::string::npos) {
    opts.push_back(includeOpt.c_str());
    opts.push_back(cccl.c_str());
  }
  r = nvrtcCompileProgram(prog, static_cast<int>(opts.size()), opts.data());
  size_t logSize = 0;
  nvrtcGetProgramLogSize(prog, &logSize);
  std::string log(logSize, '\0');
  if (logSize) nvrtcGetProgramLog(prog, log.data());
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  if (r != NVRTC_SUCCESS) {
    nvrtcDestroyProgram(&prog);
    std::string hint;
    if (log.find("cooperative_groups") != std::string::npos)
      hint = fmt::format("\n(cooperative_groups.h is read from {}; set GJ_CUDA_INCLUDE to the toolkit's include folder)",
                         cudaIncludeDir());
    return Error(fmt::format("NVRTC failed to compile {} for {}: {}\n{}{}", name, arch, nvrtcGetErrorString(r), log, hint));
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

// The number before `unit` in `line` ("12 registers" -> 12), or nullopt.
std::optional<int64_t> amountBefore(std::string_view line, std::string_view unit) {
  const size_t at = line.find(unit);
  if (at == std::string_view::npos || at < 2) return std::nullopt;
  size_t begin = at - 1;  // the space before unit
  while (begin > 0 && std::isdigit(static_cast<unsigned char>(line[begin - 1]))) --begin;
  if (begin == at - 1) return std::nullopt;
  return std::stoll(std::string(line.substr(begin, at - 1 - begin)));
}

}  // namespace

Result<NvrtcOutput> nvrtcCompile(const std::string& source, const std::string& name, const std::string& arch) {
  return compileWith(source, name, arch, {});
}

// ptxas' report, one entry after another:
//   ptxas info    : Compiling entry function 'k' for 'sm_90'
//   ptxas info    : Function properties for k
//       0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
//   ptxas info    : Used 12 registers, used 0 barriers, 368 bytes cmem[0]      (", N bytes smem" when any)
Result<std::vector<KernelResources>> nvrtcResourceUsage(const std::string& source, const std::string& name,
                                                        const std::string& arch) {
  if (!arch.starts_with("sm_")) return Error(fmt::format("ptxas reports on a real architecture (sm_90), not {}", arch));
  auto out = compileWith(source, name, arch, {"--ptxas-options=--verbose"});
  if (!out.ok()) return out.error();
  std::vector<KernelResources> rows;
  std::istringstream log(out.value().log);
  for (std::string line; std::getline(log, line);) {
    if (const size_t at = line.find("Compiling entry function '"); at != std::string::npos) {
      const size_t begin = at + 26, end = line.find('\'', begin);
      rows.push_back({.entry = line.substr(begin, end == std::string::npos ? end : end - begin)});
      continue;
    }
    if (rows.empty()) continue;
    KernelResources& k = rows.back();
    if (line.find("stack frame") != std::string::npos) {
      k.stackBytes = amountBefore(line, "bytes stack frame").value_or(0);
      k.spillStoreBytes = amountBefore(line, "bytes spill stores").value_or(0);
      k.spillLoadBytes = amountBefore(line, "bytes spill loads").value_or(0);
    } else if (line.find("Used ") != std::string::npos) {
      auto regs = amountBefore(line, "registers");
      if (!regs) return Error(fmt::format("ptxas' report for {} names no register count:\n{}", k.entry, line));
      k.registers = static_cast<int>(*regs);
      k.sharedBytes = amountBefore(line, "bytes smem").value_or(0);
    }
  }
  if (rows.empty()) return Error(fmt::format("no ptxas report in NVRTC's log for {}:\n{}", name, out.value().log));
  return rows;
}

}  // namespace gj
