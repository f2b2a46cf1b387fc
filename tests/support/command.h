#pragma once
// Runs a command line through the shell for the command-line tests: its exit status and what it printed
// on standard output and standard error together.
#include <fmt/format.h>

#include <cstdio>
#include <regex>
#include <string>
#include <sys/wait.h>

namespace gj::test {

struct CommandResult {
  int status = -1;  ///< the exit status (WEXITSTATUS), or -1 when the command did not exit normally
  std::string out;
};

inline CommandResult runCommand(const std::string& command) {
  CommandResult r;
  // In a subshell closed on a line of its own, so that a trailing "# comment" cannot swallow the redirection.
  FILE* p = popen(("(" + command + "\n) 2>&1").c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int raw = pclose(p);
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return r;
}

/// What graphir --version and graphbench --version print: "graphjit 0.1.0 (commit 1a2b3c4)\n" (a "+" after
/// the commit when the tree had changes; "unknown" outside a checkout).
inline bool isVersionLine(const std::string& s) {
  return std::regex_match(s, std::regex("graphjit [0-9]+\\.[0-9]+\\.[0-9]+ \\(commit ([0-9a-f]+\\+?|unknown)\\)\n"));
}

}  // namespace gj::test
