// prim::philox_dropout's and prim::philox_uniform's kernels: support/philox.h's numbers, the mask computed here
// by a formula of its own.
#include "runtime/ops/loops.h"
#include "runtime/ops/ops.h"
#include "runtime/cuda/ops.h"
#include "support/error.h"
#include "support/philox.h"

#include <cstdint>

namespace gj::ops {

// The generator state's form, on either device (the device kernel reads its two words where they lie).
static void checkRng(const Tensor& rng) {
  USER_CHECK(rng.defined() && rng.dtype() == DType::Int64 && rng.dim() == 1 && rng.numel() == 2,
             "the random ops' generator state must be an int64 tensor [2] (seed, offset), not {}",
             rng.defined() ? fmt::format("{} {}", dtypeName(rng.dtype()), shapeStr(rng.sizes())) : "undefined");
}

PhiloxState philoxState(const Tensor& rng) {
  checkRng(rng);
  Tensor host = rng.device() == DeviceKind::Cpu ? rng.contiguous() : rng.to(DeviceKind::Cpu);
  return {host.data<int64_t>()[0], host.data<int64_t>()[1]};
}

template <typename T>
static void dropoutTyped(const T* x, T* out, int64_t n, T p, PhiloxState s, int64_t stream) {
  const T scale = T(1) / (T(1) - p);
  // One Philox block gives four elements their numbers (support/philox.h), so each thread takes whole blocks.
  const int64_t blocks = (n + 3) / 4;
  parallelFor(blocks, n, [&](int64_t blk) {
    unsigned bits[4];
    gjPhiloxBlock(s.seed, s.offset, stream, blk, bits);
    const int64_t first = blk * 4;
    for (int64_t lane = 0; lane < 4 && first + lane < n; ++lane)
      out[first + lane] = gjPhiloxUnit<T>(bits[lane]) < p ? T(0) : x[first + lane] * scale;
  });
}

Tensor dropout(const Tensor& x, double p, bool train, const Tensor& rng, int64_t stream) {
  USER_CHECK(x.defined() && isFloating(x.dtype()), "dropout: expected a float32 or float64 input, got {}",
             x.defined() ? dtypeName(x.dtype()) : "an undefined tensor");
  USER_CHECK(p >= 0 && p <= 1, "dropout: p = {} is not a probability (0 <= p <= 1)", p);
  USER_CHECK(x.numel() <= (int64_t{1} << 34), "dropout: {} elements are more than Philox's counter numbers (2^34)",
             x.numel());
  if (!train) return x;
  checkRng(rng);
  if (onCuda(x)) return cuda::dropout(x.contiguous(), p, rng, stream);
  const PhiloxState s = philoxState(rng);
  Tensor in = x.contiguous();
  Tensor out = Tensor::empty(x.sizes(), x.dtype());
  if (x.dtype() == DType::Float32)
    dropoutTyped<float>(in.data<float>(), out.data<float>(), x.numel(), static_cast<float>(p), s, stream);
  else
    dropoutTyped<double>(in.data<double>(), out.data<double>(), x.numel(), p, s, stream);
  return out;
}

template <typename T>
static void uniformTyped(T* out, int64_t n, PhiloxState s, int64_t stream) {
  const int64_t blocks = (n + 3) / 4;
  parallelFor(blocks, n, [&](int64_t blk) {
    unsigned bits[4];
    gjPhiloxBlock(s.seed, s.offset, stream, blk, bits);
    for (int64_t lane = 0; lane < 4 && blk * 4 + lane < n; ++lane) out[blk * 4 + lane] = gjPhiloxUnit<T>(bits[lane]);
  });
}

Tensor uniform(const Tensor& like, const Tensor& rng, int64_t stream) {
  USER_CHECK(like.defined() && isFloating(like.dtype()) && !isStorageOnly(like.dtype()),
             "rand: uniform numbers are float32 or float64 (float16 and bfloat16 through them), not {}",
             like.defined() ? dtypeName(like.dtype()) : "an undefined tensor");
  USER_CHECK(like.numel() <= (int64_t{1} << 34), "rand: {} elements are more than Philox's counter numbers (2^34)",
             like.numel());
  checkRng(rng);
  if (onCuda(like)) return cuda::uniform(like, rng, stream);
  const PhiloxState s = philoxState(rng);
  Tensor out = Tensor::empty(like.sizes(), like.dtype());
  if (like.dtype() == DType::Float32) uniformTyped<float>(out.data<float>(), like.numel(), s, stream);
  else uniformTyped<double>(out.data<double>(), like.numel(), s, stream);
  return out;
}

}  // namespace gj::ops
