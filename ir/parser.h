#pragma once
// Parses IR text (the printer's format) into a verified Graph. Errors are gj::Error with
// file:line:col, what was expected, and a hint where one helps.
#include "ir/graph.h"

#include <memory>
#include <string>
#include <string_view>

namespace gj {

/// Parses and verifies `text`; `file` names it in error locations ("<string>" by default).
std::unique_ptr<Graph> parseIR(std::string_view text, const std::string& file = "<string>");
/// Reads and parses a file.
std::unique_ptr<Graph> parseIRFile(const std::string& path);
/// Whether `s` is a run of the letters, digits and underscores the text spells identifiers with (so that a
/// name made of such runs prints and parses back).
bool isIdentifierText(std::string_view s);

}  // namespace gj
