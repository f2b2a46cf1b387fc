// check-calls: graphjit runs one graph, so a call whose callee's body is not in the text cannot run.
#include "passes/frontend.h"
#include "passes/util.h"
#include "support/error.h"

#include <fmt/format.h>

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

}  // namespace

bool checkCalls(Graph& g) {
  std::vector<Node*> warnings;
  forEachNode(g.block(), [&](Node* n) {
    if (n->kind() == OpKind::CallFunction || n->kind() == OpKind::CallMethod) refuseCall(n);
    if (n->kind() == OpKind::Warn) warnings.push_back(n);
  });
  for (Node* n : warnings) g.erase(n);
  return !warnings.empty();
}

}  // namespace gj
