#include <algorithm>
#include "runtime/ops/loops.h"
#include "runtime/ops/ops.h"
#include "runtime/cuda/ops.h"
#include "runtime/gemm.h"
#include "support/error.h"

namespace gj::ops {

// A matrix operand as BLAS sees it: a pointer, a leading dimension and whether it is transposed.
// Row-major views (stride[1] == 1) and transposed views (stride[0] == 1) pass without a copy.
struct BlasMatrix {
  Tensor keep;  // holds a contiguous copy alive when one was needed
  bool trans = false;
  int64_t ld = 1;
};

static BlasMatrix asBlas(const Tensor& m) {
  int64_t rows = m.size(0), cols = m.size(1);
  if (m.stride(1) == 1 && (rows <= 1 || m.stride(0) >= std::max<int64_t>(cols, 1)))
    return {m, false, std::max<int64_t>({m.stride(0), cols, 1})};
  if (m.stride(0) == 1 && (cols <= 1 || m.stride(1) >= std::max<int64_t>(rows, 1)))
    return {m, true, std::max<int64_t>({m.stride(1), rows, 1})};
  Tensor c = m.contiguous();
  return {c, false, std::max<int64_t>(cols, 1)};
}

// The same in int64, exact and wrapping on overflow as PyTorch's (which has no BLAS for integers either):
// on the host, a device product through it too.
static void integerGemmInto(const Tensor& out, const Tensor& a, const Tensor& b, double alpha, double beta) {
  if (onCuda(out)) {
    Tensor h = beta == 0.0 ? Tensor::empty(out.sizes(), out.dtype()) : out.to(DeviceKind::Cpu);
    integerGemmInto(h, a.to(DeviceKind::Cpu), b.to(DeviceKind::Cpu), alpha, beta);
    out.copyFrom(h);
    return;
  }
  const auto al = static_cast<int64_t>(alpha), be = static_cast<int64_t>(beta);
  USER_CHECK(static_cast<double>(al) == alpha && static_cast<double>(be) == beta,
             "an int64 matrix product takes integer alpha and beta, got {} and {}", alpha, beta);
  const int64_t m = a.size(0), k = a.size(1), n = b.size(1);
  const int64_t* pa = a.data<int64_t>();
  const int64_t* pb = b.data<int64_t>();
  int64_t* po = out.data<int64_t>();
  const int64_t as0 = a.stride(0), as1 = a.stride(1), bs0 = b.stride(0), bs1 = b.stride(1);
  using U = uint64_t;
  parallelFor(m, m * n * std::max<int64_t>(k, 1), [&](int64_t i) {
    for (int64_t j = 0; j < n; ++j) {
      U s = 0;
      for (int64_t p = 0; p < k; ++p) s += U(pa[i * as0 + p * as1]) * U(pb[p * bs0 + j * bs1]);
      U r = U(al) * s;
      if (be != 0) r += U(be) * U(po[i * n + j]);
      po[i * n + j] = static_cast<int64_t>(r);
    }
  });
}

// out[M,N] = alpha * a[M,K] b[K,N] + beta * out. out is contiguous.
static void gemmInto(const Tensor& out, const Tensor& a, const Tensor& b, double alpha, double beta) {
  if (out.dtype() == DType::Int64) return integerGemmInto(out, a, b, alpha, beta);
  BlasMatrix A = asBlas(a), B = asBlas(b);
  int64_t m = a.size(0), k = a.size(1), n = b.size(1);
  if (onCuda(out)) {
    USER_CHECK(onCuda(A.keep) && onCuda(B.keep), "matrix product of tensors on two devices");
    cuda::gemm(out.dtype(), A.trans, B.trans, m, n, k, alpha, A.keep.rawData(), A.ld, B.keep.rawData(), B.ld, beta,
               out.rawData(), std::max<int64_t>(n, 1));
    return;
  }
  USER_CHECK(!onCuda(A.keep) && !onCuda(B.keep), "matrix product of tensors on two devices");
  if (out.dtype() == DType::Float32) {
    sgemm(A.trans, B.trans, m, n, k, static_cast<float>(alpha), A.keep.data<float>(), A.ld, B.keep.data<float>(), B.ld,
          static_cast<float>(beta), out.data<float>(), std::max<int64_t>(n, 1));
  } else {
    dgemm(A.trans, B.trans, m, n, k, alpha, A.keep.data<double>(), A.ld, B.keep.data<double>(), B.ld, beta,
          out.data<double>(), std::max<int64_t>(n, 1));
  }
}

// The matrices of a batch t [count, rows, cols] as BLAS sees them: they share one layout, so the first
// one's stands for all, matrix i at i * t.stride(0) elements (0 where the batch broadcasts). A layout that
// BLAS cannot read is copied once for the whole batch.
static std::pair<BlasMatrix, int64_t> asBlasBatch(const Tensor& t) {
  BlasMatrix first = asBlas(t.select(0, 0));
  if (first.keep.rawData() == t.rawData()) return {BlasMatrix{t, first.trans, first.ld}, t.stride(0)};
  Tensor c = t.contiguous();
  return {BlasMatrix{c, false, std::max<int64_t>(c.size(2), 1)}, c.stride(0)};
}

static void checkMatmulOperands(const char* op, const Tensor& a, const Tensor& b) {
  USER_CHECK(a.defined() && b.defined(), "{}: undefined tensor argument", op);
  USER_CHECK((isFloating(a.dtype()) || a.dtype() == DType::Int64) && a.dtype() == b.dtype(),
             "{}: expected two float or int64 tensors of one dtype (as PyTorch), got {} and {}", op,
             dtypeName(a.dtype()), dtypeName(b.dtype()));
}

Tensor mm(const Tensor& a, const Tensor& b) {
  checkMatmulOperands("mm", a, b);
  USER_CHECK(a.dim() == 2 && b.dim() == 2, "mm: expected two matrices, got {} and {}", shapeStr(a.sizes()),
             shapeStr(b.sizes()));
  USER_CHECK(a.size(1) == b.size(0), "mm: inner dimensions differ: {} x {}", shapeStr(a.sizes()), shapeStr(b.sizes()));
  Tensor out = Tensor::empty({a.size(0), b.size(1)}, a.dtype(), a.device());
  if (a.size(1) == 0) return Tensor::zeros(out.sizes(), a.dtype(), a.device());
  gemmInto(out, a, b, 1.0, 0.0);
  return out;
}

Tensor addmm(const Tensor& bias, const Tensor& a, const Tensor& b, double beta, double alpha) {
  checkMatmulOperands("addmm", a, b);
  USER_CHECK(a.dim() == 2 && b.dim() == 2 && a.size(1) == b.size(0), "addmm: cannot multiply {} by {}",
             shapeStr(a.sizes()), shapeStr(b.sizes()));
  USER_CHECK(bias.dtype() == a.dtype(), "addmm: bias dtype {} differs from {}", dtypeName(bias.dtype()),
             dtypeName(a.dtype()));
  Tensor out = Tensor::empty({a.size(0), b.size(1)}, a.dtype(), a.device());
  out.copyFrom(bias.expand(out.sizes()));
  gemmInto(out, a, b, alpha, beta);
  return out;
}

void addmmInPlace(const Tensor& c, const Tensor& a, const Tensor& b) {
  checkMatmulOperands("addmmInPlace", a, b);
  USER_CHECK(a.dim() == 2 && b.dim() == 2 && a.size(1) == b.size(0) && c.defined() && c.isContiguous() &&
                 c.dim() == 2 && c.size(0) == a.size(0) && c.size(1) == b.size(1) && c.dtype() == a.dtype(),
             "addmmInPlace: cannot add {} x {} into {}", shapeStr(a.sizes()), shapeStr(b.sizes()),
             c.defined() ? shapeStr(c.sizes()) : "an undefined tensor");
  if (a.size(1) > 0) gemmInto(c, a, b, 1.0, 1.0);
}

Tensor bmm(const Tensor& a, const Tensor& b) {
  checkMatmulOperands("bmm", a, b);
  USER_CHECK(a.dim() == 3 && b.dim() == 3 && a.size(0) == b.size(0) && a.size(2) == b.size(1),
             "bmm: cannot multiply batches {} and {}", shapeStr(a.sizes()), shapeStr(b.sizes()));
  Tensor out = Tensor::empty({a.size(0), a.size(1), b.size(2)}, a.dtype(), a.device());
  if (onCuda(out) && out.numel() > 0 && a.size(2) > 0 && isFloating(out.dtype())) {
    // One strided batched GEMM on the device: a launch per matrix would cost multihead attention's
    // 128 heads x batch 128 launches a product.
    USER_CHECK(onCuda(b), "bmm of tensors on two devices");
    auto [A, strideA] = asBlasBatch(a);
    auto [B, strideB] = asBlasBatch(b);
    const int64_t m = a.size(1), n = b.size(2), k = a.size(2);
    cuda::gemm(out.dtype(), A.trans, B.trans, m, n, k, 1.0, A.keep.rawData(), A.ld, B.keep.rawData(), B.ld, 0.0,
               out.rawData(), std::max<int64_t>(n, 1), {a.size(0), strideA, strideB, m * n});
    return out;
  }
  for (int64_t i = 0; i < a.size(0); ++i) {
    Tensor o = out.select(0, i);
    if (a.size(2) == 0)
      o.copyFrom(Tensor::zeros(o.sizes(), a.dtype(), a.device()));
    else
      gemmInto(o, a.select(0, i), b.select(0, i), 1.0, 0.0);
  }
  return out;
}

Tensor matmul(const Tensor& a, const Tensor& b) {
  checkMatmulOperands("matmul", a, b);
  USER_CHECK(a.dim() >= 1 && b.dim() >= 1, "matmul: 0-dim operands are not allowed");
  if (a.dim() == 1 && b.dim() == 1) return sum(mul(a, b));
  if (a.dim() == 1) return matmul(a.unsqueeze(0), b).squeeze(-2);
  if (b.dim() == 1) return matmul(a, b.unsqueeze(1)).squeeze(-1);
  if (a.dim() == 2 && b.dim() == 2) return mm(a, b);
  if (b.dim() == 2) {
    // [..., M, K] x [K, N]: fold the batch into rows, one GEMM.
    Shape outSizes = a.sizes();
    outSizes.back() = b.size(1);
    Tensor flat = a.reshape({-1, a.size(-1)});
    return mm(flat, b).view(outSizes);
  }
  // Batched: broadcast the batch dimensions, then one GEMM per batch.
  Shape batchA(a.sizes().begin(), a.sizes().end() - 2), batchB(b.sizes().begin(), b.sizes().end() - 2);
  Shape batch = broadcastShapes(batchA, batchB);
  Shape ea = batch, eb = batch;
  ea.insert(ea.end(), {a.size(-2), a.size(-1)});
  eb.insert(eb.end(), {b.size(-2), b.size(-1)});
  Tensor a3 = a.expand(ea).reshape({-1, a.size(-2), a.size(-1)});
  Tensor b3 = b.expand(eb).reshape({-1, b.size(-2), b.size(-1)});
  Shape outSizes = batch;
  outSizes.insert(outSizes.end(), {a.size(-2), b.size(-1)});
  return bmm(a3, b3).view(outSizes);
}

Tensor linear(const Tensor& x, const Tensor& w, const Tensor& bias) {
  USER_CHECK(w.dim() == 2, "linear: weight must be [out, in], got {}", shapeStr(w.sizes()));
  USER_CHECK(x.dim() >= 1 && x.size(-1) == w.size(1), "linear: input {} has {} features but weight {} expects {}",
             shapeStr(x.sizes()), x.dim() ? x.size(-1) : 0, shapeStr(w.sizes()), w.size(1));
  Tensor flat = x.reshape({-1, x.size(-1)});
  Tensor out = bias.defined() ? addmm(bias, flat, w.t()) : mm(flat, w.t());
  Shape outSizes = x.sizes();
  outSizes.back() = w.size(0);
  return out.view(outSizes);
}

}  // namespace gj::ops
