// The interpreter's kernels (executors/interpreter/kernels.h) for ops.def's Data group: constants, lists,
// numbers, guards and profiles, casts, tensors made from sizes, indexing, pooling, sorting, bitwise ops,
// random numbers, and the gradients of ops that scatter back into a shape.
#include "executors/interpreter/kernels.h"

#include "passes/util.h"
#include "runtime/ops/ops.h"

#include <algorithm>
#include <cmath>

namespace gj::interp {

namespace {

// Arithmetic on numbers (TorchScript's size arithmetic): two ints (or bools, as 0 and 1) stay an int, as
// Python's; a float on either side makes a float; true division and pow give a float. Ints wrap on
// overflow, as TorchScript's int64 does; a division by zero is an error, as Python's ZeroDivisionError.
IValue scalarArithmetic(OpKind kind, const IValue& a, const IValue& b, const char* name) {
  USER_CHECK((a.isInt() || a.isBool() || a.isDouble()) && (b.isInt() || b.isBool() || b.isDouble()),
             "{}: expected two numbers", name);
  if (kind == OpKind::ScalarDiv || kind == OpKind::ScalarPow) {
    const double x = a.toDouble(name), y = b.toDouble(name);
    if (kind == OpKind::ScalarPow) return IValue(std::pow(x, y));
    USER_CHECK(y != 0, "{}: division by zero (Python's ZeroDivisionError)", name);
    return IValue(x / y);
  }
  if (!a.isDouble() && !b.isDouble()) {
    const auto x = static_cast<uint64_t>(a.isBool() ? int64_t{a.toBool(name)} : a.toInt(name));
    const auto y = static_cast<uint64_t>(b.isBool() ? int64_t{b.toBool(name)} : b.toInt(name));
    const auto sx = static_cast<int64_t>(x), sy = static_cast<int64_t>(y);
    if (kind == OpKind::ScalarAdd) return IValue(static_cast<int64_t>(x + y));
    if (kind == OpKind::ScalarSub) return IValue(static_cast<int64_t>(x - y));
    if (kind == OpKind::ScalarMul) return IValue(static_cast<int64_t>(x * y));
    if (kind == OpKind::ScalarMin) return IValue(std::min(sx, sy));
    return IValue(std::max(sx, sy));  // ScalarMax
  }
  const double x = a.toDouble(name), y = b.toDouble(name);
  if (kind == OpKind::ScalarAdd) return IValue(x + y);
  if (kind == OpKind::ScalarSub) return IValue(x - y);
  if (kind == OpKind::ScalarMul) return IValue(x * y);
  // NaN wins, as Python's min and max of floats do not promise; TorchScript's prim::min gives the NaN
  if (std::isnan(x) || std::isnan(y)) return IValue(x + y);
  return IValue(kind == OpKind::ScalarMin ? std::min(x, y) : std::max(x, y));
}

// Bitwise ops on ints and bools, as Python's: two bools give a bool (and, or, xor), otherwise an int with a bool
// as 0 or 1. A shift wraps in int64 (x << 64 and beyond is 0) and fills with the sign (x >> 63 and beyond is 0
// or -1); a negative count is an error, as Python's ValueError.
IValue scalarBitwise(OpKind kind, const IValue& a, const IValue& b, const char* name) {
  USER_CHECK((a.isInt() || a.isBool()) && (b.isInt() || b.isBool()), "{}: expected two ints or bools, got {} and {}",
             name, a.describe(), b.describe());
  const bool shift = kind == OpKind::ScalarLShift || kind == OpKind::ScalarRShift;
  if (a.isBool() && b.isBool() && !shift) {
    const bool x = a.toBool(name), y = b.toBool(name);
    return IValue(kind == OpKind::ScalarAnd ? x && y : kind == OpKind::ScalarOr ? x || y : x != y);
  }
  const int64_t x = a.isBool() ? int64_t{a.toBool(name)} : a.toInt(name);
  const int64_t y = b.isBool() ? int64_t{b.toBool(name)} : b.toInt(name);
  if (kind == OpKind::ScalarAnd) return IValue(x & y);
  if (kind == OpKind::ScalarOr) return IValue(x | y);
  if (kind == OpKind::ScalarXor) return IValue(x ^ y);
  USER_CHECK(y >= 0, "{}: negative shift count {} (Python's ValueError)", name, y);
  if (kind == OpKind::ScalarLShift)
    return IValue(y >= 64 ? int64_t{0} : static_cast<int64_t>(static_cast<uint64_t>(x) << y));
  return IValue(y >= 64 ? (x < 0 ? int64_t{-1} : int64_t{0}) : x >> y);
}

// max_pool2d's window from its arguments (self, kernel_size, stride, padding, dilation, ceil_mode).
ops::Pool2dParams poolParams(const Node* n, const Operands& in) {
  const char* op = n->info().name.data();
  return ops::pool2dParams(op, in[1].toIntList(op), in[2].toIntList(op), in[3].toIntList(op), in[4].toIntList(op),
                           in[5].toBool("ceil_mode"));
}

void constantKernel(Frame& f, const Node* n, const Operands&) {
  std::visit([&](const auto& v) {
    using V = std::decay_t<decltype(v)>;
    if constexpr (std::is_same_v<V, std::monostate>) f.set(n, IValue());
    else if constexpr (std::is_same_v<V, std::string> || std::is_same_v<V, std::vector<double>>)
      IR_CHECK(false) << "a str or float[] constant reached the interpreter (requireLowered)";
    else f.set(n, IValue(v));
  }, n->constant());
}

void listConstructKernel(Frame& f, const Node* n, const Operands& in) {
  if (n->output()->type().kind == TypeKind::IntList) {
    std::vector<int64_t> xs;
    for (const IValue& v : in) xs.push_back(v.toInt("int list element"));
    f.set(n, IValue(std::move(xs)));
  } else {
    TensorList xs;
    for (const IValue& v : in) xs.push_back(v.toTensor("tensor list element"));
    f.set(n, IValue(std::move(xs)));
  }
}

void listUnpackKernel(Frame& f, const Node* n, const Operands& in) {
  const TensorList& xs = in[0].toTensorList("prim::ListUnpack");
  USER_CHECK(xs.size() == n->outputs().size(), "prim::ListUnpack: the list has {} elements but {} outputs",
             xs.size(), n->outputs().size());
  for (size_t k = 0; k < xs.size(); ++k) f.output(k) = xs[k];
}

// Appends in place when this node holds the only reference to the list: the list value is defined in
// this block and this is its one use. Otherwise copies, so other holders never see the change.
void listAppendKernel(Frame& f, const Node* n, const Operands&) {
  const Value* listValue = n->input(0);
  IValue& slot = f.at(listValue);
  std::shared_ptr<TensorList> list = slot.tensorListPtr("prim::ListAppend");
  if (listValue->uses().size() == 1 && Frame::definedIn(listValue, n->owningBlock())) slot = IValue();
  if (list.use_count() > 1) list = std::make_shared<TensorList>(*list);
  list->push_back(f.at(n->input(1)).toTensor("prim::ListAppend element"));
  f.set(n, IValue(std::move(list)));
}

void getItemKernel(Frame& f, const Node* n, const Operands& in) {
  int64_t idx = in.integer(1);
  if (in[0].isIntList()) {
    const auto& xs = in[0].toIntList();
    int64_t sz = static_cast<int64_t>(xs.size());
    USER_CHECK(idx >= -sz && idx < sz, "list index {} out of range for a list of {}", idx, sz);
    f.set(n, IValue(xs[idx < 0 ? idx + sz : idx]));
  } else {
    const TensorList& xs = in[0].toTensorList("aten::__getitem__");
    int64_t sz = static_cast<int64_t>(xs.size());
    USER_CHECK(idx >= -sz && idx < sz, "list index {} out of range for a list of {}", idx, sz);
    f.set(n, IValue(xs[idx < 0 ? idx + sz : idx]));
  }
}

void lenKernel(Frame& f, const Node* n, const Operands& in) {
  f.set(n, IValue(static_cast<int64_t>(in[0].isIntList() ? in[0].toIntList().size()
                                                        : in[0].toTensorList("aten::len").size())));
}

void sizeKernel(Frame& f, const Node* n, const Operands& in) { f.set(n, IValue(in.tensor(0).size(in.integer(1)))); }

void sizesKernel(Frame& f, const Node* n, const Operands& in) { f.set(n, IValue(in.tensor(0).sizes())); }

void intAddKernel(Frame& f, const Node* n, const Operands& in) { f.set(n, IValue(in.integer(0) + in.integer(1))); }

void intSubKernel(Frame& f, const Node* n, const Operands& in) { f.set(n, IValue(in.integer(0) - in.integer(1))); }

void scalarArithmeticKernel(Frame& f, const Node* n, const Operands& in) {
  f.set(n, scalarArithmetic(n->kind(), in[0], in[1], in.op()));
}

void scalarBitwiseKernel(Frame& f, const Node* n, const Operands& in) {
  f.set(n, scalarBitwise(n->kind(), in[0], in[1], in.op()));
}

void intCompareKernel(Frame& f, const Node* n, const Operands& in) {
  if (!in[0].isDouble() && !in[1].isDouble()) {  // ints and bools (True == True) exactly
    auto integer = [&](const IValue& v) { return v.isBool() ? int64_t{v.toBool()} : v.toInt(in.op()); };
    f.set(n, IValue(*compareScalars(n->kind(), integer(in[0]), integer(in[1]))));
  } else {
    f.set(n, IValue(*compareScalars(n->kind(), in[0].toDouble(in.op()), in[1].toDouble(in.op()))));
  }
}

void boolNotKernel(Frame& f, const Node* n, const Operands& in) { f.set(n, IValue(!in[0].toBool("aten::__not__"))); }

void raiseIfKernel(Frame&, const Node* n, const Operands& in) {
  if (in[0].toBool("prim::RaiseIf"))
    throw Error(std::get<std::string>(n->constant()), n->where(),
                "the graph's own check failed on these inputs (TorchScript's `raise`)");
}

void listConcatKernel(Frame& f, const Node* n, const Operands& in) {
  if (in[0].isIntList()) {
    std::vector<int64_t> xs = in[0].toIntList();
    const auto& ys = in[1].toIntList("aten::add");
    xs.insert(xs.end(), ys.begin(), ys.end());
    f.set(n, IValue(std::move(xs)));
  } else {
    TensorList xs = in[0].toTensorList("aten::add");
    const TensorList& ys = in[1].toTensorList("aten::add");
    xs.insert(xs.end(), ys.begin(), ys.end());
    f.set(n, IValue(std::move(xs)));
  }
}

void intOfTensorKernel(Frame& f, const Node* n, const Operands& in) {
  const Tensor& x = in.tensor(0);
  USER_CHECK(x.numel() == 1, "aten::Int: a tensor of {} elements ({}) has no single value", x.numel(),
             shapeStr(x.sizes()));
  f.set(n, IValue(static_cast<int64_t>(x.item(0))));
}

void floorDivKernel(Frame& f, const Node* n, const Operands& in) {
  USER_CHECK(in.integer(1) != 0, "aten::floordiv: division by zero");
  int64_t q = in.integer(0) / in.integer(1);
  if ((in.integer(0) % in.integer(1) != 0) && ((in.integer(0) < 0) != (in.integer(1) < 0))) --q;
  f.set(n, IValue(q));
}

void remainderKernel(Frame& f, const Node* n, const Operands& in) {
  USER_CHECK(in.integer(1) != 0, "aten::remainder: division by zero");
  int64_t r = in.integer(0) % in.integer(1);
  if (r != 0 && ((r < 0) != (in.integer(1) < 0))) r += in.integer(1);
  f.set(n, IValue(r));
}

void profileKernel(Frame& f, const Node* n, const Operands& in) {
  if (f.observer()) f.observer()->profiled(n, in[0]);
  f.set(n, in[0]);
}

void typeCheckKernel(Frame& f, const Node* n, const Operands& in) {
  bool ok = true;
  for (size_t i = 0; i < in.size(); ++i) {
    f.output(i) = in[i];
    if (!ok) continue;
    std::string why = typeMismatch(n->output(i)->type(), in[i]);
    if (why.empty()) continue;
    ok = false;
    if (f.observer()) f.observer()->guardFailed(n, fmt::format("input %{}: {}", n->input(i)->name(), why));
  }
  f.output(n->outputs().size() - 1) = IValue(ok);
}

void contiguousKernel(Frame& f, const Node* n, const Operands& in) {
  f.set(n, f.handsOverUncopied(in.tensor(0)) ? in.tensor(0) : in.tensor(0).contiguous());
}

void typeAsKernel(Frame& f, const Node* n, const Operands& in) { f.set(n, in.tensor(0).to(in.tensor(1).dtype())); }

void dtypeOfKernel(Frame& f, const Node* n, const Operands& in) {
  f.set(n, IValue(static_cast<int64_t>(in.tensor(0).dtype())));
}

void toDTypeKernel(Frame& f, const Node* n, const Operands& in) {
  auto d = dtypeFromCode(in.integer(1));
  USER_CHECK(d, "aten::to: {} is not a dtype code (0 Float, 1 Double, 2 Long, 3 Bool, 4 Byte, 5 Char, 6 Short, "
             "7 Int, 8 Half, 9 BFloat16)", in.integer(1));
  f.set(n, in.tensor(0).to(*d));
}

void embeddingKernel(Frame& f, const Node* n, const Operands& in) {
  f.set(n, ops::embedding(in.tensor(0), in.tensor(1)));
}

void catKernel(Frame& f, const Node* n, const Operands& in) {
  f.set(n, ops::cat(in[0].toTensorList("aten::cat"), in.integer(1)));
}

void stackKernel(Frame& f, const Node* n, const Operands& in) {
  f.set(n, ops::stack(in[0].toTensorList("aten::stack"), in.integer(1)));
}

void maxPool2dKernel(Frame& f, const Node* n, const Operands& in) {
  auto r = ops::maxPool2d(in.tensor(0), poolParams(n, in));
  f.output(0) = r.out;
  if (n->kind() == OpKind::MaxPool2dWithIndices) f.output(1) = r.indices;
}

void adaptiveAvgPool2dKernel(Frame& f, const Node* n, const Operands& in) {
  const auto& size = in.ints(1);
  USER_CHECK(size.size() == 1 || size.size() == 2, "aten::adaptive_avg_pool2d: output_size must have 1 or 2 "
             "elements, got {}", size.size());
  f.set(n, ops::adaptiveAvgPool2d(in.tensor(0), size[0], size.back()));
}

void zerosLikeKernel(Frame& f, const Node* n, const Operands& in) {
  f.set(n, Tensor::zeros(in.tensor(0).sizes(), in.tensor(0).dtype(), in.tensor(0).device()));
}

void detachKernel(Frame& f, const Node* n, const Operands& in) {
  f.set(n, in.tensor(0).withGradEdge(nullptr));  // the same values, off the tape
}

void onesLikeKernel(Frame& f, const Node* n, const Operands& in) {
  f.set(n, Tensor::full(in.tensor(0).sizes(), in.tensor(0).dtype(), 1.0, in.tensor(0).device()));
}

void fullLikeKernel(Frame& f, const Node* n, const Operands& in) {
  const Tensor& x = in.tensor(0);
  f.set(n, Tensor::full(x.sizes(), x.dtype(), in[1].toDouble("full_like fill_value"), x.device()));
}

void newZerosKernel(Frame& f, const Node* n, const Operands& in) {
  const auto sizes = in.ints(1);
  for (int64_t s : sizes) USER_CHECK(s >= 0, "aten::new_zeros: negative size in {}", shapeStr(sizes));
  f.set(n, Tensor::zeros(sizes, in.tensor(0).dtype(), in.tensor(0).device()));
}

void valueSelectingBackwardKernel(Frame& f, const Node* n, const Operands& in) {
  f.set(n, ops::valueSelectingBackward(in.tensor(0), in.integer(1), in.tensor(2), in.ints(3), in[4].toBool("keepdim")));
}

void sortKernel(Frame& f, const Node*, const Operands& in) {
  auto r = ops::sort(in.tensor(0), in.integer(1), in[2].toBool("descending"));
  f.output(0) = r.values;
  f.output(1) = r.indices;
}

void indexSelectKernel(Frame& f, const Node* n, const Operands& in) {
  f.set(n, ops::indexSelect(in.tensor(0), in.integer(1), in.tensor(2)));
}

void bitwiseKernel(Frame& f, const Node* n, const Operands& in) {
  const OpKind kind = n->kind();
  const ops::BitwiseOp op = kind == OpKind::BitwiseAnd  ? ops::BitwiseOp::And
                            : kind == OpKind::BitwiseOr  ? ops::BitwiseOp::Or
                            : kind == OpKind::BitwiseXor ? ops::BitwiseOp::Xor
                            : kind == OpKind::LeftShift  ? ops::BitwiseOp::LeftShift
                                                         : ops::BitwiseOp::RightShift;
  f.set(n, ops::bitwise(op, in.tensor(0), tensorOrScalar(in[1], in.tensor(0), in.op())));
}

void bitwiseNotKernel(Frame& f, const Node* n, const Operands& in) { f.set(n, ops::bitwiseNot(in.tensor(0))); }

void indexSelectBackwardKernel(Frame& f, const Node* n, const Operands& in) {
  f.set(n, ops::indexSelectBackward(in.tensor(0), in.ints(1), in.integer(2), in.tensor(3)));
}

void packPaddedSequenceKernel(Frame& f, const Node*, const Operands& in) {
  auto r = ops::packPaddedSequence(in.tensor(0), in.tensor(1), in[2].toBool("batch_first"));
  f.output(0) = r.data;
  f.output(1) = r.batchSizes;
}

void packPaddedSequenceBackwardKernel(Frame& f, const Node* n, const Operands& in) {
  f.set(n, ops::packPaddedSequenceBackward(in.tensor(0), in.ints(1), in.tensor(2), in[3].toBool("batch_first")));
}

void selectBackwardKernel(Frame& f, const Node* n, const Operands& in) {
  f.set(n, ops::selectBackward(in.tensor(0), in.ints(1), in.integer(2), in.integer(3)));
}

void sliceBackwardKernel(Frame& f, const Node* n, const Operands& in) {
  f.set(n, ops::sliceBackward(in.tensor(0), in.ints(1), in.integer(2), in.integer(3), in.integer(4), in.integer(5)));
}

void embeddingBackwardKernel(Frame& f, const Node* n, const Operands& in) {
  f.set(n, ops::embeddingBackward(in.tensor(0), in.tensor(1), in.integer(2)));
}

void nllLossBackwardKernel(Frame& f, const Node* n, const Operands& in) {
  f.set(n, ops::nllLossBackward(in.tensor(0), in.tensor(1), in.tensor(2)));
}

void maxPool2dWithIndicesBackwardKernel(Frame& f, const Node* n, const Operands& in) {
  f.set(n, ops::maxPool2dBackward(in.tensor(0), in.tensor(1), in.tensor(7), poolParams(n, in.from(1))));
}

void adaptiveAvgPool2dBackwardKernel(Frame& f, const Node* n, const Operands& in) {
  f.set(n, ops::adaptiveAvgPool2dBackward(in.tensor(0), in.tensor(1)));
}

void philoxDropoutKernel(Frame& f, const Node* n, const Operands& in) {
  f.set(n, ops::dropout(in.tensor(0), in[1].toDouble("dropout p"), in[2].toBool("train"), in.tensor(3), in.integer(4)));
}

void philoxUniformKernel(Frame& f, const Node* n, const Operands& in) {
  f.set(n, ops::uniform(in.tensor(0), in.tensor(1), in.integer(2)));
}

void castOnDeviceKernel(Frame& f, const Node* n, const Operands& in) {
  const Tensor& x = in.tensor(0);
  const std::vector<int64_t>& from = in.ints(1);
  const int64_t to = x.device() == DeviceKind::Cpu ? in.integer(2) : in.integer(3);
  const bool casts = to >= 0 && std::find(from.begin(), from.end(), static_cast<int64_t>(x.dtype())) != from.end();
  const auto d = casts ? dtypeFromCode(to) : std::nullopt;
  USER_CHECK(!casts || d, "prim::cast_on_device: {} is not a dtype code", to);
  f.set(n, casts ? x.to(*d) : x);
}

void fullKernel(Frame& f, const Node* n, const Operands& in) {
  const auto d = dtypeFromCode(in.integer(2));
  USER_CHECK(d, "prim::full: {} is not a dtype code", in.integer(2));
  for (int64_t s : in.ints(0)) USER_CHECK(s >= 0, "prim::full: negative size {} in {}", s, shapeStr(in.ints(0)));
  f.set(n, Tensor::full(in.ints(0), *d, in[1].toDouble("full fill_value"), f.device()));
}

void sumBackwardKernel(Frame& f, const Node* n, const Operands& in) {
  f.set(n, ops::sumBackward(in.tensor(0), in.ints(1), in.ints(2), in[3].toBool("keepdim")));
}

void meanBackwardKernel(Frame& f, const Node* n, const Operands& in) {
  f.set(n, ops::meanBackward(in.tensor(0), in.ints(1), in.ints(2), in[3].toBool("keepdim")));
}

}  // namespace

std::span<const KernelRow> dataKernels() {
  static const KernelRow rows[] = {
      {OpKind::Constant, constantKernel},
      {OpKind::ListConstruct, listConstructKernel},
      {OpKind::ListUnpack, listUnpackKernel},
      {OpKind::ListAppend, listAppendKernel},
      {OpKind::GetItem, getItemKernel},
      {OpKind::Len, lenKernel},
      {OpKind::Size, sizeKernel},
      {OpKind::Sizes, sizesKernel},
      {OpKind::IntAdd, intAddKernel},
      {OpKind::IntSub, intSubKernel},
      {OpKind::ScalarAdd, scalarArithmeticKernel},
      {OpKind::ScalarSub, scalarArithmeticKernel},
      {OpKind::ScalarMul, scalarArithmeticKernel},
      {OpKind::ScalarMin, scalarArithmeticKernel},
      {OpKind::ScalarMax, scalarArithmeticKernel},
      {OpKind::ScalarDiv, scalarArithmeticKernel},
      {OpKind::ScalarPow, scalarArithmeticKernel},
      {OpKind::ScalarAnd, scalarBitwiseKernel},
      {OpKind::ScalarOr, scalarBitwiseKernel},
      {OpKind::ScalarXor, scalarBitwiseKernel},
      {OpKind::ScalarLShift, scalarBitwiseKernel},
      {OpKind::ScalarRShift, scalarBitwiseKernel},
      {OpKind::IntEq, intCompareKernel},
      {OpKind::IntNe, intCompareKernel},
      {OpKind::IntLt, intCompareKernel},
      {OpKind::IntLe, intCompareKernel},
      {OpKind::IntGt, intCompareKernel},
      {OpKind::IntGe, intCompareKernel},
      {OpKind::BoolNot, boolNotKernel},
      {OpKind::RaiseIf, raiseIfKernel},
      {OpKind::ListConcat, listConcatKernel},
      {OpKind::IntOfTensor, intOfTensorKernel},
      {OpKind::FloorDiv, floorDivKernel},
      {OpKind::Remainder, remainderKernel},
      {OpKind::Profile, profileKernel},
      {OpKind::TypeCheck, typeCheckKernel},
      {OpKind::Contiguous, contiguousKernel},
      {OpKind::TypeAs, typeAsKernel},
      {OpKind::DTypeOf, dtypeOfKernel},
      {OpKind::ToDType, toDTypeKernel},
      {OpKind::Embedding, embeddingKernel},
      {OpKind::Cat, catKernel},
      {OpKind::Stack, stackKernel},
      {OpKind::MaxPool2d, maxPool2dKernel},
      {OpKind::MaxPool2dWithIndices, maxPool2dKernel},
      {OpKind::AdaptiveAvgPool2d, adaptiveAvgPool2dKernel},
      {OpKind::ZerosLike, zerosLikeKernel},
      {OpKind::Detach, detachKernel},
      {OpKind::OnesLike, onesLikeKernel},
      {OpKind::FullLike, fullLikeKernel},
      {OpKind::NewZeros, newZerosKernel},
      {OpKind::ValueSelectingBackward, valueSelectingBackwardKernel},
      {OpKind::Sort, sortKernel},
      {OpKind::IndexSelect, indexSelectKernel},
      {OpKind::BitwiseAnd, bitwiseKernel},
      {OpKind::BitwiseOr, bitwiseKernel},
      {OpKind::BitwiseXor, bitwiseKernel},
      {OpKind::LeftShift, bitwiseKernel},
      {OpKind::RightShift, bitwiseKernel},
      {OpKind::BitwiseNot, bitwiseNotKernel},
      {OpKind::IndexSelectBackward, indexSelectBackwardKernel},
      {OpKind::PackPaddedSequence, packPaddedSequenceKernel},
      {OpKind::PackPaddedSequenceBackward, packPaddedSequenceBackwardKernel},
      {OpKind::SelectBackward, selectBackwardKernel},
      {OpKind::SliceBackward, sliceBackwardKernel},
      {OpKind::EmbeddingBackward, embeddingBackwardKernel},
      {OpKind::NllLossBackward, nllLossBackwardKernel},
      {OpKind::MaxPool2dWithIndicesBackward, maxPool2dWithIndicesBackwardKernel},
      {OpKind::AdaptiveAvgPool2dBackward, adaptiveAvgPool2dBackwardKernel},
      {OpKind::PhiloxDropout, philoxDropoutKernel},
      {OpKind::PhiloxUniform, philoxUniformKernel},
      {OpKind::CastOnDevice, castOnDeviceKernel},
      {OpKind::Full, fullKernel},
      {OpKind::SumBackward, sumBackwardKernel},
      {OpKind::MeanBackward, meanBackwardKernel},
  };
  return rows;
}

}  // namespace gj::interp
