#pragma once
// What the emulated driver's scheduler (emulator_scheduler.cpp) keeps of a block: its threads as fibers,
// their waits, and every word of its shared memory for the race checker. Internal to runtime/cuda.
#include "runtime/cuda/emulator_scheduler.h"

#include <boost/context/fiber.hpp>
#include <fmt/format.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define GJ_EMU_ASAN 1
#endif

namespace gj::cuda::detail::emu {

namespace ctx = boost::context;

constexpr size_t kStaticSharedLimit = 48 * 1024;         // static __shared__ bytes per block, as CUDA's
constexpr size_t kSharedPerMultiprocessor = 228 * 1024;  // sm_90
constexpr unsigned kThreadsPerMultiprocessor = 2048;
constexpr int kMaxBlocksPerMultiprocessor = 32;
#ifdef GJ_EMU_ASAN
constexpr size_t kStackBytes = 512 * 1024;  // instrumented frames are larger
#else
constexpr size_t kStackBytes = 64 * 1024;
#endif

// An error in a kernel: ends the thread that found it (and the launch).
struct KernelError {
  std::string what;
};
// Thrown into every thread still waiting once the launch has failed, so that each fiber ends normally.
struct Abort {};

enum class State : uint8_t { Runnable, Barrier, GridSync, Warp, Done };

struct Block;

struct Thread {
  GjEmuThread pub{};
  Block* block = nullptr;
  unsigned tid = 0, warp = 0, lane = 0;
  State state = State::Runnable;
  int line = 0;  // where it waits
  // the warp operation it waits in, and its result
  int op = 0;
  unsigned mask = 0;
  unsigned long long bits = 0, result = 0;
  int arg = 0, width = 32;
  ctx::fiber fiber;  // the thread, as the scheduler resumes it
  ctx::fiber sink;   // the scheduler, as the thread resumes it
#ifdef GJ_EMU_ASAN
  const void* stackBottom = nullptr;
  size_t stackSize = 0;
  const void* schedulerBottom = nullptr;
  size_t schedulerSize = 0;
  void* fakeStack = nullptr;
#endif
};

// What the scheduler knows of one 4-byte word of a block's shared memory.
struct Word {
  int writer = -1;  // the last writer's tid; -1: no thread of the block has written it
  unsigned writeEpoch = 0, writeWarpEpoch = 0;
  int writeLine = 0;
  bool atomic = false;
  int reader[2] = {-1, -1};  // two readers since the write, in the interval they read in
  unsigned readEpoch[2] = {0, 0}, readWarpEpoch[2] = {0, 0};
  int readLine[2] = {0, 0};
};

struct Decl {
  const char* name;
  int line;
  size_t offset, bytes;
};

struct Block {
  GjEmuDim3 idx{};
  Thread* threads = nullptr;
  unsigned count = 0;
  unsigned epoch = 0;                  // barriers passed (grid syncs too)
  std::vector<unsigned> warpEpoch;     // __syncwarp calls passed, per warp
  std::vector<unsigned char> arena;    // [static declarations, kStaticSharedLimit][dynamic]
  size_t staticUsed = 0;
  std::vector<Decl> decls;
  std::vector<Word> words;
  // The first read of a word no thread had written, said at the interval's end unless a write by another
  // thread in the same interval makes it a race first.
  std::string unwrittenRead;
};

inline std::string dim3(const GjEmuDim3& d) { return fmt::format("({}, {}, {})", d.x, d.y, d.z); }

inline std::string who(const Thread& t) {
  return fmt::format("thread {} of block {}", dim3(t.pub.threadIdx), dim3(t.pub.blockIdx));
}

inline const char* warpOpName(int op) {
  switch (op) {
    case GJ_EMU_SHFL_IDX: return "__shfl_sync";
    case GJ_EMU_SHFL_UP: return "__shfl_up_sync";
    case GJ_EMU_SHFL_DOWN: return "__shfl_down_sync";
    case GJ_EMU_SHFL_XOR: return "__shfl_xor_sync";
    case GJ_EMU_BALLOT: return "__ballot_sync";
    case GJ_EMU_ANY: return "__any_sync";
    case GJ_EMU_ALL: return "__all_sync";
    case GJ_EMU_SYNCWARP: return "__syncwarp";
    case GJ_EMU_ACTIVEMASK: return "__activemask";
  }
  return "a warp operation";
}

}  // namespace gj::cuda::detail::emu
