#include "runtime/gemm.h"

#include "support/error.h"

#include <cblas.h>
#include <dnnl.h>

namespace gj {

std::string_view gemmBackendName(GemmBackendKind k) {
  switch (k) {
    case GemmBackendKind::OneDnn: return "onednn";
    case GemmBackendKind::OpenBlas: return "openblas";
  }
  return "?";
}

void sgemm(GemmBackendKind backend, bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha,
           const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  switch (backend) {
    case GemmBackendKind::OneDnn: {
      dnnl_status_t st = dnnl_sgemm(transA ? 'T' : 'N', transB ? 'T' : 'N', m, n, k, alpha, a, lda, b, ldb, beta, c,
                                    ldc);
      IR_CHECK(st == dnnl_success) << "dnnl_sgemm failed with status " << static_cast<int>(st) << " for " << m << "x"
                                   << n << "x" << k;
      return;
    }
    case GemmBackendKind::OpenBlas:
      cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans, transB ? CblasTrans : CblasNoTrans, m, n, k,
                  alpha, a, lda, b, ldb, beta, c, ldc);
      return;
  }
}

void dgemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, double alpha, const double* a, int64_t lda,
           const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  cblas_dgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans, transB ? CblasTrans : CblasNoTrans, m, n, k, alpha,
              a, lda, b, ldb, beta, c, ldc);
}

}  // namespace gj
