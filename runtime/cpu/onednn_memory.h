#pragma once
// Internal to runtime/cpu's oneDNN files (onednn_lstm.cpp, onednn_conv.cpp, onednn_softmax.cpp): the CPU
// engine, tensors as oneDNN memory, copies into the layouts a primitive chose, and oneDNN's errors as ours.
#include "runtime/tensor.h"
#include "support/error.h"

#include <dnnl.hpp>

namespace gj::cpu::onednn {

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

/// `src` in `want`'s layout: src itself when the layouts agree, else a reordered copy.
inline dnnl::memory inLayout(dnnl::memory src, const dnnl::memory::desc& want, const dnnl::engine& e,
                             dnnl::stream& s) {
  if (src.get_desc() == want) return src;
  dnnl::memory dst(want, e);
  dnnl::reorder(src, dst).execute(s, src, dst);
  return dst;
}

}  // namespace gj::cpu::onednn
