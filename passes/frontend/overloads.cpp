// lower-overloads: the overloads TorchScript prints with arguments graphjit's rows leave out.
#include "passes/frontend.h"
#include "passes/frontend/overloads.h"
#include "passes/util.h"
#include "support/error.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace gj {

namespace {

using frontend::Default;

std::optional<OpKind> withoutDType(OpKind k) {
  for (auto [overload, plain] : frontend::kDTypeOverloads)
    if (overload == k) return plain;
  return std::nullopt;
}

const frontend::Factory* factory(OpKind k) {
  for (const frontend::Factory& f : frontend::kFactories)
    if (f.overload == k) return &f;
  return nullptr;
}

const frontend::DefaultsOverload* withDefaults(OpKind k) {
  for (const frontend::DefaultsOverload& o : frontend::kDefaultsOverloads)
    if (o.overload == k) return &o;
  return nullptr;
}

bool isDefault(const Value* v, const Default& d) {
  if (d.anyValue) return true;
  switch (d.kind) {
    case Default::Kind::None: return v->type().kind == TypeKind::None;
    case Default::Kind::Int: return constantInt(v) == static_cast<int64_t>(d.number);
    case Default::Kind::Float: return constantDouble(v) == d.number;
    case Default::Kind::Bool: return constantBool(v) == (d.number != 0);
    case Default::Kind::Str: return constantString(v) == d.text;
  }
  return false;
}

std::string defaultStr(const Default& d) {
  switch (d.kind) {
    case Default::Kind::None: return "None";
    case Default::Kind::Int: return fmt::format("{}", static_cast<int64_t>(d.number));
    case Default::Kind::Float: return fmt::format("{}", d.number);
    case Default::Kind::Bool: return d.number != 0 ? "True" : "False";
    case Default::Kind::Str: return fmt::format("'{}'", d.text);
  }
  return "";
}

// A `kind` node on `inputs` before `at`, reporting at at's positions: the op it lowers.
Value* emitAt(Node* at, OpKind kind, const std::vector<Value*>& inputs) {
  Value* v = emitBefore(at, kind, inputs);
  v->node()->setPositionsOf(at);
  return v;
}

// The dtype an op's `dtype` argument names: a constant ScalarType code.
DType dtypeArgument(const Node* n, const Value* dtype) {
  auto code = constantInt(dtype);
  auto d = code ? frontend::fromScalarType(*code) : std::nullopt;
  if (!d)
    throw Error(fmt::format("{}'s dtype must be a constant torch.float32, float64, float16, bfloat16, int64, int32, "
                            "int16, int8, uint8 or bool", n->info().name),
                n->where(), "write the dtype as a constant, or cast first");
  return *d;
}

// x in the dtype a ScalarType code names (a constant), for an op's `dtype` argument that is not None.
Value* castTo(Node* n, Value* x, Value* dtype) {
  return emitAt(n, OpKind::ToDType, {x, constantBefore(n, static_cast<int64_t>(dtypeArgument(n, dtype)))});
}

// A factory's or a cast's layout must be strided (None or 0) and its pin_memory None or false.
void requireStridedPageable(const Node* n, const Value* layout, const Value* pinMemory) {
  const bool strided = layout->type().kind == TypeKind::None || constantInt(layout) == 0;
  const bool pageable = pinMemory->type().kind == TypeKind::None || constantBool(pinMemory) == false;
  if (!strided || !pageable)
    throw Error(fmt::format("{} with a layout other than torch.strided or pinned memory", n->info().name), n->where(),
                "leave layout and pin_memory out: graphjit's results are strided, on the device the graph runs on");
}

// zeros_like / ones_like / full_like: a dtype casts the result; the layout must be strided and pin_memory
// off; a device is taken as the one the graph runs on (a trace records its example's); the memory format is a
// layout hint graphjit's contiguous results need not follow.
Value* lowerFactory(Node* n, const frontend::Factory& f) {
  requireStridedPageable(n, n->input(f.options + 1), n->input(f.options + 3));
  std::vector<Value*> operands(n->inputs().begin(), n->inputs().begin() + static_cast<long>(f.options));
  Value* dtype = n->input(f.options);
  if (dtype->type().kind != TypeKind::None) operands[0] = castTo(n, operands[0], dtype);
  return emitAt(n, f.plain, operands);
}

// aten::zeros / ones / empty / full by sizes: prim::full in the dtype given, else float32 (full: its fill
// value's, int64 for an int and bool for a bool, as PyTorch infers it). Options as for the other factories.
Value* lowerSizedFactory(Node* n, Value* fill, size_t options) {
  requireStridedPageable(n, n->input(options + 1), n->input(options + 3));
  const Value* dtype = n->input(options);
  const bool inferred = n->kind() == OpKind::FullSized;
  DType d = DType::Float32;
  if (dtype->type().kind != TypeKind::None) d = dtypeArgument(n, dtype);
  else if (inferred && fill->type().kind == TypeKind::Int) d = DType::Int64;
  else if (inferred && fill->type().kind == TypeKind::Bool) d = DType::Bool;
  return emitAt(n, OpKind::Full, {n->input(0), fill, constantBefore(n, static_cast<int64_t>(d))});
}

// gelu(x, approximate): 'none' is aten::gelu(x); 'tanh' is 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))).
Value* lowerGelu(Node* n) {
  Value* x = n->input(0);
  const auto mode = constantString(n->input(1));
  if (mode == frontend::kGeluExact) return emitAt(n, OpKind::Gelu, {x});
  if (mode != "tanh")
    throw Error("aten::gelu's approximate must be the constant 'none' or 'tanh'", n->where(),
                "pass approximate='none' or approximate='tanh'");
  auto k = [&](double v) { return constantBefore(n, v); };
  Value* one = constantBefore(n, int64_t{1});
  Value* cube = emitAt(n, OpKind::Mul, {emitAt(n, OpKind::Mul, {x, x}), x});
  Value* inner = emitAt(n, OpKind::Add, {x, emitAt(n, OpKind::Mul, {cube, k(0.044715)}), one});
  Value* t = emitAt(n, OpKind::Tanh, {emitAt(n, OpKind::Mul, {inner, k(0.79788456080286536)})});
  return emitAt(n, OpKind::Mul, {emitAt(n, OpKind::Mul, {x, k(0.5)}), emitAt(n, OpKind::Add, {t, k(1.0), one})});
}

// A number that PyTorch casts to its tensors' dtype rather than promoting them (threshold's threshold,
// addcmul's value): an integral number as it is (exact beside any dtype); any other as a 0-dim tensor in
// the dtype `tensors` meet, which the run decides (0.5 beside int64 is 0; beside float32 it stays 0.5 in
// float32), so that it takes no part in promotion.
Value* inDtypeOf(Node* n, Value* number, const std::vector<Value*>& tensors) {
  const std::optional<double> v = constantDouble(number);
  if (number->type().isTensor() || (v && std::trunc(*v) == *v)) return number;
  auto op = [&](OpKind kind, const std::vector<Value*>& in) { return emitAt(n, kind, in); };
  auto zeroDim = [&](Value* fill) {
    return op(OpKind::Full, {constantBefore(n, std::vector<int64_t>{}), fill,
                             constantBefore(n, static_cast<int64_t>(DType::Float64))});
  };
  Value* meet = nullptr;  // a 0-dim zero of the dtype the tensors meet
  for (Value* t : tensors) {
    Value* zero = op(OpKind::TypeAs, {zeroDim(constantBefore(n, 0.0)), t});
    meet = meet ? op(OpKind::Add, {meet, zero, constantBefore(n, int64_t{1})}) : zero;
  }
  return op(OpKind::TypeAs, {zeroDim(number), meet});
}

// The ops that are graphjit's rows written another way (ops.def's comments), or nullptr for another op.
Value* lowerComposite(Node* n) {
  auto k = [&](double v) { return constantBefore(n, v); };
  auto op = [&](OpKind kind, const std::vector<Value*>& in) { return emitAt(n, kind, in); };
  auto one = [&] { return constantBefore(n, int64_t{1}); };
  Value* x = n->inputs().empty() ? nullptr : n->input(0);
  const OpKind kind = n->kind();
  if (kind == OpKind::Log2) return op(OpKind::Mul, {op(OpKind::Log, {x}), k(1.4426950408889634)});
  if (kind == OpKind::Log10) return op(OpKind::Mul, {op(OpKind::Log, {x}), k(0.43429448190325176)});
  if (kind == OpKind::Tan) return op(OpKind::Div, {op(OpKind::Sin, {x}), op(OpKind::Cos, {x})});
  if (kind == OpKind::Relu6) return op(OpKind::Hardtanh, {x, k(0.0), k(6.0)});
  if (kind == OpKind::Hardsigmoid)  // PyTorch's min(max(x + 3, 0), 6) / 6, its gradient 1/6 strictly inside
    return op(OpKind::Div, {op(OpKind::Hardtanh, {op(OpKind::Add, {x, k(3.0), one()}), k(0.0), k(6.0)}), k(6.0)});
  if (kind == OpKind::Threshold)  // x <= threshold ? value : x, its gradient the same mask, in x's dtype
    return op(OpKind::MaskedFill, {x, op(OpKind::Le, {x, inDtypeOf(n, n->input(1), {x})}), n->input(2)});
  if (kind == OpKind::Addcmul)  // as PyTorch's kernel: self + value * tensor1 * tensor2, left to right
    return op(OpKind::Add, {x, op(OpKind::Mul, {op(OpKind::Mul, {n->input(1), inDtypeOf(n, n->input(3),
                                                                                      {x, n->input(1), n->input(2)})}),
                                                n->input(2)}),
                            one()});
  // as PyTorch's kernel: self + w (end - self) where |w| < 0.5, else end - (end - self)(1 - w)
  if (kind == OpKind::Lerp) {
    Value* end = n->input(1);
    Value* w = n->input(2);
    const std::optional<double> c = w->type().isTensor() ? std::nullopt : constantDouble(w);
    if (!w->type().isTensor() && !c)
      throw Error("aten::lerp's weight is a scalar that is not a constant", n->where(),
                  "give the weight as a constant, or as a tensor");
    Value* diff = op(OpKind::Sub, {end, x, one()});
    auto low = [&] { return op(OpKind::Add, {x, op(OpKind::Mul, {diff, w}), one()}); };
    auto high = [&](Value* rest) { return op(OpKind::Sub, {end, op(OpKind::Mul, {diff, rest}), one()}); };
    if (!c)  // per element
      return op(OpKind::Where, {op(OpKind::Lt, {op(OpKind::Abs, {w}), k(0.5)}), low(),
                                high(op(OpKind::Rsub, {w, one(), one()}))});
    return std::abs(*c) < 0.5 ? low() : high(k(1.0 - *c));
  }
  if (kind == OpKind::IsNan) return op(OpKind::Ne, {x, x});
  if (kind == OpKind::DivMode) {  // rounding_mode: None, 'trunc' or 'floor'; rounded, the gradient is 0
    Value* other = n->input(1);
    if (n->input(2)->type().kind == TypeKind::None) return op(OpKind::Div, {x, other});
    const auto mode = constantString(n->input(2));
    if (mode == "trunc") return op(OpKind::DivTrunc, {x, other});
    if (mode == "floor") return op(OpKind::DivFloor, {x, other});
    throw Error("aten::div's rounding_mode must be None or the constant 'trunc' or 'floor'", n->where(),
                "pass rounding_mode=None, 'trunc' or 'floor'");
  }
  if (kind == OpKind::FloorDivide) return op(OpKind::DivFloor, {x, n->input(1)});
  if (kind == OpKind::SliceOptional) {  // a None start is 0, a None end the dim's end (int64's largest, clamped)
    auto orDefault = [&](Value* v, int64_t none) {
      if (v->type().kind == TypeKind::None) return constantBefore(n, none);
      if (v->type().kind != TypeKind::Int)
        throw Error("aten::slice's start and end must be ints or None", n->where(), "pass ints, or leave them out");
      return v;
    };
    return op(OpKind::Slice, {x, n->input(1), orDefault(n->input(2), 0),
                              orDefault(n->input(3), std::numeric_limits<int64_t>::max()), n->input(4)});
  }
  if (kind == OpKind::ClampTensor || kind == OpKind::ClampMinTensor || kind == OpKind::ClampMaxTensor) {
    // PyTorch's masks: self where lo <= self <= hi; lo where self < lo < hi; hi where self > hi or hi < lo.
    // Elsewhere (a NaN, or self < lo == hi) the value min(max(self, lo), hi) with no gradient.
    const bool both = n->kind() == OpKind::ClampTensor;
    Value* lo = n->kind() == OpKind::ClampMaxTensor ? nullptr : n->input(1);
    Value* hi = n->kind() == OpKind::ClampMinTensor ? nullptr : n->input(both ? 2 : 1);
    if (lo && lo->type().kind == TypeKind::None) lo = nullptr;
    if (hi && hi->type().kind == TypeKind::None) hi = nullptr;
    if (!lo && !hi)
      throw Error("aten::clamp needs a min or a max bound", n->where(), "pass min=, max= or both");
    Value* inside = lo && hi ? op(OpKind::BitwiseAnd, {op(OpKind::Ge, {x, lo}), op(OpKind::Le, {x, hi})})
                    : lo     ? op(OpKind::Ge, {x, lo})
                             : op(OpKind::Le, {x, hi});
    Value* bound = op(OpKind::Detach, {lo && hi ? op(OpKind::Minimum, {op(OpKind::Maximum, {x, lo}), hi})
                                       : lo     ? op(OpKind::Maximum, {x, lo})
                                                : op(OpKind::Minimum, {x, hi})});
    if (hi) {
      Value* above = op(OpKind::Gt, {x, hi});
      if (lo) above = op(OpKind::BitwiseOr, {above, op(OpKind::Lt, {hi, lo})});
      bound = op(OpKind::Where, {above, hi, bound});
    }
    if (lo) {
      Value* below = op(OpKind::Lt, {x, lo});
      if (hi) below = op(OpKind::BitwiseAnd, {below, op(OpKind::Lt, {lo, hi})});
      bound = op(OpKind::Where, {below, lo, bound});
    }
    return op(OpKind::Where, {inside, x, bound});
  }
  if (kind == OpKind::MaskedFillTensor)
    return op(OpKind::Where, {n->input(1), op(OpKind::TypeAs, {n->input(2), x}), x});
  // the number as a tensor of the promoted dtype
  if (kind == OpKind::PowScalarBase || kind == OpKind::RemainderScalarBase) {
    Value* other = n->input(1);
    return op(n->kind() == OpKind::PowScalarBase ? OpKind::Pow : OpKind::TensorRemainder,
              {op(OpKind::Add, {op(OpKind::ZerosLike, {other}), x, one()}), other});
  }
  if (kind == OpKind::Square) return op(OpKind::Pow, {x, constantBefore(n, int64_t{2})});
  // the flags and dtypes constants, as PyTorch prints them
  if (kind == OpKind::AutocastToReduced || kind == OpKind::AutocastToFull) {
    const bool reduced = n->kind() == OpKind::AutocastToReduced;
    auto target = [&](size_t flag, size_t dtype) {
      const auto on = constantBool(n->input(flag));
      if (!on) throw Error(fmt::format("{}'s enabled flags must be constants", n->info().name), n->where(),
                           "pass True or False");
      return *on ? static_cast<int64_t>(reduced ? dtypeArgument(n, n->input(dtype)) : DType::Float32) : int64_t{-1};
    };
    const std::vector<int64_t> from = reduced ? std::vector<int64_t>{static_cast<int64_t>(DType::Float32)}
                                              : std::vector<int64_t>{static_cast<int64_t>(DType::Float16),
                                                                     static_cast<int64_t>(DType::BFloat16)};
    return op(OpKind::CastOnDevice, {x, constantBefore(n, from), constantBefore(n, target(2, 4)),
                                     constantBefore(n, target(1, 3))});
  }
  if (kind == OpKind::LogicalAnd || kind == OpKind::LogicalOr || kind == OpKind::LogicalXor) {
    Value* a = op(OpKind::Ne, {x, constantBefore(n, int64_t{0})});
    Value* b = op(OpKind::Ne, {n->input(1), constantBefore(n, int64_t{0})});
    return op(n->kind() == OpKind::LogicalAnd ? OpKind::BitwiseAnd : n->kind() == OpKind::LogicalOr ? OpKind::BitwiseOr
                                                                                                     : OpKind::Ne,
              {a, b});
  }
  if (kind == OpKind::LogicalNot) return op(OpKind::Eq, {x, constantBefore(n, int64_t{0})});
  if (kind == OpKind::BitwiseAndNamed) return op(OpKind::BitwiseAnd, {x, n->input(1)});
  if (kind == OpKind::BitwiseOrNamed) return op(OpKind::BitwiseOr, {x, n->input(1)});
  if (kind == OpKind::BitwiseXorNamed) return op(OpKind::BitwiseXor, {x, n->input(1)});
  if (kind == OpKind::LeftShiftNamed) return op(OpKind::LeftShift, {x, n->input(1)});
  if (kind == OpKind::RightShiftNamed) return op(OpKind::RightShift, {x, n->input(1)});
  if (kind == OpKind::Mish)  // PyTorch's x tanh(log1p(exp(x))); softplus's threshold keeps the gradient finite
    return op(OpKind::Mul, {x, op(OpKind::Tanh, {op(OpKind::Softplus, {x, constantBefore(n, int64_t{1}),
                                                                      constantBefore(n, int64_t{20})})})});
  if (kind == OpKind::Xlogy) {  // x log y; where x is 0, 0, or NaN where y is NaN (PyTorch's), and no gradient
    Value* y = n->input(1);
    if (!y->type().isTensor()) {
      const std::optional<double> c = constantDouble(y);
      if (!c)
        throw Error("aten::xlogy's other is a number that is not a constant", n->where(),
                    "give it as a constant, or as a tensor");
      if (std::isnan(*c)) return op(OpKind::Mul, {x, k(*c)});
      return op(OpKind::Where, {op(OpKind::Eq, {x, k(0.0)}), k(0.0), op(OpKind::Mul, {x, k(std::log(*c))})});
    }
    Value* atZero = op(OpKind::Where, {op(OpKind::Ne, {y, y}), y, k(0.0)});
    return op(OpKind::Where, {op(OpKind::Eq, {x, k(0.0)}), atZero, op(OpKind::Mul, {x, op(OpKind::Log, {y})})});
  }
  if (kind == OpKind::LogSigmoid)
    return op(OpKind::Neg, {op(OpKind::Softplus, {op(OpKind::Neg, {x}), one(), constantBefore(n, int64_t{20})})});
  if (kind == OpKind::Sgn) return op(OpKind::Sign, {x});
  if (kind == OpKind::Celu) {  // PyTorch's: its gradient exp(self / alpha) at and below 0
    Value* alpha = n->input(1);
    return op(OpKind::Where, {op(OpKind::Gt, {x, k(0.0)}), x,
                              op(OpKind::Mul, {op(OpKind::Expm1, {op(OpKind::Div, {x, alpha})}), alpha})});
  }
  if (kind == OpKind::Selu) return op(OpKind::Elu, {x, k(1.6732632423543772), k(1.0507009873554805)});
  if (kind == OpKind::Exp2)  // pow(2.0, self): computed and rounded once in self's dtype (integers: float32)
    return op(OpKind::Pow, {op(OpKind::Add, {op(OpKind::ZerosLike, {x}), k(2.0), one()}), x});
  if (kind == OpKind::Deg2Rad) return op(OpKind::Mul, {x, k(0.017453292519943295)});
  if (kind == OpKind::Rad2Deg) return op(OpKind::Mul, {x, k(57.295779513082323)});
  if (kind == OpKind::Logit) {
    Value* z = x;
    if (n->input(1)->type().kind != TypeKind::None) {
      const std::optional<double> eps = constantDouble(n->input(1));
      if (!eps)
        throw Error("aten::logit's eps is not a constant", n->where(), "give eps as a constant, or None");
      z = op(OpKind::Clamp, {x, k(*eps), k(1.0 - *eps)});
    }
    return op(OpKind::Log, {op(OpKind::Div, {z, op(OpKind::Rsub, {z, k(1.0), one()})})});
  }
  if (kind == OpKind::VarForms || kind == OpKind::StdForms || kind == OpKind::VarAll || kind == OpKind::StdAll) {
    const bool all = n->kind() == OpKind::VarAll || n->kind() == OpKind::StdAll;
    const bool std = n->kind() == OpKind::StdForms || n->kind() == OpKind::StdAll;
    Value* dim = all ? nullptr : n->input(1);
    if (dim && dim->type().kind != TypeKind::None && dim->type().kind != TypeKind::IntList)
      throw Error(fmt::format("{}'s dim must be a list of ints or None", n->info().name), n->where());
    Value* dims = !dim || dim->type().kind == TypeKind::None ? constantBefore(n, std::vector<int64_t>{}) : dim;
    Value* c = n->input(all ? 1 : 2);  // unbiased (a bool) or the correction (None: 1; an int: 0 or 1)
    Value* unbiased = c;
    if (c->type().kind == TypeKind::None) {
      unbiased = constantBefore(n, true);
    } else if (c->type().kind != TypeKind::Bool) {
      const std::optional<int64_t> k = constantInt(c);
      if (!k || (*k != 0 && *k != 1))
        throw Error(fmt::format("{}'s correction must be a constant 0 or 1 (graphjit's var divides by n or n - 1)",
                                n->info().name),
                    n->where(), "use unbiased=False or True");
      unbiased = constantBefore(n, *k == 1);
    }
    Value* keepdim = all ? constantBefore(n, false) : n->input(3);
    return op(std ? OpKind::Std : OpKind::Var, {x, dims, unbiased, keepdim});
  }
  if (kind == OpKind::Hardshrink)  // (x >= -l && x <= l) ? 0 : x, its gradient the same mask
    return op(OpKind::Where, {op(OpKind::Le, {op(OpKind::Abs, {x}), n->input(1)}), k(0.0), x});
  if (kind == OpKind::ExpandAs || kind == OpKind::ReshapeAs || kind == OpKind::ViewAs) {  // by other's sizes, an int[]
    Value* sizes = emitBefore(n, OpKind::Sizes, {n->input(1)}, Type::of(TypeKind::IntList));
    sizes->node()->setPositionsOf(n);
    return op(n->kind() == OpKind::ExpandAs ? OpKind::Expand : n->kind() == OpKind::ReshapeAs ? OpKind::Reshape
                                                                                               : OpKind::View,
              {x, sizes});
  }
  return nullptr;
}

// A row whose trailing arguments graphjit takes at their defaults: each checked, then dropped.
Value* lowerDefaults(Node* n, const frontend::DefaultsOverload& o) {
  const size_t kept = n->inputs().size() - o.defaults.size();
  for (size_t i = 0; i < o.defaults.size(); ++i)
    if (!isDefault(n->input(kept + i), o.defaults[i]))
      throw Error(fmt::format("{}'s {} must be {}, its default", n->info().name,
                              opSignature(n->kind()).inputNames.at(kept + i), defaultStr(o.defaults[i])),
                  n->where(), fmt::format("graphjit's {} takes that argument at its default only; leave it out",
                                          opInfo(o.plain).name));
  return emitAt(n, o.plain, std::vector<Value*>(n->inputs().begin(), n->inputs().begin() + static_cast<long>(kept)));
}

// The overload n lowered to graphjit's rows, or nullptr when n is none of them.
Value* lowerOverload(Node* n) {
  if (const frontend::Factory* f = factory(n->kind())) return lowerFactory(n, *f);
  if (n->kind() == OpKind::GeluApproximate) return lowerGelu(n);
  if (Value* v = lowerComposite(n)) return v;
  const OpKind kind = n->kind();
  if (kind == OpKind::Zeros || kind == OpKind::Empty) return lowerSizedFactory(n, constantBefore(n, int64_t{0}), 1);
  if (kind == OpKind::Ones) return lowerSizedFactory(n, constantBefore(n, int64_t{1}), 1);
  if (kind == OpKind::FullSized) return lowerSizedFactory(n, n->input(1), 2);
  if (kind == OpKind::MaxAll || kind == OpKind::MinAll)  // over every dim, the gradient shared among ties as PyTorch's
    return emitAt(n, n->kind() == OpKind::MaxAll ? OpKind::Amax : OpKind::Amin,
                  {n->input(0), constantBefore(n, std::vector<int64_t>{}), constantBefore(n, false)});
  if (kind == OpKind::MaxOther) return emitAt(n, OpKind::Maximum, {n->input(0), n->input(1)});
  if (kind == OpKind::MinOther) return emitAt(n, OpKind::Minimum, {n->input(0), n->input(1)});
  // aten::to(self, dtype, non_blocking, copy, memory_format): the flags do not change the values
  if (n->kind() == OpKind::ToDTypeOptions) return castTo(n, n->input(0), n->input(1));
  // aten::to with a device (and a dtype, a layout, pinned memory): the device is the one the graph runs on,
  // as for the factories; a dtype casts
  if (n->kind() == OpKind::ToWithOptions || n->kind() == OpKind::ToDevice) {
    const bool options = n->kind() == OpKind::ToWithOptions;
    if (options) requireStridedPageable(n, n->input(2), n->input(4));
    Value* dtype = n->input(options ? 1 : 2);
    return dtype->type().kind == TypeKind::None ? n->input(0) : castTo(n, n->input(0), dtype);
  }
  if (n->kind() == OpKind::Clone) return n->input(0);  // graphjit's values are never written in place
  if (const frontend::DefaultsOverload* o = withDefaults(n->kind())) return lowerDefaults(n, *o);
  const std::optional<OpKind> plain = withoutDType(n->kind());
  if (!plain) return nullptr;
  Value* dtype = n->inputs().back();
  std::vector<Value*> operands(n->inputs().begin(), n->inputs().end() - 1);
  if (dtype->type().kind != TypeKind::None) operands[0] = castTo(n, operands[0], dtype);  // first, as PyTorch
  return emitAt(n, *plain, operands);
}

// n (an in-place op, or its functional replacement f) updates `old` to `updated`: every read of old after
// n in n's block (or in blocks nested there) reads updated. A read outside that block is an error, since
// whether the update happened before it depends on the block's path.
void readUpdatedAfter(Node* n, const Node* f, Value* old, Value* updated, const char* what) {
  for (const Use& u : std::vector<Use>(old->uses())) {
    if (u.user == n || u.user == f) continue;
    Node* reader = ancestorIn(u.user, n->owningBlock());
    if (!reader)
      throw Error(fmt::format("{} updates {} in place, and it is read outside the loop or if that updates it",
                              n->info().name, what),
                  n->where(), "read it inside the block that updates it, or update a copy");
    if (n->isBefore(reader)) u.user->replaceInput(u.index, updated);
  }
}

// aten::native_batch_norm updates its running statistics in place: it becomes the functional row, whose
// last two results are the updated statistics, and every read of a statistic after it reads those.
void lowerNativeBatchNorm(Node* n) {
  Node* f = emitReplacement(n, OpKind::NativeBatchNorm, std::vector<Value*>(n->inputs().begin(), n->inputs().end()), 5);
  for (size_t s = 0; s < 2; ++s) {
    Value* statistic = n->input(3 + s);
    f->output(3 + s)->setType(statistic->type());
    if (statistic->type().kind == TypeKind::None) continue;
    readUpdatedAfter(n, f, statistic, f->output(3 + s), "a running statistic");
  }
}

// self.add_(other, alpha): aten::add, read in self's place after it (a buffer's num_batches_tracked.add_(1)).
Value* lowerAddInPlace(Node* n) {
  Value* sum = emitAt(n, OpKind::Add, {n->input(0), n->input(1), n->input(2)});
  sum->setType(n->input(0)->type());
  readUpdatedAfter(n, sum->node(), n->input(0), sum, fmt::format("%{}", n->input(0)->name()).c_str());
  return sum;
}

// The graph's generator state for its random ops: its input %rng (int64 [2]: Philox's seed and offset),
// added after the others when the graph has none.
Value* rngInput(Graph& g) {
  for (Value* in : g.inputs())
    if (in->name() == "rng") {
      if (in->type().isTensor() && (!in->type().dtype || *in->type().dtype == DType::Int64)) return in;
      throw Error(fmt::format("the graph's input %rng has type {}; aten::dropout, rand and rand_like read their "
                              "generator state from an input so named, an int64 tensor [2]", in->type().str()),
                  "", "rename the input, or make it the int64 [seed, offset] of the random numbers");
    }
  return g.addInput(Type::tensor(DType::Int64, {2}), "rng");
}

bool isRandom(OpKind k) { return k == OpKind::Dropout || k == OpKind::RandLike || k == OpKind::Rand; }

// A random op's stream: its place among the graph's `count` random ops, and inside loops a stream of its own
// in every iteration, place + count (id + 1), where id numbers the iteration of all the enclosing loops
// (outermost first: id = id * trips + i), so that each iteration draws new numbers as PyTorch's would. A
// loop the executors unroll folds it to constants again.
Value* streamOf(Node* n, int64_t place, int64_t count) {
  std::vector<const Node*> loops;
  for (const Node* at = n->owningBlock()->owningNode(); at; at = at->owningBlock()->owningNode())
    if (at->kind() == OpKind::Loop) loops.push_back(at);
  if (loops.empty()) return constantBefore(n, place);
  auto intOp = [&](OpKind k, Value* a, Value* b) { return emitBefore(n, k, {a, b}, Type::of(TypeKind::Int)); };
  Value* id = nullptr;
  for (auto it = loops.rbegin(); it != loops.rend(); ++it) {
    Value* i = (*it)->block(0)->inputs()[0];
    id = id ? intOp(OpKind::IntAdd, intOp(OpKind::ScalarMul, id, (*it)->input(0)), i) : i;
  }
  Value* iteration = intOp(OpKind::IntAdd, id, constantBefore(n, int64_t{1}));
  return intOp(OpKind::IntAdd, constantBefore(n, place), intOp(OpKind::ScalarMul, constantBefore(n, count), iteration));
}

// The random ops on the graph's %rng, each a stream of its own (streamOf):
// aten::dropout(x, p, train) is x itself when train is the constant false, else prim::philox_dropout;
// aten::rand_like(x, ...) and aten::rand(size, ...) are prim::philox_uniform of x (cast to the dtype given)
// or of prim::full(size, 0, dtype).
Value* lowerRandom(Graph& g, Node* n, int64_t& place, int64_t count) {
  const OpKind kind = n->kind();
  if (kind == OpKind::Dropout) {
    if (constantBool(n->input(2)) == false) return n->input(0);
    return emitAt(n, OpKind::PhiloxDropout,
                  {n->input(0), n->input(1), n->input(2), rngInput(g), streamOf(n, place++, count)});
  }
  if (kind == OpKind::RandLike) {
    requireStridedPageable(n, n->input(2), n->input(4));
    Value* x = n->input(1)->type().kind == TypeKind::None ? n->input(0) : castTo(n, n->input(0), n->input(1));
    return emitAt(n, OpKind::PhiloxUniform, {x, rngInput(g), streamOf(n, place++, count)});
  }
  if (kind == OpKind::Rand) {
    Value* zeros = lowerSizedFactory(n, constantBefore(n, int64_t{0}), 1);
    return emitAt(n, OpKind::PhiloxUniform, {zeros, rngInput(g), streamOf(n, place++, count)});
  }
  return nullptr;
}

}  // namespace

namespace frontend {

std::optional<DType> fromScalarType(int64_t code) {
  for (DType d : kAllDTypes)
    if (scalarTypeOf(d) == code) return d;
  return std::nullopt;
}

int64_t scalarTypeOf(DType d) {
  switch (d) {
    case DType::Int64: return 4;
    case DType::Float32: return 6;
    case DType::Float64: return 7;
    case DType::Bool: return 11;
    case DType::UInt8: return 0;
    case DType::Int8: return 1;
    case DType::Int16: return 2;
    case DType::Int32: return 3;
    case DType::Float16: return 5;
    case DType::BFloat16: return 15;
  }
  return -1;
}

}  // namespace frontend

bool lowerOverloads(Graph& g) {
  std::vector<Node*> done;
  // the in-place updates first: a clone of a statistic before one must still read the old value; the random
  // ops counted on the way (their streams need the count)
  int64_t randomOps = 0, place = 0;
  forEachNode(g.block(), [&](Node* n) {
    randomOps += isRandom(n->kind());
    if (n->kind() == OpKind::NativeBatchNormInPlace) {
      lowerNativeBatchNorm(n);
      done.push_back(n);
    } else if (n->kind() == OpKind::AddInPlace) {
      g.replaceValue(n->output(), lowerAddInPlace(n));
      done.push_back(n);
    }
  });
  forEachNode(g.block(), [&](Node* n) {
    if (n->kind() == OpKind::NativeBatchNormInPlace || n->kind() == OpKind::AddInPlace) return;
    Value* lowered = lowerRandom(g, n, place, randomOps);
    if (!lowered) lowered = lowerOverload(n);
    if (!lowered) return;
    lowered->setType(n->output()->type());
    g.replaceValue(n->output(), lowered);
    done.push_back(n);
  });
  for (Node* n : done) g.erase(n);
  return !done.empty();
}

}  // namespace gj
