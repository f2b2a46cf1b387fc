#pragma once
// graphir's subcommands (internal to the tool). Each returns the process exit code; bad input throws
// gj::Error, which main prints.
#include "executors/function.h"
#include "models/model.h"

#include <optional>
#include <string>

namespace gj::tools {

struct RunSettings {
  FuserKind fuser = FuserKind::None;
  ExecutorKind executor = ExecutorKind::Profiling;
  std::string device = "cpu";
  // FuserOptions' injectKernelError (tests: --inject-kernel-error) and persistentRecurrences
  // (--persistent-recurrences).
  bool injectKernelError = false;
  bool persistentRecurrences = false;
  FunctionOptions options() const;
};

/// `torchscript`: printed as PyTorch's (exportTorchScript).
int cmdDump(const std::string& file, bool types, bool torchscript);
int cmdOps();
/// `inputsDir`: also writes randomInputs(seed 0) there as NAME.npy.
int cmdModel(const std::string& name, const ModelConfig& cfg, const std::string& out, bool torchscript,
             const std::string& inputsDir);
/// `pipeline`: an executor's whole pipeline instead of `passList`.
int cmdPasses(const std::string& file, const std::string& passList, std::optional<ExecutorKind> pipeline,
              bool printAfterAll, bool time);
int cmdFuse(const std::string& file, FuserKind fuser, bool backward);
/// `launch`: fastrnns' knobs for the CUDA target (the TE fuser's schedule; the legacy fuser's CUDA C does
/// not depend on them, only its launch does). `stats`: each CUDA kernel also compiled for sm_90, with a
/// line of ptxas' resource report per entry (and a total of spills on standard error).
/// `persistent`: also the persistent recurrences' kernels (fusers/recurrence.h) a CUDA plan would run.
int cmdCodegen(const std::string& file, FuserKind fuser, const std::string& target, const std::string& outDir,
               bool backward, const CudaLaunchOptions& launch, bool stats = false, bool persistent = false);
/// `persistent`: also the persistent-recurrences step's findings (fusers/recurrence.h) on each plan graph.
int cmdExplain(const std::string& file, FuserKind fuser, bool backward, bool persistent = false);
int cmdDot(const std::string& file, FuserKind fuser, const std::string& out);
int cmdStats(const std::string& file);
int cmdRun(const std::string& file, const std::string& inputsDir, const std::string& outDir, bool backward,
           const std::string& gradOutputsDir, const RunSettings& s);
int cmdCheck(const std::string& caseDir, const RunSettings& s);

/// What loadIR returns of TorchScript's text: the graph as written (dump, stats, dot, passes --passes), or
/// lowered to graphjit's forms by lower-torchscript (what runs: run, fuse, codegen, explain, --pipeline).
enum class Form { AsWritten, Lowered };
/// An IR file as a user wrote it: parsed, verified (op schemas included), lowered when asked and its types
/// checked (checkShapes), each error with its file:line:col.
std::unique_ptr<Graph> loadIR(const std::string& file, Form form);

/// Writes `text` to `path`, or to standard output for "" or "-"; a gj::Error says why a file cannot be written.
void writeText(const std::string& path, const std::string& text);
/// A folder for output, made with its parents; a filesystem error (a read-only place, a file in the way)
/// is a gj::Error naming the `what` folder, its path and why.
void makeFolder(const std::string& dir, const char* what);

}  // namespace gj::tools
