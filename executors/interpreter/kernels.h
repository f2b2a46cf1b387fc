#pragma once
// The interpreter's kernels, one per op, each in the file of its ops.def group: data.cpp, view.cpp,
// reduction.cpp, gemm.cpp and control.cpp list their ops' kernels in a table; pointwise.cpp has the one
// kernel every pointwise op shares (the runtime's reference kernels, runtime/ops/ops.h), and TorchScript's
// forms, which the frontend lowers before anything runs, get one that says so. kernelFor assembles the
// table once and checks that every op has exactly one kernel, from the file of its own group: a new row of
// ops.def without one fails the first run plan, and every test.
#include "executors/interpreter/frame.h"
#include "ir/op_table.h"

#include <span>

namespace gj::interp {

using KernelRow = OpTable<Kernel>::Row;

/// The rows of each group's file.
std::span<const KernelRow> dataKernels();
std::span<const KernelRow> viewKernels();
std::span<const KernelRow> reductionKernels();
std::span<const KernelRow> gemmKernels();
std::span<const KernelRow> controlKernels();
/// Every pointwise op's (pointwise.cpp).
void pointwiseKernel(Frame& f, const Node* n, const Operands& in);

/// A tensor operand that may be written as a number (aten::add(%x, %one, %alpha)): a number becomes a 0-dim
/// tensor of the dtype it promotes to beside `like` (resultType: int64 [2] < 1.5 compares in float32, bool
/// [2] >= -1 in int64), which the kernel's own promotion of two tensors then keeps.
Tensor tensorOrScalar(const IValue& v, const Tensor& like, const char* what);

/// The kernel of ops of kind k.
Kernel kernelFor(OpKind k);

}  // namespace gj::interp
