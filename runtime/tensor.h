#pragma once
// Tensor: dtype, sizes, strides, device and shared storage. Views share storage; nothing is copied
// unless contiguous() or clone() is asked for.
#include "runtime/shape.h"
#include "support/dtype.h"
#include "support/half.h"

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace gj {

/// Where a tensor's gradient goes under autodiff. Defined by the executors (the runtime only carries it).
struct GradEdge;

/// A block of device memory. CPU storage is 64-byte aligned (see allocator.h).
class Storage {
 public:
  Storage(size_t nbytes, DeviceKind device);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  DeviceKind device() const { return device_; }

 private:
  void* data_ = nullptr;
  size_t nbytes_ = 0;
  DeviceKind device_;
};

/// Number of elements of a shape (1 for a 0-dim shape).
int64_t numelOf(std::span<const int64_t> sizes);
/// Contiguous (row-major) strides of a shape.
Shape contiguousStrides(std::span<const int64_t> sizes);
/// "[3, 4]"
std::string shapeStr(std::span<const int64_t> sizes);

class Tensor {
 public:
  /// An undefined tensor (defined() is false). Written out rather than defaulted: a defaulted one makes
  /// `Tensor{}` and `std::vector<Tensor>(n)` zero the whole object before the members' initializers run,
  /// a string store on the path of every kernel launch (Tensor::emptyInOneBlock).
  Tensor() noexcept {}  // NOLINT(modernize-use-equals-default)
  /// A new contiguous tensor with uninitialized contents.
  static Tensor empty(Shape sizes, DType dtype, DeviceKind device = DeviceKind::Cpu);
  /// New contiguous tensors, the i-th of sizes[i] and dtypes[i], laid out one after another (each
  /// 64-byte aligned) in one block of memory: one allocation where empty() makes one per tensor. Each
  /// keeps the whole block alive, so this is for small tensors made together (a fused kernel's outputs).
  static std::vector<Tensor> emptyInOneBlock(std::span<const Shape> sizes, std::span<const DType> dtypes,
                                             DeviceKind device = DeviceKind::Cpu);
  static Tensor zeros(Shape sizes, DType dtype, DeviceKind device = DeviceKind::Cpu);
  /// Every element `value`; on CUDA filled on the current stream (no host copy, so it can be captured).
  static Tensor full(Shape sizes, DType dtype, double value, DeviceKind device = DeviceKind::Cpu);
  /// A 0-dim tensor holding `value`.
  static Tensor scalar(double value, DType dtype);
  /// A contiguous tensor from host data, converted to `dtype`.
  static Tensor fromVector(Shape sizes, const std::vector<double>& data, DType dtype = DType::Float32);
  /// Uniform values in [lo, hi) from a seeded generator (deterministic across machines).
  static Tensor rand(Shape sizes, DType dtype, uint64_t seed, double lo = -1.0, double hi = 1.0);

  bool defined() const { return storage_ != nullptr; }
  DType dtype() const { return dtype_; }
  DeviceKind device() const { return storage_ ? storage_->device() : DeviceKind::Cpu; }
  int64_t dim() const { return static_cast<int64_t>(sizes_.size()); }
  const Shape& sizes() const { return sizes_; }
  const Shape& strides() const { return strides_; }
  /// Size of dimension d; negative d counts from the end.
  int64_t size(int64_t d) const;
  int64_t stride(int64_t d) const;
  int64_t numel() const { return numelOf(sizes_); }
  int64_t offset() const { return offset_; }
  bool isContiguous() const;
  const std::shared_ptr<Storage>& storage() const { return storage_; }

  /// Pointer to the first element; T must match dtype().
  template <typename T>
  T* data() const;
  void* rawData() const;

  /// Element access by flat row-major index (slow; for tests and tools).
  double item(int64_t flatIndex = 0) const;

  // ---- views (share storage) ----
  Tensor view(Shape sizes) const;      ///< -1 allowed once; requires compatible strides.
  Tensor reshape(Shape sizes) const;   ///< a view when possible, else a copy.
  Tensor transpose(int64_t d0, int64_t d1) const;
  Tensor t() const;                    ///< transpose of a matrix (dim <= 2).
  Tensor permute(std::span<const int64_t> dims) const;
  Tensor select(int64_t d, int64_t index) const;
  Tensor slice(int64_t d, int64_t start, int64_t end, int64_t step = 1) const;
  Tensor narrow(int64_t d, int64_t start, int64_t length) const { return slice(d, start, start + length); }
  std::vector<Tensor> chunk(int64_t chunks, int64_t d) const;
  std::vector<Tensor> unbind(int64_t d) const;
  Tensor unsqueeze(int64_t d) const;
  Tensor squeeze(int64_t d) const;
  Tensor expand(std::span<const int64_t> sizes) const;
  Tensor asStrided(Shape sizes, Shape strides, int64_t offset) const;

  // ---- copies ----
  Tensor contiguous() const;
  Tensor clone() const;
  Tensor to(DType dtype) const;
  /// The same values on `device` (itself when already there); a contiguous copy otherwise.
  Tensor to(DeviceKind device) const;
  /// Copies src (same sizes; src may broadcast) into *this, converting dtype. Across devices, a
  /// contiguous copy of one dtype is one transfer; anything else is done on the host.
  void copyFrom(const Tensor& src) const;

  std::string toString(int64_t maxElements = 20) const;

  /// The autodiff edge attached to this tensor, or null. Copies and views made from it do not keep it
  /// unless they are copies of the Tensor object itself.
  const std::shared_ptr<const GradEdge>& gradEdge() const { return gradEdge_; }
  /// The same tensor (same storage and view) with `edge` attached; null detaches.
  Tensor withGradEdge(std::shared_ptr<const GradEdge> edge) const {
    Tensor t = *this;
    t.gradEdge_ = std::move(edge);
    return t;
  }

 private:
  /// This view over a host copy of its (device) storage.
  Tensor hostMirror() const;
  void copyAcrossDevices(const Tensor& src) const;

  std::shared_ptr<Storage> storage_;
  int64_t offset_ = 0;
  Shape sizes_, strides_;
  DType dtype_ = DType::Float32;
  std::shared_ptr<const GradEdge> gradEdge_;
};

/// A tensor as an operand of type promotion (support/dtype.h's resultType): 0-dim or with dimensions.
inline PromotionOperand promotionOperand(const Tensor& t) {
  return {t.dtype(), t.dim() == 0 ? OperandKind::ZeroDim : OperandKind::Dimensioned};
}

/// Normalizes a possibly negative dimension index against `rank`; throws gj::Error if out of range.
int64_t wrapDim(int64_t d, int64_t rank);

/// The C++ type of each DType, for kernels templated on the element type.
template <DType D> struct CType;
template <> struct CType<DType::Float32> { using type = float; };
template <> struct CType<DType::Float64> { using type = double; };
template <> struct CType<DType::Int64> { using type = int64_t; };
template <> struct CType<DType::Bool> { using type = bool; };
template <> struct CType<DType::UInt8> { using type = uint8_t; };
template <> struct CType<DType::Int8> { using type = int8_t; };
template <> struct CType<DType::Int16> { using type = int16_t; };
template <> struct CType<DType::Int32> { using type = int32_t; };
template <> struct CType<DType::Float16> { using type = Half; };
template <> struct CType<DType::BFloat16> { using type = BFloat16; };

template <typename T> constexpr DType dtypeOf();
template <> constexpr DType dtypeOf<float>() { return DType::Float32; }
template <> constexpr DType dtypeOf<double>() { return DType::Float64; }
template <> constexpr DType dtypeOf<int64_t>() { return DType::Int64; }
template <> constexpr DType dtypeOf<bool>() { return DType::Bool; }
template <> constexpr DType dtypeOf<uint8_t>() { return DType::UInt8; }
template <> constexpr DType dtypeOf<int8_t>() { return DType::Int8; }
template <> constexpr DType dtypeOf<int16_t>() { return DType::Int16; }
template <> constexpr DType dtypeOf<int32_t>() { return DType::Int32; }
template <> constexpr DType dtypeOf<Half>() { return DType::Float16; }
template <> constexpr DType dtypeOf<BFloat16>() { return DType::BFloat16; }

/// f(T{}) for the element type T of dtype t: one switch for code that handles every dtype alike.
template <typename F>
decltype(auto) visitDType(DType t, F&& f) {
  switch (t) {
    case DType::Float32: return f(float{});
    case DType::Float64: return f(double{});
    case DType::Int64: return f(int64_t{});
    case DType::Bool: return f(bool{});
    case DType::UInt8: return f(uint8_t{});
    case DType::Int8: return f(int8_t{});
    case DType::Int16: return f(int16_t{});
    case DType::Int32: return f(int32_t{});
    case DType::Float16: return f(Half{});
    case DType::BFloat16: return f(BFloat16{});
  }
  return f(float{});
}

}  // namespace gj
