// The interpreter's table of kernels (executors/interpreter/kernels.h): each group file's rows, checked.
#include "executors/interpreter/kernels.h"

#include <array>

namespace gj::interp {

namespace {

constexpr size_t kOpCount = 0
#define OP(E, NAME, IN, OUT, GROUP, FLAGS, SCHEMA) +1
#include "ir/ops.def"
#undef OP
    ;

void frontendKernel(Frame&, const Node* n, const Operands&) {
  IR_CHECK(false) << n->info().name << " reached the interpreter (requireLowered)";
}

std::array<Kernel, kOpCount> makeTable() {
  std::array<Kernel, kOpCount> table{};
  auto add = [&](OpKind op, Kernel kernel, OpGroupKind group, const char* file) {
    const OpInfo& info = opInfo(op);
    IR_CHECK(info.group == group) << info.name << "'s kernel is in executors/interpreter/" << file
                                  << ", not in the file of its ops.def group";
    Kernel& slot = table[static_cast<size_t>(op)];
    IR_CHECK(!slot) << info.name << " has two interpreter kernels";
    slot = kernel;
  };
  for (const OpInfo& info : allOps()) {
    if (info.group == OpGroupKind::Pointwise) add(info.kind, pointwiseKernel, OpGroupKind::Pointwise, "pointwise.cpp");
    else if (info.frontendOnly()) add(info.kind, frontendKernel, info.group, "kernels.cpp");
  }
  for (const KernelRow& r : dataKernels()) add(r.op, r.kernel, OpGroupKind::Data, "data.cpp");
  for (const KernelRow& r : viewKernels()) add(r.op, r.kernel, OpGroupKind::View, "view.cpp");
  for (const KernelRow& r : reductionKernels()) add(r.op, r.kernel, OpGroupKind::Reduction, "reduction.cpp");
  for (const KernelRow& r : gemmKernels()) add(r.op, r.kernel, OpGroupKind::Gemm, "gemm.cpp");
  for (const KernelRow& r : controlKernels()) add(r.op, r.kernel, OpGroupKind::Control, "control.cpp");
  for (const OpInfo& info : allOps())
    IR_CHECK(table[static_cast<size_t>(info.kind)])
        << info.name << " has no interpreter kernel (executors/interpreter/)";
  return table;
}

}  // namespace

Kernel kernelFor(OpKind k) {
  static const std::array<Kernel, kOpCount> table = makeTable();
  return table[static_cast<size_t>(k)];
}

}  // namespace gj::interp
