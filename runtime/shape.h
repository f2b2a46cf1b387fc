#pragma once
// Shape: a tensor's sizes or strides, held inline up to kInlineDims dims. Every Tensor carries two, and
// a batch-1 LSTM step makes and copies tensors by the dozen in a few microseconds: as std::vectors
// they were two heap blocks per tensor made and two per tensor copied (a quarter of such a step went to
// malloc and free). Past kInlineDims dims the elements move to the heap.
//
// The interface is std::vector's, as far as tensor code uses it, and a Shape converts to and from
// std::vector<int64_t> and std::span<const int64_t>, so that the IR's types and the ops' int[]
// arguments (vectors) meet it without ceremony.
#include <algorithm>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <span>
#include <stdexcept>
#include <vector>

namespace gj {

class Shape {
 public:
  static constexpr size_t kInlineDims = 5;
  using value_type = int64_t;
  using size_type = size_t;
  using difference_type = std::ptrdiff_t;
  using reference = int64_t&;
  using const_reference = const int64_t&;
  using pointer = int64_t*;
  using const_pointer = const int64_t*;
  using iterator = int64_t*;
  using const_iterator = const int64_t*;
  using reverse_iterator = std::reverse_iterator<iterator>;
  using const_reverse_iterator = std::reverse_iterator<const_iterator>;

  Shape() = default;
  explicit Shape(size_t n, int64_t value = 0) { assign(n, value); }
  Shape(std::initializer_list<int64_t> xs) { assign(xs.begin(), xs.end()); }
  template <std::input_iterator It>
  Shape(It first, It last) { assign(first, last); }
  Shape(std::span<const int64_t> xs) { assign(xs.begin(), xs.end()); }  // NOLINT: implicit by design
  Shape(const std::vector<int64_t>& xs) { assign(xs.begin(), xs.end()); }  // NOLINT: implicit by design
  Shape(const Shape& o) {
    if (o.size_ <= kInlineDims) {
      std::memcpy(local_, o.data_, sizeof local_);  // a fixed-size copy: no loop, no branch on the rank
      size_ = o.size_;
    } else {
      assign(o.begin(), o.end());
    }
  }
  Shape(Shape&& o) noexcept { take(o); }
  Shape& operator=(const Shape& o) {
    if (this == &o) return *this;
    if (o.size_ <= kInlineDims && isLocal()) {
      std::memcpy(local_, o.data_, sizeof local_);
      size_ = o.size_;
    } else {
      assign(o.begin(), o.end());
    }
    return *this;
  }
  Shape& operator=(Shape&& o) noexcept {
    if (this != &o) {
      release();
      take(o);
    }
    return *this;
  }
  Shape& operator=(std::initializer_list<int64_t> xs) {
    assign(xs.begin(), xs.end());
    return *this;
  }
  ~Shape() { release(); }

  operator std::vector<int64_t>() const { return {begin(), end()}; }  // NOLINT: implicit by design
  std::vector<int64_t> vec() const { return {begin(), end()}; }

  size_t size() const { return size_; }
  size_t max_size() const { return UINT32_MAX; }
  bool empty() const { return size_ == 0; }
  size_t capacity() const { return capacity_; }
  int64_t* data() { return data_; }
  const int64_t* data() const { return data_; }
  iterator begin() { return data_; }
  iterator end() { return data_ + size_; }
  const_iterator begin() const { return data_; }
  const_iterator end() const { return data_ + size_; }
  const_iterator cbegin() const { return data_; }
  const_iterator cend() const { return data_ + size_; }
  reverse_iterator rbegin() { return reverse_iterator(end()); }
  reverse_iterator rend() { return reverse_iterator(begin()); }
  const_reverse_iterator rbegin() const { return const_reverse_iterator(end()); }
  const_reverse_iterator rend() const { return const_reverse_iterator(begin()); }
  int64_t& operator[](size_t i) { return data_[i]; }
  const int64_t& operator[](size_t i) const { return data_[i]; }
  int64_t& front() { return data_[0]; }
  const int64_t& front() const { return data_[0]; }
  int64_t& back() { return data_[size_ - 1]; }
  const int64_t& back() const { return data_[size_ - 1]; }

  void reserve(size_t n) {
    if (n <= capacity_) return;
    if (n > max_size()) throw std::length_error("gj::Shape: too many dims");
    auto* grown = new int64_t[n];
    std::copy(begin(), end(), grown);
    const uint32_t kept = size_;
    release();
    data_ = grown;
    capacity_ = static_cast<uint32_t>(n);
    size_ = kept;
  }
  void clear() { size_ = 0; }
  void resize(size_t n, int64_t value = 0) {
    reserve(n);
    std::fill(data_ + std::min<size_t>(n, size_), data_ + n, value);
    size_ = static_cast<uint32_t>(n);
  }
  void push_back(int64_t x) {
    if (size_ == capacity_) reserve(2 * capacity_);
    data_[size_++] = x;
  }
  void emplace_back(int64_t x) { push_back(x); }
  void pop_back() { --size_; }
  void assign(size_t n, int64_t value) {
    size_ = 0;
    resize(n, value);
  }
  template <std::input_iterator It>
  void assign(It first, It last) {
    size_ = 0;
    if constexpr (std::forward_iterator<It>) reserve(static_cast<size_t>(std::distance(first, last)));
    for (; first != last; ++first) push_back(static_cast<int64_t>(*first));
  }
  iterator insert(const_iterator pos, int64_t x) { return insert(pos, &x, &x + 1); }
  iterator insert(const_iterator pos, size_t n, int64_t x) {
    const size_t at = static_cast<size_t>(pos - begin());
    reserve(size_ + n);
    std::copy_backward(data_ + at, data_ + size_, data_ + size_ + n);
    std::fill(data_ + at, data_ + at + n, x);
    size_ += static_cast<uint32_t>(n);
    return data_ + at;
  }
  template <std::forward_iterator It>
  iterator insert(const_iterator pos, It first, It last) {
    const size_t at = static_cast<size_t>(pos - begin());
    const size_t n = static_cast<size_t>(std::distance(first, last));
    if (n == 0) return data_ + at;
    Shape tail(data_ + at, data_ + size_);  // first..last may point into this shape
    Shape added(first, last);
    reserve(size_ + n);
    std::copy(added.begin(), added.end(), data_ + at);
    std::copy(tail.begin(), tail.end(), data_ + at + n);
    size_ += static_cast<uint32_t>(n);
    return data_ + at;
  }
  iterator insert(const_iterator pos, std::initializer_list<int64_t> xs) { return insert(pos, xs.begin(), xs.end()); }
  iterator erase(const_iterator pos) { return erase(pos, pos + 1); }
  iterator erase(const_iterator first, const_iterator last) {
    const size_t at = static_cast<size_t>(first - begin()), n = static_cast<size_t>(last - first);
    std::copy(data_ + at + n, data_ + size_, data_ + at);
    size_ -= static_cast<uint32_t>(n);
    return data_ + at;
  }

  friend bool operator==(const Shape& a, const Shape& b) { return std::ranges::equal(a, b); }
  friend auto operator<=>(const Shape& a, const Shape& b) {
    return std::lexicographical_compare_three_way(a.begin(), a.end(), b.begin(), b.end());
  }
  friend bool operator==(const Shape& a, const std::vector<int64_t>& b) { return std::ranges::equal(a, b); }

 private:
  bool isLocal() const { return data_ == local_; }
  void release() {
    if (!isLocal()) delete[] data_;
    data_ = local_;
    capacity_ = kInlineDims;
    size_ = 0;
  }
  // Takes o's elements (its heap block, or a copy of its inline ones) and leaves o empty.
  void take(Shape& o) {
    if (o.isLocal()) {
      std::copy(o.begin(), o.end(), local_);
      data_ = local_;
      capacity_ = kInlineDims;
    } else {
      data_ = o.data_;
      capacity_ = o.capacity_;
      o.data_ = o.local_;
      o.capacity_ = kInlineDims;
    }
    size_ = o.size_;
    o.size_ = 0;
  }

  int64_t* data_ = local_;
  uint32_t size_ = 0, capacity_ = kInlineDims;
  int64_t local_[kInlineDims];
};

}  // namespace gj
