#include "runtime/gemm.h"

#include "runtime/threading.h"
#include "support/error.h"

#include <cblas.h>
#ifdef GJ_WITH_ONEDNN
#include <dnnl.h>
#endif

#include <algorithm>

namespace gj {

std::string_view gemmBackendName(GemmBackendKind k) {
  switch (k) {
    case GemmBackendKind::OneDnn: return "onednn";
    case GemmBackendKind::OpenBlas: return "openblas";
  }
  return "?";
}

bool haveGemmBackend(GemmBackendKind k) {
#ifndef GJ_WITH_ONEDNN
  if (k == GemmBackendKind::OneDnn) return false;
#endif
  return true;
}

#ifdef GJ_WITH_ONEDNN
namespace {

dnnl_status_t onednnSgemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                          int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  return dnnl_sgemm(transA ? 'T' : 'N', transB ? 'T' : 'N', m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

}  // namespace
#endif

// oneDNN's sgemm gains little from a second thread when B is transposed and M small, which is one LSTM
// step's h W^T (bench/results/gemm-cpu.md: 64 x 2048 x 512, 0.84-0.89 ms on 2 threads, 0.70-0.74 ms split
// this way; forward of the fastrnns LSTM 15-20 % faster). Larger M parallelizes well inside oneDNN, and
// splitting it is slower there.
bool gemmSplitsColumns(bool transB, int64_t m, int64_t n, int64_t k, int threads) {
  return transB && threads > 1 && m <= 256 && n >= 256 * threads && k >= 64;
}

void sgemm(GemmBackendKind backend, bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha,
           const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  switch (backend) {
    case GemmBackendKind::OneDnn: {
#ifndef GJ_WITH_ONEDNN
      throw Error("the oneDNN GEMM backend is not in this build (configured with GJ_WITH_ONEDNN=OFF); use openblas");
#else
      const int threads = numThreads();
      dnnl_status_t st = dnnl_success;
      if (!gemmSplitsColumns(transB, m, n, k, threads)) {
        st = onednnSgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
      } else {
        // Each thread one sequential sgemm over a block of C's columns (rows of the transposed B); oneDNN
        // runs sequentially inside a parallel region.
        const int64_t block = ((n + threads - 1) / threads + 15) / 16 * 16;
        int failed = 0;
#pragma omp parallel for num_threads(threads) schedule(static, 1) reduction(| : failed)
        for (int64_t j0 = 0; j0 < n; j0 += block)
          failed |= onednnSgemm(transA, true, m, std::min(block, n - j0), k, alpha, a, lda, b + j0 * ldb, ldb, beta,
                                c + j0, ldc) != dnnl_success;
        if (failed) st = dnnl_invalid_arguments;
      }
      IR_CHECK(st == dnnl_success) << "dnnl_sgemm failed with status " << static_cast<int>(st) << " for " << m << "x"
                                   << n << "x" << k;
      return;
#endif
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
