// Dropout's random numbers: Philox 4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3",
// SC'11), a counter-based generator: the numbers of element i are a pure function of (seed, offset,
// stream, i), so every code generator computes an element's number where it needs it, in any order, and
// the backward regenerates the forward's mask instead of saving it.
//
// Element i of a prim::philox_dropout draws lane i % 4 of Philox4x32-10 at
//   key     = (seed mod 2^32, seed / 2^32)
//   counter = (i / 4, stream, offset mod 2^32, offset / 2^32)
// (i / 4 must fit in 32 bits: up to 2^34 elements a tensor); its 32 bits r give u = (r >> 8) 2^-24, exact in
// float and double, in [0, 1). The element is dropped when u < p and scaled by 1 / (1 - p) otherwise
// (gjDropout below; p = 0 keeps everything unchanged, p = 1 drops everything).
//
// The rounds are written once, over an algebra of 32-bit words (like support/pointwise.def's rules over
// an algebra of values): plain unsigned ints for the host kernels, the TE interpreter and CUDA C (NVRTC
// and the emulated driver compile this header's text), LLVM IR for both fusers' CPU backends. Hence plain
// C++ with no includes.
#ifndef GJ_SUPPORT_PHILOX_H
#define GJ_SUPPORT_PHILOX_H

#if defined(__CUDACC_RTC__) || defined(GJ_PHILOX_DEVICE)
#define GJ_PHILOX_FN __device__ inline
#else
#define GJ_PHILOX_FN inline
#endif

/// Philox4x32-10 of ctr under key, in place, over word algebra m: m.k(constant), m.add(x, y), m.bitxor(x, y)
/// and m.mulhilo(constant, x, hi, lo) (the 64-bit product's halves).
template <class M, class W>
GJ_PHILOX_FN void gjPhilox4x32_10(const M& m, W ctr[4], W key[2]) {
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      key[0] = m.add(key[0], m.k(0x9E3779B9u));
      key[1] = m.add(key[1], m.k(0xBB67AE85u));
    }
    W hi0, lo0, hi1, lo1;
    m.mulhilo(0xD2511F53u, ctr[0], hi0, lo0);
    m.mulhilo(0xCD9E8D57u, ctr[2], hi1, lo1);
    W next[4] = {m.bitxor(m.bitxor(hi1, ctr[1]), key[0]), lo1, m.bitxor(m.bitxor(hi0, ctr[3]), key[1]), lo0};
    for (int w = 0; w < 4; ++w) ctr[w] = next[w];
  }
}

/// Dropout's rule over a value algebra (support/pointwise.def's primitives): x with u its uniform number.
template <class M, class V>
GJ_PHILOX_FN V gjDropout(const M& m, V x, V u, V p) {
  return m.select(m.lt(u, p), m.c(0), m.mul(x, m.div(m.c(1), m.sub(m.c(1), p))));
}

/// The word algebra of plain unsigned ints.
struct GjPhiloxWords {
  GJ_PHILOX_FN unsigned k(unsigned v) const { return v; }
  GJ_PHILOX_FN unsigned add(unsigned x, unsigned y) const { return x + y; }
  GJ_PHILOX_FN unsigned bitxor(unsigned x, unsigned y) const { return x ^ y; }
  GJ_PHILOX_FN void mulhilo(unsigned a, unsigned x, unsigned& hi, unsigned& lo) const {
    const unsigned long long p = (unsigned long long)a * x;
    hi = (unsigned)(p >> 32);
    lo = (unsigned)p;
  }
};

/// The 32 bits of each of the four elements 4 block .. 4 block + 3 (see the top of this file) into out.
GJ_PHILOX_FN void gjPhiloxBlock(long long seed, long long offset, long long stream, long long block, unsigned out[4]) {
  const unsigned long long s = (unsigned long long)seed, o = (unsigned long long)offset;
  out[0] = (unsigned)block, out[1] = (unsigned)stream, out[2] = (unsigned)o, out[3] = (unsigned)(o >> 32);
  unsigned key[2] = {(unsigned)s, (unsigned)(s >> 32)};
  gjPhilox4x32_10(GjPhiloxWords(), out, key);
}

/// The 32 bits element `index` draws.
GJ_PHILOX_FN unsigned gjPhiloxBits(long long seed, long long offset, long long stream, long long index) {
  unsigned lanes[4];
  gjPhiloxBlock(seed, offset, stream, (long long)((unsigned long long)index >> 2), lanes);
  return lanes[index & 3];
}

/// A draw's uniform number in [0, 1) in T (float or double): its top 24 bits, exact in both.
template <class T>
GJ_PHILOX_FN T gjPhiloxUnit(unsigned bits) {
  return (T)(bits >> 8) * (T)(1.0 / 16777216.0);
}

/// Element index's uniform number in T.
template <class T>
GJ_PHILOX_FN T gjPhiloxUniform(long long seed, long long offset, long long stream, long long index) {
  return gjPhiloxUnit<T>(gjPhiloxBits(seed, offset, stream, index));
}

#endif  // GJ_SUPPORT_PHILOX_H
