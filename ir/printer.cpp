#include "ir/printer.h"

#include <cmath>
#include <ostream>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

namespace gj {

namespace {
std::string floatStr(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  std::string s = fmt::format("{}", d);  // shortest text that reads back exactly
  if (s.find_first_of(".en") == std::string::npos) s += ".";
  return s;
}

// A str as TorchScript prints it: in double quotes, with \, \" and control characters escaped.
std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
        else out += c;
    }
  }
  return out + "\"";
}
}  // namespace

std::string constantStr(const ConstantValue& v) {
  switch (v.index()) {
    case 0: return "None";
    case 1: return std::to_string(std::get<int64_t>(v));
    case 2: return floatStr(std::get<double>(v));
    case 3: return std::get<bool>(v) ? "1" : "0";
    case 4: return fmt::format("[{}]", fmt::join(std::get<std::vector<int64_t>>(v), ", "));
    case 5: return quoted(std::get<std::string>(v));
    default: {
      std::vector<std::string> xs;
      for (double d : std::get<std::vector<double>>(v)) xs.push_back(floatStr(d));
      return fmt::format("[{}]", fmt::join(xs, ", "));
    }
  }
}

namespace {
// Names every value: its own name, or the smallest number not taken by a name.
class Namer {
 public:
  explicit Namer(const Graph& g) {
    collect(g.block());
    size_t next = 0;
    for (const Value* v : unnamed_) {
      while (taken_.count(std::to_string(next))) ++next;
      names_[v] = std::to_string(next++);
    }
  }
  const std::string& operator()(const Value* v) const { return names_.at(v); }

 private:
  void note(const Value* v) {
    if (v->name().empty()) {
      unnamed_.push_back(v);
    } else {
      names_[v] = v->name();
      taken_.insert(v->name());
    }
  }
  void collect(const Block* b) {
    for (const Value* v : b->inputs()) note(v);
    for (const Node* n : *b) {
      for (const Value* v : n->outputs()) note(v);
      for (const Block* inner : n->blocks()) collect(inner);
    }
  }
  std::vector<const Value*> unnamed_;
  std::unordered_set<std::string> taken_;
  std::unordered_map<const Value*, std::string> names_;
};

// Subgraphs are numbered in the order they are met and printed after the graph that uses them:
//   %y : Tensor = prim::DifferentiableGraph_0(%x)
//   ...
// with prim::DifferentiableGraph_0 = graph(%a : Tensor):
//   ...
struct SubgraphNames {
  std::vector<std::pair<std::string, const Graph*>> order;
  std::unordered_map<const Graph*, std::string> names;
  const std::string& nameOf(const Node* n) {
    const Graph* g = n->subgraph().get();
    auto it = names.find(g);
    if (it != names.end()) return it->second;
    std::string name = fmt::format("{}_{}", n->info().name, order.size());
    order.emplace_back(name, g);
    return names[g] = name;
  }
};

class Printer {
 public:
  Printer(std::ostream& os, const Graph& g, SubgraphNames* subs = nullptr) : os_(os), name_(g), subs_(subs) {}

  void graph(const Graph& g) {
    os_ << "graph(";
    params(g.inputs(), "      ");
    os_ << "):\n";
    body(g.block(), 1);
    os_ << "  return (" << values(g.outputs()) << ")\n";
  }

  void node(const Node* n, int depth) {
    std::string pad(2 * depth, ' ');
    os_ << pad;
    for (size_t i = 0; i < n->outputs().size(); ++i)
      os_ << (i ? ", " : "") << "%" << name_(n->output(i)) << " : " << n->output(i)->type().str();
    if (!n->outputs().empty()) os_ << " = ";
    if (n->subgraph() && subs_)
      os_ << subs_->nameOf(n);
    else
      os_ << n->info().name;
    if (n->constant().index() != 0) {
      // a trace's one-element tensor constant is written {2}
      bool tensor = n->kind() == OpKind::Constant && n->outputs().size() == 1 && n->output()->type().isTensor();
      os_ << "[" << attribute(n) << "=" << (tensor ? "{" : "") << constantStr(n->constant())
          << (tensor ? "}" : "") << "]";
    }
    os_ << "(" << values(n->inputs()) << ")";
    if (n->pySource().known()) os_ << " # " << n->pySource().str();
    os_ << "\n";
    for (size_t b = 0; b < n->blocks().size(); ++b) {
      const Block* blk = n->block(b);
      os_ << pad << "  block" << b << "(";
      params(blk->inputs(), "");
      os_ << "):\n";
      body(blk, depth + 2);
      os_ << pad << "    -> (" << values(blk->outputs()) << ")\n";
    }
  }

 private:
  // `[value=2]`; prim::GetAttr, prim::CallMethod and a Function constant name their target: `[name="forward"]`.
  static std::string_view attribute(const Node* n) {
    const bool function = n->kind() == OpKind::Constant && n->outputs().size() == 1 &&
                          n->output()->type().kind == TypeKind::Function;
    return function ? "name" : opAttribute(n->kind());
  }
  void params(std::span<Value* const> vs, const char* contIndent) {
    for (size_t i = 0; i < vs.size(); ++i) {
      if (i) os_ << (*contIndent ? ",\n" : ", ") << contIndent;
      os_ << "%" << name_(vs[i]) << " : " << vs[i]->type().str();
    }
  }
  void body(const Block* b, int depth) {
    for (const Node* n : *b) node(n, depth);
  }
  std::string values(std::span<Value* const> vs) {
    std::string s;
    for (size_t i = 0; i < vs.size(); ++i) s += (i ? ", %" : "%") + name_(vs[i]);
    return s;
  }

  std::ostream& os_;
  Namer name_;
  SubgraphNames* subs_;
};
}  // namespace

void printIR(std::ostream& os, const Graph& g) {
  SubgraphNames subs;
  Printer(os, g, &subs).graph(g);
  for (size_t i = 0; i < subs.order.size(); ++i) {  // grows while printing nested subgraphs
    auto [name, sub] = subs.order[i];
    os << "with " << name << " = ";
    Printer(os, *sub, &subs).graph(*sub);
  }
}

std::string printIR(const Graph& g) {
  std::ostringstream os;
  printIR(os, g);
  return os.str();
}

std::string printNode(const Node* n) {
  std::ostringstream os;
  Graph* g = n->graph();
  Printer p(os, *g);
  p.node(n, 0);
  std::string s = os.str();
  size_t nl = s.find('\n');
  return nl == std::string::npos ? s : s.substr(0, nl);
}

}  // namespace gj
