// Device memory: a caching allocator over cuMemAlloc, and copies.
#include "runtime/cuda/device.h"

#include "runtime/cuda/driver_api.h"
#include "support/error.h"

#include <fmt/format.h>

#include <map>
#include <mutex>
#include <unordered_map>

namespace gj::cuda {

using detail::check;
using detail::driver;

namespace {

constexpr size_t kRounding = 512;

// Who may reuse a freed block: the stream it was used on (later work there is ordered after it), or a
// GraphMemory (only captures into it, whose replays run in capture order).
using Owner = const void*;

struct Block {
  size_t size;
  Owner owner;
};

struct Pool {
  std::mutex mutex;
  std::unordered_map<void*, Block> live;
  /// Freed blocks by (owner, size); a multimap, since many blocks share a size.
  std::multimap<std::pair<Owner, size_t>, void*> cached;
  DeviceMemoryStats stats;
};

// The GraphMemory this thread is capturing into (graph.cpp sets it around a capture).
thread_local GraphMemory* tCaptureMemory = nullptr;

Pool& pool() {
  static Pool* p = new Pool;  // never destroyed: storages may be freed during static destruction
  return *p;
}

// Gives the cached blocks back; the caller holds the pool's lock.
void releaseLocked(Pool& p) {
  if (p.cached.empty()) return;
  const auto& api = driver();
  check(api.cuCtxSynchronize(), "cuCtxSynchronize");
  for (auto& [key, ptr] : p.cached) api.cuMemFree(reinterpret_cast<CUdeviceptr>(ptr));
  p.cached.clear();
  p.stats.cachedBytes = 0;
}

}  // namespace

void* deviceAllocate(size_t nbytes) {
  const auto& api = driver();
  size_t size = std::max<size_t>((nbytes + kRounding - 1) / kRounding * kRounding, kRounding);
  Owner owner = tCaptureMemory ? static_cast<Owner>(tCaptureMemory) : static_cast<Owner>(currentStream());
  Pool& p = pool();
  std::lock_guard lock(p.mutex);
  void* ptr = nullptr;
  if (auto it = p.cached.find({owner, size}); it != p.cached.end()) {
    ptr = it->second;
    p.cached.erase(it);
    p.stats.cachedBytes -= size;
  } else {
    CUdeviceptr d = 0;
    CUresult r = api.cuMemAlloc(&d, size);
    if (r == CUDA_ERROR_OUT_OF_MEMORY && !p.cached.empty() && !tCaptureMemory) {
      releaseLocked(p);
      r = api.cuMemAlloc(&d, size);
    }
    if (r != CUDA_SUCCESS)
      throw Error(fmt::format("out of CUDA memory: {} bytes requested, {} held by tensors ({})", nbytes,
                              p.stats.currentBytes, detail::errorText(r)));
    ++p.stats.driverAllocations;
    ptr = reinterpret_cast<void*>(d);
  }
  p.live.emplace(ptr, Block{size, owner});
  p.stats.currentBytes += size;
  p.stats.peakBytes = std::max(p.stats.peakBytes, p.stats.currentBytes);
  return ptr;
}

void deviceFree(void* ptr) {
  if (!ptr) return;
  Pool& p = pool();
  std::lock_guard lock(p.mutex);
  auto it = p.live.find(ptr);
  IR_CHECK(it != p.live.end()) << "deviceFree of a pointer deviceAllocate did not return";
  Block b = it->second;
  p.live.erase(it);
  p.stats.currentBytes -= b.size;
  // Freed while capturing: the graph may still read the block when it replays, so it is the graph's now.
  if (tCaptureMemory) b.owner = tCaptureMemory;
  p.cached.emplace(std::pair{b.owner, b.size}, ptr);
  p.stats.cachedBytes += b.size;
}

namespace detail {
void setCaptureMemory(GraphMemory* memory) { tCaptureMemory = memory; }
}  // namespace detail

GraphMemory::~GraphMemory() {
  if (!stream) return;  // never captured into
  Pool& p = pool();
  std::lock_guard lock(p.mutex);
  // No replay is queued any more once the device is idle; the blocks go to the stream the graphs ran on.
  driver().cuCtxSynchronize();
  for (auto& [ptr, b] : p.live)
    if (b.owner == this) b.owner = stream;
  for (auto it = p.cached.begin(); it != p.cached.end();) {
    if (it->first.first != this) {
      ++it;
      continue;
    }
    p.cached.emplace(std::pair{static_cast<Owner>(stream), it->first.second}, it->second);
    it = p.cached.erase(it);
  }
}

void releaseDeviceCache() {
  Pool& p = pool();
  std::lock_guard lock(p.mutex);
  releaseLocked(p);
}

DeviceMemoryStats deviceMemoryStats() {
  Pool& p = pool();
  std::lock_guard lock(p.mutex);
  return p.stats;
}

void resetDevicePeak() {
  Pool& p = pool();
  std::lock_guard lock(p.mutex);
  p.stats.peakBytes = p.stats.currentBytes;
}

void copyHostToDevice(void* dst, const void* src, size_t nbytes) {
  if (nbytes == 0) return;
  const auto& api = driver();
  check(api.cuMemcpyHtoDAsync(reinterpret_cast<CUdeviceptr>(dst), src, nbytes, currentStream()),
        "cuMemcpyHtoDAsync");
  // Pageable host memory: the copy may still read `src` after the call returns.
  synchronize();
}

void copyDeviceToHost(void* dst, const void* src, size_t nbytes) {
  if (nbytes == 0) return;
  const auto& api = driver();
  check(api.cuMemcpyDtoHAsync(dst, reinterpret_cast<CUdeviceptr>(src), nbytes, currentStream()),
        "cuMemcpyDtoHAsync");
  synchronize();
}

void copyDeviceToDevice(void* dst, const void* src, size_t nbytes) {
  if (nbytes == 0) return;
  check(driver().cuMemcpyDtoDAsync(reinterpret_cast<CUdeviceptr>(dst), reinterpret_cast<CUdeviceptr>(src), nbytes,
                                   currentStream()),
        "cuMemcpyDtoDAsync");
}

void fillBytes(void* dst, unsigned char value, size_t nbytes) {
  if (nbytes == 0) return;
  check(driver().cuMemsetD8Async(reinterpret_cast<CUdeviceptr>(dst), value, nbytes, currentStream()),
        "cuMemsetD8Async");
}

}  // namespace gj::cuda
