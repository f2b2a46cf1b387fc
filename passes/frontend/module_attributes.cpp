// lower-module-attributes: a scripted module's parameters, buffers and attributes as graph inputs named by
// their state_dict keys.
#include "ir/parser.h"
#include "passes/frontend.h"
#include "passes/util.h"
#include "support/error.h"

#include <fmt/format.h>

#include <map>
#include <unordered_map>

namespace gj {

bool lowerModuleAttributes(Graph& g) {
  // The dotted path from `self` of every module value: "" for self, "block.fc1" for a submodule.
  std::unordered_map<const Value*, std::string> path;
  if (g.inputs().empty() || g.inputs()[0]->type().kind != TypeKind::Class) return false;
  Value* self = g.inputs()[0];
  path[self] = "";
  std::map<std::string, Value*> inputs;  // by state_dict key
  std::vector<Node*> reads;
  forEachNode(g.block(), [&](Node* n) {  // pre-order: a submodule's GetAttr comes before its attributes'
    if (n->kind() != OpKind::GetAttr) return;
    const std::string& name = std::get<std::string>(n->constant());
    if (!isIdentifierText(name))  // the state_dict key names an input, which the text must be able to name
      throw Error(fmt::format("prim::GetAttr's name \"{}\" is not a Python identifier", name), n->where(),
                  "an attribute's name is letters, digits and underscores, as PyTorch prints it");
    auto owner = path.find(n->input(0));
    if (owner == path.end())
      throw Error(fmt::format("prim::GetAttr reads {} of %{}, which is not the module's self or one of its submodules",
                              name, n->input(0)->name()),
                  n->where(),
                  "graphjit reads the attributes of the module whose method the graph is (its first input, self)");
    const std::string key = owner->second.empty() ? name : owner->second + "." + name;
    reads.push_back(n);
    if (n->output()->type().kind == TypeKind::Class) {
      path[n->output()] = key;
      return;
    }
    Value*& in = inputs[key];
    if (!in) in = g.addInput(n->output()->type(), key);
    g.replaceAllUsesWith(n->output(), in);
  });
  for (auto it = reads.rbegin(); it != reads.rend(); ++it) g.erase(*it);  // uses first
  if (self->hasUses())
    throw Error(fmt::format("the module %{} is used other than through prim::GetAttr (by {})", self->name(),
                            self->uses().front().user->describe()),
                self->uses().front().user->loc().str(),
                "graphjit runs a module's method with its attributes as inputs; pass tensors, not modules");
  g.block()->eraseInput(0);
  return true;
}

}  // namespace gj
