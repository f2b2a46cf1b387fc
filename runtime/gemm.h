#pragma once
// Dense matrix multiply on the CPU through a tuned library; never a hand-written loop on the hot path.
// Row-major throughout: C[M,N] = alpha * op(A)[M,K] * op(B)[K,N] + beta * C.
#include <array>
#include <compare>
#include <cstdint>
#include <map>
#include <memory>
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
/// Whether a float32 product of m x n x k runs on the calling thread alone (oneDNN's sgemm and the packed
/// matmul both): below about half a million multiply-adds, waking the other threads costs more than they
/// save (a batch-1 LSTM step's h W^T).
bool gemmRunsOnOneThread(int64_t m, int64_t n, int64_t k);
/// A GEMM's right operand B [K, N] (float32), reordered once into the blocked layout of oneDNN's matmul
/// primitive for products of M rows. sgemm packs B again on every call; an unrolled RNN multiplies one
/// weight by a small M-row matrix once a step, where packing once pays (bench/gemm_bench, "B packed
/// once"). The packed copy is a snapshot: B's memory may change after pack() without changing it.
class PackedGemmB {
 public:
  /// B is row-major [K, N] with row stride ldb, or with transB its transpose, [N, K] with row stride ldb.
  /// Null where packing cannot pay or is not available: a build without oneDNN, or a primitive that
  /// would read B in its plain layout anyway.
  static std::unique_ptr<PackedGemmB> pack(int64_t m, int64_t n, int64_t k, const float* b, int64_t ldb, bool transB);
  /// Whether pack() gives a packed operand on this CPU and build (asked once, at an LSTM step's shape).
  static bool available();
  ~PackedGemmB();
  PackedGemmB(const PackedGemmB&) = delete;
  PackedGemmB& operator=(const PackedGemmB&) = delete;

  /// C[M, N] = A[M, K] B, A and C dense and row-major. Not for two threads at once on one PackedGemmB
  /// (each call repoints the same memory objects); an interpreter frame owns its own.
  void multiply(const float* a, float* c) const;
  int64_t m() const { return m_; }

 private:
  struct Impl;
  PackedGemmB(int64_t m, std::unique_ptr<Impl> impl);
  int64_t m_;
  std::unique_ptr<Impl> impl_;
};

/// Products run through PackedGemmB::multiply in this process (tests check that packing took place).
uint64_t packedGemmCount();

/// A float32 product as it was run: by sgemm on a backend, or by PackedGemmB::multiply (`packed`: B was
/// packed for it, transB says how B was given to pack).
struct GemmShape {
  GemmBackendKind backend = kDefaultGemmBackend;
  bool packed = false, transA = false, transB = false;
  int64_t m = 0, n = 0, k = 0;
  auto operator<=>(const GemmShape&) const = default;
};

/// A float32 convolution as oneDNN ran it (runtime/ops/onednn_conv.h): the forward (with its bias or
/// without), or the backward's weight gradient with the data gradient (`input`) or without. x and w are
/// the input's and weight's sizes; params the Conv2dParams' numbers in their order (strides, paddings,
/// dilations, groups).
struct ConvShape {
  bool backward = false;
  bool bias = false;
  bool input = true;
  std::array<int64_t, 4> x{}, w{};
  std::array<int64_t, 7> params{};
  auto operator<=>(const ConvShape&) const = default;
};

/// While alive, every float32 product the calling thread runs (sgemm, PackedGemmB::multiply) is counted
/// here by shape, and every convolution oneDNN runs for it: what a benchmark's row spends in libraries,
/// for its floor (graphbench's info column). Recordings nest; the innermost counts. Products that oneDNN
/// or another thread runs on the thread's behalf inside one call count once, as the call.
class GemmRecording {
 public:
  GemmRecording();
  ~GemmRecording();
  GemmRecording(const GemmRecording&) = delete;
  GemmRecording& operator=(const GemmRecording&) = delete;
  /// Each shape run, with how many times.
  const std::map<GemmShape, int64_t>& counts() const { return counts_; }
  /// Each convolution run, with how many times.
  const std::map<ConvShape, int64_t>& convolutions() const { return convolutions_; }

 private:
  friend void recordGemm(const GemmShape&);
  friend void recordConvolution(const ConvShape&);
  std::map<GemmShape, int64_t> counts_;
  std::map<ConvShape, int64_t> convolutions_;
  GemmRecording* previous_;
};

/// Counts a convolution in the calling thread's recording, if any (oneDNN's convolutions call it).
void recordConvolution(const ConvShape& shape);

void dgemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, double alpha, const double* a, int64_t lda,
           const double* b, int64_t ldb, double beta, double* c, int64_t ldc);

}  // namespace gj
