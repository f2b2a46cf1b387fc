// Shape propagation's rules (passes/shapes/rules.h) for the ops of ops.def's Data group: lists, scalars,
// constants, conversions, nn ops and the rest.
#include "passes/shapes/rules.h"

#include "passes/util.h"

#include <algorithm>

namespace gj::shapes {

namespace {

Type profileType(const Node*, size_t, const Args& op) {
  return op.in(0)->type();
}

Type constantNodeType(const Node* n, size_t, const Args&) {
  // A Function, a Device (both hold a str) or a trace's {2} keep their declared type
  if (n->output()->type().isTensor() || n->output()->type().isFrontendOnly()) return n->output()->type();
  return constantType(n->constant());
}

Type listConstructType(const Node* n, size_t, const Args& op) {
  // A list of its elements' kind; an empty one keeps its declared kind
  const TypeKind element = n->inputs().empty() ? TypeKind::None : op.in(0)->type().kind;
  if (element == TypeKind::Int) return Type::of(TypeKind::IntList);
  if (element == TypeKind::Float) return Type::of(TypeKind::FloatList);
  if (element == TypeKind::Bool) return Type::of(TypeKind::BoolList);
  const TypeKind declared = n->output()->type().kind;
  if (n->inputs().empty() && declared != TypeKind::Tensor) return Type::of(declared);
  return Type::of(TypeKind::TensorList);
}

Type listUnpackType(const Node* n, size_t k, const Args& op) {
  if (auto t = listElement(op.in(0), static_cast<int64_t>(k))) return *t;
  return n->output(k)->type().isTensor() ? Type::tensor() : n->output(k)->type();
}

Type listAppendType(const Node*, size_t, const Args&) {
  return Type::of(TypeKind::TensorList);
}

Type getItemType(const Node*, size_t, const Args& op) {
  if (op.in(0)->type().kind == TypeKind::IntList) return Type::of(TypeKind::Int);
  auto idx = constantInt(op.in(1));
  if (idx)
    if (auto t = listElement(op.in(0), *idx)) return *t;
  if (op.in(0)->node()->kind() == OpKind::Unbind) return *listElement(op.in(0), 0);
  return Type::tensor();
}

Type lenType(const Node*, size_t, const Args&) {
  return Type::of(TypeKind::Int);
}

Type scalarAddType(const Node*, size_t, const Args& op) {
  // An int for two ints (or bools), else a float
  return Type::of(op.in(0)->type().kind == TypeKind::Float || op.in(1)->type().kind == TypeKind::Float ? TypeKind::Float
                                                                                                : TypeKind::Int);
}

Type scalarDivType(const Node*, size_t, const Args&) {
  return Type::of(TypeKind::Float);
}

Type scalarAndType(const Node*, size_t, const Args& op) {
  // A bool for two bools, else an int
  return Type::of(op.in(0)->type().kind == TypeKind::Bool && op.in(1)->type().kind == TypeKind::Bool ? TypeKind::Bool
                                                                                              : TypeKind::Int);
}

Type scalarLShiftType(const Node*, size_t, const Args&) {
  return Type::of(TypeKind::Int);
}

Type sizesType(const Node*, size_t, const Args&) {
  return Type::of(TypeKind::IntList);
}

Type intEqType(const Node*, size_t, const Args&) {
  return Type::of(TypeKind::Bool);
}

Type listConcatType(const Node*, size_t, const Args& op) {
  return op.in(0)->type();
}

Type raiseIfType(const Node*, size_t, const Args&) {
  IR_CHECK(false) << "prim::RaiseIf has no outputs"; return {};
}

Type nllLossBackwardType(const Node*, size_t, const Args& op) {
  return op.same(1);
}

Type typeAsType(const Node*, size_t, const Args& op) {
  Type t = op.same(0);
  t.dtype = op.in(1)->type().dtype;
  return t;
}

Type toDTypeType(const Node*, size_t, const Args& op) {
  Type t = op.same(0);
  auto code = constantInt(op.in(1));
  t.dtype = code ? dtypeFromCode(*code) : std::nullopt;
  return t;
}

Type valueSelectingBackwardType(const Node*, size_t, const Args& op) {
  return op.like(0, listedSizes(op.in(3)));
}

Type embeddingType(const Node*, size_t, const Args& op) {
  auto idx = sizesOf(op.in(1));
  auto w = sizesOf(op.in(0));
  if (!idx || !w || w->size() != 2) return op.like(0, std::nullopt);
  idx->push_back((*w)[1]);
  return op.like(0, idx);
}

Type catType(const Node* n, size_t, const Args& op) {
  const Value* list = op.in(0);
  Type t = list->node()->kind() == OpKind::ListConstruct && !list->node()->inputs().empty()
               ? list->node()->input(0)->type()
               : appendedElement(list).value_or(Type::tensor());
  return tensorLike(t, stackCat(list, constantInt(op.in(1)), n->kind() == OpKind::Stack));
}

Type maxPool2dType(const Node* n, size_t k, const Args& op) {
  Type t = op.like(0, maxPool2dSizes(n));
  if (k == 1) t.dtype = DType::Int64;
  return t;
}

Type maxPool2dWithIndicesBackwardType(const Node*, size_t, const Args& op) {
  return op.same(1);
}

Type adaptiveAvgPool2dType(const Node*, size_t, const Args& op) {
  auto x = sizesOf(op.in(0));
  auto size = constantInts(op.in(1));
  if (!x || (x->size() != 4 && x->size() != 3) || !size || size->empty() || size->size() > 2)
    return op.like(0, std::nullopt);
  Sizes s(x->begin(), x->end() - 2);  // [N, C] or [C]
  s.push_back((*size)[0]);
  s.push_back(size->back());
  return op.like(0, s);
}

Type newZerosType(const Node*, size_t, const Args& op) {
  return op.like(0, listedSizes(op.in(1)));
}

Type fullType(const Node*, size_t, const Args& op) {
  // On the device the graph runs on, which its type leaves open
  Type t = Type::tensor();
  auto code = constantInt(op.in(2));
  if (code) t.dtype = dtypeFromCode(*code);
  t.sizes = listedSizes(op.in(0));
  return t;
}

Type castOnDeviceType(const Node*, size_t, const Args& op) {
  // The dtype where the input's dtype and device decide it
  Type t = op.same(0);
  const auto from = constantInts(op.in(1));
  const auto cpu = constantInt(op.in(2)), cuda = constantInt(op.in(3));
  if (!t.dtype || !from || !cpu || !cuda) return t.dtype.reset(), t;
  if (std::find(from->begin(), from->end(), static_cast<int64_t>(*t.dtype)) == from->end()) return t;
  std::optional<int64_t> code;
  if (t.device) code = *t.device == DeviceKind::Cpu ? *cpu : *cuda;
  else if (*cpu == *cuda) code = *cpu;
  t.dtype = !code ? std::nullopt : *code < 0 ? t.dtype : dtypeFromCode(*code);
  return t;
}

Type sortType(const Node*, size_t k, const Args& op) {
  Type t = op.same(0);
  if (k == 1) t.dtype = DType::Int64;
  return t;
}

Type bitwiseAndType(const Node* n, size_t, const Args&) {
  return pointwiseType(n);
}

Type indexSelectType(const Node*, size_t, const Args& op) {
  auto s = sizesOf(op.in(0));
  auto d = normDim(constantInt(op.in(1)), rankOf(op.in(0)));
  auto idx = sizesOf(op.in(2));
  if (!s || !d || s->empty()) return op.like(0, std::nullopt);
  (*s)[*d] = idx && idx->size() == 1 ? (*idx)[0] : kUnknownDim;
  return op.like(0, s);
}

Type packPaddedSequenceType(const Node*, size_t k, const Args& op) {
  // Data [sum(lengths), *], batch_sizes [max(lengths)]: both lengths are data.
  if (k == 1) {
    Type t = op.like(1, Sizes{kUnknownDim});
    t.dtype = DType::Int64;
    t.device = DeviceKind::Cpu;  // read step by step on the host, as PyTorch keeps it
    return t;
  }
  auto s = sizesOf(op.in(0));
  if (!s || s->size() < 2) return op.like(0, std::nullopt);
  Sizes data(s->begin() + 1, s->end());
  data[0] = kUnknownDim;
  return op.like(0, data);
}

Type embeddingBackwardType(const Node*, size_t, const Args& op) {
  auto g = sizesOf(op.in(0));
  auto nw = constantInt(op.in(2));
  if (!g || g->empty() || !nw) return op.like(0, std::nullopt);
  return op.like(0, Sizes{*nw, g->back()});
}

}  // namespace

std::span<const RuleRow> dataRules() {
  static constexpr RuleRow kRows[] = {
      {OpKind::Profile, profileType},
      {OpKind::Constant, constantNodeType},
      {OpKind::ListConstruct, listConstructType},
      {OpKind::ListUnpack, listUnpackType},
      {OpKind::ListAppend, listAppendType},
      {OpKind::GetItem, getItemType},
      {OpKind::Len, lenType},
      {OpKind::Size, lenType},
      {OpKind::DTypeOf, lenType},
      {OpKind::IntAdd, lenType},
      {OpKind::FloorDiv, lenType},
      {OpKind::Remainder, lenType},
      {OpKind::IntSub, lenType},
      {OpKind::IntOfTensor, lenType},
      {OpKind::ScalarAdd, scalarAddType},
      {OpKind::ScalarSub, scalarAddType},
      {OpKind::ScalarMul, scalarAddType},
      {OpKind::ScalarMin, scalarAddType},
      {OpKind::ScalarMax, scalarAddType},
      {OpKind::ScalarDiv, scalarDivType},
      {OpKind::ScalarPow, scalarDivType},
      {OpKind::ScalarAnd, scalarAndType},
      {OpKind::ScalarOr, scalarAndType},
      {OpKind::ScalarXor, scalarAndType},
      {OpKind::ScalarLShift, scalarLShiftType},
      {OpKind::ScalarRShift, scalarLShiftType},
      {OpKind::Sizes, sizesType},
      {OpKind::IntEq, intEqType},
      {OpKind::IntNe, intEqType},
      {OpKind::IntLt, intEqType},
      {OpKind::IntLe, intEqType},
      {OpKind::IntGt, intEqType},
      {OpKind::IntGe, intEqType},
      {OpKind::BoolNot, intEqType},
      {OpKind::ListConcat, listConcatType},
      {OpKind::RaiseIf, raiseIfType},
      {OpKind::Contiguous, likeFirstOperandType},
      {OpKind::ZerosLike, likeFirstOperandType},
      {OpKind::Detach, likeFirstOperandType},
      {OpKind::OnesLike, likeFirstOperandType},
      {OpKind::FullLike, likeFirstOperandType},
      {OpKind::NllLossBackward, nllLossBackwardType},
      {OpKind::PhiloxDropout, likeFirstOperandType},
      {OpKind::TypeAs, typeAsType},
      {OpKind::ToDType, toDTypeType},
      {OpKind::ValueSelectingBackward, valueSelectingBackwardType},
      {OpKind::Embedding, embeddingType},
      {OpKind::Cat, catType},
      {OpKind::Stack, catType},
      {OpKind::MaxPool2d, maxPool2dType},
      {OpKind::MaxPool2dWithIndices, maxPool2dType},
      {OpKind::MaxPool2dWithIndicesBackward, maxPool2dWithIndicesBackwardType},
      {OpKind::AdaptiveAvgPool2dBackward, maxPool2dWithIndicesBackwardType},
      {OpKind::AdaptiveAvgPool2d, adaptiveAvgPool2dType},
      {OpKind::SelectBackward, sizedByListType},
      {OpKind::SliceBackward, sizedByListType},
      {OpKind::SumBackward, sizedByListType},
      {OpKind::MeanBackward, sizedByListType},
      {OpKind::NewZeros, newZerosType},
      {OpKind::IndexSelectBackward, newZerosType},
      {OpKind::PackPaddedSequenceBackward, newZerosType},
      {OpKind::Full, fullType},
      {OpKind::PhiloxUniform, likeFirstOperandType},
      {OpKind::CastOnDevice, castOnDeviceType},
      {OpKind::Sort, sortType},
      {OpKind::BitwiseAnd, bitwiseAndType},
      {OpKind::BitwiseOr, bitwiseAndType},
      {OpKind::BitwiseXor, bitwiseAndType},
      {OpKind::LeftShift, bitwiseAndType},
      {OpKind::RightShift, bitwiseAndType},
      {OpKind::BitwiseNot, likeFirstOperandType},
      {OpKind::IndexSelect, indexSelectType},
      {OpKind::PackPaddedSequence, packPaddedSequenceType},
      {OpKind::EmbeddingBackward, embeddingBackwardType},
      {OpKind::TypeCheck, declaredType},
  };
  return kRows;
}

}  // namespace gj::shapes
