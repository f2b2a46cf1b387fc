// The interpreter's table of kernels (executors/interpreter/kernels.h): each group file's rows, checked.
#include "executors/interpreter/kernels.h"

namespace gj::interp {

namespace {

void frontendKernel(Frame&, const Node* n, const Operands&) {
  IR_CHECK(false) << n->info().name << " reached the interpreter (requireLowered)";
}

OpTable<Kernel> makeTable() {
  OpTable<Kernel> table("interpreter kernel", "executors/interpreter/");
  for (const OpInfo& info : allOps()) {
    if (info.group == OpGroupKind::Pointwise)
      table.add(info.kind, pointwiseKernel, OpGroupKind::Pointwise, "pointwise.cpp");
    else if (info.frontendOnly())
      table.add(info.kind, frontendKernel, info.group, "kernels.cpp");
  }
  table.add(dataKernels(), OpGroupKind::Data, "data.cpp");
  table.add(viewKernels(), OpGroupKind::View, "view.cpp");
  table.add(reductionKernels(), OpGroupKind::Reduction, "reduction.cpp");
  table.add(gemmKernels(), OpGroupKind::Gemm, "gemm.cpp");
  table.add(controlKernels(), OpGroupKind::Control, "control.cpp");
  return table;
}

}  // namespace

Kernel kernelFor(OpKind k) {
  static const OpTable<Kernel> table = makeTable().complete();
  return table[k];
}

}  // namespace gj::interp
