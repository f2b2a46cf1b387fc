#include "ir/verifier.h"

#include "ir/printer.h"

#include <algorithm>

namespace gj {

namespace {

class Verifier {
 public:
  std::vector<Diagnostic> run(const Graph& g) {
    graph_ = &g;
    visible_.assign(g.numValueIds(), false);
    block(g.block(), nullptr);
    return std::move(diags_);
  }

 private:
  void report(const Node* n, std::string msg) {
    std::string where = (n->loc().known() ? n->loc().str() : printNode(n)) + n->pySource().pythonNote();
    diags_.push_back({std::move(msg), std::move(where)});
  }

  // Values defined in `b` are visible until the block ends; then they go out of scope.
  void block(const Block* b, const Node* owner) {
    size_t mark = scope_.size();
    for (const Value* v : b->inputs()) define(v);
    const Node* prev = b->paramNode();
    for (const Node* n : *b) {
      if (n->prev() != prev || n->owningBlock() != b) report(n, "node list is corrupt (prev/owner links)");
      prev = n;
      node(n);
    }
    uses(b->returnNode());
    for (const Value* v : b->outputs())
      if (!visible(v)) report(b->returnNode(), fmt::format("block output %{} is not defined here", name(v)));
    for (size_t i = mark; i < scope_.size(); ++i)
      if (scope_[i]->graph() == graph_) visible_[scope_[i]->id()] = false;
    scope_.resize(mark);
  }

  void define(const Value* v) {
    if (v->graph() == graph_) visible_[v->id()] = true;
    scope_.push_back(v);
  }

  static std::string name(const Value* v) { return v->name().empty() ? std::to_string(v->id()) : v->name(); }

  void uses(const Node* n) {
    for (size_t i = 0; i < n->inputs().size(); ++i)
      if (!n->inputUseListed(i)) report(n, fmt::format("use list of %{} is missing input {}", name(n->input(i)), i));
  }

  void node(const Node* n) {
    const OpInfo& info = n->info();
    uses(n);
    for (const Value* v : n->inputs())
      if (!visible(v))
        report(n, fmt::format("use of %{} before its definition (or outside the block that defines it)", name(v)));
    for (const Value* v : n->outputs())
      for (const Use& u : v->uses())
        if (u.index >= u.user->inputs().size() || u.user->input(u.index) != v)
          report(n, fmt::format("use list of %{} names a stale use", name(v)));
    int nin = static_cast<int>(n->inputs().size()), nout = static_cast<int>(n->outputs().size());
    if (info.numInputs >= 0 && nin != info.numInputs)
      report(n, fmt::format("{} expects {} inputs but has {}: {}", info.name, info.numInputs, nin, info.schema));
    if (info.numOutputs >= 0 && nout != info.numOutputs)
      report(n, fmt::format("{} has {} outputs but must have {}", info.name, nout, info.numOutputs));
    // Control ops (loops, ifs, subgraphs) have checks of their own below, with their own messages.
    if (info.group != OpGroupKind::Control && (info.numInputs < 0 || nin == info.numInputs) &&
        (info.numOutputs < 0 || nout == info.numOutputs))
      kinds(n);
    control(n, nin, nout);
    if (n->kind() == OpKind::Constant && nout == 1) {
      Type want = constantType(n->constant());
      const Type& got = n->output()->type();
      if (!constantFits(want.kind, got))
        report(n, fmt::format("constant of type {} holds {} (a {})", got.str(), constantStr(n->constant()),
                              want.str()));
    }
    if (n->kind() != OpKind::Constant && !opAttribute(n->kind()).empty() &&
        !std::holds_alternative<std::string>(n->constant()))
      report(n, fmt::format("{} needs its {}= attribute", info.name, opAttribute(n->kind())));
    for (const Value* v : n->outputs()) define(v);
  }

  // A constant's value against its declared type. Besides the same kinds: a str names a Function or a
  // Device, None is an Optional's, and a number is a one-element tensor (a trace's `{2}`).
  static bool constantFits(TypeKind value, const Type& declared) {
    if (value == declared.kind) return true;
    switch (value) {
      case TypeKind::Str: return declared.kind == TypeKind::Function || declared.kind == TypeKind::Device;
      case TypeKind::None: return declared.kind == TypeKind::Optional;
      case TypeKind::Int: case TypeKind::Float: case TypeKind::Bool: return declared.isTensor();
      default: return false;
    }
  }

  // Each input's and output's kind against the op's schema (ops.def): a tensor where the schema takes
  // an int is an error here, not at run time.
  void kinds(const Node* n) {
    const OpInfo& info = n->info();
    const OpSignature& sig = opSignature(n->kind());
    for (size_t i = 0; i < n->inputs().size() && i < sig.inputs.size(); ++i) {
      const Value* v = n->input(i);
      if (!argAccepts(sig.inputs[i], v->type()))
        report(n, fmt::format("{}'s argument {} must be {}, but %{} is {}; the schema: {}", info.name, i + 1,
                              argKindName(sig.inputs[i]), name(v), v->type().str(), info.schema));
    }
    for (size_t k = 0; k < n->outputs().size() && k < sig.outputs.size(); ++k) {
      const Value* v = n->output(k);
      if (!argAccepts(sig.outputs[k], v->type()))
        report(n, fmt::format("%{} is declared {}, but {} returns {}; the schema: {}", name(v), v->type().str(),
                              info.name, argKindName(sig.outputs[k]), info.schema));
    }
  }

  // What the ops with blocks, subgraphs or a shape of their own need; every other op has no blocks.
  void control(const Node* n, int nin, int nout) {
    const OpKind k = n->kind();
    if (k == OpKind::Loop) return loop(n, nin, nout);
    if (k == OpKind::If) return ifNode(n, nin, nout);
    if (k == OpKind::Param || k == OpKind::Return) {
      report(n, "param/return nodes cannot appear inside a block's node list");
      return;
    }
    if (opHasSubgraph(k)) return subgraph(n, nin, nout);
    if (k == OpKind::TypeCheck && (nout != nin + 1 || nout == 0 || n->outputs().back()->type().kind != TypeKind::Bool))
      report(n, "prim::TypeCheck returns its inputs (with the expected types) and then a bool");
    if (k == OpKind::TupleConstruct && nout == 1) tupleElements(n, n->output(), n->inputs(), true);
    if (k == OpKind::TupleUnpack && nin == 1) tupleElements(n, n->input(0), n->outputs(), false);
    if (!n->blocks().empty()) report(n, fmt::format("{} cannot have blocks", n->info().name));
  }

  // A value of type `value` where `declared` is written: the same kind (tensors whatever either knows of
  // their sizes, tuples element by element), or None or the element where an Optional is declared.
  static bool fits(const Type& value, const Type& declared) {
    if (value.kind == declared.kind) {
      if (value.kind != TypeKind::Tuple) return true;
      if (value.elements.size() != declared.elements.size()) return false;
      for (size_t i = 0; i < value.elements.size(); ++i)
        if (!fits(value.elements[i], declared.elements[i])) return false;
      return true;
    }
    if (declared.kind == TypeKind::Optional && declared.elements.size() == 1)
      return value.kind == TypeKind::None || fits(value, declared.elements[0]);
    return false;
  }

  // A tuple built from (or unpacked into) `parts`: the tuple's type lists one element per part, and each
  // part fits its element (an unpacked element its output's declared type).
  void tupleElements(const Node* n, const Value* tuple, std::span<Value* const> parts, bool built) {
    const Type& t = tuple->type();
    if (t.kind != TypeKind::Tuple || t.elements.size() != parts.size()) {
      report(n, fmt::format("%{} is {}, but {} {} {} value{}", name(tuple), t.str(), n->info().name,
                            built ? "builds it of" : "unpacks it into", parts.size(), parts.size() == 1 ? "" : "s"));
      return;
    }
    for (size_t i = 0; i < parts.size(); ++i) {
      const Type& element = t.elements[i];
      const Type& part = parts[i]->type();
      if (built ? !fits(part, element) : !fits(element, part))
        report(n, fmt::format("element {} of %{} is {}, but %{} is {}", i, name(tuple), element.str(), name(parts[i]),
                              part.str()));
    }
  }

  void loop(const Node* n, int nin, int nout) {
    if (nin < 2 || n->blocks().size() != 1) {
      report(n, "prim::Loop takes (trip_count, cond, carried...) and has one body block");
      return;
    }
    expectKind(n, 0, TypeKind::Int, "the trip count");
    expectKind(n, 1, TypeKind::Bool, "the loop condition");
    const Block* body = n->block(0);
    int carried = nin - 2;
    if (static_cast<int>(body->inputs().size()) != carried + 1)
      report(n, fmt::format("loop body takes {} parameters but needs {} (the index, then one per carried value)",
                            body->inputs().size(), carried + 1));
    if (static_cast<int>(body->outputs().size()) != carried + 1)
      report(n, fmt::format("loop body returns {} values but needs {} (the condition, then one per carried value)",
                            body->outputs().size(), carried + 1));
    if (nout != carried) report(n, fmt::format("prim::Loop has {} outputs for {} carried values", nout, carried));
    block(body, n);
  }

  void ifNode(const Node* n, int nin, int nout) {
    if (nin != 1 || n->blocks().size() != 2) {
      report(n, "prim::If takes one condition and has two blocks (then, else)");
      return;
    }
    expectKind(n, 0, TypeKind::Bool, "the if condition");
    for (const Block* b : n->blocks()) {
      if (!b->inputs().empty()) report(n, "prim::If blocks take no parameters");
      if (static_cast<int>(b->outputs().size()) != nout)
        report(n, fmt::format("prim::If block returns {} values for {} outputs", b->outputs().size(), nout));
      block(b, n);
    }
  }

  void subgraph(const Node* n, int nin, int nout) {
    const Graph* sub = n->subgraph().get();
    if (!sub) {
      report(n, fmt::format("{} has no subgraph", n->info().name));
      return;
    }
    if (static_cast<int>(sub->inputs().size()) != nin || static_cast<int>(sub->outputs().size()) != nout)
      report(n, fmt::format("{} has {} inputs and {} outputs but its subgraph {} and {}", n->info().name, nin, nout,
                            sub->inputs().size(), sub->outputs().size()));
    for (Diagnostic& d : Verifier().run(*sub)) {
      d.message = "in subgraph: " + d.message;
      diags_.push_back(std::move(d));
    }
  }

  void expectKind(const Node* n, size_t i, TypeKind kind, const char* what) {
    const Type& t = n->input(i)->type();
    if (t.kind != kind)
      report(n, fmt::format("{} must be {} but %{} is {}", what, Type::of(kind).str(), name(n->input(i)), t.str()));
  }

  // Whether a value of the graph is in scope, by Value::id (a value of another graph never is).
  bool visible(const Value* v) const { return v->graph() == graph_ && v->id() < visible_.size() && visible_[v->id()]; }
  const Graph* graph_ = nullptr;
  std::vector<bool> visible_;
  std::vector<const Value*> scope_;
  std::vector<Diagnostic> diags_;
};

// The first value or node of `b` (recursively) that only the frontend passes may see.
const Node* firstFormIn(const Block* b, std::string* why) {
  for (const Value* v : b->inputs())
    if (v->type().isFrontendOnly()) {
      *why = fmt::format("%{} is of TorchScript's type {}", v->name(), v->type().str());
      return b->paramNode();
    }
  for (const Node* n : *b) {
    if (n->info().frontendOnly()) {
      *why = fmt::format("{} is TorchScript's form", n->info().name);
      return n;
    }
    for (const Value* v : n->outputs())
      if (v->type().isFrontendOnly() || (n->kind() == OpKind::Constant && v->type().isTensor())) {
        *why = n->kind() == OpKind::Constant && v->type().isTensor()
                   ? fmt::format("%{} is a tensor constant", v->name())
                   : fmt::format("%{} is of TorchScript's type {}", v->name(), v->type().str());
        return n;
      }
    for (const Block* inner : n->blocks())
      if (const Node* f = firstFormIn(inner, why)) return f;
  }
  return nullptr;
}

}  // namespace

const Node* firstFrontendForm(const Graph& g, std::string* why) { return firstFormIn(g.block(), why); }

void requireLowered(const Graph& g, std::string_view what) {
  std::string why;
  const Node* n = firstFrontendForm(g, &why);
  if (!n) return;
  throw Error(fmt::format("{} cannot run this graph: {}", what, why), n->where(),
              "lower TorchScript's forms first with the pass lower-torchscript (graphir run, fuse, codegen and "
              "explain do it themselves; the library has gj::lowerTorchScript, passes/frontend.h)");
}

std::vector<Diagnostic> verify(const Graph& g) { return Verifier().run(g); }

void verifyOrThrow(const Graph& g, std::string_view context) {
  auto diags = verify(g);
  if (diags.empty()) return;
  const Diagnostic& d = diags.front();
  std::string msg = context.empty() ? d.message : fmt::format("{} (after {})", d.message, context);
  if (diags.size() > 1) msg += fmt::format(" [and {} more problem(s)]", diags.size() - 1);
  throw Error(msg, d.where, "");
}

}  // namespace gj
