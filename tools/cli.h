#pragma once
// The command-line front of graphir and graphbench: parsing with CLI11, and every parse error said the
// same way, "TOOL: error: what" with a hint, exit status 1. An unknown option or subcommand is named with
// the closest known one ("did you mean"), before anything it made CLI11 report instead (a required option
// that a typo left out, say).
#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gj {
enum class FuserKind : uint8_t;
enum class ExecutorKind : uint8_t;
}  // namespace gj

namespace gj::cli {

/// Parses argv into `app`. Returns nullopt to go on, or the exit status to end with: 0 after --help or
/// --version (printed), 1 after an error (printed to standard error).
std::optional<int> parse(CLI::App& app, int argc, char** argv);

/// Option checks whose messages read plainly ("must be a positive integer, got 0"), where CLI11's ranges
/// print the limits of a double.
CLI::Validator positive();
CLI::Validator nonNegative();
/// An integer from `lo` to `hi`.
CLI::Validator between(long long lo, long long hi);
/// One of `values` ("must be one of none, old, te; did you mean 'te'?").
CLI::Validator oneOf(std::vector<std::string> values);

/// --fuser NAME: a fuser of fusers/fusers.def, or none when `withNone`; the help lists each with what it
/// does after `what`. The tools name fusers only through these (and the executors through the next two).
CLI::Option* addFuserOption(CLI::App* app, FuserKind& fuser, const std::string& what, bool withNone = true);
/// --fuser NAME,NAME,...: several fusers to compare, none among them.
CLI::Option* addFusersOption(CLI::App* app, std::vector<FuserKind>& fusers, const std::string& what);
/// `flag` NAME: an executor of executors/executors.def.
CLI::Option* addExecutorOption(CLI::App* app, const std::string& flag, ExecutorKind& executor, const std::string& what);
/// --executor NAME,NAME,...: several executors to compare.
CLI::Option* addExecutorsOption(CLI::App* app, std::vector<ExecutorKind>& executors, const std::string& what);

/// graphjit's version and the commit it was built from: "graphjit 0.1.0 (commit 1a2b3c4)".
std::string versionString();

}  // namespace gj::cli
