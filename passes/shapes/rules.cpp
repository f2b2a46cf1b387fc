// Shape propagation's helpers and the table of rules (passes/shapes/rules.h).
#include "passes/shapes/rules.h"

#include "passes/shape_propagation.h"
#include "passes/util.h"
#include "support/window.h"

#include <algorithm>
#include <array>

namespace gj::shapes {

Type tensorLike(const Type& in, std::optional<Sizes> sizes) {
  Type t = Type::tensor();
  t.dtype = in.dtype;
  t.device = in.device;
  t.sizes = std::move(sizes);
  return t;
}

std::optional<Sizes> sizesOf(const Value* v) {
  if (!v->type().isTensor()) return Sizes{};  // scalars broadcast as 0-dim
  return v->type().sizes;
}

std::optional<int64_t> rankOf(const Value* v) {
  auto s = sizesOf(v);
  if (!s) return std::nullopt;
  return static_cast<int64_t>(s->size());
}

std::optional<int64_t> normDim(std::optional<int64_t> d, std::optional<int64_t> rank) {
  if (!d || !rank) return std::nullopt;
  int64_t r = std::max<int64_t>(*rank, 1);
  if (*d < -r || *d >= r) return std::nullopt;
  return *d < 0 ? *d + r : *d;
}

std::optional<Sizes> broadcast(std::optional<Sizes> a, std::optional<Sizes> b) {
  if (!a || !b) return std::nullopt;
  size_t rank = std::max(a->size(), b->size());
  Sizes out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a->size() ? 1 : (*a)[i - (rank - a->size())];
    int64_t db = i < rank - b->size() ? 1 : (*b)[i - (rank - b->size())];
    if (da == 1) out[i] = db;
    else if (db == 1) out[i] = da;
    else if (da == kUnknownDim || db == kUnknownDim) out[i] = da == kUnknownDim ? db : da;
    else out[i] = da;  // equal, or an error the run will report
  }
  return out;
}

Sizes dropDim(Sizes s, int64_t d) {
  s.erase(s.begin() + d);
  return s;
}

// Sizes of the reshape target `shape` (with one -1 inferred when the input is static).
std::optional<Sizes> reshapeSizes(const Value* x, const Value* shapeValue) {
  auto shape = constantInts(shapeValue);
  if (!shape) return std::nullopt;
  auto in = staticSizes(x);
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < shape->size(); ++i) {
    if ((*shape)[i] == -1) infer = static_cast<int64_t>(i);
    else known *= (*shape)[i];
  }
  if (infer >= 0) {
    if (!in || known == 0) {
      (*shape)[infer] = kUnknownDim;
    } else {
      int64_t n = 1;
      for (int64_t d : *in) n *= d;
      (*shape)[infer] = n / known;
    }
  }
  return shape;
}

// Sizes given as an int[] value: its constants, or a list built from ints some of which are known (the others
// unknown sizes).
std::optional<Sizes> listedSizes(const Value* sizes) {
  if (auto c = constantInts(sizes)) return c;
  const Node* list = sizes->node();
  if (list->kind() != OpKind::ListConstruct) return std::nullopt;
  Sizes out;
  for (const Value* e : list->inputs()) out.push_back(constantInt(e).value_or(kUnknownDim));
  return out;
}

// The sizes of element k of a list produced by chunk / unbind / split_with_sizes, when known.
std::optional<Type> listElement(const Value* list, int64_t k) {
  const Node* src = list->node();
  const Value* x = src->inputs().empty() ? nullptr : src->input(0);
  const OpKind kind = src->kind();
  if (kind == OpKind::ListConstruct) {
    int64_t n = static_cast<int64_t>(src->inputs().size());
    if (k < -n || k >= n) return std::nullopt;
    return src->input(k < 0 ? k + n : k)->type();
  }
  if (kind == OpKind::Unbind) {
    auto s = sizesOf(x);
    auto d = normDim(constantInt(src->input(1)), rankOf(x));
    if (!s || !d || s->empty()) return tensorLike(x->type(), std::nullopt);  // a 0-d tensor: the kernel's error
    return tensorLike(x->type(), dropDim(*s, *d));
  }
  if (kind == OpKind::Chunk) {
    auto s = sizesOf(x);
    auto chunks = constantInt(src->input(1));
    auto d = normDim(constantInt(src->input(2)), rankOf(x));
    if (!s || !d || !chunks || s->empty() || (*s)[*d] == kUnknownDim || *chunks <= 0)
      return tensorLike(x->type(), std::nullopt);
    int64_t each = ((*s)[*d] + *chunks - 1) / *chunks;
    Sizes out = *s;
    out[*d] = std::max<int64_t>(0, std::min(each, (*s)[*d] - k * each));
    return tensorLike(x->type(), out);
  }
  if (kind == OpKind::SplitWithSizes) {
    auto s = sizesOf(x);
    auto parts = constantInts(src->input(1));
    auto d = normDim(constantInt(src->input(2)), rankOf(x));
    if (!s || !parts || !d || s->empty() || k < 0 || k >= static_cast<int64_t>(parts->size()))
      return tensorLike(x->type(), std::nullopt);
    Sizes out = *s;
    out[*d] = (*parts)[k];
    return tensorLike(x->type(), out);
  }
  return std::nullopt;
}

// The type of the elements appended to a list built by prim::ListAppend, possibly across a loop.
std::optional<Type> appendedElement(const Value* list, int depth) {
  const Node* src = list->node();
  if (depth > 8) return std::nullopt;
  if (src->kind() == OpKind::ListAppend) return src->input(1)->type();
  if (src->kind() == OpKind::Loop) return appendedElement(src->block(0)->outputs()[list->offset() + 1], depth + 1);
  return std::nullopt;
}

// The elements of a list built by a chain of prim::ListAppend onto a prim::ListConstruct (an unrolled
// loop's), in order; nullopt for any other list.
std::optional<std::vector<const Value*>> appendChain(const Value* list) {
  std::vector<const Value*> appended;
  const Node* src = list->node();
  for (; src->kind() == OpKind::ListAppend; src = src->input(0)->node()) appended.push_back(src->input(1));
  if (src->kind() != OpKind::ListConstruct) return std::nullopt;
  std::vector<const Value*> out(src->inputs().begin(), src->inputs().end());
  out.insert(out.end(), appended.rbegin(), appended.rend());
  return out;
}

// Output types of the tensors stacked or concatenated from `list` along d.
std::optional<Sizes> stackCat(const Value* list, std::optional<int64_t> dim, bool stack) {
  const Node* src = list->node();
  if (stack && src->kind() == OpKind::ListAppend && dim)
    if (auto elems = appendChain(list); elems && !elems->empty())
      if (auto first = sizesOf(elems->front()))
        if (auto d = normDim(dim, static_cast<int64_t>(first->size()) + 1)) {
          Sizes out = *first;
          out.insert(out.begin() + *d, static_cast<int64_t>(elems->size()));
          return out;
        }
  if (stack && src->kind() != OpKind::ListConstruct && dim) {
    // A list grown by appends: the element's sizes with an unknown count.
    auto elem = appendedElement(list);
    if (!elem || !elem->sizes) return std::nullopt;
    auto d = normDim(dim, static_cast<int64_t>(elem->sizes->size()) + 1);
    if (!d) return std::nullopt;
    Sizes out = *elem->sizes;
    out.insert(out.begin() + *d, kUnknownDim);
    return out;
  }
  if (src->kind() != OpKind::ListConstruct || src->inputs().empty() || !dim) return std::nullopt;
  auto first = sizesOf(src->input(0));
  if (!first) return std::nullopt;
  auto d = normDim(dim, static_cast<int64_t>(first->size()) + (stack ? 1 : 0));
  if (!d) return std::nullopt;
  Sizes out = *first;
  if (stack) {
    out.insert(out.begin() + *d, static_cast<int64_t>(src->inputs().size()));
    return out;
  }
  out[*d] = 0;
  for (const Value* v : src->inputs()) {
    auto s = sizesOf(v);
    if (!s || s->size() != first->size() || (*s)[*d] == kUnknownDim) {
      out[*d] = kUnknownDim;
      break;
    }
    out[*d] += (*s)[*d];
  }
  return out;
}

std::optional<Sizes> matmulSizes(const Value* a, const Value* b, OpKind k) {
  auto sa = sizesOf(a), sb = sizesOf(b);
  if (!sa || !sb) return std::nullopt;
  if (k == OpKind::Mm && sa->size() == 2 && sb->size() == 2) return Sizes{(*sa)[0], (*sb)[1]};
  if (k == OpKind::Bmm && sa->size() == 3 && sb->size() == 3) return Sizes{(*sa)[0], (*sa)[1], (*sb)[2]};
  if (k != OpKind::Matmul || sa->empty() || sb->empty()) return std::nullopt;
  if (sa->size() == 1 && sb->size() == 1) return Sizes{};
  if (sb->size() == 1) return Sizes(sa->begin(), sa->end() - 1);
  if (sa->size() == 1) {
    Sizes out(sb->begin(), sb->end() - 2);
    out.push_back(sb->back());
    return out;
  }
  Sizes ba(sa->begin(), sa->end() - 2), bb(sb->begin(), sb->end() - 2);
  auto batch = broadcast(ba, bb);
  batch->push_back((*sa)[sa->size() - 2]);
  batch->push_back(sb->back());
  return batch;
}

std::optional<Sizes> reduceSizes(const Value* x, const Value* dims, const Value* keepdim) {
  auto s = sizesOf(x);
  auto ds = constantInts(dims);
  auto keep = constantBool(keepdim);
  if (!s || !ds || !keep) return std::nullopt;
  // a 0-d tensor takes dims -1 and 0 (normDim's rank 1), and stays 0-d: one flag for it, read by no size
  std::vector<bool> reduced(std::max<size_t>(s->size(), 1), ds->empty());
  for (int64_t d : *ds) {
    auto nd = normDim(d, static_cast<int64_t>(s->size()));
    if (!nd) return std::nullopt;
    reduced[*nd] = true;
  }
  Sizes out;
  for (size_t i = 0; i < s->size(); ++i) {
    if (!reduced[i]) out.push_back((*s)[i]);
    else if (*keep) out.push_back(1);
  }
  return out;
}

bool knownDim(int64_t d) { return d != kUnknownDim; }

// An int[] argument of one element or two, element i (H, W).
int64_t pairAt(const std::vector<int64_t>& v, size_t i) { return v.size() == 1 ? v[0] : v[i]; }

std::optional<Sizes> conv2dSizes(const Node* n) {
  auto x = staticSizes(n->input(1 - (n->kind() == OpKind::Conv2d ? 1 : 0)));
  auto w = staticSizes(n->input(n->kind() == OpKind::Conv2d ? 1 : 2));
  auto stride = constantInts(n->input(3)), pad = constantInts(n->input(4)), dil = constantInts(n->input(5));
  if (!x || !w || !stride || !pad || !dil || x->size() != 4 || w->size() != 4) return std::nullopt;
  Sizes out = {(*x)[0], (*w)[0], 0, 0};
  for (size_t i = 0; i < 2; ++i)
    out[2 + i] = convOutputSize((*x)[2 + i], (*w)[2 + i], pairAt(*stride, i), pairAt(*pad, i), pairAt(*dil, i));
  return out;
}

// max_pool2d (self, kernel_size, stride, padding, dilation, ceil_mode): the N and C of self, pooled H, W.
std::optional<Sizes> maxPool2dSizes(const Node* n) {
  auto x = sizesOf(n->input(0));
  auto k = constantInts(n->input(1)), stride = constantInts(n->input(2)), pad = constantInts(n->input(3));
  auto dil = constantInts(n->input(4));
  auto ceil = constantBool(n->input(5));
  if (!x || x->size() != 4) return std::nullopt;
  Sizes out = {(*x)[0], (*x)[1], kUnknownDim, kUnknownDim};
  if (!k || !stride || !pad || !dil || !ceil) return out;
  for (const auto* v : {&*k, &*pad, &*dil})
    if (v->empty()) return out;
  for (size_t i = 0; i < 2; ++i)
    if (knownDim((*x)[2 + i]))
      out[2 + i] = poolOutputSize((*x)[2 + i], pairAt(*k, i), stride->empty() ? pairAt(*k, i) : pairAt(*stride, i),
                                  pairAt(*pad, i), pairAt(*dil, i), *ceil);
  return out;
}

std::optional<Sizes> flattenSizes(const Node* n) {
  auto x = sizesOf(n->input(0));
  auto rank = rankOf(n->input(0));
  if (rank && *rank == 0) return Sizes{1};
  auto s = normDim(constantInt(n->input(1)), rank), e = normDim(constantInt(n->input(2)), rank);
  if (!x || !s || !e || *s > *e) return std::nullopt;
  Sizes out(x->begin(), x->begin() + *s);
  int64_t merged = 1;
  for (int64_t d = *s; d <= *e; ++d) merged = knownDim((*x)[d]) && knownDim(merged) ? merged * (*x)[d] : kUnknownDim;
  out.push_back(merged);
  out.insert(out.end(), x->begin() + *e + 1, x->end());
  return out;
}

namespace {

// The first tensor operand of a pointwise op that takes part in its type promotion (where's condition does
// not); null where none does.
const Value* firstPromotedTensor(const Node* n) {
  for (size_t i = 0; i < n->inputs().size(); ++i)
    if (n->input(i)->type().isTensor() && promotesType(n->kind(), i)) return n->input(i);
  return nullptr;
}

}  // namespace

Type pointwiseType(const Node* n) {
  std::optional<Sizes> sizes = sizesOf(n->input(0));
  for (size_t i = 1; i < n->inputs().size(); ++i)
    if (n->input(i)->type().isTensor()) sizes = broadcast(sizes, sizesOf(n->input(i)));
  const Value* first = firstPromotedTensor(n);
  Type t = tensorLike((first ? first : n->input(0))->type(), sizes);
  t.dtype = isComparison(n->kind()) ? std::optional(DType::Bool) : pointwiseOperandDtype(n);
  return t;
}

Type integersSumInInt64(Type t) {
  if (t.dtype && !isFloating(*t.dtype)) t.dtype = DType::Int64;
  return t;
}

Type declaredType(const Node* n, size_t k, const Args&) { return n->output(k)->type(); }

Type likeFirstOperandType(const Node*, size_t, const Args& op) {
  return op.same(0);
}

Type sizedByListType(const Node*, size_t, const Args& op) {
  return op.like(0, constantInts(op.in(1)));
}

namespace {

Type pointwiseRule(const Node* n, size_t, const Args&) { return pointwiseType(n); }

OpTable<Rule> makeTable() {
  OpTable<Rule> table("shape rule", "passes/shapes/");
  for (const OpInfo& info : allOps()) {
    if (info.group == OpGroupKind::Pointwise)
      table.add(info.kind, pointwiseRule, OpGroupKind::Pointwise, "rules.cpp");
    else if (info.group == OpGroupKind::Control || info.frontendOnly())
      table.add(info.kind, declaredType, info.group, "rules.cpp");
  }
  table.add(viewRules(), OpGroupKind::View, "view.cpp");
  table.add(reductionRules(), OpGroupKind::Reduction, "reduction.cpp");
  table.add(gemmRules(), OpGroupKind::Gemm, "gemm.cpp");
  table.add(dataRules(), OpGroupKind::Data, "data.cpp");
  return table;
}

}  // namespace

Rule ruleFor(OpKind k) {
  static const OpTable<Rule> table = makeTable().complete();
  return table[k];
}

}  // namespace gj::shapes

namespace gj {

std::optional<DType> pointwiseOperandDtype(const Node* n) {
  std::vector<PromotionOperand> operands;
  std::optional<DType> firstTensor;
  bool sameDtype = true;
  for (size_t i = 0; i < n->inputs().size(); ++i) {
    const Type& t = n->input(i)->type();
    if (!promotesType(n->kind(), i)) continue;
    if (t.isTensor()) {
      if (!t.dtype) return std::nullopt;
      sameDtype = sameDtype && (!firstTensor || *t.dtype == *firstTensor);
      if (!firstTensor) firstTensor = t.dtype;
      // a tensor's rank matters only beside a tensor of another dtype (checked below)
      const OperandKind kind = t.sizes && t.sizes->empty() ? OperandKind::ZeroDim : OperandKind::Dimensioned;
      operands.push_back({*t.dtype, kind});
    } else if (t.kind == TypeKind::Int || t.kind == TypeKind::Float || t.kind == TypeKind::Bool) {
      const DType d = t.kind == TypeKind::Int ? DType::Int64 : t.kind == TypeKind::Float ? DType::Float64 : DType::Bool;
      operands.push_back({d, OperandKind::Number});
    }
  }
  if (!firstTensor) return DType::Float32;  // numbers alone (where(c, 1.0, 0.0)): the default dtype
  if (sameDtype) {
    for (PromotionOperand& o : operands)
      if (o.kind != OperandKind::Number) o.kind = OperandKind::Dimensioned;
  } else {
    for (size_t i = 0; i < n->inputs().size(); ++i) {
      const Type& t = n->input(i)->type();
      if (t.isTensor() && promotesType(n->kind(), i) && !t.sizes) return std::nullopt;
    }
  }
  const DType r = resultType(operands.data(), operands.size());
  if (!isFloating(r))
    if (auto op = n->info().pointwiseOp(); op && promotesIntegersToFloat(*op)) return DType::Float32;
  return r;
}

}  // namespace gj
