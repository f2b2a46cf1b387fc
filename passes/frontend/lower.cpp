// lower-torchscript: every frontend pass, in the order each needs the last.
#include "ir/verifier.h"
#include "passes/dce.h"
#include "passes/frontend.h"
#include "passes/frontend/overloads.h"
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

// prim::dtype gives graphjit's dtype code, which every op of graphjit's that takes a dtype reads. A TorchScript
// graph compares it with PyTorch's ScalarType codes (`assert k.dtype == torch.bool` prints eq(dtype(k), 11)):
// such a constant becomes graphjit's code of the same dtype, or -1 (no dtype's code) for a dtype graphjit lacks.
static bool dtypeCodesOfComparisons(Graph& g) {
  bool changed = false;
  forEachNode(g.block(), [&](Node* n) {
    if (n->kind() != OpKind::IntEq && n->kind() != OpKind::IntNe) return;
    for (size_t i = 0; i < 2; ++i) {
      Node* code = n->input(1 - i)->node();
      Node* c = n->input(i)->node();
      if (code->kind() != OpKind::DTypeOf || c->kind() != OpKind::Constant ||
          !std::holds_alternative<int64_t>(c->constant()))
        continue;
      const std::optional<DType> d = frontend::fromScalarType(std::get<int64_t>(c->constant()));
      Node* ours = g.createConstant(ConstantValue(d ? static_cast<int64_t>(*d) : int64_t{-1}));
      ours->insertBefore(n);
      n->replaceInput(i, ours->output());
      changed = true;
    }
  });
  return changed;
}

bool lowerTorchScript(Graph& g) {
  bool changed = checkCalls(g);          // before anything reads a callee's results
  changed |= lowerModuleAttributes(g);   // self's attributes become inputs
  changed |= lowerTuples(g);             // tuples of those inputs, returns, carried values
  changed |= functionalizeLists(g);      // before anything folds a list's length
  changed |= lowerOverloads(g);          // before shape checks fold on the rows' types
  changed |= dtypeCodesOfComparisons(g); // before they fold
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
