#include "ir/lexer.h"

#include "support/error.h"
#include "support/text.h"

#include <cctype>
#include <charconv>

namespace gj::ir_text {

std::string_view tokKindName(TokKind k) {
  switch (k) {
    case TokKind::Ident: return "identifier";
    case TokKind::Value: return "value";
    case TokKind::Int: return "integer";
    case TokKind::Float: return "number";
    case TokKind::String: return "string";
    case TokKind::Punct: return "punctuation";
    case TokKind::End: return "end of input";
  }
  return "?";
}

bool isIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

namespace {

bool isIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool isValueChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; }

// The Python source a TorchScript comment names at the end of a line: `# /path/file.py:12:4`.
std::optional<SourceLoc> pySourceOf(std::string_view comment) {
  while (!comment.empty() && (comment.front() == '#' || comment.front() == ' ')) comment.remove_prefix(1);
  while (!comment.empty() && std::isspace(static_cast<unsigned char>(comment.back()))) comment.remove_suffix(1);
  size_t c2 = comment.rfind(':');
  if (c2 == std::string_view::npos || c2 == 0) return std::nullopt;
  size_t c1 = comment.rfind(':', c2 - 1);
  if (c1 == std::string_view::npos || c1 == 0) return std::nullopt;
  int line = 0, col = 0;
  auto num = [](std::string_view s, int& v) {
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    return ec == std::errc() && p == s.data() + s.size() && !s.empty();
  };
  if (!num(comment.substr(c1 + 1, c2 - c1 - 1), line) || !num(comment.substr(c2 + 1), col) || line <= 0)
    return std::nullopt;
  return SourceLoc{std::string(comment.substr(0, c1)), line, col};
}

class Lexer {
 public:
  Lexer(std::string_view text, const std::string& file) : text_(text), file_(file) {}

  /// The `# file.py:line:col` comment that ends each line, by line.
  std::unordered_map<int, SourceLoc> takePySources() { return std::move(pySources_); }

  std::vector<Token> run() {
    std::vector<Token> toks;
    while (true) {
      skipSpace();
      int line = line_, col = col_;
      if (pos_ >= text_.size()) {
        toks.push_back({TokKind::End, "", line, col});
        return toks;
      }
      char c = text_[pos_];
      if (c == '%') {
        advance();
        size_t start = pos_;
        while (pos_ < text_.size() && isValueChar(text_[pos_])) advance();
        if (pos_ == start)
          throw Error("expected a value name after '%'", SourceLoc{file_, line, col}.str(),
                      "value names use letters, digits, '_' and '.', e.g. %x or %input.1");
        toks.push_back({TokKind::Value, std::string(text_.substr(start, pos_ - start)), line, col});
      } else if (isIdentStart(c)) {
        // aten::mm, an overload aten::add.Tensor, a class type __torch__.torch.nn.Linear
        size_t start = pos_;
        while (pos_ < text_.size()) {
          char d = text_[pos_];
          bool scope = d == ':' && pos_ + 2 < text_.size() && text_[pos_ + 1] == ':' && isIdentStart(text_[pos_ + 2]);
          bool dot = d == '.' && pos_ + 1 < text_.size() && isIdentStart(text_[pos_ + 1]);
          if (!isIdentChar(d) && !scope && !dot) break;
          if (scope) advance();
          advance();
        }
        toks.push_back({TokKind::Ident, std::string(text_.substr(start, pos_ - start)), line, col});
      } else if (c == '"' || c == '\'') {
        toks.push_back(string(line, col));
      } else if (std::isdigit(static_cast<unsigned char>(c)) ||
                 (c == '-' && pos_ + 1 < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_ + 1])))) {
        toks.push_back(number(line, col));
      } else if (text_.substr(pos_, 2) == "->") {
        advance(), advance();
        toks.push_back({TokKind::Punct, "->", line, col});
      } else if (text_.substr(pos_, 3) == "...") {
        advance(), advance(), advance();
        toks.push_back({TokKind::Punct, "...", line, col});
      } else if (std::string_view("()[],:=*-?{}<>").find(c) != std::string_view::npos) {
        advance();
        toks.push_back({TokKind::Punct, std::string(1, c), line, col});
      } else if (c == '^') {  // TorchScript's Python call: `^fn[]()(%x)`, a function it could not compile
        size_t end = pos_ + 1;
        while (end < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[end])) || text_[end] == '_' ||
                                      text_[end] == '.'))
          ++end;
        throw Error(fmt::format("a call of the Python function '{}' (TorchScript's ^ op): graphjit runs no Python",
                                text_.substr(pos_ + 1, end - pos_ - 1)),
                    SourceLoc{file_, line, col}.str(),
                    "make the function visible to torch.jit.script (a module-level function, or @torch.jit.script), "
                    "so that PyTorch prints its body instead of a call");
      } else {
        throw Error(fmt::format("unexpected character '{}'", printable(c)), SourceLoc{file_, line, col}.str());
      }
    }
  }

 private:
  static std::string printable(char c) {
    if (std::isprint(static_cast<unsigned char>(c))) return std::string(1, c);
    return fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
  }
  void advance() {
    if (text_[pos_] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    ++pos_;
  }
  void skipSpace() {
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (c == '#') {
        size_t start = pos_;
        int line = line_;
        while (pos_ < text_.size() && text_[pos_] != '\n') advance();
        if (auto py = pySourceOf(text_.substr(start, pos_ - start))) pySources_[line] = std::move(*py);
      } else if (std::isspace(static_cast<unsigned char>(c))) {
        advance();
      } else if (text_.compare(pos_, 8, ", scope:") == 0) {
        // a traced module's `, scope: __module.layers/__module.layers.0` after a node's inputs: its
        // submodule path, which the Python source comment after it says better
        while (pos_ < text_.size() && text_[pos_] != '\n' && text_[pos_] != '#') advance();
      } else {
        return;
      }
    }
  }
  // A string literal in double (or single) quotes with Python's escapes \\ \" \' \n \t \r \xHH.
  Token string(int line, int col) {
    const char quote = text_[pos_];
    advance();
    std::string s;
    while (true) {
      if (pos_ >= text_.size() || text_[pos_] == '\n')
        throw Error("unterminated string", SourceLoc{file_, line, col}.str(),
                    fmt::format("a string ends with {} on the same line", quote));
      char c = text_[pos_];
      advance();
      if (c == quote) break;
      if (c != '\\') {
        s += c;
        continue;
      }
      if (pos_ >= text_.size()) continue;
      char e = text_[pos_];
      int eline = line_, ecol = col_;
      advance();
      switch (e) {
        case 'n': s += '\n'; break;
        case 't': s += '\t'; break;
        case 'r': s += '\r'; break;
        case '\\': case '"': case '\'': s += e; break;
        case 'x': {
          int v = 0;
          for (int k = 0; k < 2; ++k) {
            char h = pos_ < text_.size() ? text_[pos_] : '\0';
            if (!std::isxdigit(static_cast<unsigned char>(h)))
              throw Error("\\x in a string takes two hex digits", SourceLoc{file_, eline, ecol}.str());
            v = v * 16 + (std::isdigit(static_cast<unsigned char>(h)) ? h - '0' : std::tolower(h) - 'a' + 10);
            advance();
          }
          s += static_cast<char>(v);
          break;
        }
        default:
          throw Error(fmt::format("unknown escape '\\{}' in a string", printable(e)), SourceLoc{file_, eline, ecol}.str(),
                      "strings take \\\\, \\\", \\', \\n, \\t, \\r and \\xHH");
      }
    }
    return {TokKind::String, std::move(s), line, col};
  }

  Token number(int line, int col) {
    size_t start = pos_;
    bool isFloat = false;
    if (text_[pos_] == '-') advance();
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) advance();
    if (pos_ < text_.size() && text_[pos_] == '.' && text_.substr(pos_, 3) != "...") {
      isFloat = true;
      advance();
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) advance();
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      isFloat = true;
      advance();
      if (pos_ < text_.size() && (text_[pos_] == '-' || text_[pos_] == '+')) advance();
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) advance();
    }
    return {isFloat ? TokKind::Float : TokKind::Int, std::string(text_.substr(start, pos_ - start)), line, col};
  }

  std::string_view text_;
  const std::string& file_;
  size_t pos_ = 0;
  int line_ = 1, col_ = 1;
  std::unordered_map<int, SourceLoc> pySources_;
};

}  // namespace

Lexed lex(std::string_view text, const std::string& file) {
  Lexer lexer(text, file);
  Lexed out;
  out.tokens = lexer.run();
  out.pySources = lexer.takePySources();
  return out;
}

}  // namespace gj::ir_text
