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

}  // namespace gj
