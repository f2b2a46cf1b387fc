// lower-torchscript: every frontend pass, in the order each needs the last.
#include "ir/verifier.h"
#include "passes/dce.h"
#include "passes/frontend.h"
#include "passes/util.h"
#include "support/error.h"

#include <fmt/format.h>

namespace gj {

std::string baseName(const std::string& name) {
  const size_t dot = name.rfind('.');
  if (dot == std::string::npos || dot + 1 == name.size() || dot == 0) return name;
  if (name.find_first_not_of("0123456789", dot + 1) != std::string::npos) return name;
  return name.substr(0, dot);
}

bool hasTorchScriptForms(const Graph& g) {
  std::string why;
  return firstFrontendForm(g, &why) != nullptr;
}

bool lowerTorchScript(Graph& g) {
  bool changed = checkCalls(g);          // before anything reads a callee's results
  changed |= lowerModuleAttributes(g);   // self's attributes become inputs
  changed |= lowerTuples(g);             // tuples of those inputs, returns, carried values
  changed |= functionalizeLists(g);      // before anything folds a list's length
  changed |= lowerOverloads(g);          // before shape checks fold on the rows' types
  changed |= foldShapeChecks(g);         // raises, None checks, dims, then sizes by the types
  changed |= eliminateDeadCode(g);       // Function and str constants, Uninitialized, unread tuples
  // a trace's requires_grad=0 and device=cpu describe its example inputs, not the runs to come
  auto forget = [&](Value* v) {
    if (!v->type().isTensor() || (!v->type().requiresGrad && !v->type().device)) return;
    Type t = v->type();
    t.requiresGrad.reset();
    t.device.reset();
    v->setType(std::move(t));
    changed = true;
  };
  for (Value* in : g.inputs()) forget(in);
  forEachNode(g.block(), [&](Node* n) {
    for (Value* v : n->outputs()) forget(v);
    for (Block* b : n->blocks())
      for (Value* v : b->inputs()) forget(v);
  });
  std::string why;
  if (const Node* n = firstFrontendForm(g, &why)) {
    const bool inPlace = n->info().name.ends_with('_');
    throw Error(fmt::format("lower-torchscript cannot lower this graph: {}", why), n->where(),
                inPlace ? "graphjit's graphs are functional: call the op with inplace=False"
                        : "docs/torchscript.md lists the TorchScript forms graphjit lowers; rewrite the Python code "
                          "around it");
  }
  return changed;
}

}  // namespace gj
