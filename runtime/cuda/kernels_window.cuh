// The unfused path's gathers and windows: row gathers and scatter-adds by index, conv2d's im2col and col2im,
// max and adaptive average pooling and their backwards.
// A part of runtime/cuda/kernels.cuh, which includes it after its types and helpers (and splices its
// text in for NVRTC, runtime/CMakeLists.txt); not a header of its own.

GJ_KERNEL void gj_gather(GjIndexArgs p) {
  GJ_GRID_STRIDE(e, p.rows * p.width) {
    const gj_i64 i = e / p.width, j = e - i * p.width, k = p.idx[i];
    double v;
    if (k < 0 || k >= p.limit) {
      const double zero = 0.0;
      v = zero / zero;
      *p.bad = 1;
    } else {
      v = gjLoad(p.in, p.type, (i * p.perRow + k) * p.width + j);
    }
    gjStore(p.out, p.type, e, v);
  }
}

GJ_KERNEL void gj_scatter_add(GjIndexArgs p) {
  GJ_GRID_STRIDE(e, p.rows * p.width) {
    const gj_i64 i = e / p.width, j = e - i * p.width, k = p.idx[i];
    if (k < 0 || k >= p.limit) {
      *p.bad = 1;
      continue;
    }
    const gj_i64 to = (i * p.perRow + k) * p.width + j, from = i * p.inRowStride + j;
    if (p.type == GJ_F32)
      atomicAdd((float*)p.out + to, (float)(p.scale * ((const float*)p.in)[from]));
    else
      atomicAdd((double*)p.out + to, p.scale * ((const double*)p.in)[from]);
  }
}

GJ_KERNEL void gj_im2col(GjConvArgs p) {
  const gj_i64 pix = p.outH * p.outW;
  GJ_GRID_STRIDE(e, p.channels * p.kh * p.kw * pix) {
    const gj_i64 row = e / pix, at = e - row * pix;
    const gj_i64 c = row / (p.kh * p.kw), tap = row - c * p.kh * p.kw, i = tap / p.kw, j = tap - i * p.kw;
    const gj_i64 y = at / p.outW, x = at - y * p.outW;
    const gj_i64 iy = y * p.strideH - p.padH + i * p.dilationH, ix = x * p.strideW - p.padW + j * p.dilationW;
    const bool inside = iy >= 0 && iy < p.h && ix >= 0 && ix < p.w;
    gjStore(p.out, p.type, e, inside ? gjLoad(p.in, p.type, (c * p.h + iy) * p.w + ix) : 0.0);
  }
}

// Along one dimension: the output position whose window reads input position `at` through tap `tap`, or
// -1 when none does (the gathering backward kernels' inverse of a window).
GJ_DEVICE gj_i64 gjReader(gj_i64 at, gj_i64 pad, gj_i64 tap, gj_i64 dilation, gj_i64 stride, gj_i64 out) {
  const gj_i64 t = at + pad - tap * dilation;  // the reader's position times the stride
  return t < 0 || t % stride != 0 || t / stride >= out ? -1 : t / stride;
}

GJ_KERNEL void gj_col2im(GjConvArgs p) {
  const gj_i64 pix = p.outH * p.outW;
  GJ_GRID_STRIDE(e, p.channels * p.h * p.w) {
    const gj_i64 c = e / (p.h * p.w), at = e - c * p.h * p.w, iy = at / p.w, ix = at - iy * p.w;
    double acc = 0.0;
    for (gj_i64 i = 0; i < p.kh; ++i) {
      const gj_i64 y = gjReader(iy, p.padH, i, p.dilationH, p.strideH, p.outH);
      if (y < 0) continue;
      for (gj_i64 j = 0; j < p.kw; ++j) {
        const gj_i64 x = gjReader(ix, p.padW, j, p.dilationW, p.strideW, p.outW);
        if (x >= 0) acc += gjLoad(p.in, p.type, ((c * p.kh + i) * p.kw + j) * pix + y * p.outW + x);
      }
    }
    gjStore(p.out, p.type, e, acc);
  }
}

GJ_KERNEL void gj_max_pool2d(GjConvArgs p) {
  const gj_i64 pix = p.outH * p.outW;
  GJ_GRID_STRIDE(e, p.channels * pix) {
    const gj_i64 c = e / pix, at = e - c * pix, y = at / p.outW, x = at - y * p.outW;
    double best = 0.0;
    gj_i64 arg = -1;
    for (gj_i64 i = 0; i < p.kh; ++i) {
      const gj_i64 iy = y * p.strideH - p.padH + i * p.dilationH;
      if (iy < 0 || iy >= p.h) continue;
      for (gj_i64 j = 0; j < p.kw; ++j) {
        const gj_i64 ix = x * p.strideW - p.padW + j * p.dilationW;
        if (ix < 0 || ix >= p.w) continue;
        const double v = gjLoad(p.in, p.type, (c * p.h + iy) * p.w + ix);
        if (arg >= 0 && best != best) continue;  // a NaN already won
        if (arg < 0 || v > best || v != v) {
          best = v;
          arg = iy * p.w + ix;
        }
      }
    }
    gjStore(p.out, p.type, e, best);
    p.indices[e] = arg;
  }
}

GJ_KERNEL void gj_max_pool2d_backward(GjConvArgs p) {
  const gj_i64 pix = p.outH * p.outW;
  GJ_GRID_STRIDE(e, p.channels * p.h * p.w) {
    const gj_i64 c = e / (p.h * p.w), at = e - c * p.h * p.w, iy = at / p.w, ix = at - iy * p.w;
    double acc = 0.0;
    for (gj_i64 i = 0; i < p.kh; ++i) {
      const gj_i64 y = gjReader(iy, p.padH, i, p.dilationH, p.strideH, p.outH);
      if (y < 0) continue;
      for (gj_i64 j = 0; j < p.kw; ++j) {
        const gj_i64 x = gjReader(ix, p.padW, j, p.dilationW, p.strideW, p.outW);
        const gj_i64 o = c * pix + y * p.outW + x;
        if (x >= 0 && p.indices[o] == at) acc += gjLoad(p.in, p.type, o);
      }
    }
    gjStore(p.out, p.type, e, acc);
  }
}

GJ_DEVICE gj_i64 gjWindowStart(gj_i64 i, gj_i64 in, gj_i64 out) { return i * in / out; }
GJ_DEVICE gj_i64 gjWindowEnd(gj_i64 i, gj_i64 in, gj_i64 out) { return ((i + 1) * in + out - 1) / out; }

GJ_KERNEL void gj_adaptive_avg_pool2d(GjConvArgs p) {
  const gj_i64 pix = p.outH * p.outW;
  GJ_GRID_STRIDE(e, p.channels * pix) {
    const gj_i64 c = e / pix, at = e - c * pix, i = at / p.outW, j = at - i * p.outW;
    const gj_i64 y0 = gjWindowStart(i, p.h, p.outH), y1 = gjWindowEnd(i, p.h, p.outH);
    const gj_i64 x0 = gjWindowStart(j, p.w, p.outW), x1 = gjWindowEnd(j, p.w, p.outW);
    double acc = 0.0;
    for (gj_i64 y = y0; y < y1; ++y)
      for (gj_i64 x = x0; x < x1; ++x) acc += gjLoad(p.in, p.type, (c * p.h + y) * p.w + x);
    gjStore(p.out, p.type, e, acc / (double)((y1 - y0) * (x1 - x0)));
  }
}

GJ_KERNEL void gj_adaptive_avg_pool2d_backward(GjConvArgs p) {
  GJ_GRID_STRIDE(e, p.channels * p.h * p.w) {
    const gj_i64 c = e / (p.h * p.w), at = e - c * p.h * p.w, y = at / p.w, x = at - y * p.w;
    double acc = 0.0;
    // The cells whose windows hold row y: from the one that starts at or before it to the last that does.
    for (gj_i64 i = y * p.outH / p.h; i < p.outH && gjWindowStart(i, p.h, p.outH) <= y; ++i) {
      const gj_i64 y0 = gjWindowStart(i, p.h, p.outH), y1 = gjWindowEnd(i, p.h, p.outH);
      if (y >= y1) continue;
      for (gj_i64 j = x * p.outW / p.w; j < p.outW && gjWindowStart(j, p.w, p.outW) <= x; ++j) {
        const gj_i64 x0 = gjWindowStart(j, p.w, p.outW), x1 = gjWindowEnd(j, p.w, p.outW);
        if (x >= x1) continue;
        acc += gjLoad(p.in, p.type, (c * p.outH + i) * p.outW + j) / (double)((y1 - y0) * (x1 - x0));
      }
    }
    gjStore(p.out, p.type, e, acc);
  }
}
