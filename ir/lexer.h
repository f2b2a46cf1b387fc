#pragma once
// The IR text's tokens (internal to the parser, ir/parser.cpp): the lexer, and the `# file.py:line:col`
// comments TorchScript ends its lines with, which give nodes their Python source.
#include "ir/graph.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace gj::ir_text {

enum class TokKind : uint8_t { Ident, Value, Int, Float, String, Punct, End };

struct Token {
  TokKind kind;
  std::string text;
  int line, col;
};

std::string_view tokKindName(TokKind k);
bool isIdentChar(char c);

struct Lexed {
  std::vector<Token> tokens;  ///< ending with a TokKind::End token
  std::unordered_map<int, SourceLoc> pySources;  ///< the Python source each line's comment names, by line
};
/// The tokens of `text` (from `file`, for errors); a gj::Error at file:line:col for a malformed one.
Lexed lex(std::string_view text, const std::string& file);

}  // namespace gj::ir_text
