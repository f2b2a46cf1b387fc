#pragma once
// The one error type of graphjit, and the checks that raise it.
//
// Three channels (see STYLE.md, rule 8):
//   IR_CHECK(cond) << ...     a compiler bug: prints where and aborts.
//   USER_CHECK(cond, ...)     bad models or inputs: throws gj::Error.
//   gj::Error{...}            thrown directly where a location (file:line:col) is known.
#include <fmt/format.h>

#include <sstream>
#include <stdexcept>
#include <string>

namespace gj {

/// A source position in IR text. line and col count from 1; 0 means unknown.
struct SourceLoc {
  std::string file;  ///< "<string>" when the text came from memory.
  int line = 0;
  int col = 0;
  bool known() const { return line > 0; }
  std::string str() const;  ///< "file:line:col", or "" when unknown.
  /// " (Python source file.py:12:4)" for the Python source a TorchScript comment named, "" when unknown:
  /// what an error's place gains when its node came from PyTorch's text.
  std::string pythonNote() const;
};

/// What went wrong, where, and how to fix it. Tools print `what()` and exit non-zero.
class Error : public std::runtime_error {
 public:
  Error(std::string message, std::string where = {}, std::string hint = {});
  const std::string& message() const { return message_; }
  const std::string& where() const { return where_; }
  const std::string& hint() const { return hint_; }

 private:
  std::string message_, where_, hint_;
};

[[noreturn]] void throwUserError(const std::string& message);

namespace detail {
/// Collects a message with operator<< and aborts in its destructor.
class CheckFailure {
 public:
  CheckFailure(const char* file, int line, const char* cond);
  [[noreturn]] ~CheckFailure();
  template <typename T>
  CheckFailure& operator<<(const T& v) {
    os_ << v;
    return *this;
  }

 private:
  std::ostringstream os_;
};
struct Voidify {
  void operator&(const CheckFailure&) {}
};
}  // namespace detail
}  // namespace gj

/// A compiler invariant. On failure prints file:line, the condition and the streamed message, then aborts.
#define IR_CHECK(cond) \
  (cond) ? (void)0 : ::gj::detail::Voidify() & ::gj::detail::CheckFailure(__FILE__, __LINE__, #cond)

/// A user-facing check: throws gj::Error with the fmt-formatted message.
#define USER_CHECK(cond, ...)                                  \
  do {                                                         \
    if (!(cond)) ::gj::throwUserError(::fmt::format(__VA_ARGS__)); \
  } while (0)
