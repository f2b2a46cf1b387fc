// The one place graphjit calls getenv (scripts/lint getenv keeps it so).
#include "support/environment.h"

#include <cstdlib>
#include <mutex>

namespace gj {

namespace {

std::optional<std::string> variable(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  return std::string(v);
}

std::mutex& mutex() {
  static std::mutex m;
  return m;
}

Environment& current() {
  static Environment e = Environment::read();
  return e;
}

}  // namespace

Environment Environment::read() {
  Environment e;
#define ENV(FIELD, NAME, WHAT) e.FIELD = variable(NAME);
#include "support/environment.def"
#undef ENV
  return e;
}

Environment environment() {
  std::lock_guard lock(mutex());
  return current();
}

void refreshEnvironment() {
  Environment fresh = Environment::read();
  std::lock_guard lock(mutex());
  current() = std::move(fresh);
}

}  // namespace gj
