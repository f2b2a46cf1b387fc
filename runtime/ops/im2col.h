#pragma once
// im2col and its adjoint col2im, shared by conv2d's forward (nn.cpp) and backward (grad.cpp).
#include "runtime/ops/ops.h"

#include <cstdint>

namespace gj::ops {

// Unfolds one image's group of channels into columns [C*kH*kW, outH*outW] (zero padding).
template <typename T>
inline void im2col(const T* img, int64_t channels, int64_t h, int64_t w, int64_t kh, int64_t kw, int64_t outH,
                   int64_t outW, const Conv2dParams& p, T* col) {
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t i = 0; i < kh; ++i)
      for (int64_t j = 0; j < kw; ++j) {
        T* row = col + ((c * kh + i) * kw + j) * outH * outW;
        for (int64_t y = 0; y < outH; ++y) {
          int64_t iy = y * p.strideH - p.padH + i * p.dilationH;
          for (int64_t x = 0; x < outW; ++x) {
            int64_t ix = x * p.strideW - p.padW + j * p.dilationW;
            bool inside = iy >= 0 && iy < h && ix >= 0 && ix < w;
            row[y * outW + x] = inside ? img[(c * h + iy) * w + ix] : T(0);
          }
        }
      }
}

// Adds columns [C*kH*kW, outH*outW] back into one image (the adjoint of im2col).
template <typename T>
inline void col2im(const T* col, int64_t channels, int64_t h, int64_t w, int64_t kh, int64_t kw, int64_t outH,
                   int64_t outW, const Conv2dParams& p, T* img) {
  for (int64_t c = 0; c < channels; ++c)
    for (int64_t i = 0; i < kh; ++i)
      for (int64_t j = 0; j < kw; ++j) {
        const T* row = col + ((c * kh + i) * kw + j) * outH * outW;
        for (int64_t y = 0; y < outH; ++y) {
          int64_t iy = y * p.strideH - p.padH + i * p.dilationH;
          if (iy < 0 || iy >= h) continue;
          for (int64_t x = 0; x < outW; ++x) {
            int64_t ix = x * p.strideW - p.padW + j * p.dilationW;
            if (ix >= 0 && ix < w) img[(c * h + iy) * w + ix] += row[y * outW + x];
          }
        }
      }
}

}  // namespace gj::ops
