#include "ir/parser.h"

#include "ir/verifier.h"
#include "support/text.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>
#include <unordered_map>

namespace gj {

namespace {

enum class TokKind : uint8_t { Ident, Value, Int, Float, Punct, End };

struct Token {
  TokKind kind;
  std::string text;
  int line, col;
};

std::string_view tokKindName(TokKind k) {
  switch (k) {
    case TokKind::Ident: return "identifier";
    case TokKind::Value: return "value";
    case TokKind::Int: return "integer";
    case TokKind::Float: return "number";
    case TokKind::Punct: return "punctuation";
    case TokKind::End: return "end of input";
  }
  return "?";
}

bool isIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool isIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool isValueChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; }

class Lexer {
 public:
  Lexer(std::string_view text, const std::string& file) : text_(text), file_(file) {}

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
        size_t start = pos_;
        while (pos_ < text_.size() &&
               (isIdentChar(text_[pos_]) || (text_[pos_] == ':' && pos_ + 1 < text_.size() && text_[pos_ + 1] == ':'))) {
          if (text_[pos_] == ':') advance();
          advance();
        }
        toks.push_back({TokKind::Ident, std::string(text_.substr(start, pos_ - start)), line, col});
      } else if (std::isdigit(static_cast<unsigned char>(c)) ||
                 (c == '-' && pos_ + 1 < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_ + 1])))) {
        toks.push_back(number(line, col));
      } else if (text_.substr(pos_, 2) == "->") {
        advance(), advance();
        toks.push_back({TokKind::Punct, "->", line, col});
      } else if (text_.substr(pos_, 3) == "...") {
        advance(), advance(), advance();
        toks.push_back({TokKind::Punct, "...", line, col});
      } else if (std::string_view("()[],:=*-").find(c) != std::string_view::npos) {
        advance();
        toks.push_back({TokKind::Punct, std::string(1, c), line, col});
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
        while (pos_ < text_.size() && text_[pos_] != '\n') advance();
      } else if (std::isspace(static_cast<unsigned char>(c))) {
        advance();
      } else {
        return;
      }
    }
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
};

class Parser {
 public:
  Parser(std::vector<Token> toks, const std::string& file) : toks_(std::move(toks)), file_(file) {}

  std::unique_ptr<Graph> run() {
    auto main = parseGraph("IR text starts with 'graph(' followed by the graph's inputs");
    // Subgraph sections: with prim::DifferentiableGraph_0 = graph(...): ... return (...)
    std::unordered_map<std::string, std::shared_ptr<Graph>> sections;
    while (peek().kind == TokKind::Ident && peek().text == "with") {
      ++pos_;
      const Token& name = next();
      if (name.kind != TokKind::Ident || !pendingSubgraphs_.count(name.text))
        fail(name, fmt::format("'with {}' names no subgraph node", name.text),
             "a with-section defines the body of a node written as name_N(...) above it");
      if (sections.count(name.text)) fail(name, fmt::format("subgraph {} is defined twice", name.text));
      expect("=");
      sections[name.text] = parseGraph("a subgraph section reads 'with name_N = graph(...): ... return (...)'");
    }
    if (peek().kind != TokKind::End)
      fail(peek(), fmt::format("unexpected '{}' after the graph's return", peek().text),
           "a graph ends with its 'return (...)' line; only 'with name_N = graph...' sections may follow");
    for (auto& [name, uses] : pendingSubgraphs_) {
      auto it = sections.find(name);
      if (it == sections.end())
        fail(uses.second, fmt::format("{} has no 'with {} = graph(...)' section", name, name));
      uses.first->setSubgraph(it->second);
    }
    return main;
  }

  // One graph: 'graph(' params '):' body 'return (' values ')'. Value names are local to it.
  std::unique_ptr<Graph> parseGraph(const char* hint) {
    auto saveScopes = std::move(scopes_);
    auto saveDefined = std::move(defined_);
    auto saveGraph = std::move(g_);
    scopes_.clear();
    defined_.clear();
    g_ = std::make_unique<Graph>();
    expectIdent("graph", hint);
    expect("(");
    scopes_.emplace_back();
    if (!peekIs(")")) {
      do defineParam(g_->block());
      while (accept(","));
    }
    expect(")");
    expect(":");
    parseBody(g_->block(), "return");
    expectIdent("return", "");
    expect("(");
    for (Value* v : parseValueList()) g_->registerOutput(v);
    expect(")");
    auto out = std::move(g_);
    scopes_ = std::move(saveScopes);
    defined_ = std::move(saveDefined);
    g_ = std::move(saveGraph);
    return out;
  }

 private:
  const Token& peek(size_t k = 0) const { return toks_[std::min(pos_ + k, toks_.size() - 1)]; }
  const Token& next() { return toks_[std::min(pos_++, toks_.size() - 1)]; }
  bool peekIs(std::string_view punct) const { return peek().kind == TokKind::Punct && peek().text == punct; }
  bool accept(std::string_view punct) {
    if (!peekIs(punct)) return false;
    ++pos_;
    return true;
  }
  SourceLoc loc(const Token& t) const { return {file_, t.line, t.col}; }
  [[noreturn]] void fail(const Token& t, const std::string& msg, const std::string& hint = {}) const {
    throw Error(msg, loc(t).str(), hint);
  }
  std::string describe(const Token& t) const {
    if (t.kind == TokKind::End) return "end of input";
    if (t.kind == TokKind::Value) return "'%" + t.text + "'";
    return fmt::format("{} '{}'", tokKindName(t.kind), t.text);
  }
  void expect(std::string_view punct, const std::string& hint = {}) {
    if (!accept(punct)) fail(peek(), fmt::format("expected '{}' but found {}", punct, describe(peek())), hint);
  }
  void expectIdent(std::string_view word, const std::string& hint) {
    if (peek().kind != TokKind::Ident || peek().text != word)
      fail(peek(), fmt::format("expected '{}' but found {}", word, describe(peek())), hint);
    ++pos_;
  }

  // ---- values and scopes ----
  Value* lookup(const Token& t) {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it)
      if (auto f = it->find(t.text); f != it->end()) return f->second;
    if (defined_.count(t.text))
      fail(t, fmt::format("%{} is not visible here: it is defined inside a block ({})", t.text,
                          defined_.at(t.text).str()),
           "a value defined in a loop or if body can be used outside only through the block's outputs");
    fail(t, fmt::format("use of undefined value %{}", t.text), "define a value before its first use");
  }
  void define(const Token& t, Value* v) {
    if (auto it = defined_.find(t.text); it != defined_.end())
      fail(t, fmt::format("%{} is defined twice (first at {})", t.text, it->second.str()),
           "SSA form: every value is assigned exactly once; rename one of them");
    defined_[t.text] = loc(t);
    scopes_.back()[t.text] = v;
    v->setName(t.text);
  }
  Token expectValue(const char* what) {
    const Token& t = next();
    if (t.kind != TokKind::Value) fail(t, fmt::format("expected {} (a %name) but found {}", what, describe(t)));
    return t;
  }
  void defineParam(Block* b) {
    Token name = expectValue("a parameter");
    expect(":", "parameters are written '%name : Type'");
    Type t = parseType();
    define(name, b->addInput(t));
  }
  std::vector<Value*> parseValueList() {
    std::vector<Value*> vs;
    if (peekIs(")")) return vs;
    do vs.push_back(lookup(expectValue("a value")));
    while (accept(","));
    return vs;
  }

  // ---- types ----
  Type parseType() {
    const Token& t = next();
    if (t.kind != TokKind::Ident)
      fail(t, fmt::format("expected a type but found {}", describe(t)),
           "types are Tensor, Float(3, 4), Double, Long, Bool, int, float, bool, int[], Tensor[] or NoneType");
    static const std::unordered_map<std::string, TypeKind> kScalars = {
        {"int", TypeKind::Int}, {"float", TypeKind::Float}, {"bool", TypeKind::Bool}, {"NoneType", TypeKind::None}};
    if (auto it = kScalars.find(t.text); it != kScalars.end()) {
      if (t.text == "int" && accept("[")) {
        expect("]");
        return Type::of(TypeKind::IntList);
      }
      return Type::of(it->second);
    }
    Type ty = Type::tensor();
    if (t.text != "Tensor") {
      auto dt = dtypeFromIrName(t.text);
      if (!dt) fail(t, fmt::format("unknown type '{}'", t.text),
                    "tensor types are Tensor, Float, Double, Long or Bool; scalars are int, float, bool, int[]");
      ty.dtype = dt;
    } else if (accept("[")) {
      expect("]");
      return Type::of(TypeKind::TensorList);
    }
    if (accept("(")) parseTensorDetails(ty);
    return ty;
  }
  void parseTensorDetails(Type& ty) {
    std::vector<int64_t> sizes;
    bool sizesKnown = true;
    if (peekIs(")")) {
      ++pos_;
      ty.sizes = sizes;
      return;
    }
    do {
      const Token& t = next();
      if (t.kind == TokKind::Int) {
        int64_t v = parseInt(t);
        if (v < 0) fail(t, fmt::format("negative dimension {}", v), "write '*' for an unknown dimension");
        sizes.push_back(v);
      } else if (t.kind == TokKind::Punct && t.text == "*") {
        sizes.push_back(kUnknownDim);
      } else if (t.kind == TokKind::Punct && t.text == "...") {
        sizesKnown = false;
      } else if (t.kind == TokKind::Ident && (t.text == "device" || t.text == "requires_grad")) {
        expect("=");
        const Token& v = next();
        if (t.text == "device") {
          auto d = deviceFromName(v.text);
          if (!d) fail(v, fmt::format("unknown device '{}'", v.text), "devices are cpu and cuda");
          ty.device = d;
        } else {
          if (v.kind != TokKind::Int || (v.text != "0" && v.text != "1"))
            fail(v, fmt::format("requires_grad must be 0 or 1, found {}", describe(v)));
          ty.requiresGrad = v.text == "1";
        }
      } else {
        fail(t, fmt::format("expected a dimension, '*', device= or requires_grad= but found {}", describe(t)));
      }
    } while (accept(","));
    expect(")", "a tensor type's details end with ')'");
    if (sizesKnown) ty.sizes = sizes;
  }
  int64_t parseInt(const Token& t) const {
    int64_t v = 0;
    auto [p, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
    if (ec != std::errc() || p != t.text.data() + t.text.size())
      fail(t, fmt::format("integer '{}' is out of range", t.text));
    return v;
  }

  // strtod, not std::stod: a literal beyond double's range is an error here, not an exception.
  double parseFloat(const Token& t) const {
    std::string text(t.text);
    errno = 0;
    char* end = nullptr;
    double v = std::strtod(text.c_str(), &end);
    if (end != text.c_str() + text.size() || (errno == ERANGE && std::abs(v) > 1.0))
      fail(t, fmt::format("float '{}' is out of range (beyond +-1.8e308; write inf for infinity)", t.text));
    return v;
  }

  // ---- nodes ----
  void parseBody(Block* b, std::string_view terminator) {
    while (true) {
      const Token& t = peek();
      if (t.kind == TokKind::End)
        fail(t, fmt::format("unexpected end of input: expected '{}'", terminator),
             terminator == "->" ? "every block ends with '-> (values)'" : "a graph ends with 'return (values)'");
      if (t.kind == TokKind::Ident && t.text == "return") {
        if (terminator != "return") fail(t, "'return' inside a block", "blocks end with '-> (values)', not 'return'");
        return;
      }
      if (t.kind == TokKind::Punct && t.text == "->") {
        if (terminator != "->") fail(t, "'->' outside a block", "the graph ends with 'return (values)'");
        return;
      }
      parseNode(b);
    }
  }

  void parseNode(Block* b) {
    std::vector<std::pair<Token, Type>> outs;
    if (peek().kind == TokKind::Value) {
      do {
        Token name = expectValue("an output");
        expect(":", "outputs are written '%name : Type'");
        outs.emplace_back(name, parseType());
      } while (accept(","));
      expect("=", "after a node's outputs comes '=' and the op");
    }
    const Token& opTok = next();
    if (opTok.kind != TokKind::Ident || opTok.text.find("::") == std::string::npos)
      fail(opTok, fmt::format("expected an op name such as aten::mm but found {}", describe(opTok)));
    std::optional<ConstantValue> value;
    std::optional<Token> valueTok;
    if (accept("[")) {
      expectIdent("value", "the only attribute is value=..., on prim::Constant");
      expect("=");
      valueTok = peek();
      value = parseLiteral();
      expect("]");
    }
    expect("(", fmt::format("{} takes its inputs in parentheses", opTok.text));
    std::vector<Value*> ins = parseValueList();
    expect(")");
    const OpInfo* info = lookupOp(opTok.text, static_cast<int>(ins.size()));
    std::string subgraphName;
    if (!info) {
      // name_N: a subgraph node whose body follows in a with-section.
      size_t us = opTok.text.rfind('_');
      if (us != std::string::npos && us + 1 < opTok.text.size() &&
          opTok.text.find_first_not_of("0123456789", us + 1) == std::string::npos) {
        info = lookupOp(opTok.text.substr(0, us), static_cast<int>(ins.size()));
        if (info && !opHasSubgraph(info->kind)) info = nullptr;
        if (info) subgraphName = opTok.text;
      }
    }
    if (!info) fail(opTok, fmt::format("unknown op '{}'", opTok.text), suggestOp(opTok.text));
    if (opHasSubgraph(info->kind) && subgraphName.empty())
      fail(opTok, fmt::format("{} needs a numbered name such as {}_0 and a with-section for its body", opTok.text,
                              opTok.text));
    if (info->kind == OpKind::Param || info->kind == OpKind::Return)
      fail(opTok, fmt::format("{} cannot be written as a node", opTok.text), "use the block header or '-> (...)'");
    Node* n = g_->create(info->kind, ins, 0);
    n->setLoc(loc(opTok));
    if (!subgraphName.empty()) {
      if (pendingSubgraphs_.count(subgraphName))
        fail(opTok, fmt::format("{} is used by two nodes", subgraphName), "number each subgraph node differently");
      pendingSubgraphs_.emplace(subgraphName, std::pair{n, opTok});
    }
    b->append(n);
    if (value) {
      if (info->kind != OpKind::Constant) fail(*valueTok, "only prim::Constant takes a value attribute");
      n->setConstant(*value);
    }
    for (auto& [name, type] : outs) {
      if (info->kind == OpKind::Constant && value) {
        n->setConstant(convertConstant(*value, type, *valueTok));
      }
      define(name, n->addOutput(type));
    }
    while (peek().kind == TokKind::Ident && peek().text.rfind("block", 0) == 0 && peek().text.size() > 5) parseBlock(n);
  }

  void parseBlock(Node* n) {
    const Token& t = next();
    if (t.text != fmt::format("block{}", n->blocks().size()))
      fail(t, fmt::format("expected block{} but found {}", n->blocks().size(), t.text), "blocks are numbered from 0");
    Block* b = n->addBlock();
    scopes_.emplace_back();
    expect("(");
    if (!peekIs(")")) {
      do defineParam(b);
      while (accept(","));
    }
    expect(")");
    expect(":");
    parseBody(b, "->");
    expect("->");
    expect("(", "a block ends with '-> (values)'");
    for (Value* v : parseValueList()) b->registerOutput(v);
    expect(")");
    scopes_.pop_back();
  }

  ConstantValue parseLiteral() {
    const Token& t = next();
    if (t.kind == TokKind::Int) return parseInt(t);
    if (t.kind == TokKind::Float) return parseFloat(t);
    if (t.kind == TokKind::Ident && (t.text == "inf" || t.text == "nan"))
      return t.text == "inf" ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
    if (t.kind == TokKind::Punct && t.text == "-" && peek().kind == TokKind::Ident && peek().text == "inf") {
      ++pos_;
      return -std::numeric_limits<double>::infinity();
    }
    if (t.kind == TokKind::Ident && t.text == "None") return std::monostate{};
    if (t.kind == TokKind::Punct && t.text == "[") {
      std::vector<int64_t> xs;
      if (!peekIs("]")) {
        do {
          const Token& e = next();
          if (e.kind != TokKind::Int) fail(e, fmt::format("int list elements must be integers, found {}", describe(e)));
          xs.push_back(parseInt(e));
        } while (accept(","));
      }
      expect("]", "an int list ends with ']'");
      return xs;
    }
    fail(t, fmt::format("expected a constant (integer, number, [list] or None) but found {}", describe(t)));
  }

  ConstantValue convertConstant(const ConstantValue& v, const Type& t, const Token& at) const {
    auto mismatch = [&]() -> ConstantValue {
      fail(at, fmt::format("constant {} does not fit its declared type {}", at.text, t.str()),
           "int takes an integer, float a number, bool 0 or 1, int[] a [list]; NoneType has no value");
    };
    switch (t.kind) {
      case TypeKind::Int:
        if (v.index() == 1) return v;
        return mismatch();
      case TypeKind::Float:
        if (v.index() == 2) return v;
        if (v.index() == 1) return static_cast<double>(std::get<int64_t>(v));
        return mismatch();
      case TypeKind::Bool:
        if (v.index() == 1 && (std::get<int64_t>(v) == 0 || std::get<int64_t>(v) == 1)) return std::get<int64_t>(v) == 1;
        return mismatch();
      case TypeKind::IntList:
        if (v.index() == 4) return v;
        return mismatch();
      case TypeKind::None:
        if (v.index() == 0) return v;
        return mismatch();
      case TypeKind::Tensor:
      case TypeKind::TensorList:
        return mismatch();
    }
    return mismatch();
  }

  static std::string suggestOp(const std::string& name) {
    static const std::vector<std::string> names = [] {
      std::vector<std::string> v;
      for (const OpInfo& op : allOps()) v.emplace_back(op.name);
      return v;
    }();
    std::string best = closestMatch(name, names);
    if (!best.empty()) return fmt::format("did you mean '{}'? (graphir ops lists every op)", best);
    return "graphir ops lists every op";
  }

  std::vector<Token> toks_;
  const std::string& file_;
  size_t pos_ = 0;
  std::unique_ptr<Graph> g_;
  std::vector<std::unordered_map<std::string, Value*>> scopes_;
  std::unordered_map<std::string, SourceLoc> defined_;
  std::unordered_map<std::string, std::pair<Node*, Token>> pendingSubgraphs_;
};

}  // namespace

std::unique_ptr<Graph> parseIR(std::string_view text, const std::string& file) {
  auto g = Parser(Lexer(text, file).run(), file).run();
  verifyOrThrow(*g);
  return g;
}

std::unique_ptr<Graph> parseIRFile(const std::string& path) {
  std::ifstream in(path);
  USER_CHECK(in.good(), "cannot open IR file '{}': no such file or not readable", path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return parseIR(ss.str(), path);
}

}  // namespace gj
