#pragma once
// Dense matrix multiply on the CPU through a tuned library; never a hand-written loop on the hot path.
// Row-major throughout: C[M,N] = alpha * op(A)[M,K] * op(B)[K,N] + beta * C.
#include <cstdint>
#include <string_view>

namespace gj {

/// Which library runs float32 GEMMs. float64 always goes to OpenBLAS (oneDNN has no dgemm).
enum class GemmBackendKind : uint8_t { OneDnn, OpenBlas };

/// The backend used by the kernels. Chosen from bench/gemm_bench measurements (bench/results/gemm-cpu.md):
/// oneDNN's sgemm, faster at the LSTM shapes and unaffected by OPENBLAS_CORETYPE; OpenBLAS in builds
/// without oneDNN (GJ_WITH_ONEDNN=OFF), where asking for OneDnn is a gj::Error.
#ifdef GJ_WITH_ONEDNN
constexpr GemmBackendKind kDefaultGemmBackend = GemmBackendKind::OneDnn;
#else
constexpr GemmBackendKind kDefaultGemmBackend = GemmBackendKind::OpenBlas;
#endif
/// Whether this build has the backend.
bool haveGemmBackend(GemmBackendKind k);

std::string_view gemmBackendName(GemmBackendKind k);

void sgemm(GemmBackendKind backend, bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha,
           const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);
inline void sgemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
                  const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  sgemm(kDefaultGemmBackend, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
/// Whether a oneDNN sgemm is split over C's columns, one sequential sgemm per thread (see gemm.cpp).
bool gemmSplitsColumns(bool transB, int64_t m, int64_t n, int64_t k, int threads);
void dgemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, double alpha, const double* a, int64_t lda,
           const double* b, int64_t ldb, double beta, double* c, int64_t ldc);

}  // namespace gj
