#include "ir/parser.h"

#include "ir/lexer.h"
#include "ir/printer.h"
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

using namespace ir_text;

namespace {

class Parser {
 public:
  Parser(std::vector<Token> toks, std::unordered_map<int, SourceLoc> pySources, const std::string& file)
      : toks_(std::move(toks)), pySources_(std::move(pySources)), file_(file) {}

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
    auto py = pySources_.find(t.line);
    throw Error(msg, loc(t).str() + (py != pySources_.end() ? py->second.pythonNote() : ""), hint);
  }
  std::string describe(const Token& t) const {
    if (t.kind == TokKind::End) return "end of input";
    if (t.kind == TokKind::Value) return "'%" + t.text + "'";
    if (t.kind == TokKind::String) return fmt::format("string \"{}\"", t.text);
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
  // Ours and TorchScript's: Float(3, 4), Tensor, int, float[], (Tensor, int), Tensor?, Optional[T],
  // List[T], str, Device, NoneType, Function, __torch__.M.
  // A type nests at most kMaxTypeDepth deep (each `?`, `[]`, Optional[...] and tuple a level): types are
  // printed, compared and copied recursively, and a few kilobytes of `?` must not overflow the stack.
  static constexpr int kMaxTypeDepth = 32;
  Type parseType() {
    const Token& start = peek();
    auto tooDeep = [&] {
      fail(start, fmt::format("type nested more than {} levels deep", kMaxTypeDepth),
           "write the type without so many Optionals, lists or tuples inside each other");
    };
    if (++typeDepth_ > kMaxTypeDepth) tooDeep();
    Type ty = parseTypeAtom();
    for (int level = typeDepth_;; ++level) {
      if (level > kMaxTypeDepth) tooDeep();
      if (accept("?")) {
        ty = Type::optional(std::move(ty));
      } else if (peekIs("[") && peek(1).kind == TokKind::Punct && peek(1).text == "]") {
        const Token& at = peek();
        pos_ += 2;
        ty = listOf(ty, at);
      } else {
        --typeDepth_;
        return ty;
      }
    }
  }
  Type listOf(const Type& element, const Token& at) const {
    switch (element.kind) {
      case TypeKind::Tensor: return Type::of(TypeKind::TensorList);
      case TypeKind::Int: return Type::of(TypeKind::IntList);
      case TypeKind::Float: return Type::of(TypeKind::FloatList);
      case TypeKind::Bool: return Type::of(TypeKind::BoolList);
      case TypeKind::IntList: case TypeKind::TensorList: case TypeKind::None: case TypeKind::FloatList:
      case TypeKind::BoolList: case TypeKind::Tuple: case TypeKind::Optional: case TypeKind::Str:
      case TypeKind::Device: case TypeKind::Function: case TypeKind::Class:
        break;
    }
    fail(at, fmt::format("lists of {} are not supported", element.str()),
         "lists hold Tensor, int, float or bool");
  }
  Type parseTypeAtom() {
    const Token& t = next();
    if (t.kind == TokKind::Punct && t.text == "(") {  // a tuple
      std::vector<Type> elements;
      if (!accept(")")) {
        do elements.push_back(parseType());
        while (accept(","));
        expect(")", "a tuple type ends with ')'");
      }
      return Type::tuple(std::move(elements));
    }
    if (t.kind != TokKind::Ident)
      fail(t, fmt::format("expected a type but found {}", describe(t)),
           "types are Tensor, Float(3, 4), Double, Long, Bool, int, float, bool, int[], Tensor[], NoneType, "
           "TorchScript's (Tensor, int), Tensor?, str, Device and a module's __torch__ class");
    static const std::unordered_map<std::string, TypeKind> kNamed = {
        {"int", TypeKind::Int},   {"float", TypeKind::Float},       {"bool", TypeKind::Bool},
        {"NoneType", TypeKind::None}, {"str", TypeKind::Str},      {"Device", TypeKind::Device},
        {"Function", TypeKind::Function}};
    if (auto it = kNamed.find(t.text); it != kNamed.end()) return Type::of(it->second);
    if (t.text == "Optional" || t.text == "List" || t.text == "Tuple") {
      expect("[", fmt::format("{}[...] names its element type", t.text));
      std::vector<Type> elements;
      if (!peekIs("]")) {
        do elements.push_back(parseType());
        while (accept(","));
      }
      expect("]");
      if (t.text == "Tuple") return Type::tuple(std::move(elements));
      if (elements.size() != 1) fail(t, fmt::format("{}[...] takes one element type", t.text));
      return t.text == "Optional" ? Type::optional(std::move(elements[0])) : listOf(elements[0], t);
    }
    if (t.text.rfind("__torch__", 0) == 0) return Type::classNamed(t.text);
    if (t.text == "Dict" || t.text == "Any" || t.text == "Scalar" || t.text == "number" || t.text == "Union")
      fail(t, fmt::format("TorchScript's type {} is not supported", t.text),
           "graphjit reads tensors, int, float, bool, their lists, tuples, Optionals, str, Device and modules");
    Type ty = Type::tensor();
    if (t.text != "Tensor") {
      auto dt = dtypeFromIrName(t.text);
      if (!dt) fail(t, fmt::format("unknown type '{}'", t.text),
                    "tensor types are Tensor, Float, Double, Long or Bool; scalars are int, float, bool, int[]");
      ty.dtype = dt;
    }
    if (accept("(")) parseTensorDetails(ty);
    return ty;
  }
  // Inside Float(...): dimensions (`*` unknown, `...` an unknown rank), device=, requires_grad= and
  // TorchScript's strides=[...] (read and dropped: graphjit's tensors are dense and its own layout).
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
      } else if (t.kind == TokKind::Ident && t.text == "strides") {
        expect("=");
        expect("[", "strides are written strides=[4, 1]");
        if (!peekIs("]")) {
          do {
            const Token& s = next();
            if (s.kind != TokKind::Int && !(s.kind == TokKind::Punct && s.text == "*"))
              fail(s, fmt::format("a stride is an integer or '*', found {}", describe(s)));
          } while (accept(","));
        }
        expect("]", "strides end with ']'");
      } else if (t.kind == TokKind::Ident && (t.text == "device" || t.text == "requires_grad")) {
        expect("=");
        const Token& v = next();
        if (t.text == "device") {
          auto d = deviceFromName(v.text);
          if (!d) fail(v, fmt::format("unknown device '{}'", v.text), "devices are cpu and cuda (cuda:0)");
          if (accept(":")) {  // cuda:0
            const Token& index = next();
            if (index.kind != TokKind::Int) fail(index, fmt::format("expected a device index but found {}", describe(index)));
          }
          ty.device = d;
        } else {
          if (v.kind != TokKind::Int || (v.text != "0" && v.text != "1"))
            fail(v, fmt::format("requires_grad must be 0 or 1, found {}", describe(v)));
          ty.requiresGrad = v.text == "1";
        }
      } else {
        fail(t, fmt::format("expected a dimension, '*', device=, requires_grad= or strides= but found {}", describe(t)));
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
    } else {
      accept("=");  // TorchScript writes a node without outputs as ` = prim::RaiseException(...)`
    }
    Token opTok = next();
    if (opTok.kind != TokKind::Ident || opTok.text.find("::") == std::string::npos)
      fail(opTok, fmt::format("expected an op name such as aten::mm but found {}", describe(opTok)));
    // An overload's name (aten::add.Tensor) is dropped: the inputs' types pick the row.
    if (size_t dot = opTok.text.find('.', opTok.text.find("::")); dot != std::string::npos) opTok.text.resize(dot);
    std::optional<ConstantValue> value;
    std::optional<Token> valueTok;
    std::string attribute;
    bool tensorConstant = false;
    if (accept("[")) {
      const Token& a = next();
      if (a.kind != TokKind::Ident || (a.text != "value" && a.text != "name" && a.text != "message"))
        fail(a, fmt::format("expected value=, name= or message= but found {}", describe(a)),
             "prim::Constant takes value=...; prim::GetAttr, prim::CallMethod and a Function constant name=\"...\"; "
             "prim::RaiseIf message=\"...\"");
      attribute = a.text;
      expect("=");
      valueTok = peek();
      if (attribute != "value") {
        const Token& s = next();
        if (s.kind != TokKind::String)
          fail(s, fmt::format("{}= takes a string but found {}", attribute, describe(s)));
        value = s.text;
      } else if (peekIs("<")) {
        fail(peek(), "a tensor constant's data is not in the text (PyTorch prints it as <Tensor>)",
             "make the tensor an input of the graph (a parameter, read from a .npy file) instead of a constant");
      } else if (accept("{")) {  // a one-element tensor, as a trace prints `x * 2`
        valueTok = peek();
        value = parseLiteral();
        if (value->index() != 1 && value->index() != 2) fail(*valueTok, "a {...} tensor constant holds one number");
        expect("}");
        tensorConstant = true;
      } else {
        value = parseLiteral();
      }
      expect("]");
    }
    expect("(", fmt::format("{} takes its inputs in parentheses", opTok.text));
    std::vector<Value*> ins = parseValueList();
    const Token& close = peek();
    expect(")");
    std::vector<Type> inTypes;
    for (Value* v : ins) inTypes.push_back(v->type());
    const OpInfo* info = lookupOp(opTok.text, inTypes);
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
    if (auto it = pySources_.find(close.line); it != pySources_.end()) n->setPySource(it->second);
    if (!subgraphName.empty()) {
      if (pendingSubgraphs_.count(subgraphName))
        fail(opTok, fmt::format("{} is used by two nodes", subgraphName), "number each subgraph node differently");
      pendingSubgraphs_.emplace(subgraphName, std::pair{n, opTok});
    }
    b->append(n);
    // Every op with an attribute but prim::Constant needs it: prim::GetAttr's name, prim::RaiseIf's message.
    const std::string_view wanted = opAttribute(info->kind);
    const bool needed = !wanted.empty() && info->kind != OpKind::Constant;
    if (needed && attribute != wanted)
      fail(opTok, fmt::format("{} needs a {}=\"...\" attribute", opTok.text, wanted));
    if (value) {
      const bool fits = info->kind == OpKind::Constant ? attribute != "message" : attribute == wanted;
      if (!fits) fail(*valueTok, fmt::format("{} takes no {} attribute", opTok.text, attribute));
      n->setConstant(*value);
    }
    for (auto& [name, type] : outs) {
      if (info->kind == OpKind::Constant && value) {
        if (tensorConstant != type.isTensor())
          fail(*valueTok, tensorConstant ? fmt::format("a {{...}} constant is a tensor, but it is declared {}", type.str())
                                         : fmt::format("a tensor constant's value is written {{...}}, as in {{2}}"));
        if (attribute == "name" && type.kind != TypeKind::Function)
          fail(*valueTok, fmt::format("a constant with name= is a Function, but it is declared {}", type.str()));
        if (!tensorConstant) n->setConstant(convertConstant(*value, type, *valueTok));
      }
      define(name, n->addOutput(type));
    }
    while (peek().kind == TokKind::Ident && peek().text.rfind("block", 0) == 0 && peek().text.size() > 5) parseBlock(n);
  }

  static constexpr size_t kMaxBlockDepth = 256;
  void parseBlock(Node* n) {
    const Token& t = next();
    if (t.text != fmt::format("block{}", n->blocks().size()))
      fail(t, fmt::format("expected block{} but found {}", n->blocks().size(), t.text), "blocks are numbered from 0");
    if (scopes_.size() > kMaxBlockDepth)
      fail(t, fmt::format("blocks nested more than {} deep", kMaxBlockDepth),
           "passes walk nested blocks recursively; split the graph or unnest its loops and ifs");
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
    if (t.kind == TokKind::String) return t.text;
    if (t.kind == TokKind::Punct && t.text == "[") {  // an int list, or a float list when a number is
      std::vector<int64_t> ints;
      std::vector<double> floats;
      bool anyFloat = false;
      if (!peekIs("]")) {
        do {
          const Token& e = next();
          if (e.kind != TokKind::Int && e.kind != TokKind::Float)
            fail(e, fmt::format("list elements must be numbers, found {}", describe(e)));
          anyFloat |= e.kind == TokKind::Float;
          floats.push_back(e.kind == TokKind::Int ? static_cast<double>(parseInt(e)) : parseFloat(e));
          if (e.kind == TokKind::Int) ints.push_back(parseInt(e));
        } while (accept(","));
      }
      expect("]", "a list ends with ']'");
      if (anyFloat) return floats;
      return ints;
    }
    fail(t, fmt::format("expected a constant (integer, number, string, [list] or None) but found {}", describe(t)));
  }

  ConstantValue convertConstant(const ConstantValue& v, const Type& t, const Token& at) const {
    auto mismatch = [&]() -> ConstantValue {
      fail(at, fmt::format("constant {} does not fit its declared type {}", constantStr(v), t.str()),
           "int takes an integer, float a number, bool 0 or 1, int[] and float[] a [list], str, Device and "
           "Function a string; NoneType has no value");
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
      case TypeKind::FloatList:
        if (v.index() == 6) return v;
        if (v.index() == 4) {
          const auto& xs = std::get<std::vector<int64_t>>(v);
          return std::vector<double>(xs.begin(), xs.end());
        }
        return mismatch();
      case TypeKind::None:
      case TypeKind::Optional:
        if (v.index() == 0) return v;
        return mismatch();
      case TypeKind::Str:
      case TypeKind::Device:
      case TypeKind::Function:
        if (v.index() == 5) return v;
        return mismatch();
      case TypeKind::Tensor:
      case TypeKind::TensorList:
      case TypeKind::BoolList:
      case TypeKind::Tuple:
      case TypeKind::Class:
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
  std::unordered_map<int, SourceLoc> pySources_;
  const std::string& file_;
  size_t pos_ = 0;
  int typeDepth_ = 0;  // parseType calls under way
  std::unique_ptr<Graph> g_;
  std::vector<std::unordered_map<std::string, Value*>> scopes_;
  std::unordered_map<std::string, SourceLoc> defined_;
  std::unordered_map<std::string, std::pair<Node*, Token>> pendingSubgraphs_;
};

}  // namespace

std::unique_ptr<Graph> parseIR(std::string_view text, const std::string& file) {
  Lexed lexed = lex(text, file);
  auto g = Parser(std::move(lexed.tokens), std::move(lexed.pySources), file).run();
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

bool isIdentifierText(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), isIdentChar);
}

}  // namespace gj
