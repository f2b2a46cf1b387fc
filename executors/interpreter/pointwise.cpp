// The interpreter's kernel for ops.def's Pointwise group (executors/interpreter/kernels.h): every
// pointwise op on the runtime's reference kernels, by its PointwiseOp.
#include "executors/interpreter/kernels.h"

#include "runtime/ops/ops.h"

#include <limits>

namespace gj::interp {

Tensor tensorOrScalar(const IValue& v, const Tensor& like, const char* what) {
  if (v.isTensor()) return v.toTensor(what);
  const DType number = v.isBool() ? DType::Bool : v.isInt() ? DType::Int64 : DType::Float64;
  const DType t = resultType({promotionOperand(like), {number, OperandKind::Number}});
  return Tensor::scalar(v.toDouble(what), t);
}

namespace {

// Operand 0 a tensor, operand 1 (ops of two or more) a tensor or a scalar, operand 2 a scalar (add's alpha).
Tensor pointwise(const Node* n, const Operands& in) {
  const PointwiseOp op = *n->info().pointwiseOp();
  const int arity = pointwiseArity(op);
  const Tensor& a = in.tensor(0);
  if (op == PointwiseOp::Where) {  // self and other may each be a scalar, of the other's dtype (both: float)
    const IValue& tensorOne = in[1].isTensor() ? in[1] : in[2];
    const Tensor like = tensorOne.isTensor() ? tensorOne.toTensor(in.op()) : Tensor::scalar(0, DType::Float32);
    return ops::where(a, tensorOrScalar(in[1], like, in.op()), tensorOrScalar(in[2], like, in.op()));
  }
  if (op == PointwiseOp::Pow && !in[1].isTensor()) {  // PyTorch's pow by a number 0.5 or -0.5: sqrt, rsqrt
    const double e = in[1].toDouble(in.op());
    USER_CHECK(!(in[1].isInt() && e < 0 && !isFloating(a.dtype())),
               "pow: integers to negative integer powers are not allowed (PyTorch refuses them too); hint: raise a "
               "float tensor (x.float()) instead");
    if (e == 0.5 || e == -0.5) return ops::pointwise(e > 0 ? PointwiseOp::Sqrt : PointwiseOp::Rsqrt, a, Tensor(), 0);
  }
  if (op == PointwiseOp::MaximumBackward)  // three tensors
    return ops::maximumBackward(a, in.tensor(1), in.tensor(2));
  // clamp's None bound is no bound (the peephole pass makes such a clamp a clamp_min or clamp_max)
  const double inf = std::numeric_limits<double>::infinity();
  auto bound = [&](size_t i, double none) { return in[i].isNone() ? IValue(none) : in[i]; };
  const bool clamp = op == PointwiseOp::Clamp;
  // A number that takes no part in promotion (hardtanh's bounds, masked_fill's value) is in self's dtype
  // (beside an integer tensor, hardtanh's upper bound too: 2.5 beside int64 is 2).
  Tensor b;
  if (arity >= 2) {
    const IValue second = clamp ? bound(1, -inf) : in[1];
    b = second.isTensor() || promotesType(n->kind(), 1) ? tensorOrScalar(second, a, in.op())
                                                        : Tensor::scalar(second.toDouble(in.op()), a.dtype());
  }
  double c = arity >= 3 ? (clamp ? bound(2, inf) : in[2]).toDouble(in.op()) : 0.0;
  if (op == PointwiseOp::Hardtanh && !isFloating(a.dtype())) c = Tensor::scalar(c, a.dtype()).item();
  return ops::pointwise(op, a, b, c);
}

}  // namespace

void pointwiseKernel(Frame& f, const Node* n, const Operands& in) { f.set(n, pointwise(n, in)); }

}  // namespace gj::interp
