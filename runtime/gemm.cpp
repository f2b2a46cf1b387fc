#include "runtime/gemm.h"

#include "runtime/tensor.h"
#include "runtime/threading.h"
#include "support/error.h"

#include <cblas.h>
#ifdef GJ_WITH_ONEDNN
#include <dnnl.h>
#include <dnnl.hpp>
#endif

#include <algorithm>
#include <atomic>
#include <unordered_map>

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
// step's h W^T: splitting the columns between the threads is faster there (bench/gemm_bench). Larger M
// parallelizes well inside oneDNN, and splitting it is slower there.
bool gemmSplitsColumns(bool transB, int64_t m, int64_t n, int64_t k, int threads) {
  return transB && threads > 1 && m <= 256 && n >= 256 * threads && k >= 64 && !gemmRunsOnOneThread(m, n, k);
}

// A parallel region costs a few microseconds to start and join on these VMs (a futex call each way); a
// product under 2^19 multiply-adds takes about as long on one thread.
bool gemmRunsOnOneThread(int64_t m, int64_t n, int64_t k) { return m * n * k < (int64_t{1} << 19); }

namespace {
thread_local GemmRecording* tRecording = nullptr;
}

GemmRecording::GemmRecording() : previous_(tRecording) { tRecording = this; }
GemmRecording::~GemmRecording() { tRecording = previous_; }

void recordGemm(const GemmShape& shape) {
  if (tRecording) ++tRecording->counts_[shape];
}

void recordConvolution(const ConvShape& shape) {
  if (tRecording) ++tRecording->convolutions_[shape];
}

void sgemm(GemmBackendKind backend, bool transA, bool transB, int64_t m, int64_t n, int64_t k, float alpha,
           const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (tRecording) recordGemm({backend, false, transA, transB, m, n, k});
  switch (backend) {
    case GemmBackendKind::OneDnn: {
#ifndef GJ_WITH_ONEDNN
      throw Error("the oneDNN GEMM backend is not in this build (configured with GJ_WITH_ONEDNN=OFF); use openblas");
#else
      const int threads = numThreads();
      dnnl_status_t st = dnnl_success;
      OneThreadScope one(gemmRunsOnOneThread(m, n, k));  // such a product is never split either
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

namespace {
std::atomic<uint64_t> gPackedGemms{0};
}

uint64_t packedGemmCount() { return gPackedGemms.load(std::memory_order_relaxed); }

#ifdef GJ_WITH_ONEDNN
struct PackedGemmB::Impl {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::matmul::primitive_desc pd;
  dnnl::matmul product;
  Tensor buffer;          // B in the primitive's layout, from graphjit's allocator (peak memory counts it)
  dnnl::memory weights;  // over buffer
  bool oneThread = false;  // gemmRunsOnOneThread: made and run on the calling thread alone
  int64_t n = 0, k = 0;    // B's sizes, and how it was given to pack (GemmRecording's shape)
  bool transB = false;
  // What every multiply passes, made once: a batch-1 LSTM step's product is a few microseconds, and making
  // two memory objects, a stream and the argument map cost a fifth of it. multiply() points them at its
  // operands.
  dnnl::memory src, dst;
  dnnl::stream stream;
  std::unordered_map<int, dnnl::memory> args;
};

std::unique_ptr<PackedGemmB> PackedGemmB::pack(int64_t m, int64_t n, int64_t k, const float* b, int64_t ldb,
                                               bool transB) {
  using dnnl::memory;
  if (m <= 0 || n <= 0 || k <= 0) return nullptr;
  auto impl = std::make_unique<Impl>();
  impl->oneThread = gemmRunsOnOneThread(m, n, k);
  impl->n = n;
  impl->k = k;
  impl->transB = transB;
  OneThreadScope one(impl->oneThread);  // the primitive picks its blocking for the threads it will have
  const memory::desc src({m, k}, memory::data_type::f32, memory::format_tag::ab);
  const memory::desc any({k, n}, memory::data_type::f32, memory::format_tag::any);
  const memory::desc dst({m, n}, memory::data_type::f32, memory::format_tag::ab);
  const memory::desc plain({k, n}, memory::data_type::f32,
                           transB ? memory::dims{1, ldb} : memory::dims{ldb, 1});
  try {
    impl->pd = dnnl::matmul::primitive_desc(dnnl::matmul::desc(src, any, dst), impl->engine);
  } catch (const dnnl::error&) {
    return nullptr;  // no implementation takes these descriptors: sgemm it is
  }
  if (impl->pd.weights_desc() == memory::desc({k, n}, memory::data_type::f32, memory::format_tag::ab)) return nullptr;
  impl->product = dnnl::matmul(impl->pd);
  const size_t bytes = impl->pd.weights_desc().get_size();
  impl->buffer = Tensor::empty({static_cast<int64_t>((bytes + sizeof(float) - 1) / sizeof(float))}, DType::Float32);
  impl->weights = memory(impl->pd.weights_desc(), impl->engine, impl->buffer.rawData());
  memory given(plain, impl->engine, const_cast<float*>(b));
  dnnl::stream stream(impl->engine);
  dnnl::reorder(given, impl->weights).execute(stream, given, impl->weights);
  stream.wait();
  impl->src = memory(impl->pd.src_desc(), impl->engine, DNNL_MEMORY_NONE);
  impl->dst = memory(impl->pd.dst_desc(), impl->engine, DNNL_MEMORY_NONE);
  impl->stream = std::move(stream);
  impl->args = {{DNNL_ARG_SRC, impl->src}, {DNNL_ARG_WEIGHTS, impl->weights}, {DNNL_ARG_DST, impl->dst}};
  return std::unique_ptr<PackedGemmB>(new PackedGemmB(m, std::move(impl)));
}

void PackedGemmB::multiply(const float* a, float* c) const {
  impl_->src.set_data_handle(const_cast<float*>(a));
  impl_->dst.set_data_handle(c);
  OneThreadScope one(impl_->oneThread);
  impl_->product.execute(impl_->stream, impl_->args);
  impl_->stream.wait();
  gPackedGemms.fetch_add(1, std::memory_order_relaxed);
  recordGemm({GemmBackendKind::OneDnn, true, false, impl_->transB, m_, impl_->n, impl_->k});
}
#else
struct PackedGemmB::Impl {};

std::unique_ptr<PackedGemmB> PackedGemmB::pack(int64_t, int64_t, int64_t, const float*, int64_t, bool) {
  return nullptr;
}

void PackedGemmB::multiply(const float*, float*) const {
  IR_CHECK(false) << "PackedGemmB without oneDNN";
}
#endif

bool PackedGemmB::available() {
  static const bool yes = [] {
    if (kDefaultGemmBackend != GemmBackendKind::OneDnn) return false;
    Tensor b = Tensor::zeros({512, 2048}, DType::Float32);
    return pack(64, 2048, 512, b.data<float>(), 2048, false) != nullptr;
  }();
  return yes;
}

PackedGemmB::PackedGemmB(int64_t m, std::unique_ptr<Impl> impl) : m_(m), impl_(std::move(impl)) {}
PackedGemmB::~PackedGemmB() = default;

void dgemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, double alpha, const double* a, int64_t lda,
           const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  cblas_dgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans, transB ? CblasTrans : CblasNoTrans, m, n, k, alpha,
              a, lda, b, ldb, beta, c, ldc);
}

}  // namespace gj
