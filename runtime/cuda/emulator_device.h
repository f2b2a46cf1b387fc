// The device side of the emulated CUDA driver: CUDA C's names for a kernel built for the host. Thread
// indices, __syncthreads, __syncwarp and the warp intrinsics, __shared__ memory, atomics, __threadfence
// and a cooperative grid's sync all call the emulator's scheduler (emulator_scheduler.cpp) through one
// table, GjEmuApi, which runs a block's threads as fibers and checks what a GPU would leave undefined: a
// race on shared memory between two barriers, a barrier some threads skip, a warp operation whose mask
// leaves out a lane that takes part, a shared access out of bounds or of memory no thread has written.
//
// Plain C++17 with no header of graphjit's, used two ways:
//   - emulator.cpp includes it ahead of kernels.cuh, whose kernels it then compiles for the host;
//   - emulator_jit.cpp puts its text in front of every module it builds for the host (a shared library
//     that gets the table when it is loaded), after rewriting the module's __shared__ declarations into
//     the checked arrays below (GJ_EMU_SHARED and friends).
// Shared memory is reached only through those arrays: an element is a proxy (GjEmuSharedRef) that reports
// each read and write. The line of each access is the caller's (__builtin_LINE()), the kernel source's.
#ifndef GJ_CUDA_EMULATOR_DEVICE_TYPES
#define GJ_CUDA_EMULATOR_DEVICE_TYPES

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

struct GjEmuDim3 {
  unsigned x, y, z;
};

/// What a GPU thread reads of its launch.
struct GjEmuThread {
  GjEmuDim3 threadIdx, blockIdx, blockDim, gridDim;
};

/// The warp operations: shuffles (their `arg` a lane, a delta or a lane mask), votes and __syncwarp.
enum GjEmuWarpOp {
  GJ_EMU_SHFL_IDX,
  GJ_EMU_SHFL_UP,
  GJ_EMU_SHFL_DOWN,
  GJ_EMU_SHFL_XOR,
  GJ_EMU_BALLOT,
  GJ_EMU_ANY,
  GJ_EMU_ALL,
  GJ_EMU_SYNCWARP,
  GJ_EMU_ACTIVEMASK,
};

/// How a kernel touches shared memory.
enum GjEmuAccess { GJ_EMU_READ, GJ_EMU_WRITE, GJ_EMU_ATOMIC };

/// The scheduler's entry points. `line` is the kernel source's line of the call.
struct GjEmuApi {
  GjEmuThread* (*self)();
  void (*syncthreads)(int line);
  void (*gridSync)(int line);
  /// A warp operation by this lane over the lanes of `mask`: its value (a shuffle's bits, a vote's
  /// predicate), once every lane of the mask has reached it.
  unsigned long long (*warp)(int op, unsigned mask, unsigned long long bits, int arg, int width, int line);
  /// The lanes of this warp that reach this __activemask with it (those that have not left for elsewhere).
  unsigned (*activemask)(int line);
  /// The storage of the __shared__ declaration `name` at `line` in this thread's block: `count` elements
  /// of `size` bytes, or for an extern declaration (count 0) the launch's dynamic shared memory, whose
  /// element count it writes back. The same storage for every thread of the block.
  void* (*shared)(const char* name, int line, size_t size, size_t* count, int isExtern);
  /// A read, write or atomic update of `size` bytes at `at` in shared memory: element `index` of `name`.
  void (*access)(const void* at, size_t size, int kind, const char* name, long long index, int line);
  /// An error in the kernel (an index out of bounds): the launch fails with `what`.
  void (*fail)(const char* what, int line);
};

#endif  // GJ_CUDA_EMULATOR_DEVICE_TYPES

// The scheduler's own sources take the types alone (GJ_EMU_TYPES_ONLY): the names below are macros.
#if !defined(GJ_EMU_TYPES_ONLY) && !defined(GJ_CUDA_EMULATOR_DEVICE_NAMES)
#define GJ_CUDA_EMULATOR_DEVICE_NAMES

namespace {
const GjEmuApi* gjEmuApi = nullptr;  // set by the emulator (or a module's gj_emu_bind) before any launch
}  // namespace

#define threadIdx (gjEmuApi->self()->threadIdx)
#define blockIdx (gjEmuApi->self()->blockIdx)
#define blockDim (gjEmuApi->self()->blockDim)
#define gridDim (gjEmuApi->self()->gridDim)
#define warpSize 32
#define __syncthreads() gjEmuApi->syncthreads(__LINE__)

inline void __syncwarp(unsigned mask = 0xffffffffu, int line = __builtin_LINE()) {
  gjEmuApi->warp(GJ_EMU_SYNCWARP, mask, 0, 0, 32, line);
}
// The host's monotonic clock in nanoseconds stands in for the multiprocessor's cycle counter.
inline long long clock64() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}
inline void __threadfence(int = __builtin_LINE()) {}
inline void __threadfence_block(int = __builtin_LINE()) {}
inline unsigned __activemask(int line = __builtin_LINE()) { return gjEmuApi->activemask(line); }

template <typename T>
inline unsigned long long gjEmuBits(T v) {
  static_assert(sizeof(T) <= 8, "a shuffle moves at most 8 bytes");
  unsigned long long b = 0;
  memcpy(&b, &v, sizeof v);
  return b;
}
template <typename T>
inline T gjEmuFromBits(unsigned long long b) {
  T v;
  memcpy(&v, &b, sizeof v);
  return v;
}

template <typename T>
inline T __shfl_sync(unsigned mask, T var, int srcLane, int width = 32, int line = __builtin_LINE()) {
  return gjEmuFromBits<T>(gjEmuApi->warp(GJ_EMU_SHFL_IDX, mask, gjEmuBits(var), srcLane, width, line));
}
template <typename T>
inline T __shfl_up_sync(unsigned mask, T var, unsigned delta, int width = 32, int line = __builtin_LINE()) {
  return gjEmuFromBits<T>(gjEmuApi->warp(GJ_EMU_SHFL_UP, mask, gjEmuBits(var), (int)delta, width, line));
}
template <typename T>
inline T __shfl_down_sync(unsigned mask, T var, unsigned delta, int width = 32, int line = __builtin_LINE()) {
  return gjEmuFromBits<T>(gjEmuApi->warp(GJ_EMU_SHFL_DOWN, mask, gjEmuBits(var), (int)delta, width, line));
}
template <typename T>
inline T __shfl_xor_sync(unsigned mask, T var, int laneMask, int width = 32, int line = __builtin_LINE()) {
  return gjEmuFromBits<T>(gjEmuApi->warp(GJ_EMU_SHFL_XOR, mask, gjEmuBits(var), laneMask, width, line));
}
inline unsigned __ballot_sync(unsigned mask, int predicate, int line = __builtin_LINE()) {
  return (unsigned)gjEmuApi->warp(GJ_EMU_BALLOT, mask, predicate != 0, 0, 32, line);
}
inline int __any_sync(unsigned mask, int predicate, int line = __builtin_LINE()) {
  return (int)gjEmuApi->warp(GJ_EMU_ANY, mask, predicate != 0, 0, 32, line);
}
inline int __all_sync(unsigned mask, int predicate, int line = __builtin_LINE()) {
  return (int)gjEmuApi->warp(GJ_EMU_ALL, mask, predicate != 0, 0, 32, line);
}

// cooperative_groups: a cooperative launch's grid-wide barrier, and the block's.
namespace cooperative_groups {
struct grid_group {
  void sync(int line = __builtin_LINE()) const { gjEmuApi->gridSync(line); }
};
struct thread_block {
  void sync(int line = __builtin_LINE()) const { gjEmuApi->syncthreads(line); }
};
inline grid_group this_grid() { return {}; }
inline thread_block this_thread_block() { return {}; }
}  // namespace cooperative_groups

// ---- shared memory: checked arrays ----

/// Where a shared element lives: its storage and the name and index it is reported by.
template <typename T>
struct GjEmuSharedPtr {
  T* at;
  const char* name;
  long long index;
  int line;
};

/// An index into a shared array, with the line of the expression that indexes (an implicit conversion
/// takes its default argument where it happens: at the caller's `a[i]`).
struct GjEmuIndex {
  long long i;
  int line;
  template <typename I>
  GjEmuIndex(I index, int at = __builtin_LINE()) : i((long long)index), line(at) {}
};

/// One element of a shared array: every read and write is reported to the scheduler first.
template <typename T>
struct GjEmuSharedRef {
  T* at;
  const char* name;
  long long index;
  int line;

  T load() const {
    gjEmuApi->access(at, sizeof(T), GJ_EMU_READ, name, index, line);
    return *at;
  }
  void store(T v) const {
    gjEmuApi->access(at, sizeof(T), GJ_EMU_WRITE, name, index, line);
    *at = v;
  }
  operator T() const { return load(); }
  const GjEmuSharedRef& operator=(T v) const {
    store(v);
    return *this;
  }
  const GjEmuSharedRef& operator=(const GjEmuSharedRef& o) const {
    store(o.load());
    return *this;
  }
#define GJ_EMU_COMPOUND(op)                         \
  template <typename U>                             \
  const GjEmuSharedRef& operator op##=(U v) const { \
    store(static_cast<T>(load() op v));             \
    return *this;                                   \
  }
  GJ_EMU_COMPOUND(+)
  GJ_EMU_COMPOUND(-)
  GJ_EMU_COMPOUND(*)
  GJ_EMU_COMPOUND(/)
  GJ_EMU_COMPOUND(|)
  GJ_EMU_COMPOUND(&)
  GJ_EMU_COMPOUND(^)
#undef GJ_EMU_COMPOUND
  GjEmuSharedPtr<T> operator&() const { return {at, name, index, line}; }
};

/// A __shared__ array of one dimension (an extern one sized by the launch).
template <typename T>
struct GjEmuSharedArray {
  T* base;
  size_t count;
  const char* name;
  GjEmuSharedArray(const char* n, int line, size_t elements, bool isExtern) : count(elements), name(n) {
    base = static_cast<T*>(gjEmuApi->shared(n, line, sizeof(T), &count, isExtern));
  }
  GjEmuSharedRef<T> operator[](GjEmuIndex x) const {
    if (x.i < 0 || (size_t)x.i >= count) fail(x.i, x.line);
    return {base + x.i, name, x.i, x.line};
  }
  void fail(long long i, int line) const {
    char what[160];
    snprintf(what, sizeof what, "shared array '%s' indexed at %lld, outside its %zu elements", name, i, count);
    gjEmuApi->fail(what, line);
  }
};

/// A __shared__ array of two dimensions, [rows][N].
template <typename T, size_t N>
struct GjEmuSharedArray2 {
  GjEmuSharedArray<T> flat;
  GjEmuSharedArray2(const char* n, int line, size_t rows) : flat(n, line, rows * N, false) {}
  struct Row {
    const GjEmuSharedArray<T>* a;
    long long row;
    GjEmuSharedRef<T> operator[](GjEmuIndex x) const {
      if (x.i < 0 || (size_t)x.i >= N) a->fail(row * (long long)N + x.i, x.line);
      return (*a)[GjEmuIndex(row * (long long)N + x.i, x.line)];
    }
  };
  Row operator[](GjEmuIndex x) const {
    if (x.i < 0 || (size_t)x.i * N >= flat.count) flat.fail(x.i * (long long)N, x.line);
    return {&flat, x.i};
  }
};

/// A __shared__ variable (its accesses reported at its declaration's line).
template <typename T>
struct GjEmuSharedScalar {
  GjEmuSharedArray<T> one;
  int line;
  GjEmuSharedScalar(const char* n, int at) : one(n, at, 1, false), line(at) {}
  operator T() const { return one[GjEmuIndex(0, line)].load(); }
  const GjEmuSharedScalar& operator=(T v) const {
    one[GjEmuIndex(0, line)].store(v);
    return *this;
  }
  GjEmuSharedPtr<T> operator&() const { return {one.base, one.name, 0, line}; }
};

#define GJ_EMU_SHARED(T, name, count) const GjEmuSharedArray<T> name(#name, __LINE__, (count), false)
#define GJ_EMU_SHARED2(T, name, rows, cols) const GjEmuSharedArray2<T, (cols)> name(#name, __LINE__, (rows))
#define GJ_EMU_SHARED_SCALAR(T, name) const GjEmuSharedScalar<T> name(#name, __LINE__)
#define GJ_EMU_EXTERN_SHARED(T, name) const GjEmuSharedArray<T> name(#name, __LINE__, 0, true)

// ---- atomics: the scheduler switches threads only at barriers and warp operations, so a plain update
// is atomic; one on shared memory is reported as such (atomics do not race with one another) ----

#define GJ_EMU_ATOMIC(fn, expr)                                                             \
  template <typename T, typename U>                                                         \
  inline T fn(T* at, U v) {                                                               \
    const T old = *at;                                                                      \
    *at = (expr);                                                                           \
    return old;                                                                             \
  }                                                                                         \
  template <typename T, typename U>                                                         \
  inline T fn(GjEmuSharedPtr<T> p, U v) {                                                 \
    gjEmuApi->access(p.at, sizeof(T), GJ_EMU_ATOMIC, p.name, p.index, p.line);              \
    T* at = p.at;                                                                           \
    const T old = *at;                                                                      \
    *at = (expr);                                                                           \
    return old;                                                                             \
  }
GJ_EMU_ATOMIC(atomicAdd, static_cast<T>(old + v))
GJ_EMU_ATOMIC(atomicSub, static_cast<T>(old - v))
GJ_EMU_ATOMIC(atomicExch, static_cast<T>(v))
GJ_EMU_ATOMIC(atomicMax, old < static_cast<T>(v) ? static_cast<T>(v) : old)
GJ_EMU_ATOMIC(atomicMin, static_cast<T>(v) < old ? static_cast<T>(v) : old)
GJ_EMU_ATOMIC(atomicOr, static_cast<T>(old | v))
GJ_EMU_ATOMIC(atomicAnd, static_cast<T>(old & v))
#undef GJ_EMU_ATOMIC

template <typename T>
inline T atomicCAS(T* at, T compare, T v) {
  const T old = *at;
  if (old == compare) *at = v;
  return old;
}

#endif  // GJ_CUDA_EMULATOR_DEVICE_NAMES
