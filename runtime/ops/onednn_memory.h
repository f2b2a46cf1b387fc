#pragma once
// Internal to runtime/ops's oneDNN files (onednn_lstm.cpp, onednn_conv.cpp, onednn_softmax.cpp): the CPU
// engine, tensors as oneDNN memory, copies into the layouts a primitive chose, and oneDNN's errors as ours.
#include "runtime/tensor.h"
#include "support/error.h"

#include <dnnl.hpp>

#include <vector>

namespace gj::ops::onednn {

/// The process's CPU engine.
inline dnnl::engine& engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

/// Runs `f`; a oneDNN failure is an internal error, since the shapes were checked before.
template <typename F>
void run(const char* what, F&& f) {
  try {
    f();
  } catch (const dnnl::error& e) {
    throw Error(fmt::format("oneDNN {} failed: {}", what, e.what()));
  }
}

/// A tensor's storage as oneDNN memory of descriptor `d` (no copy).
inline dnnl::memory wrap(const dnnl::memory::desc& d, const dnnl::engine& e, const Tensor& t) {
  return dnnl::memory(d, e, t.rawData());
}

/// The memories a primitive reads or writes in layouts of its own (blocked copies of its operands, its
/// results before they are copied back), on blocks of graphjit's allocator, which keeps large freed blocks
/// for the next request of their size: oneDNN's own allocation maps fresh pages for each, which the
/// kernel must then zero on every call. They live as long as the Scratch: keep it until the stream has
/// been waited on.
class Scratch {
 public:
  explicit Scratch(const dnnl::engine& e) : engine_(e) {}
  /// Uninitialized memory of descriptor d.
  dnnl::memory make(const dnnl::memory::desc& d) {
    held_.push_back(Tensor::empty({static_cast<int64_t>((d.get_size() + sizeof(float) - 1) / sizeof(float))},
                                  DType::Float32));
    return dnnl::memory(d, engine_, held_.back().rawData());
  }
  /// `src` in `want`'s layout: src itself when the layouts agree, else a reordered copy.
  dnnl::memory inLayout(dnnl::memory src, const dnnl::memory::desc& want, dnnl::stream& s) {
    if (src.get_desc() == want) return src;
    dnnl::memory copy = make(want);
    dnnl::reorder(src, copy).execute(s, src, copy);
    return copy;
  }

 private:
  dnnl::engine engine_;
  std::vector<Tensor> held_;
};

}  // namespace gj::ops::onednn
