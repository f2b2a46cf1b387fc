#pragma once
// Internal to runtime/cuda: how the emulated driver runs a grid (emulator_device.h is the kernels' side).
//
// A kernel that uses no barrier, warp operation or grid sync runs one thread after another, as it always
// did. Any other kernel runs each block's threads as fibers (Boost.Context) on the launching thread: a
// thread runs until it reaches __syncthreads, a warp operation or a grid sync, then the next one runs;
// once every thread of the block (of the grid, for a cooperative launch) waits, the scheduler releases
// the barrier, or performs the warp operation whose lanes have all arrived, and runs them on. Between two
// barriers every access to shared memory is recorded per 4-byte word: a write by one thread and a read or
// write by another in the same interval (the same warp's threads also apart by __syncwarp) is a race. So
// are a barrier that some threads of the block skip or reach at another place, a warp operation whose
// mask leaves out a lane that reaches it or names one that never does, a read of shared memory no thread
// has written, and an index out of bounds. Each is an error naming the kernel, the threads (threadIdx and
// blockIdx) and the kernel source's lines; the launch fails with it.
#define GJ_EMU_TYPES_ONLY
#include "runtime/cuda/emulator_device.h"
#undef GJ_EMU_TYPES_ONLY

#include <cstddef>
#include <string>
#include <string_view>

namespace gj::cuda::detail {

/// One launch, as the scheduler runs it.
struct EmulatedLaunch {
  std::string_view kernel;  ///< its name, for errors
  GjEmuDim3 grid, block;
  size_t sharedBytes = 0;   ///< dynamic shared memory (extern __shared__)
  bool cooperative = false;  ///< cuLaunchCooperativeKernel: every block at once, this_grid().sync() allowed
  bool fibers = false;       ///< the kernel cooperates (barriers, warp operations): block semantics
  /// Runs the kernel for the thread that the table's self() describes.
  void (*thread)(void* context) = nullptr;
  void* context = nullptr;
};

/// Runs the grid; "" when it completes, else the error that stopped it.
std::string runEmulatedLaunch(const EmulatedLaunch& launch);

/// The table kernels built for the host call (emulator_device.h).
const GjEmuApi* emulatorApi();

/// The most blocks of `threadsPerBlock` threads and `sharedBytes` of shared memory that one emulated
/// multiprocessor holds at once (a cooperative launch may have that many per multiprocessor).
int emulatedBlocksPerMultiprocessor(unsigned threadsPerBlock, size_t sharedBytes);
/// The emulated device's multiprocessors.
constexpr int kEmulatedMultiprocessors = 2;

}  // namespace gj::cuda::detail
