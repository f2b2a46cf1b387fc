#pragma once
// The kernels a fuser writes for GJ_DUMP_KERNELS, for tests that read the generated code. Header-only:
// the test binaries that include it link the executors.
#include "executors/function.h"
#include "models/model.h"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>

namespace gj::test {

/// Runs `m` forward once through a new Function with `fuser` (legacy executor) that dumps every kernel it
/// compiles into a fresh folder named after `tag`, and returns the files written there (name -> text);
/// the folder is removed. Only kernels compiled now are written: give the model sizes no other test of
/// the binary compiles, so nothing comes from the process-wide kernel cache.
inline std::map<std::string, std::string> dumpedKernels(const Model& m, FuserKind fuser, const std::string& tag) {
  const auto dir = std::filesystem::temp_directory_path() / ("gj_dump_" + tag);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  Function f(*m.graph, {.fuser = fuser, .executor = ExecutorKind::Legacy, .fuserOptions = {.dumpDir = dir.string()}});
  auto in = randomInputs(m, 8);
  f.forward(std::vector<IValue>(in.begin(), in.end()));
  std::map<std::string, std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    std::ifstream file(e.path());
    files[e.path().filename().string()] = {std::istreambuf_iterator<char>(file), {}};
  }
  std::filesystem::remove_all(dir);
  return files;
}

}  // namespace gj::test
