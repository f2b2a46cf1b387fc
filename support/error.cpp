#include "support/error.h"

#include <cstdio>
#include <cstdlib>

namespace gj {

std::string SourceLoc::str() const {
  if (!known()) return {};
  return fmt::format("{}:{}:{}", file.empty() ? "<string>" : file, line, col);
}

std::string SourceLoc::pythonNote() const {
  return known() ? fmt::format(" (Python source {})", str()) : std::string();
}

static std::string compose(const std::string& message, const std::string& where, const std::string& hint) {
  return fmt::format("{}{}{}{}{}", where, where.empty() ? "" : ": ", message, hint.empty() ? "" : "\n  hint: ", hint);
}

Error::Error(std::string message, std::string where, std::string hint)
    : std::runtime_error(compose(message, where, hint)),
      message_(std::move(message)),
      where_(std::move(where)),
      hint_(std::move(hint)) {}

void throwUserError(const std::string& message) { throw Error(message); }

namespace detail {
CheckFailure::CheckFailure(const char* file, int line, const char* cond) {
  os_ << file << ":" << line << ": internal error: check `" << cond << "` failed: ";
}
CheckFailure::~CheckFailure() {
  std::fprintf(stderr, "%s\n", os_.str().c_str());
  std::fflush(stderr);
  std::abort();
}
}  // namespace detail
}  // namespace gj
