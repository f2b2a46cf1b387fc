#include "passes/shape_propagation.h"

#include "passes/util.h"
#include "support/window.h"

#include <algorithm>

namespace gj {

namespace {

using Sizes = std::vector<int64_t>;

// ---- type helpers ----

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
std::optional<Type> appendedElement(const Value* list, int depth = 0) {
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

// The type of output `k` of n from its inputs' types.
Type outputType(const Node* n, size_t k);

// ---- strict mode (checkShapes): what the types already show cannot run ----

std::string shapeStr(const Sizes& s) {
  std::vector<std::string> dims;
  for (int64_t d : s) dims.push_back(knownDim(d) ? std::to_string(d) : "*");
  return fmt::format("[{}]", fmt::join(dims, ", "));
}

// Sizes a and b broadcast; "" when they can, else why not.
std::string broadcastError(const Sizes& a, const Sizes& b) {
  for (size_t i = 1; i <= std::min(a.size(), b.size()); ++i) {
    int64_t da = a[a.size() - i], db = b[b.size() - i];
    if (knownDim(da) && knownDim(db) && da != db && da != 1 && db != 1)
      return fmt::format("sizes {} and {} do not broadcast: {} against {} in the dimension {} from the end",
                         shapeStr(a), shapeStr(b), da, db, i);
  }
  return {};
}

// The inner sizes of a matrix product a @ b (their last and next-to-last dimensions) agree, where known.
std::string productError(const Sizes& a, const Sizes& b, const char* op) {
  int64_t k1 = a.back(), k2 = b.size() == 1 ? b[0] : b[b.size() - 2];
  if (knownDim(k1) && knownDim(k2) && k1 != k2)
    return fmt::format("{} of {} and {}: the first operand's {} columns do not match the second's {} rows", op,
                       shapeStr(a), shapeStr(b), k1, k2);
  return {};
}

std::string rankError(const Sizes& s, size_t rank, const char* op, const char* what) {
  if (s.size() == rank) return {};
  return fmt::format("{} takes a {}-dimensional {}, not {}", op, rank, what, shapeStr(s));
}

// Why n's inputs cannot be what its op takes, from their known sizes ("" when they can or it is unknown):
// a GEMM's rank and inner sizes, linear's features and bias, a pointwise op's broadcast.
std::string staticShapeError(const Node* n) {
  auto sz = [&](size_t i) { return n->input(i)->type().isTensor() ? n->input(i)->type().sizes : std::nullopt; };
  const OpKind k = n->kind();
  if (k == OpKind::Mm || k == OpKind::Bmm) {
    const size_t rank = k == OpKind::Mm ? 2 : 3;
    const char* op = k == OpKind::Mm ? "aten::mm" : "aten::bmm";
    auto a = sz(0), b = sz(1);
    if (!a || !b) return {};
    if (auto e = rankError(*a, rank, op, "first operand"); !e.empty()) return e;
    if (auto e = rankError(*b, rank, op, "second operand"); !e.empty()) return e;
    if (rank == 3 && knownDim((*a)[0]) && knownDim((*b)[0]) && (*a)[0] != (*b)[0])
      return fmt::format("aten::bmm of {} and {}: batch sizes {} and {} differ", shapeStr(*a), shapeStr(*b), (*a)[0],
                         (*b)[0]);
    return productError(*a, *b, op);
  }
  if (k == OpKind::Matmul) {
    auto a = sz(0), b = sz(1);
    if (!a || !b) return {};
    if (a->empty() || b->empty()) return "aten::matmul takes operands of at least one dimension";
    return productError(*a, *b, "aten::matmul");
  }
  if (k == OpKind::Addmm) {
    auto self = sz(0), a = sz(1), b = sz(2);
    if (!a || !b) return {};
    if (auto e = rankError(*a, 2, "aten::addmm", "mat1"); !e.empty()) return e;
    if (auto e = rankError(*b, 2, "aten::addmm", "mat2"); !e.empty()) return e;
    if (auto e = productError(*a, *b, "aten::addmm"); !e.empty()) return e;
    return self ? broadcastError(*self, Sizes{(*a)[0], (*b)[1]}) : std::string();
  }
  if (k == OpKind::Linear) {
    auto x = sz(0), w = sz(1);
    if (!x || !w) return {};
    if (auto e = rankError(*w, 2, "aten::linear", "weight"); !e.empty()) return e;
    if (x->empty()) return "aten::linear takes an input of at least one dimension";
    if (knownDim(x->back()) && knownDim((*w)[1]) && x->back() != (*w)[1])
      return fmt::format("aten::linear of an input {} and a weight {}: the input has {} features, the weight takes {}",
                         shapeStr(*x), shapeStr(*w), x->back(), (*w)[1]);
    auto b = n->input(2)->type().kind == TypeKind::None ? std::nullopt : sz(2);
    if (b && (b->size() != 1 || (knownDim((*b)[0]) && knownDim((*w)[0]) && (*b)[0] != (*w)[0])))
      return fmt::format("aten::linear's bias {} must be [{}], the weight's output features", shapeStr(*b), (*w)[0]);
    return {};
  }
  if (k == OpKind::PhiloxDropout) {  // rng is the generator's state: int64 [seed, offset]
    const Type& rng = n->input(3)->type();
    if ((rng.dtype && *rng.dtype != DType::Int64) || (rng.sizes && *rng.sizes != Sizes{2} &&
                                                      !(rng.sizes->size() == 1 && !knownDim((*rng.sizes)[0]))))
      return fmt::format("prim::philox_dropout's rng must be an int64 tensor [2] (seed, offset), not {}", rng.str());
    return {};
  }
  if (int c = conditionOperand(k); c >= 0) {
    const Type& t = n->input(c)->type();
    if (t.isTensor() && t.dtype && *t.dtype != DType::Bool)
      return fmt::format("{}'s {} must be a bool tensor, not {} (compare, e.g. aten::gt, to make one)", n->info().name,
                         opSignature(k).inputNames[c], dtypeName(*t.dtype));
  }
  if (n->info().group == OpGroupKind::Pointwise) {  // every tensor operand broadcasts with the others
    std::optional<Sizes> first;
    for (size_t i = 0; i < n->inputs().size(); ++i) {
      auto s = sz(i);
      if (!s) continue;
      if (first)
        if (auto e = broadcastError(*first, *s); !e.empty()) return e;
      if (!first) first = s;
    }
  }
  return {};
}

// Why a value declared `declared` cannot hold what its op makes, of type `made` ("" when it can): another
// kind, or a dtype, rank or size that both know and that differ.
std::string contradiction(const Type& declared, const Type& made) {
  auto differ = [&] { return fmt::format("it is declared {} but the op makes {}", declared.str(), made.str()); };
  if (declared.kind != made.kind) return differ();
  if (!declared.isTensor()) return {};
  if (declared.dtype && made.dtype && *declared.dtype != *made.dtype) return differ();
  if (!declared.sizes || !made.sizes) return {};
  if (declared.sizes->size() != made.sizes->size()) return differ();
  for (size_t d = 0; d < made.sizes->size(); ++d)
    if (knownDim((*declared.sizes)[d]) && knownDim((*made.sizes)[d]) && (*declared.sizes)[d] != (*made.sizes)[d])
      return differ();
  return {};
}

[[noreturn]] void typeError(const Node* n, const std::string& what) {
  // describe() already names the Python source
  throw Error(what, n->loc().known() ? n->where() : n->describe(),
              "fix the operands' types, or the declared type, so that they agree");
}

class ShapePropagator {
 public:
  explicit ShapePropagator(bool strict = false) : strict_(strict) {}
  bool changed = false;

  void block(Block* b) {
    for (Node* n : *b) node(n);
  }
  void range(Node* first, Node* last) {
    for (Node* n = first;; n = n->next()) {
      node(n);
      if (n == last) break;
    }
  }

 private:
  void set(Value* v, Type t) {
    if (strict_)
      if (std::string why = contradiction(v->type(), t); !why.empty())
        typeError(v->node(), fmt::format("%{}: {}", v->name(), why));
    t.requiresGrad = v->type().requiresGrad;  // owned by the requires-grad pass
    if (v->type() != t) {
      v->setType(std::move(t));
      changed = true;
    }
  }

  void node(Node* n) {
    if (strict_)
      if (std::string why = staticShapeError(n); !why.empty()) typeError(n, why);
    if (n->kind() == OpKind::Loop) return loop(n);
    if (n->kind() == OpKind::If) return ifNode(n);
    if (n->kind() == OpKind::DifferentiableGraph) return subgraph(n);
    for (size_t k = 0; k < n->outputs().size(); ++k) set(n->output(k), outputType(n, k));
  }

  void loop(Node* n) {
    Block* body = n->block(0);
    size_t carried = n->inputs().size() - 2;
    std::vector<Type> types;
    for (size_t k = 0; k < carried; ++k) types.push_back(n->input(k + 2)->type());
    // Merging only loses information, so this reaches a fixed point in a few rounds.
    for (int round = 0; round < 8; ++round) {
      for (size_t k = 0; k < carried; ++k) set(body->inputs()[k + 1], types[k]);
      block(body);
      bool stable = true;
      for (size_t k = 0; k < carried; ++k) {
        Type m = mergeTypes(types[k], body->outputs()[k + 1]->type());
        if (m != types[k]) stable = false;
        types[k] = m;
      }
      if (stable) break;
    }
    for (size_t k = 0; k < carried; ++k) set(n->output(k), types[k]);
  }

  void ifNode(Node* n) {
    block(n->block(0));
    block(n->block(1));
    for (size_t k = 0; k < n->outputs().size(); ++k)
      set(n->output(k), mergeTypes(n->block(0)->outputs()[k]->type(), n->block(1)->outputs()[k]->type()));
  }

  void subgraph(Node* n) {
    Graph& sub = *n->subgraph();
    for (size_t i = 0; i < sub.inputs().size(); ++i) {
      Type t = n->input(i)->type();
      t.requiresGrad = sub.inputs()[i]->type().requiresGrad;
      if (sub.inputs()[i]->type() != t) sub.inputs()[i]->setType(t);
    }
    ShapePropagator inner(strict_);
    inner.block(sub.block());
    changed |= inner.changed;
    for (size_t k = 0; k < n->outputs().size(); ++k) set(n->output(k), sub.outputs()[k]->type());
  }

  bool strict_;
};

// The first tensor operand of a pointwise op that takes part in its type promotion (where's condition does
// not); null where none does.
const Value* firstPromotedTensor(const Node* n) {
  for (size_t i = 0; i < n->inputs().size(); ++i)
    if (n->input(i)->type().isTensor() && promotesType(n->kind(), i)) return n->input(i);
  return nullptr;
}

// A pointwise op's result: its tensor operands broadcast together (a scalar operand broadcasts as 0-dim),
// in the dtype of pointwiseOperandDtype (bool for a comparison).
Type pointwiseType(const Node* n) {
  std::optional<Sizes> sizes = sizesOf(n->input(0));
  for (size_t i = 1; i < n->inputs().size(); ++i)
    if (n->input(i)->type().isTensor()) sizes = broadcast(sizes, sizesOf(n->input(i)));
  const Value* first = firstPromotedTensor(n);
  Type t = tensorLike((first ? first : n->input(0))->type(), sizes);
  t.dtype = isComparison(n->kind()) ? std::optional(DType::Bool) : pointwiseOperandDtype(n);
  return t;
}

}  // namespace

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

namespace {

// A sum's type: a sum of integers or bools is int64, as PyTorch's.
Type integersSumInInt64(Type t) {
  if (t.dtype && !isFloating(*t.dtype)) t.dtype = DType::Int64;
  return t;
}

Type outputType(const Node* n, size_t k) {
  auto in = [&](size_t i) { return n->input(i); };
  auto like = [&](size_t i, std::optional<Sizes> s) { return tensorLike(in(i)->type(), std::move(s)); };
  auto same = [&](size_t i) { return like(i, sizesOf(in(i))); };
  switch (n->kind()) {
    case OpKind::Param: case OpKind::Return: case OpKind::Loop: case OpKind::If: case OpKind::DifferentiableGraph:
    case OpKind::TypeCheck: case OpKind::FallbackGraph: case OpKind::FusionGroup:
    case OpKind::TensorExprGroup: case OpKind::RecurrenceGroup:
#include "ir/frontend_cases.inc"
      return n->output(k)->type();
    case OpKind::Profile: return in(0)->type();
    case OpKind::Constant:  // a Function, a Device (both hold a str) or a trace's {2} keep their declared type
      if (n->output()->type().isTensor() || n->output()->type().isFrontendOnly()) return n->output()->type();
      return constantType(n->constant());
    case OpKind::ListConstruct: {  // a list of its elements' kind; an empty one keeps its declared kind
      const TypeKind element = n->inputs().empty() ? TypeKind::None : in(0)->type().kind;
      if (element == TypeKind::Int) return Type::of(TypeKind::IntList);
      if (element == TypeKind::Float) return Type::of(TypeKind::FloatList);
      if (element == TypeKind::Bool) return Type::of(TypeKind::BoolList);
      const TypeKind declared = n->output()->type().kind;
      if (n->inputs().empty() && declared != TypeKind::Tensor) return Type::of(declared);
      return Type::of(TypeKind::TensorList);
    }
    case OpKind::ListUnpack:
      if (auto t = listElement(in(0), static_cast<int64_t>(k))) return *t;
      return n->output(k)->type().isTensor() ? Type::tensor() : n->output(k)->type();
    case OpKind::ListAppend: return Type::of(TypeKind::TensorList);
    case OpKind::GetItem: {
      if (in(0)->type().kind == TypeKind::IntList) return Type::of(TypeKind::Int);
      auto idx = constantInt(in(1));
      if (idx)
        if (auto t = listElement(in(0), *idx)) return *t;
      if (in(0)->node()->kind() == OpKind::Unbind) return *listElement(in(0), 0);
      return Type::tensor();
    }
    case OpKind::Len: case OpKind::Size: case OpKind::DTypeOf: case OpKind::IntAdd: case OpKind::FloorDiv:
    case OpKind::Remainder: case OpKind::IntSub: case OpKind::IntOfTensor:
      return Type::of(TypeKind::Int);
    case OpKind::ScalarAdd: case OpKind::ScalarSub: case OpKind::ScalarMul: case OpKind::ScalarMin:
    case OpKind::ScalarMax:  // an int for two ints (or bools), else a float
      return Type::of(in(0)->type().kind == TypeKind::Float || in(1)->type().kind == TypeKind::Float ? TypeKind::Float
                                                                                                    : TypeKind::Int);
    case OpKind::ScalarDiv: case OpKind::ScalarPow: return Type::of(TypeKind::Float);
    case OpKind::ScalarAnd: case OpKind::ScalarOr: case OpKind::ScalarXor:  // a bool for two bools, else an int
      return Type::of(in(0)->type().kind == TypeKind::Bool && in(1)->type().kind == TypeKind::Bool ? TypeKind::Bool
                                                                                                  : TypeKind::Int);
    case OpKind::ScalarLShift: case OpKind::ScalarRShift: return Type::of(TypeKind::Int);
    case OpKind::Sizes: return Type::of(TypeKind::IntList);
    case OpKind::IntEq: case OpKind::IntNe: case OpKind::IntLt: case OpKind::IntLe: case OpKind::IntGt:
    case OpKind::IntGe: case OpKind::BoolNot:
      return Type::of(TypeKind::Bool);
    case OpKind::ListConcat: return in(0)->type();
    case OpKind::RaiseIf: IR_CHECK(false) << "prim::RaiseIf has no outputs"; return {};
    case OpKind::Mm: case OpKind::Bmm: case OpKind::Matmul: return like(0, matmulSizes(in(0), in(1), n->kind()));
    case OpKind::Addmm: return like(1, matmulSizes(in(1), in(2), OpKind::Mm));
    case OpKind::Linear: {
      auto s = sizesOf(in(0));
      auto w = sizesOf(in(1));
      if (s && w && !s->empty() && w->size() == 2) s->back() = (*w)[0];
      else s.reset();
      return like(0, s);
    }
    case OpKind::T: {
      auto s = sizesOf(in(0));
      if (s && s->size() == 2) std::swap((*s)[0], (*s)[1]);
      return like(0, s);
    }
    case OpKind::Transpose: {
      auto s = sizesOf(in(0));
      auto a = normDim(constantInt(in(1)), rankOf(in(0))), b = normDim(constantInt(in(2)), rankOf(in(0)));
      if (!s || !a || !b) return like(0, std::nullopt);
      if (!s->empty()) std::swap((*s)[*a], (*s)[*b]);
      return like(0, s);
    }
    case OpKind::Permute: {
      auto s = sizesOf(in(0));
      auto dims = constantInts(in(1));
      if (!s || !dims || dims->size() != s->size()) return like(0, std::nullopt);
      Sizes out;
      for (int64_t d : *dims) {
        auto nd = normDim(d, static_cast<int64_t>(s->size()));
        if (!nd) return like(0, std::nullopt);
        out.push_back((*s)[*nd]);
      }
      return like(0, out);
    }
    case OpKind::Select: {
      auto s = sizesOf(in(0));
      auto d = normDim(constantInt(in(1)), rankOf(in(0)));
      if (!s || !d || s->empty()) return like(0, std::nullopt);
      return like(0, dropDim(*s, *d));
    }
    case OpKind::Slice: {
      auto s = sizesOf(in(0));
      auto d = normDim(constantInt(in(1)), rankOf(in(0)));
      auto start = constantInt(in(2)), end = constantInt(in(3)), step = constantInt(in(4));
      if (!s || !d || s->empty()) return like(0, std::nullopt);
      int64_t n0 = (*s)[*d];
      if (!start || !end || !step || n0 == kUnknownDim || *step <= 0) {
        (*s)[*d] = kUnknownDim;
        return like(0, s);
      }
      int64_t a = *start < 0 ? *start + n0 : *start, e = *end < 0 ? *end + n0 : *end;
      a = std::clamp<int64_t>(a, 0, n0);
      e = std::clamp<int64_t>(e, a, n0);
      (*s)[*d] = (e - a + *step - 1) / *step;
      return like(0, s);
    }
    case OpKind::View: case OpKind::Reshape: return like(0, reshapeSizes(in(0), in(1)));
    case OpKind::Unsqueeze: {
      auto s = sizesOf(in(0));
      auto d = normDim(constantInt(in(1)), s ? std::optional<int64_t>(s->size() + 1) : std::nullopt);
      if (!s || !d) return like(0, std::nullopt);
      s->insert(s->begin() + *d, 1);
      return like(0, s);
    }
    case OpKind::Squeeze: {
      auto s = sizesOf(in(0));
      auto d = normDim(constantInt(in(1)), rankOf(in(0)));
      if (!s || !d || s->empty()) return like(0, s && s->empty() ? s : std::nullopt);
      if ((*s)[*d] == 1) return like(0, dropDim(*s, *d));
      if ((*s)[*d] == kUnknownDim) return like(0, std::nullopt);
      return like(0, s);
    }
    case OpKind::Expand: {
      auto to = constantInts(in(1));
      auto s = sizesOf(in(0));
      if (!to) return like(0, std::nullopt);
      for (size_t i = 0; i < to->size(); ++i)
        if ((*to)[i] == -1) {
          size_t j = i + (s ? s->size() : 0) - to->size();
          (*to)[i] = s && j < s->size() ? (*s)[j] : kUnknownDim;
        }
      return like(0, to);
    }
    case OpKind::Chunk: case OpKind::Unbind: case OpKind::SplitWithSizes: return Type::of(TypeKind::TensorList);
    case OpKind::Contiguous: case OpKind::Softmax: case OpKind::LogSoftmax: case OpKind::ZerosLike: case OpKind::Detach:
    case OpKind::OnesLike: case OpKind::FullLike:
    case OpKind::SoftmaxBackward: case OpKind::LogSoftmaxBackward:
      return same(0);
#include "ir/pointwise_cases.inc"
      return pointwiseType(n);
    case OpKind::NllLossBackward: return same(1);
    case OpKind::PhiloxDropout: return same(0);
    case OpKind::Var: case OpKind::Std: return like(0, reduceSizes(in(0), in(1), in(3)));
    case OpKind::VarBackward: case OpKind::LayerNorm: return same(n->kind() == OpKind::VarBackward ? 1 : 0);
    case OpKind::NativeLayerNorm: {
      if (k == 0) return same(0);
      // The statistics: the input's sizes with the normalized (trailing) dims kept as 1.
      auto s = sizesOf(in(0));
      auto shape = constantInts(in(1));
      if (!s || !shape || shape->size() > s->size()) return like(0, std::nullopt);
      std::fill(s->end() - static_cast<long>(shape->size()), s->end(), 1);
      return like(0, s);
    }
    case OpKind::NativeLayerNormBackward: {
      const size_t from = k == 0 ? 1 : k + 4;  // input, weight, bias
      return in(from)->type().isTensor() ? same(from) : like(1, std::nullopt);
    }
    case OpKind::TypeAs: {
      Type t = same(0);
      t.dtype = in(1)->type().dtype;
      return t;
    }
    case OpKind::ToDType: {
      Type t = same(0);
      auto code = constantInt(in(1));
      t.dtype = code ? dtypeFromCode(*code) : std::nullopt;
      return t;
    }
    case OpKind::Sum: return integersSumInInt64(like(0, Sizes{}));
    case OpKind::SumDim: return integersSumInInt64(like(0, reduceSizes(in(0), in(1), in(2))));
    case OpKind::Mean: case OpKind::NllLoss: case OpKind::CrossEntropy: return like(0, Sizes{});
    case OpKind::MeanDim: case OpKind::Amax: case OpKind::Amin:
      return like(0, reduceSizes(in(0), in(1), in(2)));
    case OpKind::MaxDim: case OpKind::MinDim: {  // the values, then their int64 indices
      auto s = sizesOf(in(0));
      auto d = normDim(constantInt(in(1)), rankOf(in(0)));
      auto keep = constantBool(in(2));
      if (s && d && keep && !s->empty()) {
        if (*keep) (*s)[*d] = 1;
        else s->erase(s->begin() + *d);
      }
      Type t = like(0, s && d && keep ? s : std::nullopt);
      if (k == 1) t.dtype = DType::Int64;
      return t;
    }
    case OpKind::ValueSelectingBackward: return like(0, listedSizes(in(3)));
    case OpKind::Embedding: {
      auto idx = sizesOf(in(1));
      auto w = sizesOf(in(0));
      if (!idx || !w || w->size() != 2) return like(0, std::nullopt);
      idx->push_back((*w)[1]);
      return like(0, idx);
    }
    case OpKind::Cat: case OpKind::Stack: {
      const Value* list = in(0);
      Type t = list->node()->kind() == OpKind::ListConstruct && !list->node()->inputs().empty()
                   ? list->node()->input(0)->type()
                   : appendedElement(list).value_or(Type::tensor());
      return tensorLike(t, stackCat(list, constantInt(in(1)), n->kind() == OpKind::Stack));
    }
    case OpKind::Conv2d: return like(0, conv2dSizes(n));
    case OpKind::BatchNorm: return same(0);
    case OpKind::NativeBatchNorm: {
      if (k == 0) return same(0);
      if (k >= 3) return same(k);  // the running statistics, updated
      auto x = sizesOf(in(0));
      return like(0, x && x->size() >= 2 ? std::optional<Sizes>(Sizes{(*x)[1]}) : std::nullopt);
    }
    case OpKind::NativeBatchNormBackward:
      if (k == 0) return same(1);
      return in(2)->type().isTensor() ? same(2) : like(1, std::nullopt);
    case OpKind::MaxPool2d: case OpKind::MaxPool2dWithIndices: {
      Type t = like(0, maxPool2dSizes(n));
      if (k == 1) t.dtype = DType::Int64;
      return t;
    }
    case OpKind::MaxPool2dWithIndicesBackward: case OpKind::AdaptiveAvgPool2dBackward: return same(1);
    case OpKind::AdaptiveAvgPool2d: {
      auto x = sizesOf(in(0));
      auto size = constantInts(in(1));
      if (!x || (x->size() != 4 && x->size() != 3) || !size || size->empty() || size->size() > 2)
        return like(0, std::nullopt);
      Sizes s(x->begin(), x->end() - 2);  // [N, C] or [C]
      s.push_back((*size)[0]);
      s.push_back(size->back());
      return like(0, s);
    }
    case OpKind::Flatten: return like(0, flattenSizes(n));
    case OpKind::ConvolutionBackward:
      if (k == 0) return same(1);
      if (k == 1) return same(2);
      {
        auto w = sizesOf(in(2));
        return like(2, w && !w->empty() ? std::optional<Sizes>(Sizes{(*w)[0]}) : std::nullopt);
      }
    case OpKind::SumToSize: case OpKind::SelectBackward: case OpKind::SliceBackward: case OpKind::SumBackward:
    case OpKind::MeanBackward:
      return like(0, constantInts(in(1)));
    case OpKind::NewZeros: case OpKind::IndexSelectBackward: case OpKind::PackPaddedSequenceBackward:
      return like(0, listedSizes(in(1)));
    case OpKind::Full: {  // on the device the graph runs on, which its type leaves open
      Type t = Type::tensor();
      auto code = constantInt(in(2));
      if (code) t.dtype = dtypeFromCode(*code);
      t.sizes = listedSizes(in(0));
      return t;
    }
    case OpKind::PhiloxUniform: return same(0);
    case OpKind::CastOnDevice: {  // the dtype where the input's dtype and device decide it
      Type t = same(0);
      const auto from = constantInts(in(1));
      const auto cpu = constantInt(in(2)), cuda = constantInt(in(3));
      if (!t.dtype || !from || !cpu || !cuda) return t.dtype.reset(), t;
      if (std::find(from->begin(), from->end(), static_cast<int64_t>(*t.dtype)) == from->end()) return t;
      std::optional<int64_t> code;
      if (t.device) code = *t.device == DeviceKind::Cpu ? *cpu : *cuda;
      else if (*cpu == *cuda) code = *cpu;
      t.dtype = !code ? std::nullopt : *code < 0 ? t.dtype : dtypeFromCode(*code);
      return t;
    }
    case OpKind::Sort: {
      Type t = same(0);
      if (k == 1) t.dtype = DType::Int64;
      return t;
    }
    case OpKind::BitwiseAnd: case OpKind::BitwiseOr: case OpKind::BitwiseXor: case OpKind::LeftShift:
    case OpKind::RightShift:
      return pointwiseType(n);
    case OpKind::BitwiseNot: return same(0);
    case OpKind::IndexSelect: {
      auto s = sizesOf(in(0));
      auto d = normDim(constantInt(in(1)), rankOf(in(0)));
      auto idx = sizesOf(in(2));
      if (!s || !d || s->empty()) return like(0, std::nullopt);
      (*s)[*d] = idx && idx->size() == 1 ? (*idx)[0] : kUnknownDim;
      return like(0, s);
    }
    case OpKind::PackPaddedSequence: {
      // data [sum(lengths), *], batch_sizes [max(lengths)]: both lengths are data.
      if (k == 1) {
        Type t = like(1, Sizes{kUnknownDim});
        t.dtype = DType::Int64;
        t.device = DeviceKind::Cpu;  // read step by step on the host, as PyTorch keeps it
        return t;
      }
      auto s = sizesOf(in(0));
      if (!s || s->size() < 2) return like(0, std::nullopt);
      Sizes data(s->begin() + 1, s->end());
      data[0] = kUnknownDim;
      return like(0, data);
    }
    case OpKind::EmbeddingBackward: {
      auto g = sizesOf(in(0));
      auto nw = constantInt(in(2));
      if (!g || g->empty() || !nw) return like(0, std::nullopt);
      return like(0, Sizes{*nw, g->back()});
    }
  }
  return n->output(k)->type();
}

}  // namespace

bool propagateShapes(Graph& g) {
  ShapePropagator p;
  p.block(g.block());
  return p.changed;
}

bool propagateShapes(Node* first, Node* last) {
  ShapePropagator p;
  p.range(first, last);
  return p.changed;
}

void checkShapes(const Graph& g) {
  std::unique_ptr<Graph> copy = g.clone();
  ShapePropagator(true).block(copy->block());
}

std::vector<Type> outputTypesFor(const Node* n, std::span<const Type> operandTypes,
                                 std::span<const std::vector<Type>> listElementTypes, std::optional<DType>* promoted) {
  IR_CHECK(operandTypes.size() == n->inputs().size() && listElementTypes.size() == operandTypes.size())
      << "outputTypesFor: " << operandTypes.size() << " types for " << n->inputs().size() << " operands";
  // n again in a graph of its own, over inputs of these types; constants (dims, flags, dtype codes) come
  // along, since the rules read them, and a tensor list is a list of inputs of its elements' types.
  Graph scratch;
  ValueMap env;
  for (size_t i = 0; i < operandTypes.size(); ++i) {
    const Value* v = n->input(i);
    if (env.count(v)) continue;
    if (v->node()->kind() == OpKind::Constant) {
      env[v] = scratch.block()->append(cloneNode(v->node(), scratch, env))->output();
    } else if (operandTypes[i].kind == TypeKind::TensorList) {
      std::vector<Value*> elements;
      for (const Type& t : listElementTypes[i]) elements.push_back(scratch.addInput(t));
      Node* list = scratch.block()->append(scratch.create(OpKind::ListConstruct, elements));
      list->output()->setType(operandTypes[i]);
      env[v] = list->output();
    } else {
      env[v] = scratch.addInput(operandTypes[i]);
    }
  }
  const Node* c = scratch.block()->append(cloneNode(n, scratch, env));
  if (promoted) *promoted = c->info().pointwiseOp() ? pointwiseOperandDtype(c) : std::nullopt;
  std::vector<Type> types;
  for (size_t k = 0; k < c->outputs().size(); ++k) types.push_back(outputType(c, k));
  return types;
}

}  // namespace gj
