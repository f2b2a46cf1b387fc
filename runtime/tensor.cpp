#include "runtime/tensor.h"

#include "runtime/allocator.h"
#include "runtime/ops/loops.h"
#include "runtime/cuda/device.h"
#include "runtime/cuda/ops.h"
#include "support/error.h"

#include <cmath>
#include <cstring>
#include <algorithm>
#include <optional>
#include <random>
#include <type_traits>

#if defined(__SSE2__)
#include <immintrin.h>
#endif

namespace gj {

Storage::Storage(size_t nbytes, DeviceKind device) : nbytes_(nbytes), device_(device) {
  data_ = device == DeviceKind::Cpu ? cpuAllocate(nbytes) : cuda::deviceAllocate(nbytes);
}

Storage::~Storage() {
  if (device_ == DeviceKind::Cpu)
    cpuFree(data_, nbytes_);
  else
    cuda::deviceFree(data_);
}

int64_t numelOf(std::span<const int64_t> sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

Shape contiguousStrides(std::span<const int64_t> sizes) {
  Shape st(sizes.size());
  int64_t acc = 1;
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    st[d] = acc;
    acc *= std::max<int64_t>(sizes[d], 1);
  }
  return st;
}

std::string shapeStr(std::span<const int64_t> sizes) {
  std::string s = "[";
  for (size_t i = 0; i < sizes.size(); ++i) s += (i ? ", " : "") + std::to_string(sizes[i]);
  return s + "]";
}

int64_t wrapDim(int64_t d, int64_t rank) {
  int64_t r = rank == 0 ? 1 : rank;
  USER_CHECK(d >= -r && d < r, "dimension {} out of range for a tensor of rank {} (expected {}..{})", d, rank, -r,
             r - 1);
  return d < 0 ? d + r : d;
}

// The bytes a contiguous tensor of `sizes` spans, checked. Strides treat a zero-size dimension as 1, so
// even an empty shape must have a representable span.
static int64_t checkedSpan(const Shape& sizes, DType dtype) {
  int64_t span = static_cast<int64_t>(dtypeSize(dtype));
  for (int64_t s : sizes) {
    USER_CHECK(s >= 0, "negative size in shape {}", shapeStr(sizes));
    USER_CHECK(!__builtin_mul_overflow(span, std::max<int64_t>(s, 1), &span),
               "shape {} is too large: its byte count does not fit in 64 bits", shapeStr(sizes));
  }
  return span;
}

Tensor Tensor::empty(Shape sizes, DType dtype, DeviceKind device) {
  checkedSpan(sizes, dtype);
  Tensor t;
  t.storage_ = std::make_shared<Storage>(numelOf(sizes) * dtypeSize(dtype), device);
  t.strides_ = contiguousStrides(sizes);
  t.sizes_ = std::move(sizes);
  t.dtype_ = dtype;
  return t;
}

std::vector<Tensor> Tensor::emptyInOneBlock(std::span<const Shape> sizes, std::span<const DType> dtypes,
                                           DeviceKind device) {
  USER_CHECK(sizes.size() == dtypes.size(), "emptyInOneBlock: {} shapes for {} dtypes", sizes.size(), dtypes.size());
  constexpr int64_t kAlign = 64;
  std::vector<Tensor> ts(sizes.size());
  int64_t bytes = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    const int64_t span = checkedSpan(sizes[i], dtypes[i]);
    ts[i].sizes_ = sizes[i];
    ts[i].strides_ = contiguousStrides(sizes[i]);
    ts[i].dtype_ = dtypes[i];
    ts[i].offset_ = bytes / static_cast<int64_t>(dtypeSize(dtypes[i]));  // bytes is a multiple of kAlign
    USER_CHECK(!__builtin_add_overflow(bytes, (span + kAlign - 1) / kAlign * kAlign, &bytes),
               "emptyInOneBlock: {} tensors do not fit in 64 bits of bytes", sizes.size());
  }
  auto storage = std::make_shared<Storage>(bytes, device);
  for (Tensor& t : ts) t.storage_ = storage;
  return ts;
}

Tensor Tensor::zeros(Shape sizes, DType dtype, DeviceKind device) {
  Tensor t = empty(std::move(sizes), dtype, device);
  if (device == DeviceKind::Cuda)
    cuda::fillBytes(t.rawData(), 0, t.numel() * dtypeSize(dtype));
  else
    std::memset(t.rawData(), 0, t.numel() * dtypeSize(dtype));
  return t;
}

static void fill(const Tensor& t, double v) {
  visitDType(t.dtype(), [&]<typename T>(T) {
    T* p = t.data<T>();
    const T x = convertElement<T>(v);
    for (int64_t i = 0, n = t.numel(); i < n; ++i) p[i] = x;
  });
}

Tensor Tensor::full(Shape sizes, DType dtype, double value, DeviceKind device) {
  Tensor t = empty(std::move(sizes), dtype, device);
  if (device == DeviceKind::Cuda)
    cuda::fill(t, value);
  else
    fill(t, value);
  return t;
}

Tensor Tensor::scalar(double value, DType dtype) { return full({}, dtype, value); }

Tensor Tensor::fromVector(Shape sizes, const std::vector<double>& data, DType dtype) {
  USER_CHECK(numelOf(sizes) == static_cast<int64_t>(data.size()), "fromVector: {} values for shape {}",
             data.size(), shapeStr(sizes));
  Tensor t = empty(std::move(sizes), dtype);
  visitDType(dtype, [&]<typename T>(T) {
    T* p = t.data<T>();
    for (size_t i = 0; i < data.size(); ++i) p[i] = convertElement<T>(data[i]);
  });
  return t;
}

Tensor Tensor::rand(Shape sizes, DType dtype, uint64_t seed, double lo, double hi) {
  // A fixed generator and a hand-rolled mapping, so values do not depend on the standard library.
  std::mt19937_64 gen(seed);
  std::vector<double> v(numelOf(sizes));
  for (double& x : v) x = lo + (hi - lo) * (static_cast<double>(gen() >> 11) * 0x1.0p-53);
  return fromVector(std::move(sizes), v, dtype);
}

int64_t Tensor::size(int64_t d) const { return sizes_[wrapDim(d, dim())]; }
int64_t Tensor::stride(int64_t d) const { return strides_[wrapDim(d, dim())]; }

bool Tensor::isContiguous() const {
  int64_t expected = 1;
  for (int64_t d = dim() - 1; d >= 0; --d) {
    if (sizes_[d] == 1) continue;
    if (strides_[d] != expected) return false;
    expected *= sizes_[d];
  }
  return true;
}

template <typename T>
T* Tensor::data() const {
  IR_CHECK(dtypeOf<T>() == dtype_) << "data<" << dtypeName(dtypeOf<T>()) << ">() on a " << dtypeName(dtype_)
                                   << " tensor";
  return static_cast<T*>(storage_->data()) + offset_;
}
template float* Tensor::data<float>() const;
template double* Tensor::data<double>() const;
template int64_t* Tensor::data<int64_t>() const;
template bool* Tensor::data<bool>() const;
template uint8_t* Tensor::data<uint8_t>() const;
template int8_t* Tensor::data<int8_t>() const;
template int16_t* Tensor::data<int16_t>() const;
template int32_t* Tensor::data<int32_t>() const;
template Half* Tensor::data<Half>() const;
template BFloat16* Tensor::data<BFloat16>() const;

void* Tensor::rawData() const {
  return static_cast<char*>(storage_->data()) + offset_ * static_cast<int64_t>(dtypeSize(dtype_));
}

double Tensor::item(int64_t flatIndex) const {
  USER_CHECK(flatIndex >= 0 && flatIndex < numel(), "item({}) out of range for a tensor of {} elements", flatIndex,
             numel());
  if (device() != DeviceKind::Cpu) return to(DeviceKind::Cpu).item(flatIndex);
  int64_t off = 0;
  for (int64_t d = dim() - 1; d >= 0; --d) {
    off += (flatIndex % sizes_[d]) * strides_[d];
    flatIndex /= sizes_[d];
  }
  const char* base = static_cast<const char*>(storage_->data());
  int64_t at = offset_ + off;
  return visitDType(dtype_, [&]<typename T>(T) {
    return convertElement<double>(reinterpret_cast<const T*>(base)[at]);
  });
}

Tensor Tensor::asStrided(Shape sizes, Shape strides, int64_t offset) const {
  Tensor t = *this;
  t.gradEdge_.reset();
  t.sizes_ = std::move(sizes);
  t.strides_ = std::move(strides);
  t.offset_ = offset;
  return t;
}

static Shape inferSize(Shape sizes, int64_t numel) {
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1) {
      USER_CHECK(infer < 0, "view: only one dimension can be -1 in {}", shapeStr(sizes));
      infer = static_cast<int64_t>(i);
    } else {
      USER_CHECK(sizes[i] >= 0, "view: invalid size {} in {}", sizes[i], shapeStr(sizes));
      known *= sizes[i];
    }
  }
  if (infer >= 0) {
    USER_CHECK(known != 0 && numel % known == 0, "view: shape {} is invalid for {} elements", shapeStr(sizes), numel);
    sizes[infer] = numel / known;
  }
  USER_CHECK(numelOf(sizes) == numel, "view: shape {} is invalid for an input of {} elements", shapeStr(sizes), numel);
  return sizes;
}

// Strides for viewing (oldSizes, oldStrides) as newSizes without a copy, or empty when impossible.
// Dimensions are matched in groups whose element counts agree; each old group must be contiguous in itself.
static std::optional<Shape> viewStrides(const Shape& oldSizes, const Shape& oldStrides, const Shape& newSizes) {
  Shape out(newSizes.size());
  if (oldSizes.empty() || numelOf(oldSizes) == 0) return contiguousStrides(newSizes);
  int64_t viewD = static_cast<int64_t>(newSizes.size()) - 1;
  int64_t chunkBase = oldStrides.empty() ? 1 : oldStrides.back();
  int64_t tensorNumel = 1, viewNumel = 1;
  for (int64_t d = static_cast<int64_t>(oldSizes.size()) - 1; d >= 0; --d) {
    tensorNumel *= oldSizes[d];
    if (d == 0 || (oldSizes[d - 1] != 1 && oldStrides[d - 1] != tensorNumel * chunkBase)) {
      while (viewD >= 0 && (viewNumel < tensorNumel || newSizes[viewD] == 1)) {
        out[viewD] = viewNumel * chunkBase;
        viewNumel *= newSizes[viewD];
        --viewD;
      }
      if (viewNumel != tensorNumel) return std::nullopt;
      if (d > 0) {
        chunkBase = oldStrides[d - 1];
        tensorNumel = 1;
        viewNumel = 1;
      }
    }
  }
  if (viewD != -1) return std::nullopt;
  return out;
}

Tensor Tensor::view(Shape sizes) const {
  sizes = inferSize(std::move(sizes), numel());
  auto st = viewStrides(sizes_, strides_, sizes);
  USER_CHECK(st.has_value(), "view: sizes {} are incompatible with the strides of a {} input; use reshape",
             shapeStr(sizes), shapeStr(sizes_));
  return asStrided(std::move(sizes), std::move(*st), offset_);
}

Tensor Tensor::reshape(Shape sizes) const {
  sizes = inferSize(std::move(sizes), numel());
  if (auto st = viewStrides(sizes_, strides_, sizes)) return asStrided(std::move(sizes), std::move(*st), offset_);
  return contiguous().view(std::move(sizes));
}

Tensor Tensor::transpose(int64_t d0, int64_t d1) const {
  d0 = wrapDim(d0, dim());
  d1 = wrapDim(d1, dim());
  Tensor t = *this;
  t.gradEdge_.reset();
  if (dim() == 0) return t;
  std::swap(t.sizes_[d0], t.sizes_[d1]);
  std::swap(t.strides_[d0], t.strides_[d1]);
  return t;
}

Tensor Tensor::t() const {
  USER_CHECK(dim() <= 2, "t() expects a tensor of rank <= 2, got {}", shapeStr(sizes_));
  return dim() < 2 ? *this : transpose(0, 1);
}

Tensor Tensor::permute(std::span<const int64_t> dims) const {
  USER_CHECK(static_cast<int64_t>(dims.size()) == dim(), "permute: {} dims given for a tensor of rank {}", dims.size(),
             dim());
  Shape sz(dim()), st(dim());
  std::vector<bool> seen(dim(), false);
  for (int64_t i = 0; i < dim(); ++i) {
    int64_t d = wrapDim(dims[i], dim());
    USER_CHECK(!seen[d], "permute: dimension {} repeated", d);
    seen[d] = true;
    sz[i] = sizes_[d];
    st[i] = strides_[d];
  }
  return asStrided(std::move(sz), std::move(st), offset_);
}

Tensor Tensor::select(int64_t d, int64_t index) const {
  USER_CHECK(dim() > 0, "select() on a 0-dim tensor");
  d = wrapDim(d, dim());
  int64_t n = sizes_[d];
  USER_CHECK(index >= -n && index < n, "select: index {} out of range for dimension {} of size {}", index, d, n);
  if (index < 0) index += n;
  Shape sz = sizes_, st = strides_;
  sz.erase(sz.begin() + d);
  st.erase(st.begin() + d);
  return asStrided(std::move(sz), std::move(st), offset_ + index * strides_[d]);
}

Tensor Tensor::slice(int64_t d, int64_t start, int64_t end, int64_t step) const {
  d = wrapDim(d, dim());
  USER_CHECK(step > 0, "slice: step must be positive, got {}", step);
  int64_t n = sizes_[d];
  if (start < 0) start += n;
  if (end < 0) end += n;
  start = std::clamp<int64_t>(start, 0, n);
  end = std::clamp<int64_t>(end, start, n);
  Shape sz = sizes_, st = strides_;
  sz[d] = (end - start + step - 1) / step;
  st[d] = strides_[d] * step;
  return asStrided(std::move(sz), std::move(st), offset_ + start * strides_[d]);
}

std::vector<Tensor> Tensor::chunk(int64_t chunks, int64_t d) const {
  USER_CHECK(chunks > 0, "chunk: number of chunks must be positive, got {}", chunks);
  d = wrapDim(d, dim());
  int64_t each = (sizes_[d] + chunks - 1) / chunks;
  std::vector<Tensor> out;
  for (int64_t start = 0; start < sizes_[d] || (out.empty() && sizes_[d] == 0); start += std::max<int64_t>(each, 1)) {
    out.push_back(narrow(d, start, std::min(each, sizes_[d] - start)));
    if (each == 0) break;
  }
  return out;
}

std::vector<Tensor> Tensor::unbind(int64_t d) const {
  d = wrapDim(d, dim());
  std::vector<Tensor> out;
  for (int64_t i = 0; i < sizes_[d]; ++i) out.push_back(select(d, i));
  return out;
}

Tensor Tensor::unsqueeze(int64_t d) const {
  d = wrapDim(d, dim() + 1);
  Shape sz = sizes_, st = strides_;
  int64_t s = d < dim() ? sizes_[d] * strides_[d] : 1;
  sz.insert(sz.begin() + d, 1);
  st.insert(st.begin() + d, s);
  return asStrided(std::move(sz), std::move(st), offset_);
}

Tensor Tensor::squeeze(int64_t d) const {
  if (dim() == 0) return *this;
  d = wrapDim(d, dim());
  if (sizes_[d] != 1) return *this;
  Shape sz = sizes_, st = strides_;
  sz.erase(sz.begin() + d);
  st.erase(st.begin() + d);
  return asStrided(std::move(sz), std::move(st), offset_);
}

Tensor Tensor::expand(std::span<const int64_t> sizes) const {
  int64_t rank = static_cast<int64_t>(sizes.size());
  USER_CHECK(rank >= dim(), "expand: target {} has fewer dimensions than the input {}",
             shapeStr(sizes), shapeStr(sizes_));
  Shape sz(rank), st(rank);
  for (int64_t i = rank - 1; i >= 0; --i) {
    int64_t j = i - (rank - dim());
    int64_t want = sizes[i];
    if (j < 0) {
      USER_CHECK(want >= 0, "expand: size -1 not allowed in a new leading dimension");
      sz[i] = want;
      st[i] = 0;
      continue;
    }
    if (want == -1) want = sizes_[j];
    USER_CHECK(sizes_[j] == want || sizes_[j] == 1, "expand: cannot expand {} to {} (dimension {}: {} vs {})",
               shapeStr(sizes_), shapeStr(sizes), i, sizes_[j], want);
    sz[i] = want;
    st[i] = sizes_[j] == want ? strides_[j] : 0;
  }
  return asStrided(std::move(sz), std::move(st), offset_);
}

// d[i * ldd + j] = s[i + j * lds] for a rows x cols matrix: a float32 transposed view copied into rows
// (contiguous-operands' row-major weight, once a forward). In forEachInTiles' tiles, each 4 x 4 block is
// four loads along the source's rows, a register transpose and four stores along the destination's:
// 4.5x the element-by-element walk at [2048, 512] (bench/interpreter_bench's TransposedCopy), whose reads
// down the columns do not vectorize.
static void copyTransposedFloat(float* d, int64_t ldd, const float* s, int64_t lds, int64_t rows, int64_t cols) {
  ops::forEachTile(rows, cols, [&](int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
    int64_t i = i0;
#if defined(__SSE2__)
    for (; i + 4 <= i1; i += 4) {
      int64_t j = j0;
      for (; j + 4 <= j1; j += 4) {
        const float* p = s + j * lds + i;
        __m128 r0 = _mm_loadu_ps(p), r1 = _mm_loadu_ps(p + lds), r2 = _mm_loadu_ps(p + 2 * lds),
               r3 = _mm_loadu_ps(p + 3 * lds);
        _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
        float* q = d + i * ldd + j;
        _mm_storeu_ps(q, r0);
        _mm_storeu_ps(q + ldd, r1);
        _mm_storeu_ps(q + 2 * ldd, r2);
        _mm_storeu_ps(q + 3 * ldd, r3);
      }
      for (; j < j1; ++j)
        for (int64_t k = 0; k < 4; ++k) d[(i + k) * ldd + j] = s[j * lds + i + k];
    }
#endif
    for (; i < i1; ++i)
      for (int64_t j = j0; j < j1; ++j) d[i * ldd + j] = s[j * lds + i];
  });
}

template <typename D, typename S>
static void copyTyped(const Tensor& dst, const Tensor& src) {
  D* d = static_cast<D*>(dst.rawData());
  const S* s = static_cast<const S*>(src.rawData());
  if constexpr (std::is_same_v<D, float> && std::is_same_v<S, float>) {
    if (dst.dim() == 2 && src.stride(0) == 1 && dst.stride(1) == 1 && src.stride(1) >= src.size(0) &&
        dst.stride(0) >= dst.size(1)) {
      copyTransposedFloat(d, dst.stride(0), s, src.stride(1), dst.size(0), dst.size(1));
      return;
    }
  }
  if (dst.dim() == 2 && src.stride(0) == 1 && src.stride(1) != 1 && dst.stride(0) != 0 && dst.stride(1) != 0) {
    // A transposed view (made contiguous, say): tiles, or every read misses the cache.
    const int64_t drs = dst.stride(0), dcs = dst.stride(1), srs = src.stride(0), scs = src.stride(1);
    ops::forEachInTiles(dst.size(0), dst.size(1), [&](int64_t i, int64_t j) {
      d[i * drs + j * dcs] = convertElement<D>(s[i * srs + j * scs]);
    });
    return;
  }
  ops::forEachOffset<2>(dst.sizes(), {dst.strides().data(), src.strides().data()},
                        [&](const std::array<int64_t, 2>& o) { d[o[0]] = convertElement<D>(s[o[1]]); });
}


void Tensor::copyFrom(const Tensor& src) const {
  Tensor s = src.sizes_ == sizes_ ? src : src.expand(sizes_);
  if (device() != DeviceKind::Cpu || s.device() != DeviceKind::Cpu) {
    copyAcrossDevices(s);
    return;
  }
  if (dtype_ == s.dtype_ && isContiguous() && s.isContiguous()) {
    std::memcpy(rawData(), s.rawData(), numel() * dtypeSize(dtype_));
    return;
  }
  visitDType(dtype_, [&]<typename D>(D) {
    visitDType(s.dtype_, [&]<typename S>(S) { copyTyped<D, S>(*this, s); });
  });
}

Tensor Tensor::hostMirror() const {
  Tensor h = *this;
  h.gradEdge_ = nullptr;
  h.storage_ = std::make_shared<Storage>(storage_->nbytes(), DeviceKind::Cpu);
  cuda::copyDeviceToHost(h.storage_->data(), storage_->data(), storage_->nbytes());
  return h;
}

void Tensor::copyAcrossDevices(const Tensor& src) const {
  size_t nbytes = numel() * dtypeSize(dtype_);
  if (dtype_ == src.dtype_ && isContiguous() && src.isContiguous()) {
    if (device() == DeviceKind::Cpu)
      cuda::copyDeviceToHost(rawData(), src.rawData(), nbytes);
    else if (src.device() == DeviceKind::Cpu)
      cuda::copyHostToDevice(rawData(), src.rawData(), nbytes);
    else
      cuda::copyDeviceToDevice(rawData(), src.rawData(), nbytes);
    return;
  }
  if (device() == DeviceKind::Cuda && src.device() == DeviceKind::Cuda) {
    cuda::copy(*this, src);  // a kernel: strides, broadcasts and conversions on the device
    return;
  }
  // Between host and device, anything else (a conversion, a broadcast, a strided view) goes through the
  // host, element by element.
  Tensor hostSrc = src.to(DeviceKind::Cpu);
  if (device() == DeviceKind::Cpu) {
    copyFrom(hostSrc);
    return;
  }
  if (isContiguous()) {
    Tensor staged = empty(sizes_, dtype_);
    staged.copyFrom(hostSrc);
    cuda::copyHostToDevice(rawData(), staged.rawData(), nbytes);
    return;
  }
  // A strided device view: write into a host copy of its whole storage and copy that back.
  Tensor mirror = hostMirror();
  mirror.copyFrom(hostSrc);
  cuda::copyHostToDevice(storage_->data(), mirror.storage_->data(), storage_->nbytes());
}

Tensor Tensor::to(DeviceKind device) const {
  if (device == this->device()) return *this;
  if (device == DeviceKind::Cpu && !isContiguous()) return hostMirror().contiguous();
  Tensor t = empty(sizes_, dtype_, device);
  t.copyFrom(device == DeviceKind::Cpu ? *this : contiguous());
  return t;
}

Tensor Tensor::contiguous() const { return isContiguous() ? *this : clone(); }

Tensor Tensor::clone() const {
  Tensor t = empty(sizes_, dtype_, device());
  t.copyFrom(*this);
  return t;
}

Tensor Tensor::to(DType dtype) const {
  if (dtype == dtype_) return *this;
  Tensor t = empty(sizes_, dtype, device());
  t.copyFrom(*this);
  return t;
}

std::string Tensor::toString(int64_t maxElements) const {
  if (!defined()) return "Tensor(undefined)";
  if (device() != DeviceKind::Cpu) return "cuda " + to(DeviceKind::Cpu).toString(maxElements);
  std::string s = fmt::format("Tensor({}, {}, [", dtypeName(dtype_), shapeStr(sizes_));
  int64_t n = std::min(numel(), maxElements);
  for (int64_t i = 0; i < n; ++i) s += fmt::format("{}{:.6g}", i ? ", " : "", item(i));
  if (n < numel()) s += ", ...";
  return s + "])";
}

}  // namespace gj
