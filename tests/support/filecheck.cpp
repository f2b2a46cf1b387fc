#include "tests/support/filecheck.h"

#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <vector>

namespace gj::test {

namespace {

enum class Kind { Check, Next, Same, Not, Label };

struct Directive {
  Kind kind;
  std::string pattern;
  int line;  // in the checks text, for messages
};

std::vector<std::string> splitLines(const std::string& s) {
  std::vector<std::string> lines;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

std::string escape(const std::string& lit) {
  static const std::string special = R"(\^$.|?*+()[]{})";
  std::string out;
  bool space = false;
  for (char c : lit) {
    if (c == ' ' || c == '\t') {
      if (!space) out += "\\s+";
      space = true;
      continue;
    }
    space = false;
    if (special.find(c) != std::string::npos) out += '\\';
    out += c;
  }
  return out;
}

// A pattern as a regex; `captures` gets the names of the groups it defines, in order.
std::string toRegex(const std::string& pat, const std::map<std::string, std::string>& vars,
                    std::vector<std::string>& captures) {
  std::string re;
  size_t i = 0;
  while (i < pat.size()) {
    size_t a = pat.find("{{", i), b = pat.find("[[", i);
    size_t next = std::min(a, b);
    re += escape(pat.substr(i, next - i));
    if (next == std::string::npos) break;
    if (next == a) {
      size_t end = pat.find("}}", a + 2);
      if (end == std::string::npos) throw std::runtime_error("unterminated {{ in pattern: " + pat);
      re += "(?:" + pat.substr(a + 2, end - a - 2) + ")";
      i = end + 2;
    } else {
      size_t end = pat.find("]]", b + 2);
      if (end == std::string::npos) throw std::runtime_error("unterminated [[ in pattern: " + pat);
      std::string body = pat.substr(b + 2, end - b - 2);
      size_t colon = body.find(':');
      if (colon == std::string::npos) {
        auto it = vars.find(body);
        if (it == vars.end()) throw std::runtime_error("use of undefined variable [[" + body + "]]");
        re += escape(it->second);
      } else {
        captures.push_back(body.substr(0, colon));
        re += "(" + body.substr(colon + 1) + ")";
      }
      i = end + 2;
    }
  }
  return re;
}

std::vector<Directive> parseChecks(const std::string& checks) {
  static const std::vector<std::pair<std::string, Kind>> kPrefixes = {
      {"CHECK-NEXT:", Kind::Next}, {"CHECK-SAME:", Kind::Same},   {"CHECK-NOT:", Kind::Not},
      {"CHECK-LABEL:", Kind::Label}, {"CHECK:", Kind::Check}};
  std::vector<Directive> ds;
  auto lines = splitLines(checks);
  for (size_t n = 0; n < lines.size(); ++n) {
    size_t any = lines[n].find("CHECK");
    if (any != std::string::npos) {
      bool known = false;
      for (const auto& [prefix, kind] : kPrefixes) known = known || lines[n].compare(any, prefix.size(), prefix) == 0;
      if (!known) throw std::runtime_error("unknown FileCheck directive: " + lines[n]);
    }
    for (const auto& [prefix, kind] : kPrefixes) {
      size_t at = lines[n].find(prefix);
      if (at == std::string::npos) continue;
      std::string pat = lines[n].substr(at + prefix.size());
      while (!pat.empty() && pat.front() == ' ') pat.erase(pat.begin());
      while (!pat.empty() && pat.back() == ' ') pat.pop_back();
      ds.push_back({kind, pat, static_cast<int>(n + 1)});
      break;
    }
  }
  return ds;
}

}  // namespace

testing::AssertionResult fileCheck(const std::string& input, const std::string& checks) {
  auto lines = splitLines(input);
  auto ds = parseChecks(checks);
  if (ds.empty()) return testing::AssertionFailure() << "no CHECK directives in:\n" << checks;
  std::map<std::string, std::string> vars;
  size_t line = 0, col = 0;  // position after the previous match
  bool matchedAny = false;
  std::vector<const Directive*> nots;
  auto fail = [&](const Directive& d, const std::string& why) {
    return testing::AssertionFailure() << "check line " << d.line << " (" << d.pattern << "): " << why
                                       << "\n--- input ---\n" << input;
  };
  // Searches lines [from, to) for the pattern; returns the line index or -1.
  auto search = [&](const Directive& d, size_t from, size_t to, size_t fromCol, std::smatch& m) -> long {
    std::vector<std::string> caps;
    std::regex re(toRegex(d.pattern, vars, caps));
    for (size_t l = from; l < to && l < lines.size(); ++l) {
      const std::string& text = lines[l];
      auto begin = text.begin() + static_cast<long>(l == from ? std::min(fromCol, text.size()) : 0);
      if (std::regex_search(begin, text.end(), m, re)) {
        for (size_t k = 0; k < caps.size(); ++k) vars[caps[k]] = m[k + 1].str();
        return static_cast<long>(l);
      }
    }
    return -1;
  };
  auto checkNots = [&](size_t endLine) -> std::optional<testing::AssertionResult> {
    for (const Directive* d : nots) {
      std::smatch m;
      long hit = search(*d, line, endLine, col, m);
      if (hit >= 0) return fail(*d, "CHECK-NOT pattern found on input line " + std::to_string(hit + 1));
    }
    nots.clear();
    return std::nullopt;
  };
  for (const Directive& d : ds) {
    if (d.kind == Kind::Not) {
      nots.push_back(&d);
      continue;
    }
    std::smatch m;
    long hit = -1;
    size_t startLine = matchedAny && d.kind != Kind::Same ? line + 1 : line;
    size_t startCol = d.kind == Kind::Same ? col : 0;
    if (d.kind == Kind::Check || d.kind == Kind::Label) {
      if (!matchedAny) startLine = 0;
      hit = search(d, startLine, lines.size(), startCol, m);
    } else {
      if (!matchedAny) return fail(d, "CHECK-NEXT / CHECK-SAME needs an earlier match");
      hit = search(d, startLine, startLine + 1, startCol, m);
    }
    if (hit < 0) return fail(d, "no match");
    if (auto r = checkNots(static_cast<size_t>(hit) + 1)) return *r;
    size_t matchCol = (d.kind == Kind::Same ? col : 0) + static_cast<size_t>(m.position(0) + m.length(0));
    line = static_cast<size_t>(hit);
    col = matchCol;
    matchedAny = true;
  }
  if (auto r = checkNots(lines.size())) return *r;
  return testing::AssertionSuccess();
}

}  // namespace gj::test
