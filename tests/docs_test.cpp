// The docs run as written: every IR example in docs/ parses, verifies and type-checks, and every graphir
// command line in a fenced block of the README and docs/ succeeds (in a scratch folder where tests/ is the
// source tree's, so that relative paths such as tests/data/lstm_cell work).
#include "ir/parser.h"
#include "passes/shape_propagation.h"
#include "tests/support/command.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

namespace gj {
namespace {

namespace fs = std::filesystem;

struct Snippet {
  std::string file;
  int line = 0;  ///< of the snippet's first line
  std::string text;
};

// The fenced code blocks of a Markdown file.
std::vector<Snippet> codeBlocks(const fs::path& path) {
  std::ifstream in(path);
  std::vector<Snippet> blocks;
  std::string line;
  bool inside = false;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.starts_with("```")) {
      inside = !inside;
      if (inside) blocks.push_back({path.filename().string(), n + 1, ""});
      continue;
    }
    if (inside) blocks.back().text += line + "\n";
  }
  return blocks;
}

std::vector<fs::path> markdownFiles() {
  std::vector<fs::path> files = {fs::path(GJ_SOURCE_DIR) / "README.md"};
  for (const auto& e : fs::directory_iterator(fs::path(GJ_SOURCE_DIR) / "docs"))
    if (e.path().extension() == ".md") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

TEST(Docs, EveryIrExampleParsesVerifiesAndTypeChecks) {
  int examples = 0;
  for (const fs::path& md : markdownFiles())
    for (const Snippet& s : codeBlocks(md)) {
      if (!s.text.starts_with("graph(")) continue;
      ++examples;
      try {
        auto g = parseIR(s.text, fmt::format("{}:{}", s.file, s.line));
        checkShapes(*g);
      } catch (const Error& e) {
        ADD_FAILURE() << s.file << ":" << s.line << ": " << e.what() << "\n" << s.text;
      }
    }
  EXPECT_GE(examples, 1) << "docs/ir.md's example was not found";
}

TEST(Docs, EveryGraphirCommandLineRunsAsWritten) {
  const fs::path scratch = fs::temp_directory_path() / fmt::format("docs_test_{}", getpid());
  fs::create_directories(scratch);
  fs::create_directory_symlink(fs::path(GJ_SOURCE_DIR) / "tests", scratch / "tests");
  int commands = 0;
  for (const fs::path& md : markdownFiles())
    for (const Snippet& s : codeBlocks(md)) {
      std::istringstream lines(s.text);
      std::string line;
      for (int n = s.line; std::getline(lines, line); ++n) {
        const size_t at = line.find("build/bin/graphir ");
        if (at == std::string::npos || line.starts_with("#")) continue;
        // An environment prefix (GJ_LOG=...) is kept; the binary is the one under test.
        std::string command = line.substr(0, at) + GJ_GRAPHIR + line.substr(at + std::string("build/bin/graphir").size());
        test::CommandResult r = test::runCommand(fmt::format("cd {} && {}", scratch.string(), command));
        EXPECT_EQ(r.status, 0) << md.filename().string() << ":" << n << ": " << line << "\n" << r.out;
        ++commands;
      }
    }
  EXPECT_GE(commands, 4) << "the README's graphir examples were not found";
  fs::remove_all(scratch);
}

// docs/cli.md's table names every variable graphjit reads (support/environment.def), and no other.
TEST(Docs, TheEnvironmentTableListsEveryVariable) {
  std::ifstream in(fs::path(GJ_SOURCE_DIR) / "docs" / "cli.md");
  std::stringstream text;
  text << in.rdbuf();
  std::set<std::string> documented;
  const std::regex row(R"(\n\| `([A-Z_]+)` \| )");
  const std::string doc = text.str();
  for (auto it = std::sregex_iterator(doc.begin(), doc.end(), row); it != std::sregex_iterator(); ++it)
    documented.insert((*it)[1]);
  const std::set<std::string> read = {
#define ENV(FIELD, NAME, WHAT) NAME,
#include "support/environment.def"
#undef ENV
  };
  EXPECT_EQ(documented, read);
  EXPECT_GE(read.size(), 10u);
}

}  // namespace
}  // namespace gj
