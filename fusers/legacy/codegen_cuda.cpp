// CUDA C for a legacy fusion group: a grid-stride loop over the output elements. Each op's expression is
// its scalar rule (support/pointwise.def) written as CUDA C text.
#include "fusers/legacy/codegen.h"

#include "fusers/cuda_math.h"
#include "fusers/group_rules.h"
#include "runtime/tensor.h"
#include "support/error.h"
#include "support/philox.h"
#include "support/half_bits_text.h"
#include "support/philox_text.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace gj::legacy {

namespace {

std::string literal(double v, bool dbl) {
  std::string s = fmt::format("{}", v);
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  if (s == "inf" || s == "-inf" || s == "nan") return fmt::format("(({}){})", dbl ? "double" : "float", s == "nan" ? "0.0/0.0" : (s[0] == '-' ? "-1.0/0.0" : "1.0/0.0"));
  return dbl ? s : s + "f";
}

// An int64 group's number (an integer of at most 2^53 in magnitude: group_rules' exactIntegerNumber).
std::string integerLiteral(double v) { return fmt::format("{}LL", static_cast<int64_t>(v)); }

// The primitives support/pointwise.def's rules are written in, as CUDA C text in float or double, or in
// long long for an int64 group: there sums, differences, products and negations wrap, computed in unsigned
// long long (signed overflow is undefined in C), and group_rules' integerOp lets in only ops whose rules use
// no other primitive.
struct CudaTextAlgebra {
  bool dbl;
  bool* usesMinMax;
  bool integer = false;
  std::string c(double v) const { return integer ? integerLiteral(v) : literal(v, dbl); }
  std::string add(const std::string& x, const std::string& y) const { return arithmetic(x, "+", y); }
  std::string sub(const std::string& x, const std::string& y) const { return arithmetic(x, "-", y); }
  // A product with the literal 1 (add's alpha, mostly) is the other operand.
  std::string mul(const std::string& x, const std::string& y) const {
    if (x == c(1)) return y;
    if (y == c(1)) return x;
    return arithmetic(x, "*", y);
  }
  std::string div(const std::string& x, const std::string& y) const { return fmt::format("({} / {})", x, y); }
  std::string neg(const std::string& x) const { return integer ? arithmetic("0LL", "-", x) : fmt::format("(-{})", x); }
  std::string arithmetic(const std::string& x, const char* op, const std::string& y) const {
    return integer ? fusion::cudaWrapping(x, op, y) : fmt::format("({} {} {})", x, op, y);
  }
  std::string exp(const std::string& x) const { return call("exp", x); }
  std::string log(const std::string& x) const { return call("log", x); }
  std::string sqrt(const std::string& x) const { return call("sqrt", x); }
  std::string tanh(const std::string& x) const { return call("tanh", x); }
  std::string sigmoid(const std::string& x) const { return div(c(1), add(c(1), exp(neg(x)))); }
  std::string erf(const std::string& x) const { return call("erf", x); }
  std::string expm1(const std::string& x) const { return call("expm1", x); }
  std::string log1p(const std::string& x) const { return call("log1p", x); }
  std::string atan(const std::string& x) const { return call("atan", x); }
  std::string asin(const std::string& x) const { return call("asin", x); }
  std::string acos(const std::string& x) const { return call("acos", x); }
  std::string sinh(const std::string& x) const { return call("sinh", x); }
  std::string cosh(const std::string& x) const { return call("cosh", x); }
  std::string erfc(const std::string& x) const { return call("erfc", x); }
  std::string lgamma(const std::string& x) const { return call("lgamma", x); }
  std::string sin(const std::string& x) const { return call("sin", x); }
  std::string cos(const std::string& x) const { return call("cos", x); }
  // an integer is its own floor, ceiling, truncation and rounding
  std::string floor(const std::string& x) const { return integer ? x : call("floor", x); }
  std::string ceil(const std::string& x) const { return integer ? x : call("ceil", x); }
  std::string trunc(const std::string& x) const { return integer ? x : call("trunc", x); }
  std::string round(const std::string& x) const { return integer ? x : call("rint", x); }  // halves to even
  // PyTorch's pow by a number: 0.5 and -0.5 are sqrt and 1 / sqrt (NaN at -inf, -0 kept), not C's pow
  std::string pow(const std::string& x, const std::string& y) const {
    if (y == c(0.5)) return sqrt(x);
    if (y == c(-0.5)) return div(c(1), sqrt(x));
    return fmt::format("pow{}({}, {})", dbl ? "" : "f", x, y);
  }
  std::string atan2(const std::string& x, const std::string& y) const { return fmt::format("atan2{}({}, {})", dbl ? "" : "f", x, y); }
  std::string fmod(const std::string& x, const std::string& y) const {  // an int64's is C's % (/ truncates too)
    if (integer) return fmt::format("({} % {})", x, y);
    return fmt::format("fmod{}({}, {})", dbl ? "" : "f", x, y);
  }
  // NaN when either operand is (fusers/cuda_math.h, whose text the kernel then starts with)
  std::string max(const std::string& x, const std::string& y) const {
    if (integer) return select(gt(x, y), x, y);
    *usesMinMax = true;
    return fmt::format("gjMax({}, {})", x, y);
  }
  std::string min(const std::string& x, const std::string& y) const {
    if (integer) return select(lt(x, y), x, y);
    *usesMinMax = true;
    return fmt::format("gjMin({}, {})", x, y);
  }
  std::string lt(const std::string& x, const std::string& y) const { return fmt::format("({} < {})", x, y); }
  std::string gt(const std::string& x, const std::string& y) const { return fmt::format("({} > {})", x, y); }
  std::string le(const std::string& x, const std::string& y) const { return fmt::format("({} <= {})", x, y); }
  std::string ge(const std::string& x, const std::string& y) const { return fmt::format("({} >= {})", x, y); }
  std::string eq(const std::string& x, const std::string& y) const { return fmt::format("({} == {})", x, y); }
  std::string ne(const std::string& x, const std::string& y) const { return fmt::format("({} != {})", x, y); }
  std::string select(const std::string& cond, const std::string& x, const std::string& y) const {
    return fmt::format("({} ? {} : {})", cond, x, y);
  }
  std::string call(const char* fn, const std::string& x) const { return fmt::format("{}{}({})", fn, dbl ? "" : "f", x); }
};

}  // namespace

namespace {

// What the kernel and the element function share: the parameters, element i's statements, and the
// helpers they call.
struct CudaBody {
  std::string params;   // "const float* __restrict__ in0, ..., float* __restrict__ out0"
  std::string element;  // element i's statements, indented for the kernel's loop
  std::string headers;  // the helpers' text, to go before the function
};

// `restrictPointers`: the pointers are __restrict__ (a kernel's); an element function's are not, since a persistent
// kernel hands it memory the kernel itself writes in other steps, which the read-only cache must not serve.
CudaBody cudaBody(const KernelSpec& spec, bool restrictPointers) {
  const bool dbl = spec.dtype == DType::Float64, integer = spec.dtype == DType::Int64;
  const char* T = fusion::cudaElementType(spec.dtype);
  CudaBody b;
  // A float16 or bfloat16 value: its float, or a float's bits rounded to it (computing in float32). A narrow
  // integer (in an int64 group): extended by C's conversion, or truncated to its width (wrapping).
  bool usesHalfBits = false;
  auto widened = [&](DType t, const std::string& bits) {
    if (!isFloating(t)) return fmt::format("(long long)({})", bits);
    usesHalfBits = true;
    return fmt::format("{}({})", fusion::cudaWidenFn(t), bits);
  };
  auto narrowed = [&](DType t, const std::string& v) {
    if (!isFloating(t)) return fmt::format("({})({})", fusion::cudaElementType(t), v);
    usesHalfBits = true;
    return fmt::format("{}({})", fusion::cudaNarrowFn(t), v);
  };
  const char* r = restrictPointers ? "__restrict__ " : "";
  std::vector<std::string> params;
  for (size_t i = 0; i < spec.argSizes.size(); ++i)
    params.push_back(fmt::format("const {}* {}in{}", fusion::cudaElementType(spec.argDtypes[i]), r, i));
  for (size_t i = 0; i < spec.outputs.size(); ++i)
    params.push_back(fmt::format("{}* {}out{}", fusion::cudaElementType(spec.outDtypes[i]), r, i));
  b.params = fmt::format("{}", fmt::join(params, ", "));
  std::string& s = b.element;
  // The multi-index of i, innermost dimension first.
  const int64_t rank = static_cast<int64_t>(spec.shape.size());
  if (rank > 0) s += "    long long rest = i;\n";
  for (int64_t d = rank - 1; d >= 0; --d) {
    if (spec.shape[d] == kUnknownDim) {  // the leading dim's run-time extent: i < n bounds it
      s += fmt::format("    const long long i{} = rest;\n", d);
      continue;
    }
    s += fmt::format("    const long long i{} = rest % {}LL;\n", d, spec.shape[d]);
    if (d > 0) s += fmt::format("    rest /= {}LL;\n", spec.shape[d]);
  }
  for (int64_t d = 0; d < rank; ++d) s += fmt::format("    (void)i{};\n", d);  // not every index is read
  // Scalars are written as literals where they are used; every other expression gets a variable.
  auto operand = [&](int a) {
    const KernelSpec::Expr& x = spec.exprs[a];
    if (x.kind != KernelSpec::ExprKind::Scalar) return fmt::format("v{}", a);
    return integer ? integerLiteral(x.scalar) : literal(x.scalar, dbl);
  };
  bool usesPhilox = false, usesMinMax = false;
  for (size_t e = 0; e < spec.exprs.size(); ++e) {
    const KernelSpec::Expr& x = spec.exprs[e];
    std::string rhs;
    switch (x.kind) {
      case KernelSpec::ExprKind::Scalar: continue;
      case KernelSpec::ExprKind::Load: {
        const KernelSpec::Load& l = spec.loads[x.load];
        std::string off = fmt::format("{}LL", l.offset);
        for (int64_t d = 0; d < rank; ++d)
          if (l.strides[d] != 0) off += fmt::format(" + i{} * {}LL", d, l.strides[d]);
        rhs = fmt::format("in{}[{}]", l.arg, off);
        if (spec.argDtypes[l.arg] == DType::Bool) rhs = fmt::format("({})({} ? 1 : 0)", T, rhs);  // a condition
        if (isStorageOnly(spec.argDtypes[l.arg])) rhs = widened(spec.argDtypes[l.arg], rhs);
        break;
      }
      case KernelSpec::ExprKind::Op: {
        auto rule = opInfo(x.op).pointwiseOp();
        if (!rule) throw Error(fmt::format("CUDA codegen: {} is not pointwise", opInfo(x.op).name));
        std::string args[3];
        for (size_t a = 0; a < 3 && a < x.args.size(); ++a) args[a] = operand(x.args[a]);
        if (integer && !fusion::integerOp(x.op))  // the float primitives have no int64 form
          throw Error(fmt::format("CUDA codegen: {} in an int64 group", opInfo(x.op).name));
        rhs = applyPointwise(*rule, CudaTextAlgebra{dbl, &usesMinMax, integer}, args[0], args[1], args[2]);
        if (x.roundTo) rhs = widened(*x.roundTo, narrowed(*x.roundTo, rhs));  // as the unfused op stores it
        break;
      }
      case KernelSpec::ExprKind::Dropout: {
        usesPhilox = true;
        std::string u = fmt::format("gjPhiloxUniform<{}>(in{}[0], in{}[1], {}LL, i)", T, x.rngArg, x.rngArg, x.stream);
        rhs = gjDropout(CudaTextAlgebra{dbl, &usesMinMax}, operand(x.args[0]), u, operand(x.args[1]));
        break;
      }
    }
    s += fmt::format("    const {} v{} = {};\n", T, e, rhs);
  }
  for (size_t o = 0; o < spec.outputs.size(); ++o) {  // a bool output holds a comparison's 1 or 0
    const DType t = spec.outDtypes[o];
    const std::string v = operand(spec.outputs[o]);
    s += fmt::format("    out{}[i] = {};\n", o, t == DType::Bool ? v + " != 0" : isStorageOnly(t) ? narrowed(t, v) : v);
  }
  if (usesPhilox) b.headers += std::string(kPhiloxHeader) + "\n";
  if (usesHalfBits) b.headers += std::string(kHalfBitsHeader) + "\n";
  if (usesMinMax) b.headers += fusion::kCudaMinMaxHeader;
  return b;
}

}  // namespace

std::string emitCudaKernel(const KernelSpec& spec, const std::string& name) {
  const CudaBody b = cudaBody(spec, /*restrictPointers=*/true);
  return fmt::format(
      "{}// generated by graphjit's legacy fuser; iteration shape {}\n"
      "extern \"C\" __global__ void {}({}, long long n) {{\n"
      "  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;\n"
      "       i += (long long)blockDim.x * gridDim.x) {{\n"
      "{}  }}\n}}\n",
      b.headers, shapeStr(spec.shape), name, b.params, b.element);
}

std::string emitCudaElementFunction(const KernelSpec& spec, const std::string& name) {
  USER_CHECK(!spec.dynamicRows(), "fusion group: rows known only at run time have no element function");
  const CudaBody b = cudaBody(spec, /*restrictPointers=*/false);
  return fmt::format("{}// generated by graphjit's legacy fuser: one element of shape {}\n"
                     "__device__ __forceinline__ void {}(long long i, {}) {{\n{}}}\n",
                     b.headers, shapeStr(spec.shape), name, b.params, b.element);
}

}  // namespace gj::legacy
