// The unfused path's reductions: sums and maxima over a tensor's dims, extremes along a dim, softmax and its
// backward, with threads that cooperate (warp shuffles, shared memory).
// A part of runtime/cuda/kernels.cuh, which includes it after its types and helpers (and splices its
// text in for NVRTC, runtime/CMakeLists.txt); not a header of its own.

// acc and v folded by the reductions: their sum, or their maximum (a NaN, once met, stays).
// In T: double for gj_reduce's and gj_softmax's folds, the row's own type for gj_softmax_rows*'s forward
// (v is converted to T first: a shared scratch's element, on the emulator, is a checked reference).
template <typename T, typename U>
GJ_DEVICE T gjFold(int max, T acc, U u) {
  const T v = u;
  if (!max) return acc + v;
  return acc == acc && (v != v || v > acc) ? v : acc;
}

// The element gj_reduce folds at offset `at`: in's, or the product of in's and in2's.
GJ_DEVICE double gjSumLoad(const GjSumArgs& p, gj_i64 at) {
  const double v = gjLoad(p.in, p.type, at);
  return p.in2 ? v * gjLoad(p.in2, p.type, at) : v;
}

// ---- reductions whose threads cooperate: in-thread folds, then warp shuffles, then shared memory ----

// Who folds one unit of work (an output's elements, a softmax row), for gj_reduce, gj_extreme_rows and
// gj_softmax; blocks of 256 threads (8 warps) throughout:
//   GJ_WARPS: a warp a unit (up to 1024 elements), its lanes on neighbouring elements;
//   GJ_BLOCKS: a block a unit (longer ones);
//   GJ_COLUMNS: 32 neighbouring units a block, one a lane, each warp folding every 8th element (the units'
//     elements `stride` apart and the units side by side: a bias gradient over the batch, a softmax along
//     dim 0), so that a warp reads 32 neighbours at once.
// A thread folds its elements in registers (four accumulators side by side), then gjUnitFold combines a
// unit's threads: a butterfly of shuffles across a warp, then the warps' results through shared memory.
// The order depends only on the schedule and the sizes: every run gives the same bits.
// A unit's threads: the first element this thread folds and the step to its next; the unit of the
// block's `round`-th turn; whether it is one of the work's `units`.
struct GjUnit {
  gj_i64 unit, first, step;
  bool valid;
};

GJ_DEVICE GjUnit gjUnitOf(int schedule, gj_i64 round, gj_i64 units) {
  const gj_i64 t = threadIdx.x, lane = t % 32, warp = t / 32;
  GjUnit u;
  if (schedule == GJ_WARPS) {
    u.unit = (round * gridDim.x + blockIdx.x) * GJ_REDUCE_WARPS + warp;
    u.first = lane;
    u.step = 32;
  } else if (schedule == GJ_BLOCKS) {
    u.unit = round * gridDim.x + blockIdx.x;
    u.first = t;
    u.step = GJ_REDUCE_THREADS;
  } else {
    u.unit = (round * gridDim.x + blockIdx.x) * 32 + lane;
    u.first = warp;
    u.step = GJ_REDUCE_WARPS;
  }
  u.valid = u.unit < units;
  return u;
}

// How many turns each block takes: every block the same count, so that barriers stay uniform.
GJ_DEVICE gj_i64 gjRounds(int schedule, gj_i64 units) {
  const gj_i64 perTurn = (gj_i64)gridDim.x * (schedule == GJ_WARPS ? GJ_REDUCE_WARPS : schedule == GJ_BLOCKS ? 1 : 32);
  return (units + perTurn - 1) / perTurn;
}

// A warp's fold of v, every lane getting it.
template <typename T>
GJ_DEVICE T gjWarpFold(int max, T v) {
  for (int o = 16; o > 0; o >>= 1) v = gjFold(max, v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// The fold of a unit's threads' partial folds v, every thread of the unit getting it; `folds` is the
// block's shared scratch of GJ_REDUCE_THREADS doubles.
template <typename A>
GJ_DEVICE double gjUnitFold(int schedule, int max, double v, A& folds) {
  const unsigned t = threadIdx.x, lane = t % 32, warp = t / 32;
  if (schedule == GJ_WARPS) return gjWarpFold(max, v);
  if (schedule == GJ_BLOCKS) {
    v = gjWarpFold(max, v);
    if (lane == 0) folds[warp] = v;
    __syncthreads();
    v = folds[0];
    for (unsigned w = 1; w < GJ_REDUCE_WARPS; ++w) v = gjFold(max, v, folds[w]);
    __syncthreads();
    return v;
  }
  folds[t] = v;
  __syncthreads();
  v = folds[lane];
  for (unsigned w = 1; w < GJ_REDUCE_WARPS; ++w) v = gjFold(max, v, folds[w * 32 + lane]);
  __syncthreads();
  return v;
}

// gj_reduce: sums, means and maxima (GjSumArgs).
GJ_KERNEL void gj_reduce(GjSumArgs p) {
  GJ_SHARED(double, folds, GJ_REDUCE_THREADS);
  const double zero = 0.0, init = p.max ? -1.0 / zero : 0.0;
  const gj_i64 kept = p.kept.numel, units = kept * p.splits, n = p.reduced.numel;
  const gj_i64 rounds = gjRounds(p.schedule, units);
  for (gj_i64 round = 0; round < rounds; ++round) {
    const GjUnit u = gjUnitOf(p.schedule, round, units);
    // the unit's output and run of its elements: o * splits + s, or s * kept + o for GJ_COLUMNS
    const gj_i64 o = p.schedule == GJ_COLUMNS ? u.unit % kept : u.unit / p.splits;
    const gj_i64 s = p.schedule == GJ_COLUMNS ? u.unit / kept : u.unit % p.splits;
    double acc = init;
    if (u.valid) {
      const gj_i64 base = gjOffset(o, p.kept, p.skept), begin = s * p.chunk;
      const gj_i64 end = begin + p.chunk < n ? begin + p.chunk : n, step = u.step;
#define GJ_SUM_AT(r) gjSumLoad(p, base + gjOffset((r), p.reduced, p.sreduced))
      // Four folds side by side keep four loads in flight.
      double a0 = init, a1 = init, a2 = init, a3 = init;
      gj_i64 r = begin + u.first;
      for (; r + 3 * step < end; r += 4 * step) {
        a0 = gjFold(p.max, a0, GJ_SUM_AT(r));
        a1 = gjFold(p.max, a1, GJ_SUM_AT(r + step));
        a2 = gjFold(p.max, a2, GJ_SUM_AT(r + 2 * step));
        a3 = gjFold(p.max, a3, GJ_SUM_AT(r + 3 * step));
      }
      for (; r < end; r += step) a0 = gjFold(p.max, a0, GJ_SUM_AT(r));
#undef GJ_SUM_AT
      acc = gjFold(p.max, gjFold(p.max, a0, a1), gjFold(p.max, a2, a3));
    }
    acc = gjUnitFold(p.schedule, p.max, acc, folds);
    if (u.valid && u.first == 0) {
      if (n == 0 && p.max) acc = zero / zero;  // the maximum of nothing is NaN
      if (p.splits > 1) ((double*)p.out)[u.unit] = acc;
      else gjStore(p.out, p.outType, o, p.max ? acc : acc * p.scale);
    }
  }
}

// Whether (b, ib) is a row's pick over (a, ia): the first NaN, else the largest (smallest with `min`), the
// first on a tie; an index below 0 is no element. A choice of the whole set, whatever order it is asked in.
GJ_DEVICE bool gjTakes(int min, double a, gj_i64 ia, double b, gj_i64 ib) {
  if (ib < 0) return false;
  if (ia < 0) return true;
  const bool na = a != a, nb = b != b;
  if (na || nb) return nb && (!na || ib < ia);
  if (a != b) return min ? b < a : b > a;
  return ib < ia;
}

GJ_KERNEL void gj_extreme_rows(GjRowsArgs p) {
  GJ_SHARED(double, values, GJ_REDUCE_THREADS);
  GJ_SHARED(gj_i64, indices, GJ_REDUCE_THREADS);
  const gj_i64 rounds = gjRounds(p.schedule, p.rows);
  for (gj_i64 round = 0; round < rounds; ++round) {
    const GjUnit u = gjUnitOf(p.schedule, round, p.rows);
    double v = 0.0;
    gj_i64 best = -1;
    for (gj_i64 j = u.first; u.valid && j < p.n; j += u.step) {
      const double x = gjLoad(p.in, p.type, u.unit * p.n + j);
      if (gjTakes(p.min, v, best, x, j)) v = x, best = j;
    }
    for (int o = 16; o > 0; o >>= 1) {
      const double w = __shfl_xor_sync(0xffffffffu, v, o);
      const gj_i64 iw = __shfl_xor_sync(0xffffffffu, best, o);
      if (gjTakes(p.min, v, best, w, iw)) v = w, best = iw;
    }
    if (p.schedule == GJ_BLOCKS) {
      const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
      if (lane == 0) values[warp] = v, indices[warp] = best;
      __syncthreads();
      v = values[0];
      best = indices[0];
      for (unsigned w = 1; w < GJ_REDUCE_WARPS; ++w)
        if (gjTakes(p.min, v, best, values[w], indices[w])) v = values[w], best = indices[w];
      __syncthreads();
    }
    if (u.valid && u.first == 0) {
      gjStore(p.values, p.type, u.unit, v);
      p.indices[u.unit] = best;
    }
  }
}

// A row that a warp folds (GJ_WARPS, inner 1: contiguous), held in registers: each lane loads its up to
// K elements (lane, lane + 32, ...) all at once, so that a warp keeps K loads in flight, and the row is
// read from memory once, not once a pass. The forward computes in T (each exponential once); the
// gradient in double.
template <typename T, int K>
GJ_DEVICE void gjSoftmaxWarpRow(const GjSoftmaxArgs& p, gj_i64 row, bool valid) {
  const int lane = threadIdx.x % 32, n = valid ? (int)p.n : 0;
  const T* in = (const T*)p.in + row * p.n;
  T* out = (T*)p.out + row * p.n;
  const T zero = 0, inf = (T)1 / zero;
  // Past the row's end: what leaves the folds unchanged (-inf for the maximum, 0 for the gradient's sum).
  const T none = p.backward ? zero : -inf;
  T x[K];
  GJ_UNROLL
  for (int k = 0; k < K; ++k) x[k] = k * 32 + lane < n ? in[k * 32 + lane] : none;
  if (!p.backward) {
    T m = -inf;
    GJ_UNROLL
    for (int k = 0; k < K; ++k) m = gjFold(1, m, x[k]);
    m = gjWarpFold(1, m);
    const T shift = m == -inf ? zero : m;  // a row of -inf: keep exp finite
    T s = 0;
    GJ_UNROLL
    for (int k = 0; k < K; ++k) {
      x[k] -= shift;
      const T e = k * 32 + lane < n ? gjExp(x[k]) : zero;
      s += e;
      if (!p.log) x[k] = e;
    }
    s = gjWarpFold(0, s);
    const T lse = gjLog(s), scale = (T)1 / s;
    GJ_UNROLL
    for (int k = 0; k < K; ++k)
      if (k * 32 + lane < n) out[k * 32 + lane] = p.log ? x[k] - lse : x[k] * scale;
    return;
  }
  const T* yin = (const T*)p.y + row * p.n;
  T y[K];
  GJ_UNROLL
  for (int k = 0; k < K; ++k) y[k] = k * 32 + lane < n ? yin[k * 32 + lane] : zero;
  double d = 0.0;
  GJ_UNROLL
  for (int k = 0; k < K; ++k) d += p.log ? (double)x[k] : (double)x[k] * (double)y[k];
  d = gjWarpFold(0, d);
  GJ_UNROLL
  for (int k = 0; k < K; ++k)
    if (k * 32 + lane < n) {
      const double g = x[k], yk = y[k];
      out[k * 32 + lane] = (T)(p.log ? g - exp(yk) * d : yk * (g - d));
    }
}

// The rows of a GJ_WARPS launch over contiguous rows, K elements a lane.
template <typename T, int K>
GJ_DEVICE void gjSoftmaxWarpRows(const GjSoftmaxArgs& p) {
  const gj_i64 rounds = gjRounds(GJ_WARPS, p.outer);
  for (gj_i64 round = 0; round < rounds; ++round) {
    const GjUnit u = gjUnitOf(GJ_WARPS, round, p.outer);
    gjSoftmaxWarpRow<T, K>(p, u.unit, u.valid);
  }
}

// gj_softmax_rows{4,32}_f{32,64} (GjSoftmaxArgs): contiguous rows (inner 1) of up to 4 x 32 or 32 x 32
// elements, a warp each, in registers; entries of their own, so that the registers each takes do not
// lower the occupancy of another (nor of gj_softmax's other schedules).
#define GJ_SOFTMAX_ROWS(entry, T, K) \
  GJ_KERNEL void entry(GjSoftmaxArgs p) { gjSoftmaxWarpRows<T, K>(p); }
GJ_SOFTMAX_ROWS(gj_softmax_rows4_f32, float, GJ_SOFTMAX_LANE_FEW)
GJ_SOFTMAX_ROWS(gj_softmax_rows32_f32, float, GJ_SOFTMAX_LANE_MOST)
GJ_SOFTMAX_ROWS(gj_softmax_rows4_f64, double, GJ_SOFTMAX_LANE_FEW)
GJ_SOFTMAX_ROWS(gj_softmax_rows32_f64, double, GJ_SOFTMAX_LANE_MOST)
#undef GJ_SOFTMAX_ROWS

// gj_softmax (GjSoftmaxArgs): rows of x viewed [outer, n, inner], under any schedule.
GJ_KERNEL void gj_softmax(GjSoftmaxArgs p) {
  GJ_SHARED(double, folds, GJ_REDUCE_THREADS);
  const gj_i64 units = p.outer * p.inner, rounds = gjRounds(p.schedule, units);
  const double zero = 0.0;
  for (gj_i64 round = 0; round < rounds; ++round) {
    const GjUnit u = gjUnitOf(p.schedule, round, units);
    const gj_i64 n = u.valid ? p.n : 0, base = (u.unit / p.inner) * p.n * p.inner + u.unit % p.inner;
#define GJ_AT(j) (base + (j) * p.inner)
    if (!p.backward) {
      double m = -1.0 / zero;
      for (gj_i64 j = u.first; j < n; j += u.step) m = gjFold(1, m, gjLoad(p.in, p.type, GJ_AT(j)));
      m = gjUnitFold(p.schedule, 1, m, folds);
      const double shift = m == -1.0 / zero ? 0.0 : m;  // a row of -inf: keep exp finite
      double s = 0.0;
      for (gj_i64 j = u.first; j < n; j += u.step) s += exp(gjLoad(p.in, p.type, GJ_AT(j)) - shift);
      s = gjUnitFold(p.schedule, 0, s, folds);
      const double lse = log(s);
      for (gj_i64 j = u.first; j < n; j += u.step) {
        const double z = gjLoad(p.in, p.type, GJ_AT(j)) - shift;
        gjStore(p.out, p.type, GJ_AT(j), p.log ? z - lse : exp(z - lse));
      }
    } else {
      double d = 0.0;
      for (gj_i64 j = u.first; j < n; j += u.step) {
        const double g = gjLoad(p.in, p.type, GJ_AT(j));
        d += p.log ? g : g * gjLoad(p.y, p.type, GJ_AT(j));
      }
      d = gjUnitFold(p.schedule, 0, d, folds);
      for (gj_i64 j = u.first; j < n; j += u.step) {
        const double g = gjLoad(p.in, p.type, GJ_AT(j)), y = gjLoad(p.y, p.type, GJ_AT(j));
        gjStore(p.out, p.type, GJ_AT(j), p.log ? g - exp(y) * d : y * (g - d));
      }
    }
#undef GJ_AT
  }
}
