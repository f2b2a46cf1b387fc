#pragma once
// graphjit's settings from the environment: every variable it reads (support/environment.def, the table in
// docs/cli.md), read in one place into one struct. A setting is the variable's text, or nullopt where it
// is unset or empty; the code it configures parses it and says what is wrong with it.
#include <optional>
#include <string>

namespace gj {

struct Environment {
#define ENV(FIELD, NAME, WHAT) std::optional<std::string> FIELD;
#include "support/environment.def"
#undef ENV

  /// The process's variables as they are now.
  static Environment read();
};

/// The process's settings, read at the first call (start-up, in practice) and kept; a copy, so that
/// refreshEnvironment on another thread cannot change it under the caller.
Environment environment();
/// Reads the variables again: for a program (or a test) that sets one with setenv after start-up.
void refreshEnvironment();

}  // namespace gj
