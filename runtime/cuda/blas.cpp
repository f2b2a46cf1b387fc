// GEMMs on the device through cuBLAS, loaded at run time like the driver (dlopen of libcublas.so.13, or
// $GJ_CUBLAS), so that nothing links it and binaries start where it is missing. Under the emulated
// driver the host's GEMM stands in.
#include "runtime/cuda/device.h"
#include "support/environment.h"
#include "runtime/cuda/driver_api.h"
#include "runtime/cuda/ops.h"
#include "runtime/gemm.h"
#include "support/error.h"

#include <cublas_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <mutex>

namespace gj::cuda {
namespace {

struct Cublas {
  decltype(&::cublasCreate_v2) create = nullptr;
  decltype(&::cublasSetStream_v2) setStream = nullptr;
  decltype(&::cublasSetMathMode) setMathMode = nullptr;
  decltype(&::cublasSgemm_v2) sgemm = nullptr;
  decltype(&::cublasDgemm_v2) dgemm = nullptr;
  decltype(&::cublasSgemmStridedBatched) sgemmBatched = nullptr;
  decltype(&::cublasDgemmStridedBatched) dgemmBatched = nullptr;
  decltype(&::cublasGetStatusString) statusString = nullptr;
  std::string failure;  ///< why cuBLAS cannot be used; empty when it can
};

const Cublas& cublas() {
  static Cublas c;
  static std::once_flag once;
  std::call_once(once, [] {
    void* lib = detail::openLibrary("cuBLAS", "GJ_CUBLAS", environment().cublas,
                                    {"libcublas.so.13", "libcublas.so.12", "libcublas.so"}, c.failure);
    if (!lib) return;
    std::string missing;
    detail::findEntry(lib, "cublasCreate_v2", c.create, missing);
    detail::findEntry(lib, "cublasSetStream_v2", c.setStream, missing);
    detail::findEntry(lib, "cublasSetMathMode", c.setMathMode, missing);
    detail::findEntry(lib, "cublasSgemm_v2", c.sgemm, missing);
    detail::findEntry(lib, "cublasDgemm_v2", c.dgemm, missing);
    detail::findEntry(lib, "cublasSgemmStridedBatched", c.sgemmBatched, missing);
    detail::findEntry(lib, "cublasDgemmStridedBatched", c.dgemmBatched, missing);
    detail::findEntry(lib, "cublasGetStatusString", c.statusString, missing);
    if (!missing.empty()) c.failure = fmt::format("the cuBLAS library lacks {}", missing);
  });
  return c;
}

void check(const Cublas& c, cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) throw Error(fmt::format("{} failed: {}", what, c.statusString(s)));
}

// This thread's handle (a handle must not be used by two threads at once), on its current stream.
cublasHandle_t handle(const Cublas& c) {
  thread_local cublasHandle_t h = nullptr;
  if (!h) {
    check(c, c.create(&h), "cublasCreate");
    // Plain float32 arithmetic, never TF32: results compare with the float32 references.
    check(c, c.setMathMode(h, CUBLAS_PEDANTIC_MATH), "cublasSetMathMode");
  }
  check(c, c.setStream(h, currentStream()), "cublasSetStream");
  return h;
}

}  // namespace

void gemm(DType dtype, bool transA, bool transB, int64_t m, int64_t n, int64_t k, double alpha, const void* a,
          int64_t lda, const void* b, int64_t ldb, double beta, void* c, int64_t ldc, const GemmBatch& batch) {
  USER_CHECK(isFloating(dtype), "CUDA gemm: float32 or float64, not {}", dtypeName(dtype));
  USER_CHECK(batch.count >= 1, "CUDA gemm: a batch of {} products", batch.count);
  if (requireDevice().emulated) {  // device memory is host memory there; the GEMMs are queued like a kernel
    a = detail::emulatedHostPointer(a);
    b = detail::emulatedHostPointer(b);
    c = detail::emulatedHostPointer(c);
    detail::emulatedEnqueue(currentStream(), [=] {
      for (int64_t i = 0; i < batch.count; ++i) {
        if (dtype == DType::Float32) {
          const auto *A = static_cast<const float*>(a), *B = static_cast<const float*>(b);
          sgemm(transA, transB, m, n, k, static_cast<float>(alpha), A + i * batch.strideA, lda, B + i * batch.strideB,
                ldb, static_cast<float>(beta), static_cast<float*>(c) + i * batch.strideC, ldc);
        } else {
          const auto *A = static_cast<const double*>(a), *B = static_cast<const double*>(b);
          dgemm(transA, transB, m, n, k, alpha, A + i * batch.strideA, lda, B + i * batch.strideB, ldb, beta,
                static_cast<double*>(c) + i * batch.strideC, ldc);
        }
      }
    });
    return;
  }
  const Cublas& cb = cublas();
  USER_CHECK(cb.failure.empty(), "{}", cb.failure);
  USER_CHECK(std::max({m, n, k, lda, ldb, ldc, batch.count}) <= INT32_MAX,
             "CUDA gemm: {} x {}x{}x{} is beyond cuBLAS's 32-bit sizes", batch.count, m, n, k);
  // cuBLAS is column-major: row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T, the same
  // memory read with the operands swapped.
  const cublasOperation_t opA = transA ? CUBLAS_OP_T : CUBLAS_OP_N, opB = transB ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int M = static_cast<int>(m), N = static_cast<int>(n), K = static_cast<int>(k);
  const int LDA = static_cast<int>(lda), LDB = static_cast<int>(ldb), LDC = static_cast<int>(ldc);
  cublasHandle_t h = handle(cb);
  if (batch.count > 1) {
    const int count = static_cast<int>(batch.count);
    const long long sA = batch.strideA, sB = batch.strideB, sC = batch.strideC;
    if (dtype == DType::Float32) {
      const float al = static_cast<float>(alpha), be = static_cast<float>(beta);
      check(cb, cb.sgemmBatched(h, opB, opA, N, M, K, &al, static_cast<const float*>(b), LDB, sB,
                                static_cast<const float*>(a), LDA, sA, &be, static_cast<float*>(c), LDC, sC, count),
            "cublasSgemmStridedBatched");
    } else {
      check(cb, cb.dgemmBatched(h, opB, opA, N, M, K, &alpha, static_cast<const double*>(b), LDB, sB,
                                static_cast<const double*>(a), LDA, sA, &beta, static_cast<double*>(c), LDC, sC, count),
            "cublasDgemmStridedBatched");
    }
    return;
  }
  if (dtype == DType::Float32) {
    const float al = static_cast<float>(alpha), be = static_cast<float>(beta);
    check(cb, cb.sgemm(h, opB, opA, N, M, K, &al, static_cast<const float*>(b), LDB, static_cast<const float*>(a), LDA,
                       &be, static_cast<float*>(c), LDC),
          "cublasSgemm");
  } else {
    check(cb, cb.dgemm(h, opB, opA, N, M, K, &alpha, static_cast<const double*>(b), LDB,
                       static_cast<const double*>(a), LDA, &beta, static_cast<double*>(c), LDC),
          "cublasDgemm");
  }
}

}  // namespace gj::cuda
