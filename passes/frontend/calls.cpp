// check-calls: graphjit runs one graph, so a call whose callee's body is not in the text cannot run.
#include "passes/frontend.h"
#include "passes/util.h"
#include "support/error.h"

#include <fmt/format.h>

#include <algorithm>

namespace gj {

namespace {

[[noreturn]] void refuseCall(const Node* n) {
  std::string callee = "a function";
  if (n->kind() == OpKind::CallMethod) {
    const Type& self = n->input(0)->type();
    callee = fmt::format("method {} of {}", std::get<std::string>(n->constant()),
                         self.kind == TypeKind::Class ? self.name : self.str());
  } else if (auto name = constantString(n->input(0))) {
    callee = fmt::format("function {}", *name);
  }
  throw Error(fmt::format("{} calls {}, whose body is not in the text", n->info().name, callee), n->where(),
              "print the caller's .inlined_graph instead of .graph (torch.jit.script(f).inlined_graph): it holds "
              "every callee's body in place of the call");
}

// `with torch.jit.strict_fusion():` asks PyTorch to fail unless the block fuses whole; graphjit fuses what
// its fusers can (graphir explain says what and why), so the object, its __init__, prim::Enter and
// prim::Exit go. Any other object is refused.
void collectStrictFusion(Node* create, std::vector<Node*>& dropped) {
  const Type& t = create->output()->type();
  if (t.kind != TypeKind::Class || t.name != "__torch__.torch.jit.strict_fusion")
    throw Error(fmt::format("prim::CreateObject makes an object of class {}; graphjit's graphs hold tensors, "
                            "numbers, lists and tuples", t.str()),
                create->where(), "build the object outside the scripted function and pass what it holds");
  for (const Use& u : create->output()->uses()) {
    const Node* user = u.user;
    const bool init = user->kind() == OpKind::CallMethod && std::get<std::string>(user->constant()) == "__init__";
    if ((!init && user->kind() != OpKind::Enter && user->kind() != OpKind::Exit) || u.index != 0 ||
        std::any_of(user->outputs().begin(), user->outputs().end(), [](const Value* v) { return !v->uses().empty(); }))
      throw Error(fmt::format("{} reads torch.jit.strict_fusion's object", user->info().name), user->where(),
                  "use the object only as `with torch.jit.strict_fusion():`");
    dropped.push_back(u.user);
  }
  dropped.push_back(create);
}

}  // namespace

bool checkCalls(Graph& g) {
  std::vector<Node*> strictFusion, warnings;
  forEachNode(g.block(), [&](Node* n) {
    if (n->kind() == OpKind::CreateObject) collectStrictFusion(n, strictFusion);
  });
  for (Node* n : strictFusion) g.erase(n);
  forEachNode(g.block(), [&](Node* n) {
    if (n->kind() == OpKind::CallFunction || n->kind() == OpKind::CallMethod) refuseCall(n);
    if (n->kind() == OpKind::Warn) warnings.push_back(n);
  });
  for (Node* n : warnings) g.erase(n);
  return !strictFusion.empty() || !warnings.empty();
}

}  // namespace gj
