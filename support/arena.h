#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>
#include <utility>
#include <vector>

namespace gj {

namespace arena_detail {

/// The size of a huge page on x86-64 and AArch64 Linux, and the largest chunk an arena makes.
inline constexpr size_t kHugePage = size_t{2} << 20;

/// `bytes` of uninitialized memory; a block of exactly kHugePage is aligned to it and asked to be backed
/// by one huge page, one a dead arena left if there is one (Note [Arena chunks]). Throws std::bad_alloc.
void* allocateChunk(size_t bytes);
/// Gives back what allocateChunk(bytes) returned.
void freeChunk(void* p, size_t bytes) noexcept;

}  // namespace arena_detail

/// Objects of one type made one after another into chunks the arena owns, and destroyed with it (none
/// goes earlier). Objects made in sequence lie next to each other, so walking them in that order (a
/// block's node list after unrolling) reads memory the way the prefetcher expects, and making one
/// seldom calls malloc. Chunks double from 8 objects to what fits in a huge page, so a small graph (a
/// fusion group's) stays small and a large one (an unrolled LSTM's) takes few page faults (Note [Arena
/// chunks]). The type names the arena a friend when its constructor is private.
template <typename T>
class Arena {
 public:
  /// The most objects a chunk holds: as many as fit in one huge page.
  static constexpr size_t kMaxChunk = arena_detail::kHugePage / sizeof(T);
  static_assert(alignof(T) <= alignof(std::max_align_t), "chunks are aligned for max_align_t only");

  Arena() = default;
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;
  ~Arena() {
    for (size_t c = 0; c < chunks_.size(); ++c) {
      const size_t n = c + 1 == chunks_.size() ? used_ : chunks_[c].capacity;
      for (size_t i = 0; i < n; ++i) std::launder(reinterpret_cast<T*>(chunks_[c].slots + i))->~T();
      arena_detail::freeChunk(chunks_[c].slots, bytesOf(chunks_[c].capacity));
    }
  }

  template <typename... Args>
  T* make(Args&&... args) {
    if (chunks_.empty() || used_ == chunks_.back().capacity) grow();
    T* p = new (chunks_.back().slots + used_) T(std::forward<Args>(args)...);
    ++used_;
    ++size_;
    return p;
  }
  /// How many objects were made.
  size_t size() const { return size_; }
  /// How many objects the chunks have room for, made or not.
  size_t capacity() const {
    size_t n = 0;
    for (const Chunk& c : chunks_) n += c.capacity;
    return n;
  }

 private:
  struct Slot {
    alignas(T) std::byte bytes[sizeof(T)];
  };
  struct Chunk {
    Slot* slots;  // not zeroed
    size_t capacity;
  };
  // The largest chunk takes the whole page it is backed by.
  static size_t bytesOf(size_t capacity) {
    return capacity == kMaxChunk ? arena_detail::kHugePage : capacity * sizeof(Slot);
  }
  void grow() {
    const size_t capacity = chunks_.empty() ? 8 : std::min(kMaxChunk, 2 * chunks_.back().capacity);
    chunks_.reserve(chunks_.size() + 1);  // before the allocation, which would leak if this threw
    chunks_.push_back({static_cast<Slot*>(arena_detail::allocateChunk(bytesOf(capacity))), capacity});
    used_ = 0;
  }
  std::vector<Chunk> chunks_;
  size_t used_ = 0;
  size_t size_ = 0;
};

}  // namespace gj
