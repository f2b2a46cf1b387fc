// The interpreter's kernels (executors/interpreter/kernels.h) for ops.def's Gemm group: products and
// convolutions, on oneDNN (runtime/gemm.h), with the right operand of products that share it packed once
// per run.
#include "executors/interpreter/kernels.h"

#include "passes/contiguous_operands.h"
#include "runtime/ops/ops.h"

#include <algorithm>

namespace gj::interp {

namespace {

ops::Conv2dParams convParams(const Operands& in) {
  auto pair = [](const std::vector<int64_t>& v, const char* what) {
    USER_CHECK(v.size() == 1 || v.size() == 2, "conv2d: {} must have 1 or 2 elements, got {}", what, v.size());
    return std::pair{v[0], v.size() == 2 ? v[1] : v[0]};
  };
  ops::Conv2dParams p;
  std::tie(p.strideH, p.strideW) = pair(in[3].toIntList("conv2d stride"), "stride");
  std::tie(p.padH, p.padW) = pair(in[4].toIntList("conv2d padding"), "padding");
  std::tie(p.dilationH, p.dilationW) = pair(in[5].toIntList("conv2d dilation"), "dilation");
  p.groups = in[6].toInt("conv2d groups");
  return p;
}

void mmKernel(Frame& f, const Node* n, const Operands& in) { f.set(n, f.mm(in.tensor(0), in.tensor(1))); }

void bmmKernel(Frame& f, const Node* n, const Operands& in) { f.set(n, ops::bmm(in.tensor(0), in.tensor(1))); }

void matmulKernel(Frame& f, const Node* n, const Operands& in) { f.set(n, ops::matmul(in.tensor(0), in.tensor(1))); }

void addmmKernel(Frame& f, const Node* n, const Operands& in) {
  f.set(n, ops::addmm(in.tensor(0), in.tensor(1), in.tensor(2), in[3].toDouble("addmm beta"),
                      in[4].toDouble("addmm alpha")));
}

void linearKernel(Frame& f, const Node* n, const Operands& in) {
  f.set(n, ops::linear(in.tensor(0), in.tensor(1), in.optionalTensor(2)));
}

void conv2dKernel(Frame& f, const Node* n, const Operands& in) {
  f.set(n, ops::conv2d(in.tensor(0), in.tensor(1), in.optionalTensor(2), convParams(in)));
}

void convolutionBackwardKernel(Frame& f, const Node* n, const Operands& in) {
  // stride..groups at 3..6, as in conv2d; the input's and the bias's gradients only where the graph reads them
  auto g = ops::conv2dBackward(in.tensor(0), in.tensor(1), in.tensor(2), convParams(in), n->output(2)->hasUses(),
                               n->output(0)->hasUses());
  f.output(0) = g.input;
  f.output(1) = g.weight;
  f.output(2) = g.bias;
}

}  // namespace

// A right operand the packed path takes: a float32 matrix on the CPU, row-major or transposed, with
// oneDNN as the GEMM library and a packed layout on this CPU.
bool Frame::packable(const Tensor& b) {
  return PackedGemmB::available() && b.defined() && b.dtype() == DType::Float32 &&
         b.device() == DeviceKind::Cpu && b.dim() == 2 && b.numel() > 0 && (b.stride(1) == 1 || b.stride(0) == 1);
}

// aten::mm, with B packed once per run when many small products share it (runtime/gemm.h,
// PackedGemmB): A dense, with at most as many rows as the products contiguous-operands lays out for.
Tensor Frame::mm(const Tensor& a, const Tensor& b) {
  const bool candidate = packable(b) && a.defined() && a.dtype() == DType::Float32 && a.device() == DeviceKind::Cpu &&
                         a.dim() == 2 && a.isContiguous() && a.size(0) <= kRowMajorOperandMaxRows &&
                         a.size(1) == b.size(0) &&
                         a.numel() > 0;
  if (!candidate) return ops::mm(a, b);
  if (!cur_->shared) return ops::mm(a, b);
  const int64_t m = a.size(0), k = a.size(1), nn = b.size(1);
  PackedOperand& p = packed_[cur_->ins[1]];
  const bool same = p.from.defined() && p.from.storage() == b.storage() && p.from.rawData() == b.rawData() &&
                    p.from.sizes() == b.sizes() && p.from.strides() == b.strides() && p.rows == m;
  if (!same) {
    const bool transB = b.stride(1) != 1;
    const int64_t ldb = std::max<int64_t>(transB ? b.stride(1) : b.stride(0), transB ? k : nn);
    p.gemm = PackedGemmB::pack(m, nn, k, b.data<float>(), ldb, transB);
    p.from = b;
    p.rows = m;
  }
  if (!p.gemm) return ops::mm(a, b);
  Tensor out = Tensor::empty({m, nn}, DType::Float32);
  p.gemm->multiply(a.data<float>(), out.data<float>());
  return out;
}

std::span<const KernelRow> gemmKernels() {
  static const KernelRow rows[] = {
      {OpKind::Mm, mmKernel},
      {OpKind::Bmm, bmmKernel},
      {OpKind::Matmul, matmulKernel},
      {OpKind::Addmm, addmmKernel},
      {OpKind::Linear, linearKernel},
      {OpKind::Conv2d, conv2dKernel},
      {OpKind::ConvolutionBackward, convolutionBackwardKernel},
  };
  return rows;
}

}  // namespace gj::interp
