#include "runtime/ops/loops.h"
#include "runtime/ops/ops.h"
#include "runtime/cuda/ops.h"
#include "support/error.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace gj::ops {

Shape broadcastShapes(std::span<const int64_t> a, std::span<const int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    USER_CHECK(da == db || da == 1 || db == 1, "shapes {} and {} do not broadcast (dimension {}: {} vs {})",
               shapeStr(a), shapeStr(b), i, da, db);
    out[i] = da == 1 ? db : da;
  }
  return out;
}

static void checkFloat(const Tensor& x, const char* op) {
  USER_CHECK(x.defined(), "{}: undefined tensor argument", op);
  USER_CHECK(isFloating(x.dtype()), "{}: expected a float32 or float64 tensor, got {}", op, dtypeName(x.dtype()));
}

template <typename T, typename F>
static Tensor mapBinary(const Tensor& a, const Tensor& b, F f) {
  Shape shape = broadcastShapes(a.sizes(), b.sizes());
  Tensor out = Tensor::empty(shape, a.dtype());
  T* o = out.data<T>();
  const T* pa = a.data<T>();
  const T* pb = b.data<T>();
  const int64_t n = out.numel();
  if (a.sizes() == shape && b.sizes() == shape && a.isContiguous() && b.isContiguous()) {
    parallelFor(n, n, [&](int64_t i) { o[i] = f(pa[i], pb[i]); });
    return out;
  }
  if (a.sizes() == shape && a.isContiguous() && b.numel() == 1) {
    const T s = pb[0];
    parallelFor(n, n, [&](int64_t i) { o[i] = f(pa[i], s); });
    return out;
  }
  Tensor ea = a.expand(shape), eb = b.expand(shape);
  forEachOffset<3>(shape, {out.strides().data(), ea.strides().data(), eb.strides().data()},
                   [&](const std::array<int64_t, 3>& off) { o[off[0]] = f(pa[off[1]], pb[off[2]]); });
  return out;
}

template <typename T>
static void accumulate(T* acc, const Tensor& x) {
  const T* px = x.data<T>();
  const int64_t n = x.numel();
  if (x.isContiguous()) {
    parallelFor(n, n, [&](int64_t i) { acc[i] += px[i]; });
    return;
  }
  if (x.dim() == 2) {  // a transposed x would miss the cache on every element in acc's order
    const int64_t cols = x.size(1), rs = x.stride(0), cs = x.stride(1);
    forEachInTiles(x.size(0), cols, [&](int64_t i, int64_t j) { acc[i * cols + j] += px[i * rs + j * cs]; });
    return;
  }
  const Shape strides = contiguousStrides(x.sizes());  // acc's
  forEachOffset<2>(x.sizes(), {strides.data(), x.strides().data()},
                   [&](const std::array<int64_t, 2>& off) { acc[off[0]] += px[off[1]]; });
}

void addInPlace(Tensor& acc, const Tensor& x) {
  checkFloat(acc, "addInPlace");
  checkFloat(x, "addInPlace");
  USER_CHECK(acc.isContiguous() && acc.sizes() == x.sizes() && acc.dtype() == x.dtype(),
             "addInPlace: a contiguous {} {} cannot take {} {}", dtypeName(acc.dtype()), shapeStr(acc.sizes()),
             dtypeName(x.dtype()), shapeStr(x.sizes()));
  if (acc.dtype() == DType::Float32) return accumulate(acc.data<float>(), x);
  accumulate(acc.data<double>(), x);
}

// x ** n for int64 x and n >= 0, wrapping on overflow as PyTorch's does (by squaring, in unsigned).
static int64_t integerPower(int64_t x, int64_t n) {
  uint64_t result = 1, base = static_cast<uint64_t>(x);
  for (; n > 0; n >>= 1, base *= base)
    if (n & 1) result *= base;
  return static_cast<int64_t>(result);
}

// Whether Python's modulo moves fmod's `mod` into the divisor y's sign: non-zero, of the other sign
// (remainder and floor division, as PyTorch's).
// lgamma through the reentrant lgamma_r (lgamma writes the process-wide signgam).
template <typename T>
static T lgammaOf(T x) {
  int sign = 0;
  if constexpr (std::is_same_v<T, float>) return ::lgammaf_r(x, &sign);
  else return ::lgamma_r(x, &sign);
}

// digamma as PyTorch's CPU kernel computes it (the oracle of support/pointwise.def's rule): the reflection
// on x's fraction below 0, the recurrence up to 10, then the asymptotic series in 1 / x^2.
template <typename T>
static T digammaOf(T x) {
  constexpr double kPi = 3.14159265358979323846;
  if (x == 0) return std::copysign(std::numeric_limits<T>::infinity(), -x);
  if (x < 0) {
    if (x == std::trunc(x)) return std::numeric_limits<T>::quiet_NaN();
    const T r = x - std::trunc(x);
    return digammaOf<T>(1 - x) - static_cast<T>(kPi) / std::tan(static_cast<T>(kPi) * r);
  }
  T result = 0;
  while (x < 10) {
    result -= 1 / x;
    x += 1;
  }
  const double z = 1.0 / (static_cast<double>(x) * x);
  const double series = z * (1.0 / 12 - z * (1.0 / 120 - z * (1.0 / 252 - z * (1.0 / 240 - z * (1.0 / 132)))));
  return static_cast<T>(result + std::log(static_cast<double>(x)) - 0.5 / x - series);
}

template <typename T>
static bool movesToDivisorSign(T mod, T y) {
  return mod != 0 && (y < 0) != (mod < 0);
}

// The binary ops PyTorch computes in integers, on int64 operands of one dtype (`scalar`: add's and sub's
// alpha, rsub's, clamp's upper bound, all integral here): exact, wrapping on overflow as two's
// complement (computed in unsigned, where C++ defines it). Bool operands go through int64 and back, as
// PyTorch's bool arithmetic does (add is or, mul is and); the rest of the ops take float operands.
static Tensor integral(const char* op, PointwiseOp code, double scalar, const Tensor& a, const Tensor& b) {
  if (a.dtype() == DType::Bool) {
    USER_CHECK(code == PointwiseOp::Add || code == PointwiseOp::Mul || code == PointwiseOp::Maximum ||
                   code == PointwiseOp::Minimum,
               "{}: two bool operands, which PyTorch refuses too; convert one with .to(torch.int64) first", op);
    return integral(op, code, scalar, a.to(DType::Int64), b.to(DType::Int64)).to(DType::Bool);
  }
  // An infinite bound (clamp's absent one) is the end of int64's range.
  const int64_t s = std::isinf(scalar) ? (scalar > 0 ? std::numeric_limits<int64_t>::max()
                                                     : std::numeric_limits<int64_t>::min())
                                       : static_cast<int64_t>(scalar);
  USER_CHECK(std::isinf(scalar) || static_cast<double>(s) == scalar,
             "{}: an int64 operation with the non-integral scalar {}", op, scalar);
  const bool divides = code == PointwiseOp::DivTrunc || code == PointwiseOp::DivFloor || code == PointwiseOp::Fmod ||
                       code == PointwiseOp::TensorRemainder;
  if (divides && onCuda(a, b))  // on the host, which can raise PyTorch's error for a zero divisor
    return integral(op, code, scalar, a.to(DeviceKind::Cpu), b.to(DeviceKind::Cpu)).to(DeviceKind::Cuda);
  if (onCuda(a, b)) return cuda::mapIntegral(code, a, b, s);
  using U = uint64_t;
  auto wrap = [](U v) { return static_cast<int64_t>(v); };
  // Integer division as PyTorch's: a zero divisor is an error (its ZeroDivisionError), and -1 divides
  // without the overflow of INT64_MIN / -1 (the quotient wraps, the remainder is 0).
  auto divisor = [op](int64_t y) {
    if (y == 0) throw Error(fmt::format("{}: integer division by zero (PyTorch raises ZeroDivisionError)", op));
    return y;
  };
  auto quotient = [&](int64_t x, int64_t y) { return divisor(y) == -1 ? wrap(U(0) - U(x)) : x / y; };
  auto remainderOf = [&](int64_t x, int64_t y) { return divisor(y) == -1 ? int64_t{0} : x % y; };
  switch (code) {
    case PointwiseOp::Add: return mapBinary<int64_t>(a, b, [&](int64_t x, int64_t y) { return wrap(U(x) + U(s) * U(y)); });
    case PointwiseOp::Sub: return mapBinary<int64_t>(a, b, [&](int64_t x, int64_t y) { return wrap(U(x) - U(s) * U(y)); });
    case PointwiseOp::Mul: return mapBinary<int64_t>(a, b, [&](int64_t x, int64_t y) { return wrap(U(x) * U(y)); });
    case PointwiseOp::Rsub: return mapBinary<int64_t>(a, b, [&](int64_t x, int64_t y) { return wrap(U(y) - U(s) * U(x)); });
    case PointwiseOp::ClampMin: return mapBinary<int64_t>(a, b, [](int64_t x, int64_t lo) { return x < lo ? lo : x; });
    case PointwiseOp::ClampMax: return mapBinary<int64_t>(a, b, [](int64_t x, int64_t hi) { return x > hi ? hi : x; });
    case PointwiseOp::Clamp: case PointwiseOp::Hardtanh:
      return mapBinary<int64_t>(a, b, [&](int64_t x, int64_t lo) { return x < lo ? (lo > s ? s : lo) : x > s ? s : x; });
    case PointwiseOp::Maximum: return mapBinary<int64_t>(a, b, [](int64_t x, int64_t y) { return std::max(x, y); });
    case PointwiseOp::Minimum: return mapBinary<int64_t>(a, b, [](int64_t x, int64_t y) { return std::min(x, y); });
    case PointwiseOp::Pow:  // by a negative tensor element as PyTorch's: 1 and -1 keep their magnitude, all else 0
      return mapBinary<int64_t>(a, b, [](int64_t x, int64_t n) {
        if (n >= 0) return integerPower(x, n);
        if (x == 1) return int64_t{1};
        if (x == -1) return n % 2 ? int64_t{-1} : int64_t{1};
        return int64_t{0};
      });
    case PointwiseOp::DivTrunc: return mapBinary<int64_t>(a, b, quotient);
    case PointwiseOp::DivFloor:
      return mapBinary<int64_t>(a, b, [&](int64_t x, int64_t y) {
        const int64_t q = quotient(x, y);
        return movesToDivisorSign(remainderOf(x, y), y) ? q - 1 : q;
      });
    case PointwiseOp::Fmod: return mapBinary<int64_t>(a, b, remainderOf);
    case PointwiseOp::TensorRemainder:
      return mapBinary<int64_t>(a, b, [&](int64_t x, int64_t y) {
        const int64_t r = remainderOf(x, y);
        return movesToDivisorSign(r, y) ? r + y : r;
      });
    default: break;
  }
  throw Error(fmt::format("{}: expected a float32 or float64 tensor, got {}", op, dtypeName(a.dtype())));
}

// `code` and `scalar` are the op as a device tensor's kernel runs it (cuda::map).
template <typename F>
static Tensor binary(const char* op, PointwiseOp code, double scalar, const Tensor& a, const Tensor& b, F f) {
  USER_CHECK(a.defined() && b.defined(), "{}: undefined tensor argument", op);
  if (a.dtype() != b.dtype()) {  // type promotion: compute in the result's dtype
    DType t = resultType({promotionOperand(a), promotionOperand(b)});
    return binary(op, code, scalar, a.to(t), b.to(t), f);
  }
  if (!isFloating(a.dtype()) && promotesIntegersToFloat(code))
    return binary(op, code, scalar, a.to(DType::Float32), b.to(DType::Float32), f);
  if (!isFloating(a.dtype())) return integral(op, code, scalar, a, b);
  if (onCuda(a, b)) return cuda::map(code, a, b, scalar);
  if (a.dtype() == DType::Float32) return mapBinary<float>(a, b, [&](float x, float y) { return f(x, y); });
  return mapBinary<double>(a, b, [&](double x, double y) { return f(x, y); });
}

Tensor add(const Tensor& a, const Tensor& b, double alpha) {
  if (alpha == 1.0) return binary("add", PointwiseOp::Add, 1.0, a, b, [](auto x, auto y) { return x + y; });
  return binary("add", PointwiseOp::Add, alpha, a, b,
                [alpha](auto x, auto y) { return x + static_cast<decltype(x)>(alpha) * y; });
}

Tensor sub(const Tensor& a, const Tensor& b, double alpha) {
  if (alpha == 1.0) return binary("sub", PointwiseOp::Sub, 1.0, a, b, [](auto x, auto y) { return x - y; });
  return binary("sub", PointwiseOp::Sub, alpha, a, b,
                [alpha](auto x, auto y) { return x - static_cast<decltype(x)>(alpha) * y; });
}

Tensor mul(const Tensor& a, const Tensor& b) {
  return binary("mul", PointwiseOp::Mul, 1.0, a, b, [](auto x, auto y) { return x * y; });
}
// True division: integer and bool operands divide in the default float dtype (promotesIntegersToFloat).
Tensor div(const Tensor& a, const Tensor& b) {
  return binary("div", PointwiseOp::Div, 1.0, a, b, [](auto x, auto y) { return x / y; });
}

template <typename T, typename F>
static Tensor mapUnary(const Tensor& x, F f) {
  Tensor out = Tensor::empty(x.sizes(), x.dtype());
  T* o = out.data<T>();
  const T* p = x.data<T>();
  const int64_t n = out.numel();
  if (x.isContiguous()) {
    parallelFor(n, n, [&](int64_t i) { o[i] = f(p[i]); });
    return out;
  }
  forEachOffset<2>(x.sizes(), {out.strides().data(), x.strides().data()},
                   [&](const std::array<int64_t, 2>& off) { o[off[0]] = f(p[off[1]]); });
  return out;
}

template <typename F>
static Tensor unary(const char* op, PointwiseOp code, const Tensor& x, F f) {
  USER_CHECK(x.defined(), "{}: undefined tensor argument", op);
  if (!isFloating(x.dtype()) && promotesIntegersToFloat(code)) return unary(op, code, x.to(DType::Float32), f);
  // An integer is its own floor, ceiling, rounding and truncation, and a bool its own sign, as in PyTorch.
  const bool rounds = code == PointwiseOp::Floor || code == PointwiseOp::Ceil || code == PointwiseOp::Round ||
                      code == PointwiseOp::Trunc;
  if ((x.dtype() == DType::Int64 && rounds) || (x.dtype() == DType::Bool && code == PointwiseOp::Sign)) return x.clone();
  if (x.dtype() == DType::Int64 && (code == PointwiseOp::Neg || code == PointwiseOp::Abs ||
                                    code == PointwiseOp::Sign || code == PointwiseOp::Relu)) {
    // PyTorch's integer forms (neg wraps at the smallest value, as two's complement does).
    if (onCuda(x)) return cuda::mapIntegral(code, x, x, 1);
    return mapUnary<int64_t>(x, [code](int64_t v) {
      const uint64_t u = static_cast<uint64_t>(v);
      switch (code) {
        case PointwiseOp::Neg: return static_cast<int64_t>(0 - u);
        case PointwiseOp::Abs: return v < 0 ? static_cast<int64_t>(0 - u) : v;
        case PointwiseOp::Sign: return int64_t{(v > 0) - (v < 0)};
        default: return v < 0 ? int64_t{0} : v;
      }
    });
  }
  checkFloat(x, op);
  if (onCuda(x)) return cuda::map(code, x, Tensor());
  if (x.dtype() == DType::Float32) return mapUnary<float>(x, [&](float v) { return f(v); });
  return mapUnary<double>(x, [&](double v) { return f(v); });
}

Tensor neg(const Tensor& x) { return unary("neg", PointwiseOp::Neg, x, [](auto v) { return -v; }); }
Tensor sigmoid(const Tensor& x) {
  return unary("sigmoid", PointwiseOp::Sigmoid, x,
               [](auto v) { return decltype(v)(1) / (decltype(v)(1) + std::exp(-v)); });
}
Tensor tanh(const Tensor& x) { return unary("tanh", PointwiseOp::Tanh, x, [](auto v) { return std::tanh(v); }); }
// relu keeps NaN, as PyTorch does.
Tensor relu(const Tensor& x) {
  return unary("relu", PointwiseOp::Relu, x, [](auto v) { return v < 0 ? decltype(v)(0) : v; });
}
Tensor exp(const Tensor& x) { return unary("exp", PointwiseOp::Exp, x, [](auto v) { return std::exp(v); }); }
Tensor log(const Tensor& x) { return unary("log", PointwiseOp::Log, x, [](auto v) { return std::log(v); }); }
Tensor sqrt(const Tensor& x) { return unary("sqrt", PointwiseOp::Sqrt, x, [](auto v) { return std::sqrt(v); }); }

// The dtype two operands meet in: PyTorch's promotion (a number the interpreter made a 0-dim tensor already
// has its promoted dtype, so that promoting it as a 0-dim tensor agrees).
static DType commonDtype(const Tensor& a, const Tensor& b) {
  return resultType({promotionOperand(a), promotionOperand(b)});
}

// f(T) for the C++ type T of the compute dtype t (the interpreter widens storage dtypes before a kernel).
template <typename F>
static auto visitDtype(DType t, F f) {
  IR_CHECK(!isStorageOnly(t)) << "a pointwise kernel given a " << dtypeName(t) << " tensor";
  if (t == DType::Float32) return f(float{});
  if (t == DType::Float64) return f(double{});
  if (t == DType::Int64) return f(int64_t{});
  return f(bool{});
}

template <typename T, typename F>
static Tensor compareTyped(const Tensor& a, const Tensor& b, F f) {
  const Shape shape = broadcastShapes(a.sizes(), b.sizes());
  Tensor out = Tensor::empty(shape, DType::Bool);
  bool* o = out.data<bool>();
  const T* pa = a.data<T>();
  const T* pb = b.data<T>();
  Tensor ea = a.expand(shape), eb = b.expand(shape);
  forEachOffset<3>(shape, {out.strides().data(), ea.strides().data(), eb.strides().data()},
                   [&](const std::array<int64_t, 3>& off) { o[off[0]] = f(pa[off[1]], pb[off[2]]); });
  return out;
}

Tensor compare(PointwiseOp op, const Tensor& a0, const Tensor& b0) {
  USER_CHECK(a0.defined() && b0.defined(), "comparison: undefined tensor argument");
  const DType t = commonDtype(a0, b0);
  if (onCuda(a0, b0)) {  // the device's pointwise kernel gives 1 or 0 in a float dtype (int64 exact below 2^53)
    const DType f = isFloating(t) ? t : DType::Float64;
    return cuda::map(op, a0.to(f), b0.to(f)).to(DType::Bool);
  }
  const Tensor a = a0.to(t), b = b0.to(t);
  return visitDtype(t, [&](auto zero) {
    using T = decltype(zero);
    switch (op) {
      case PointwiseOp::Gt: return compareTyped<T>(a, b, [](T x, T y) { return x > y; });
      case PointwiseOp::Lt: return compareTyped<T>(a, b, [](T x, T y) { return x < y; });
      case PointwiseOp::Ge: return compareTyped<T>(a, b, [](T x, T y) { return x >= y; });
      case PointwiseOp::Le: return compareTyped<T>(a, b, [](T x, T y) { return x <= y; });
      case PointwiseOp::Eq: return compareTyped<T>(a, b, [](T x, T y) { return x == y; });
      case PointwiseOp::Ne: return compareTyped<T>(a, b, [](T x, T y) { return x != y; });
      default: break;
    }
    throw Error(fmt::format("pointwise op {} is no comparison", static_cast<int>(op)));
  });
}

// out[i] = f(a[i], b[i], c[i]) over the three broadcast together, of element types A, B, C and the result's T.
template <typename T, typename A, typename B, typename C, typename F>
static Tensor mapThree(const Tensor& a, const Tensor& b, const Tensor& c, F f) {
  const Shape shape = broadcastShapes(broadcastShapes(a.sizes(), b.sizes()), c.sizes());
  Tensor out = Tensor::empty(shape, dtypeOf<T>());
  Tensor ea = a.expand(shape), eb = b.expand(shape), ec = c.expand(shape);
  T* o = out.data<T>();
  const A* pa = a.data<A>();
  const B* pb = b.data<B>();
  const C* pc = c.data<C>();
  forEachOffset<4>(shape, {out.strides().data(), ea.strides().data(), eb.strides().data(), ec.strides().data()},
                   [&](const std::array<int64_t, 4>& off) { o[off[0]] = f(pa[off[1]], pb[off[2]], pc[off[3]]); });
  return out;
}

static const char* bitwiseName(BitwiseOp op) {
  switch (op) {
    case BitwiseOp::And: return "__and__";
    case BitwiseOp::Or: return "__or__";
    case BitwiseOp::Xor: return "__xor__";
    case BitwiseOp::LeftShift: return "__lshift__";
    case BitwiseOp::RightShift: return "__rshift__";
  }
  return "?";
}

// In int64 (the interpreter widens narrower integers first, whose results wrap back into their width). A
// shift by a negative count or by 64 or more gives 0, or the sign for a right shift, as PyTorch 2 defines
// it (PyTorch 1.13 took the count modulo the width, as x86 does).
Tensor bitwise(BitwiseOp op, const Tensor& a, const Tensor& b) {
  const char* name = bitwiseName(op);
  USER_CHECK(a.defined() && b.defined(), "{}: undefined tensor argument", name);
  USER_CHECK(!isFloating(a.dtype()) && !isFloating(b.dtype()),
             "{}: expected integer or bool tensors, got {} and {} (PyTorch refuses float ones too)", name,
             dtypeName(a.dtype()), dtypeName(b.dtype()));
  if (onCuda(a, b)) return bitwise(op, a.to(DeviceKind::Cpu), b.to(DeviceKind::Cpu)).to(DeviceKind::Cuda);
  const DType t = resultType({promotionOperand(a), promotionOperand(b)});
  const bool shift = op == BitwiseOp::LeftShift || op == BitwiseOp::RightShift;
  USER_CHECK(t != DType::Bool || !shift, "{}: bool tensors cannot be shifted (PyTorch refuses it too); hint: convert "
             "with .to(torch.int64) first", name);
  const Tensor x = a.to(DType::Int64), y = b.to(DType::Int64);
  auto with = [&](auto f) { return mapBinary<int64_t>(x, y, f).to(t); };
  switch (op) {
    case BitwiseOp::And: return with([](int64_t p, int64_t q) { return p & q; });
    case BitwiseOp::Or: return with([](int64_t p, int64_t q) { return p | q; });
    case BitwiseOp::Xor: return with([](int64_t p, int64_t q) { return p ^ q; });
    case BitwiseOp::LeftShift:
      return with([](int64_t p, int64_t c) {
        return c < 0 || c >= 64 ? int64_t{0} : static_cast<int64_t>(static_cast<uint64_t>(p) << c);
      });
    case BitwiseOp::RightShift:
      return with([](int64_t p, int64_t c) { return c < 0 || c >= 64 ? (p < 0 ? int64_t{-1} : int64_t{0}) : p >> c; });
  }
  return Tensor();
}

Tensor bitwiseNot(const Tensor& x) {
  USER_CHECK(x.defined(), "bitwise_not: undefined tensor argument");
  USER_CHECK(!isFloating(x.dtype()), "bitwise_not: expected an integer or bool tensor, got {} (PyTorch refuses a "
             "float one too)", dtypeName(x.dtype()));
  if (onCuda(x, x)) return bitwiseNot(x.to(DeviceKind::Cpu)).to(DeviceKind::Cuda);
  if (x.dtype() == DType::Bool) return mapUnary<bool>(x, [](bool v) { return !v; });
  return mapUnary<int64_t>(x.to(DType::Int64), [](int64_t v) { return ~v; }).to(x.dtype());
}

Tensor where(const Tensor& cond, const Tensor& a0, const Tensor& b0) {
  USER_CHECK(cond.defined() && a0.defined() && b0.defined(), "where: undefined tensor argument");
  USER_CHECK(cond.dtype() == DType::Bool, "where: the condition must be a bool tensor, got {}", dtypeName(cond.dtype()));
  const DType t = commonDtype(a0, b0);
  const Tensor a = a0.to(t), b = b0.to(t);
  if (onCuda(cond, a) || onCuda(b)) {
    if (isFloating(t)) return cuda::map(PointwiseOp::Where, cond.to(t), a, 1.0, b);
    // int64 exactly, bool through int64 and back
    const DType i = DType::Int64;
    const Tensor r = cuda::mapIntegral(PointwiseOp::Where, cond.to(i), a.to(i), 1, b.to(i));
    return t == i ? r : r.to(t);
  }
  return visitDtype(t, [&](auto zero) {
    using T = decltype(zero);
    return mapThree<T, bool, T, T>(cond, a, b, [](bool c, T x, T y) { return c ? x : y; });
  });
}

Tensor maximumBackward(const Tensor& g, const Tensor& x0, const Tensor& y0) {
  checkFloat(g, "maximum_backward");
  checkFloat(x0, "maximum_backward");
  checkFloat(y0, "maximum_backward");
  const DType t = resultType({promotionOperand(g), promotionOperand(x0), promotionOperand(y0)});
  const Tensor x = x0.to(t), y = y0.to(t), gt = g.to(t);
  if (onCuda(gt, x) || onCuda(y)) return cuda::map(PointwiseOp::MaximumBackward, gt, x, 1.0, y);
  auto rule = [](auto gv, auto xv, auto yv) { return xv > yv ? gv : xv < yv ? 0 : xv == yv ? gv / 2 : gv; };
  if (t == DType::Float32) return mapThree<float, float, float, float>(gt, x, y, rule);
  return mapThree<double, double, double, double>(gt, x, y, rule);
}

// The reference of every pointwise op (the interpreter's; graphjit's generated code is tested against it):
// formulas of the CPU's own, independent of support/pointwise.def's rules.
Tensor pointwise(PointwiseOp op, const Tensor& a, const Tensor& b, double scalar) {
  switch (op) {
    case PointwiseOp::Add: return add(a, b, scalar);
    case PointwiseOp::Sub: return sub(a, b, scalar);
    case PointwiseOp::Mul: return mul(a, b);
    case PointwiseOp::Div: return div(a, b);
    case PointwiseOp::Neg: return neg(a);
    case PointwiseOp::Sigmoid: return sigmoid(a);
    case PointwiseOp::Tanh: return tanh(a);
    case PointwiseOp::Relu: return relu(a);
    case PointwiseOp::Exp: return exp(a);
    case PointwiseOp::Log: return log(a);
    case PointwiseOp::Sqrt: return sqrt(a);
    case PointwiseOp::Rsqrt: return unary("rsqrt", op, a, [](auto v) { return decltype(v)(1) / std::sqrt(v); });
    case PointwiseOp::Rsub:
      return binary("rsub", op, scalar, a, b, [scalar](auto x, auto y) { return y - static_cast<decltype(x)>(scalar) * x; });
    case PointwiseOp::Pow: return binary("pow", op, 0.0, a, b, [](auto x, auto y) { return std::pow(x, y); });
    case PointwiseOp::Abs: return unary("abs", op, a, [](auto v) { return std::fabs(v); });
    case PointwiseOp::Sign: return unary("sign", op, a, [](auto v) { return decltype(v)((v > 0) - (v < 0)); });
    case PointwiseOp::Reciprocal: return unary("reciprocal", op, a, [](auto v) { return 1 / v; });
    case PointwiseOp::ClampMin: return binary("clamp_min", op, 0.0, a, b, [](auto x, auto lo) { return x < lo ? lo : x; });
    case PointwiseOp::ClampMax: return binary("clamp_max", op, 0.0, a, b, [](auto x, auto hi) { return x > hi ? hi : x; });
    case PointwiseOp::Clamp:
    case PointwiseOp::Hardtanh:  // NaN stays NaN: std::min / std::max would return a bound
      return binary(op == PointwiseOp::Clamp ? "clamp" : "hardtanh", op, scalar, a, b, [scalar](auto x, auto lo) {
        const auto hi = static_cast<decltype(x)>(scalar);
        return std::isnan(x) ? x : x < lo ? (lo > hi ? hi : lo) : x > hi ? hi : x;
      });
    case PointwiseOp::Maximum:
      return binary("maximum", op, 0.0, a, b, [](auto x, auto y) { return std::isnan(x) || std::isnan(y) ? x + y : std::fmax(x, y); });
    case PointwiseOp::Minimum:
      return binary("minimum", op, 0.0, a, b, [](auto x, auto y) { return std::isnan(x) || std::isnan(y) ? x + y : std::fmin(x, y); });
    case PointwiseOp::Erf: return unary("erf", op, a, [](auto v) { return std::erf(v); });
    case PointwiseOp::Sin: return unary("sin", op, a, [](auto v) { return std::sin(v); });
    case PointwiseOp::Cos: return unary("cos", op, a, [](auto v) { return std::cos(v); });
    case PointwiseOp::Expm1: return unary("expm1", op, a, [](auto v) { return std::expm1(v); });
    case PointwiseOp::Log1p: return unary("log1p", op, a, [](auto v) { return std::log1p(v); });
    case PointwiseOp::Atan: return unary("atan", op, a, [](auto v) { return std::atan(v); });
    case PointwiseOp::Asin: return unary("asin", op, a, [](auto v) { return std::asin(v); });
    case PointwiseOp::Acos: return unary("acos", op, a, [](auto v) { return std::acos(v); });
    case PointwiseOp::Sinh: return unary("sinh", op, a, [](auto v) { return std::sinh(v); });
    case PointwiseOp::Cosh: return unary("cosh", op, a, [](auto v) { return std::cosh(v); });
    case PointwiseOp::Erfc: return unary("erfc", op, a, [](auto v) { return std::erfc(v); });
    case PointwiseOp::Lgamma: return unary("lgamma", op, a, [](auto v) { return lgammaOf(v); });
    case PointwiseOp::Digamma: return unary("digamma", op, a, [](auto v) { return digammaOf(v); });
    case PointwiseOp::Floor: return unary("floor", op, a, [](auto v) { return std::floor(v); });
    case PointwiseOp::Ceil: return unary("ceil", op, a, [](auto v) { return std::ceil(v); });
    case PointwiseOp::Trunc: return unary("trunc", op, a, [](auto v) { return std::trunc(v); });
    case PointwiseOp::Round: return unary("round", op, a, [](auto v) { return std::nearbyint(v); });  // halves to even
    case PointwiseOp::Frac: return unary("frac", op, a, [](auto v) { return v - std::trunc(v); });
    case PointwiseOp::Gelu:  // x Phi(x) through erfc, accurate where erf's 1 + erf(x) cancels
      return unary("gelu", op, a, [](auto v) { return v * decltype(v)(0.5) * std::erfc(-v / std::sqrt(decltype(v)(2))); });
    case PointwiseOp::Silu: return unary("silu", op, a, [](auto v) { return v / (1 + std::exp(-v)); });
    case PointwiseOp::Hardswish:  // as PyTorch's: x * min(max(x + 3, 0), 6) / 6, NaN kept
      return unary("hardswish", op, a, [](auto v) {
        using T = decltype(v);
        const T r = std::isnan(v) ? v : std::min(std::max(v + T(3), T(0)), T(6));
        return v * r / T(6);
      });
    case PointwiseOp::LeakyRelu:
      return binary("leaky_relu", op, 0.0, a, b, [](auto x, auto slope) { return x > 0 ? x : x * slope; });
    case PointwiseOp::Atan2: return binary("atan2", op, 0.0, a, b, [](auto y, auto x) { return std::atan2(y, x); });
    case PointwiseOp::Fmod: return binary("fmod", op, 0.0, a, b, [](auto x, auto y) { return std::fmod(x, y); });
    case PointwiseOp::TensorRemainder:  // as PyTorch's: fmod, moved into the sign of other
      return binary("remainder", op, 0.0, a, b, [](auto x, auto y) {
        const auto r = std::fmod(x, y);
        return movesToDivisorSign(r, y) ? r + y : r;
      });
    case PointwiseOp::DivTrunc: return binary("div_trunc", op, 0.0, a, b, [](auto x, auto y) { return std::trunc(x / y); });
    case PointwiseOp::DivFloor:  // as PyTorch's: from fmod, so that 1 // 0.1 is 9
      return binary("div_floor", op, 0.0, a, b, [](auto x, auto y) {
        using T = decltype(x);
        if (y == 0) return x / y;
        const T mod = std::fmod(x, y);
        T q = (x - mod) / y;
        if (movesToDivisorSign(mod, y)) q -= T(1);
        if (q == 0) return std::copysign(T(0), x / y);
        const T f = std::floor(q);
        return q - f > T(0.5) ? f + T(1) : f;
      });
    case PointwiseOp::Softplus:  // (self, beta, threshold as `scalar`)
      return binary("softplus", op, scalar, a, b, [s = scalar](auto x, auto beta) {
        return x * beta > static_cast<decltype(x)>(s) ? x : std::log1p(std::exp(x * beta)) / beta;
      });
    case PointwiseOp::Elu:  // (self, alpha, scale as `scalar`)
      return binary("elu", op, scalar, a, b, [s = scalar](auto x, auto alpha) {
        const auto scale = static_cast<decltype(x)>(s);
        return x <= 0 ? scale * alpha * std::expm1(x) : scale * x;
      });
    // (grad, self[, scalar]) -> self's gradient
    // the bound compared in the operands' dtype, as PyTorch compares a tensor with a number
    case PointwiseOp::ClampMinBackward:  // 0 where x is NaN, as the two below
      return binary("clamp_min_backward", op, scalar, a, b,
                    [s = scalar](auto g, auto x) { return x >= decltype(x)(s) ? g : decltype(g)(0); });
    case PointwiseOp::ClampMaxBackward:
      return binary("clamp_max_backward", op, scalar, a, b,
                    [s = scalar](auto g, auto x) { return x <= decltype(x)(s) ? g : decltype(g)(0); });
    case PointwiseOp::BelowBackward:  // g where x is NaN
      return binary("below_backward", op, scalar, a, b,
                    [s = scalar](auto g, auto x) { return x >= decltype(x)(s) ? decltype(g)(0) : g; });
    case PointwiseOp::EqualMask:  // NaN equals nothing: a row holding one gets a NaN gradient, as in PyTorch
      return binary("equal_mask", op, 0.0, a, b, [](auto x, auto y) { return decltype(x)(x == y); });
    case PointwiseOp::MaximumBackward:  // (grad, self, other as `scalar`); three tensors: maximumBackward
      return maximumBackward(a, b, Tensor::scalar(scalar, b.dtype()));
    case PointwiseOp::GeluBackward:
      return binary("gelu_backward", op, 0.0, a, b, [](auto g, auto x) {
        using T = decltype(x);
        const T cdf = T(0.5) * std::erfc(-x / std::sqrt(T(2)));
        const T pdf = std::exp(-x * x / 2) / std::sqrt(2 * T(M_PI));
        return g * (cdf + x * pdf);
      });
    case PointwiseOp::SiluBackward:
      return binary("silu_backward", op, 0.0, a, b, [](auto g, auto x) {
        const auto s = 1 / (1 + std::exp(-x));
        return g * (s + x * s * (1 - s));
      });
    case PointwiseOp::HardswishBackward:
      return binary("hardswish_backward", op, 0.0, a, b, [](auto g, auto x) {
        using T = decltype(x);
        return x < T(-3) ? decltype(g)(0) : x < T(3) ? g * (x / T(3) + T(0.5)) : g;
      });
    case PointwiseOp::LeakyReluBackward:
      return binary("leaky_relu_backward", op, scalar, a, b,
                    [s = scalar](auto g, auto x) { return x > 0 ? g : g * static_cast<decltype(g)>(s); });
    case PointwiseOp::Gt: case PointwiseOp::Lt: case PointwiseOp::Ge: case PointwiseOp::Le: case PointwiseOp::Eq:
    case PointwiseOp::Ne:
      return compare(op, a, b);
    case PointwiseOp::Where:  // (condition, self, other as `scalar`)
      return where(a, b, Tensor::scalar(scalar, b.dtype()));
    case PointwiseOp::MaskedFill:  // (self, mask, value as `scalar`)
      return where(b, Tensor::scalar(scalar, a.dtype()), a);
    case PointwiseOp::SigmoidBackward: return sigmoidBackward(a, b);
    case PointwiseOp::TanhBackward: return tanhBackward(a, b);
    case PointwiseOp::ThresholdBackward: return thresholdBackward(a, b, scalar);
    case PointwiseOp::AutogradAdd: return autogradAdd(a, b);
  }
  throw Error(fmt::format("pointwise op {} has no CPU kernel", static_cast<int>(op)));
}

}  // namespace gj::ops
