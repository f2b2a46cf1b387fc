#pragma once
// Internal to runtime/cpu's oneDNN files (onednn_lstm.cpp, onednn_conv.cpp): tensors as oneDNN memory, and
// copies into the layouts a primitive chose.
#include "runtime/tensor.h"

#include <dnnl.hpp>

namespace gj::cpu::onednn {

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
