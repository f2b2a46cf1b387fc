#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <new>
#include <utility>
#include <vector>

namespace gj {

/// Objects of one type made one after another into chunks the arena owns, and destroyed with it (none
/// goes earlier). Objects made in sequence lie next to each other, so walking them in that order (a
/// block's node list after unrolling) reads memory the way the prefetcher expects, and making one
/// seldom calls malloc. Chunks double from 8 objects to kMaxChunk, so a small graph (a fusion group's)
/// stays small. The type names the arena a friend when its constructor is private.
template <typename T, size_t kMaxChunk = 256>
class Arena {
 public:
  Arena() = default;
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;
  ~Arena() {
    for (size_t c = 0; c < chunks_.size(); ++c) {
      const size_t n = c + 1 == chunks_.size() ? used_ : chunks_[c].capacity;
      for (size_t i = 0; i < n; ++i) std::launder(reinterpret_cast<T*>(chunks_[c].slots[i].bytes))->~T();
    }
  }

  template <typename... Args>
  T* make(Args&&... args) {
    if (chunks_.empty() || used_ == chunks_.back().capacity) {
      const size_t capacity = chunks_.empty() ? 8 : std::min(kMaxChunk, 2 * chunks_.back().capacity);
      chunks_.push_back({std::unique_ptr<Slot[]>(new Slot[capacity]), capacity});  // not zeroed
      used_ = 0;
    }
    T* p = new (chunks_.back().slots[used_].bytes) T(std::forward<Args>(args)...);
    ++used_;
    ++size_;
    return p;
  }
  /// How many objects were made.
  size_t size() const { return size_; }

 private:
  struct Slot {
    alignas(T) std::byte bytes[sizeof(T)];
  };
  struct Chunk {
    std::unique_ptr<Slot[]> slots;
    size_t capacity;
  };
  std::vector<Chunk> chunks_;
  size_t used_ = 0;
  size_t size_ = 0;
};

}  // namespace gj
