// The emulated driver's scheduler: block semantics for kernels built for the host (emulator_scheduler.h).
#include "runtime/cuda/emulator_scheduler.h"

#include "runtime/cuda/emulator_block.h"

#include <boost/context/pooled_fixedsize_stack.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#if defined(GJ_EMU_ASAN)
#include <sanitizer/common_interface_defs.h>
#endif

namespace gj::cuda::detail {
namespace {

using namespace emu;

// A stack from a pool, whose bounds the thread keeps for AddressSanitizer's fiber switches.
struct ThreadStack {
  ctx::pooled_fixedsize_stack* pool;
  Thread* thread;
  ctx::stack_context allocate() {
    ctx::stack_context s = pool->allocate();
#ifdef GJ_EMU_ASAN
    thread->stackBottom = static_cast<char*>(s.sp) - s.size;
    thread->stackSize = s.size;
#endif
    return s;
  }
  void deallocate(ctx::stack_context& s) noexcept { pool->deallocate(s); }
};

ctx::pooled_fixedsize_stack& stackPool() {
  thread_local ctx::pooled_fixedsize_stack pool(kStackBytes);
  return pool;
}

class Run;
thread_local Run* tRun = nullptr;
thread_local Thread* tSelf = nullptr;

class Run {
 public:
  explicit Run(const EmulatedLaunch& l) : l_(l) {}

  std::string go() {
    tRun = this;
    const unsigned perBlock = l_.block.x * l_.block.y * l_.block.z;
    const unsigned blocks = l_.grid.x * l_.grid.y * l_.grid.z;
    if (!l_.fibers) {
      sequential(blocks, perBlock);
    } else if (l_.cooperative) {
      withFibers(0, blocks, perBlock);
    } else {
      for (unsigned b = 0; b < blocks && error_.empty(); ++b) withFibers(b, 1, perBlock);
    }
    tRun = nullptr;
    tSelf = nullptr;
    return error_;
  }

  // ---- the table's entry points, for the thread running now ----

  void syncthreads(int line) { wait(State::Barrier, line, "__syncthreads"); }

  void gridSync(int line) {
    if (!l_.cooperative)
      fail(fmt::format("{} calls this_grid().sync() at line {} in a launch that is not cooperative (grid-wide "
                       "barriers need cuLaunchCooperativeKernel)", who(self()), line));
    wait(State::GridSync, line, "this_grid().sync()");
  }

  unsigned long long warpOp(int op, unsigned mask, unsigned long long bits, int arg, int width, int line) {
    Thread& t = self();
    if (!(mask >> t.lane & 1u))
      fail(fmt::format("{} calls {} at line {} with mask {:#010x}, which leaves out its own lane {}", who(t),
                       warpOpName(op), line, mask, t.lane));
    if (width < 1 || width > 32 || (width & (width - 1)))
      fail(fmt::format("{} calls {} at line {} with width {}, not a power of 2 up to 32", who(t), warpOpName(op),
                       line, width));
    const unsigned lanes = lanesOf(*t.block, t.warp);
    if (lanes < 32 && (mask >> lanes))
      fail(fmt::format("{} calls {} at line {} with mask {:#010x}, which names lanes its warp does not have (it has "
                       "{})", who(t), warpOpName(op), line, mask, lanes));
    t.op = op, t.mask = mask, t.bits = bits, t.arg = arg, t.width = width;
    wait(State::Warp, line, warpOpName(op));
    return t.result;
  }

  // The lanes that run converged are, here, those that wait at the same __activemask once none can run.
  unsigned activemask(int line) {
    Thread& t = self();
    t.op = GJ_EMU_ACTIVEMASK;
    t.mask = 0;
    wait(State::Warp, line, "__activemask");
    return static_cast<unsigned>(t.result);
  }

  void* shared(const char* name, int line, size_t size, size_t* count, int isExtern) {
    Block& b = *self().block;
    if (b.arena.empty()) {
      b.arena.assign(kStaticSharedLimit + l_.sharedBytes, 0xff);
      b.words.assign(b.arena.size() / 4, Word{});
    }
    auto it = std::find_if(b.decls.begin(), b.decls.end(), [&](const Decl& d) { return d.name == name && d.line == line; });
    if (it == b.decls.end()) {
      Decl d{name, line, kStaticSharedLimit, l_.sharedBytes};
      if (!isExtern) {
        d.offset = (b.staticUsed + 15) / 16 * 16;
        d.bytes = *count * size;
        if (d.offset + d.bytes > kStaticSharedLimit)
          fail(fmt::format("kernel {} declares more than {} bytes of static shared memory ('{}' at line {} ends at "
                           "byte {})", l_.kernel, kStaticSharedLimit, name, line, d.offset + d.bytes));
        b.staticUsed = d.offset + d.bytes;
      }
      b.decls.push_back(d);
      it = b.decls.end() - 1;
    }
    if (isExtern) *count = it->bytes / size;
    return b.arena.data() + it->offset;
  }

  void access(const void* at, size_t size, int kind, const char* name, long long index, int line) {
    Thread& t = self();
    Block& b = *t.block;
    const size_t offset = static_cast<const unsigned char*>(at) - b.arena.data();
    auto element = [&] { return fmt::format("{}[{}]", name, index); };
    for (size_t w = offset / 4; w < (offset + size + 3) / 4; ++w) {
      Word& word = b.words[w];
      if (kind != GJ_EMU_WRITE && word.writer < 0 && b.unwrittenRead.empty())
        b.unwrittenRead = fmt::format("{} reads {} at line {}, which no thread of its block has written", who(t),
                                      element(), line);
      if (word.writer >= 0 && word.writer != static_cast<int>(t.tid) &&
          !(kind == GJ_EMU_ATOMIC && word.atomic) && !ordered(b, word.writer, word.writeEpoch, word.writeWarpEpoch, t))
        race(t, kind == GJ_EMU_READ ? "reads" : "writes", element(), line, word.writer, "wrote", word.writeLine);
      if (kind == GJ_EMU_READ) {
        addReader(b, word, t, line);
        continue;
      }
      for (int r = 0; r < 2; ++r)
        if (word.reader[r] >= 0 && word.reader[r] != static_cast<int>(t.tid) &&
            !ordered(b, word.reader[r], word.readEpoch[r], word.readWarpEpoch[r], t))
          race(t, "writes", element(), line, word.reader[r], "read", word.readLine[r]);
      word = Word{static_cast<int>(t.tid), b.epoch, b.warpEpoch[t.warp], line, kind == GJ_EMU_ATOMIC};
    }
  }

  [[noreturn]] void fail(std::string what) { throw KernelError{std::move(what)}; }

  std::string kernelError(const std::string& what, int line) {
    return fmt::format("{} at line {}: {}", who(self()), line, what);
  }

  Thread& self() { return *tSelf; }

 private:
  // Whether an access by `t` now is ordered after one by thread `tid` in the interval (epoch, warpEpoch):
  // a barrier since, or a __syncwarp when both are of one warp.
  bool ordered(const Block& b, int tid, unsigned epoch, unsigned warpEpoch, const Thread& t) const {
    if (epoch != b.epoch) return true;
    return static_cast<unsigned>(tid) / 32 == t.warp && warpEpoch != b.warpEpoch[t.warp];
  }

  void addReader(const Block& b, Word& w, const Thread& t, int line) {
    for (int r = 0; r < 2; ++r) {
      if (w.reader[r] == static_cast<int>(t.tid) || w.reader[r] < 0 ||
          ordered(b, w.reader[r], w.readEpoch[r], w.readWarpEpoch[r], t)) {
        w.reader[r] = static_cast<int>(t.tid);
        w.readEpoch[r] = b.epoch;
        w.readWarpEpoch[r] = b.warpEpoch[t.warp];
        w.readLine[r] = line;
        return;
      }
    }
  }

  [[noreturn]] void race(const Thread& t, const char* does, const std::string& element, int line, int other,
                         const char* did, int otherLine) {
    const Thread& o = t.block->threads[other];
    const bool oneWarp = o.warp == t.warp;
    fail(fmt::format("a race on shared memory: {} {} {} at line {}, which {} {} at line {}, and no {} separates them",
                     who(t), does, element, line, who(o), did, otherLine,
                     oneWarp ? "__syncthreads or __syncwarp" : "__syncthreads"));
  }

  static unsigned lanesOf(const Block& b, unsigned warp) { return std::min(32u, b.count - warp * 32); }

  // The threads of `blocks` blocks from `firstBlock` on (reusing the vectors of the last call's).
  void initThreads(unsigned firstBlock, unsigned blocks, unsigned perBlock) {
    const size_t n = static_cast<size_t>(blocks) * perBlock;
    if (threads_.size() != n) threads_ = std::vector<Thread>(n);
    if (blocks_.size() != blocks) blocks_ = std::vector<Block>(blocks);
    for (unsigned i = 0; i < blocks; ++i) {
      Block& b = blocks_[i];
      const unsigned linear = firstBlock + i;
      b.idx = {linear % l_.grid.x, linear / l_.grid.x % l_.grid.y, linear / (l_.grid.x * l_.grid.y)};
      b.threads = threads_.data() + static_cast<size_t>(i) * perBlock;
      b.count = perBlock;
      b.epoch = 0;
      b.warpEpoch.assign((perBlock + 31) / 32, 0);
      b.unwrittenRead.clear();
      if (!b.decls.empty()) {  // a new block's shared memory: nothing written yet
        b.decls.clear();
        b.staticUsed = 0;
        std::fill(b.arena.begin(), b.arena.end(), 0xff);
        std::fill(b.words.begin(), b.words.end(), Word{});
      }
      for (unsigned tid = 0; tid < perBlock; ++tid) {
        Thread& t = b.threads[tid];
        t.block = &b;
        t.tid = tid;
        t.warp = tid / 32;
        t.lane = tid % 32;
        t.state = State::Runnable;
        t.pub = {{tid % l_.block.x, tid / l_.block.x % l_.block.y, tid / (l_.block.x * l_.block.y)}, b.idx, l_.block,
                 l_.grid};
      }
    }
  }

  // One thread after another, on this stack: a kernel that never waits for another thread.
  void sequential(unsigned blocks, unsigned perBlock) {
    for (unsigned b = 0; b < blocks && error_.empty(); ++b) {
      initThreads(b, 1, perBlock);
      for (unsigned tid = 0; tid < perBlock && error_.empty(); ++tid) {
        tSelf = &blocks_[0].threads[tid];
        try {
          l_.thread(l_.context);
        } catch (const KernelError& e) {
          error_ = e.what;
        }
      }
      unwrittenReads();
    }
  }

  // The end of an interval between barriers: a read of memory no thread wrote is an error now.
  bool unwrittenReads() {
    for (const Block& b : blocks_)
      if (error_.empty() && !b.unwrittenRead.empty()) error_ = b.unwrittenRead;
    return !error_.empty();
  }

  void withFibers(unsigned firstBlock, unsigned blocks, unsigned perBlock) {
    initThreads(firstBlock, blocks, perBlock);
    for (Thread& t : threads_)
      t.fiber = ctx::fiber(std::allocator_arg, ThreadStack{&stackPool(), &t}, [this, &t](ctx::fiber&& sink) {
#ifdef GJ_EMU_ASAN
        __sanitizer_finish_switch_fiber(nullptr, &t.schedulerBottom, &t.schedulerSize);
#endif
        t.sink = std::move(sink);
        try {
          if (!aborting_) l_.thread(l_.context);
        } catch (const KernelError& e) {
          if (error_.empty()) error_ = e.what;
        } catch (const Abort&) {
        }
        t.state = State::Done;
#ifdef GJ_EMU_ASAN
        __sanitizer_start_switch_fiber(nullptr, t.schedulerBottom, t.schedulerSize);
#endif
        return std::move(t.sink);
      });
    while (error_.empty()) {
      for (Thread& t : threads_)
        if (t.state == State::Runnable && error_.empty()) resume(t);
      if (!error_.empty()) break;
      if (std::all_of(threads_.begin(), threads_.end(), [](const Thread& t) { return t.state == State::Done; })) {
        unwrittenReads();
        break;
      }
      const bool released = resolveWarps() || (error_.empty() && resolveBarriers()) || (error_.empty() && resolveGridSync());
      if (!released && error_.empty()) error_ = deadlock();
    }
    // A failed launch: every thread not ended throws Abort where it waits (or never starts), and ends.
    aborting_ = true;
    for (Thread& t : threads_)
      if (t.state != State::Done) resume(t);
    aborting_ = false;
  }

  void resume(Thread& t) {
    tSelf = &t;
#ifdef GJ_EMU_ASAN
    void* fake = nullptr;
    __sanitizer_start_switch_fiber(&fake, t.stackBottom, t.stackSize);
#endif
    t.fiber = std::move(t.fiber).resume();
#ifdef GJ_EMU_ASAN
    __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#endif
    tSelf = nullptr;
  }

  // In a thread: marks it waiting and gives the processor back to the scheduler until it is released.
  void wait(State s, int line, const char* what) {
    Thread& t = self();
    if (!l_.fibers)
      fail(fmt::format("{} calls {} at line {}, but kernel {} runs without block semantics (the emulator found no "
                       "barrier or warp operation in its source)", who(t), what, line, l_.kernel));
    t.state = s;
    t.line = line;
#ifdef GJ_EMU_ASAN
    __sanitizer_start_switch_fiber(&t.fakeStack, t.schedulerBottom, t.schedulerSize);
#endif
    t.sink = std::move(t.sink).resume();
#ifdef GJ_EMU_ASAN
    __sanitizer_finish_switch_fiber(t.fakeStack, &t.schedulerBottom, &t.schedulerSize);
#endif
    tSelf = &t;
    if (aborting_) throw Abort{};
  }

  bool sameWarpOp(const Thread& a, const Thread& b) const {
    return b.state == State::Warp && a.op == b.op && a.mask == b.mask && a.width == b.width;
  }

  // Every warp operation whose lanes have all reached it, performed; true if any was.
  bool resolveWarps() {
    bool any = false;
    for (Block& b : blocks_)
      for (unsigned w = 0; w < b.warpEpoch.size(); ++w) {
        Thread* lane = b.threads + w * 32;
        for (unsigned l = 0; l < lanesOf(b, w); ++l) {
          Thread& t = lane[l];
          if (t.state != State::Warp) continue;
          if (t.op == GJ_EMU_ACTIVEMASK) {
            unsigned active = 0;
            for (unsigned m = 0; m < lanesOf(b, w); ++m)
              if (lane[m].state == State::Warp && lane[m].op == GJ_EMU_ACTIVEMASK && lane[m].line == t.line)
                active |= 1u << m;
            for (unsigned m = 0; m < 32; ++m)
              if (active >> m & 1u) lane[m].result = active, lane[m].state = State::Runnable;
            any = true;
            continue;
          }
          bool complete = true;
          for (unsigned m = 0; m < 32 && complete; ++m)
            if (t.mask >> m & 1u) complete = sameWarpOp(t, lane[m]);
          if (!complete) continue;
          perform(b, w, t.op, t.mask);
          any = true;
        }
      }
    return any;
  }

  void perform(Block& b, unsigned w, int op, unsigned mask) {
    Thread* lane = b.threads + w * 32;
    unsigned long long vote = 0;
    for (unsigned m = 0; m < 32; ++m)
      if (mask >> m & 1u && lane[m].bits) vote |= 1ull << m;
    for (unsigned m = 0; m < 32; ++m) {
      if (!(mask >> m & 1u)) continue;
      Thread& t = lane[m];
      const unsigned width = static_cast<unsigned>(t.width), base = m & ~(width - 1), in = m - base;
      unsigned src = m;
      switch (op) {
        case GJ_EMU_SHFL_IDX: src = base + static_cast<unsigned>(t.arg) % width; break;
        case GJ_EMU_SHFL_UP: src = in >= static_cast<unsigned>(t.arg) ? m - t.arg : m; break;
        case GJ_EMU_SHFL_DOWN: src = in + static_cast<unsigned>(t.arg) < width ? m + t.arg : m; break;
        case GJ_EMU_SHFL_XOR: {
          const unsigned x = m ^ static_cast<unsigned>(t.arg);
          src = x < 32 && x / width <= m / width ? x : m;  // a later group's lane gives the own value
          break;
        }
        default: break;
      }
      if (op <= GJ_EMU_SHFL_XOR && !(mask >> src & 1u)) {
        error_ = fmt::format("kernel {}: {} calls {} at line {} with mask {:#010x} and reads lane {}, which the mask "
                             "leaves out", l_.kernel, who(t), warpOpName(op), t.line, mask, src);
        return;
      }
      t.result = op == GJ_EMU_BALLOT ? vote
                 : op == GJ_EMU_ANY  ? vote != 0
                 : op == GJ_EMU_ALL  ? vote == (mask & 0xffffffffull)
                                     : lane[src].bits;
    }
    for (unsigned m = 0; m < 32; ++m)
      if (mask >> m & 1u) lane[m].state = State::Runnable;
    if (op == GJ_EMU_SYNCWARP) ++b.warpEpoch[w];
  }

  // Every block whose live threads all wait at one __syncthreads, released; true if any was.
  bool resolveBarriers() {
    bool any = false;
    for (Block& b : blocks_) {
      const Thread* first = nullptr;
      bool all = true;
      for (unsigned i = 0; i < b.count && all; ++i) {
        const Thread& t = b.threads[i];
        if (t.state == State::Done) continue;
        all = t.state == State::Barrier;
        if (all && !first) first = &t;
        if (all && t.line != first->line) {
          error_ = fmt::format("kernel {}: divergent __syncthreads: {} waits at line {}, {} at line {}", l_.kernel,
                               who(*first), first->line, who(t), t.line);
          return false;
        }
      }
      if (!all || !first) continue;
      if (std::any_of(b.threads, b.threads + b.count, [](const Thread& t) { return t.state == State::Done; })) {
        const Thread* gone = std::find_if(b.threads, b.threads + b.count, [](const Thread& t) { return t.state == State::Done; });
        error_ = fmt::format("kernel {}: a barrier some threads skip: {} waits at __syncthreads at line {}, but {} "
                             "ended without reaching it", l_.kernel, who(*first), first->line, who(*gone));
        return false;
      }
      if (!b.unwrittenRead.empty()) {
        error_ = b.unwrittenRead;
        return false;
      }
      ++b.epoch;
      for (unsigned i = 0; i < b.count; ++i) b.threads[i].state = State::Runnable;
      any = true;
    }
    return any;
  }

  bool resolveGridSync() {
    const Thread* first = nullptr;
    for (const Thread& t : threads_) {
      if (t.state == State::Done) continue;
      if (t.state != State::GridSync) return false;
      if (!first) first = &t;
    }
    if (!first) return false;
    if (auto gone = std::find_if(threads_.begin(), threads_.end(), [](const Thread& t) { return t.state == State::Done; });
        gone != threads_.end()) {
      error_ = fmt::format("kernel {}: a grid sync some threads skip: {} waits at this_grid().sync() at line {}, but "
                           "{} ended without reaching it", l_.kernel, who(*first), first->line, who(*gone));
      return false;
    }
    if (unwrittenReads()) return false;
    for (Block& b : blocks_) ++b.epoch;
    for (Thread& t : threads_) t.state = State::Runnable;
    return true;
  }

  // Nothing can run and nothing can be released: say why.
  std::string deadlock() {
    auto waitsAt = [](const Thread& t) {
      switch (t.state) {
        case State::Done: return std::string("ended");
        case State::Barrier: return fmt::format("waits at __syncthreads at line {}", t.line);
        case State::GridSync: return fmt::format("waits at this_grid().sync() at line {}", t.line);
        case State::Warp:
          return fmt::format("waits in {} at line {} with mask {:#010x}", warpOpName(t.op), t.line, t.mask);
        case State::Runnable: break;
      }
      return std::string("runs");
    };
    for (Block& b : blocks_)
      for (unsigned i = 0; i < b.count; ++i) {
        const Thread& t = b.threads[i];
        if (t.state != State::Warp) continue;
        const Thread* lane = b.threads + t.warp * 32;
        for (unsigned m = 0; m < 32; ++m)
          if (t.mask >> m & 1u && !sameWarpOp(t, lane[m]))
            return fmt::format("kernel {}: {} calls {} at line {} with mask {:#010x}, which names lane {}, but {} {}",
                               l_.kernel, who(t), warpOpName(t.op), t.line, t.mask, m, who(lane[m]), waitsAt(lane[m]));
      }
    const Thread* a = nullptr;
    for (const Thread& t : threads_)
      if (t.state != State::Done && (!a || t.state != a->state)) {
        if (a) return fmt::format("kernel {}: threads wait at different barriers: {} {}, {} {}", l_.kernel, who(*a),
                                  waitsAt(*a), who(t), waitsAt(t));
        a = &t;
      }
    return fmt::format("kernel {}: no thread can run ({} {})", l_.kernel, a ? who(*a) : "", a ? waitsAt(*a) : "");
  }

  const EmulatedLaunch& l_;
  std::vector<Block> blocks_;
  std::vector<Thread> threads_;
  std::string error_;
  bool aborting_ = false;
};

Run& run() { return *tRun; }

const GjEmuApi kApi = {
    [] { return &tSelf->pub; },
    [](int line) { run().syncthreads(line); },
    [](int line) { run().gridSync(line); },
    [](int op, unsigned mask, unsigned long long bits, int arg, int width, int line) {
      return run().warpOp(op, mask, bits, arg, width, line);
    },
    [](int line) { return run().activemask(line); },
    [](const char* name, int line, size_t size, size_t* count, int isExtern) {
      return run().shared(name, line, size, count, isExtern);
    },
    [](const void* at, size_t size, int kind, const char* name, long long index, int line) {
      run().access(at, size, kind, name, index, line);
    },
    [](const char* what, int line) { run().fail(run().kernelError(what, line)); },
};

}  // namespace

std::string runEmulatedLaunch(const EmulatedLaunch& launch) {
  Run r(launch);
  std::string error = r.go();
  if (!error.empty() && error.rfind("kernel ", 0) != 0) error = fmt::format("kernel {}: {}", launch.kernel, error);
  return error;
}

const GjEmuApi* emulatorApi() { return &kApi; }

int emulatedBlocksPerMultiprocessor(unsigned threadsPerBlock, size_t sharedBytes) {
  if (threadsPerBlock == 0 || threadsPerBlock > 1024) return 0;
  int n = std::min<int>(kMaxBlocksPerMultiprocessor, static_cast<int>(kThreadsPerMultiprocessor / threadsPerBlock));
  if (sharedBytes > 0) n = std::min<int>(n, static_cast<int>(kSharedPerMultiprocessor / sharedBytes));
  return n;
}

}  // namespace gj::cuda::detail
