#include "passes/batch_mm.h"

#include "passes/util.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace gj {

namespace {

// Which of `members` (nodes of block b) each node from the earliest member to the latest depends on: one
// bit per member, propagated along that span (nothing before the earliest member can depend on one), so
// a group costs the span it covers, not the block.
class MemberDependencies {
 public:
  MemberDependencies(Block* b, const std::vector<Node*>& members) : words_((members.size() + 63) / 64) {
    Node* first = members[0];
    Node* last = members[0];
    for (Node* m : members) {
      if (m->isBefore(first)) first = m;
      if (last->isBefore(m)) last = m;
    }
    for (Node* n = first;; n = n->next()) {
      span_.push_back(n);
      if (n == last) break;
    }
    member_.assign(span_.size(), -1);
    for (size_t i = 0; i < members.size(); ++i) member_[find(members[i])] = static_cast<int64_t>(i);
    masks_.assign(span_.size() * words_, 0);
    for (size_t k = 0; k < span_.size(); ++k) {
      uint64_t* bits = &masks_[k * words_];
      auto read = [&](Value* v) {
        Node* def = v->node();
        if (def->owningBlock() != b) def = ancestorIn(def, b);
        const size_t j = def ? find(def) : kNone;
        if (j == kNone) return;
        for (size_t w = 0; w < words_; ++w) bits[w] |= masks_[j * words_ + w];
        if (const int64_t m = member_[j]; m >= 0) bits[m / 64] |= uint64_t{1} << (m % 64);
      };
      Node* n = span_[k];
      if (n->blocks().empty())
        for (Value* v : n->inputs()) read(v);
      else
        for (Value* v : allUses(n)) read(v);
    }
  }
  /// The members a member depends on: a bit each, by index in `members`, words() words.
  const uint64_t* mask(const Node* member) const { return &masks_[find(member) * words_]; }
  size_t words() const { return words_; }

 private:
  static constexpr size_t kNone = ~size_t{0};
  // n's place in the span (the span is in block order: a binary search by the nodes' order keys), or kNone.
  size_t find(const Node* n) const {
    if (n->owningBlock() != span_[0]->owningBlock()) return kNone;
    auto it = std::lower_bound(span_.begin(), span_.end(), n, [](const Node* x, const Node* y) { return x->isBefore(y); });
    return it != span_.end() && *it == n ? static_cast<size_t>(it - span_.begin()) : kNone;
  }

  size_t words_;
  std::vector<Node*> span_;       // the nodes from the earliest member to the latest, in order
  std::vector<int64_t> member_;   // by place in the span: the member's index, or -1
  std::vector<uint64_t> masks_;   // words_ per node of the span, in order
};

bool programOrder(const Node* a, const Node* c) { return a->isBefore(c); }

// The node of `b` that defines `v` or holds its definition; b's param node for block inputs and for values
// from outside b.
Node* definitionIn(Value* v, Block* b) {
  Node* def = ancestorIn(v->node(), b);
  return def ? def : b->paramNode();
}

int64_t numElements(const Value* v) {
  auto s = staticSizes(v);
  if (!s) return 0;
  int64_t n = 1;
  for (int64_t d : *s) n *= d;
  return n;
}

// Splits items (in program order, `sizes[i]` elements each) into consecutive runs: the fewest that keep each
// run within kBatchChunkElements, filled evenly (an item goes to the run its middle falls in when the
// total is cut into equal parts; an item over the limit is a run of its own). Each run is [begin, end).
std::vector<std::pair<size_t, size_t>> chunkRuns(const std::vector<int64_t>& sizes) {
  const int64_t limit = kBatchChunkElements;
  if (sizes.empty()) return {};
  int64_t total = 0;
  for (int64_t s : sizes) total += s;
  if (total <= limit) return {{0, sizes.size()}};
  const int64_t runs = (total + limit - 1) / limit;
  const double part = static_cast<double>(total) / static_cast<double>(runs);
  std::vector<std::pair<size_t, size_t>> out;
  size_t begin = 0;
  int64_t before = 0, filled = 0, run = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    const auto partOf = static_cast<int64_t>((static_cast<double>(before) + static_cast<double>(sizes[i]) / 2) / part);
    if (i > begin && (partOf > run || filled + sizes[i] > limit)) {
      out.emplace_back(begin, i);
      begin = i;
      filled = 0;
      run = std::max(run + 1, partOf);
    }
    filled += sizes[i];
    before += sizes[i];
  }
  out.emplace_back(begin, sizes.size());
  return out;
}

// parts[0] + parts[1] + ..., added in the order the parts are made, each add right after the later of the
// running sum and its part: a sum of terms that appear one after another is summed as they come, so
// the early terms need not outlive the late ones.
Value* sumAsTheyCome(std::vector<Value*> parts, Block* b, const Type& t) {
  std::stable_sort(parts.begin(), parts.end(),
                   [&](Value* x, Value* y) { return definitionIn(x, b)->isBefore(definitionIn(y, b)); });
  Value* sum = parts[0];
  for (size_t k = 1; k < parts.size(); ++k) {
    Node* later = definitionIn(parts[k], b);
    if (later->isBefore(definitionIn(sum, b))) later = definitionIn(sum, b);
    Node* at = later->next();
    sum = emitBefore(at, OpKind::Add, {sum, parts[k], constantBefore(at, int64_t{1})}, t);
  }
  return sum;
}

// Moves the nodes `v` depends on that sit at or after `point` (in b) in front of `point`.
void hoistCone(Value* v, Node* point, Block* b) {
  Node* def = ancestorIn(v->node(), b);
  if (!def || def->kind() == OpKind::Param || (!point->isBefore(def) && def != point)) return;
  for (Value* in : allUses(def)) hoistCone(in, point, b);
  def->moveBefore(point);
}

// Replaces the independent mm nodes `chosen`, which share operand `sharedSide` (1: the right operand), by
// one product of their other operands concatenated, split back into pieces.
void mergeSide(Block* b, const std::vector<Node*>& chosen, int sharedSide) {
  // Insert before the first use of any chosen output (or the last chosen node when they are unused).
  Node* point = *std::max_element(chosen.begin(), chosen.end(), programOrder);
  for (Node* n : chosen)
    for (const Use& u : n->output()->uses()) {
      Node* user = ancestorIn(u.user, b);
      if (user && user->kind() != OpKind::Return && user->isBefore(point)) point = user;
    }
  for (Node* n : chosen) hoistCone(n->input(1 - sharedSide), point, b);
  Graph* g = b->graph();
  const int catDim = sharedSide == 1 ? 0 : 1;
  std::vector<Value*> parts;
  std::vector<int64_t> splits;
  for (Node* n : chosen) {
    parts.push_back(n->input(1 - sharedSide));
    splits.push_back((*staticSizes(n->input(1 - sharedSide)))[catDim]);
  }
  Value* list = emitBefore(point, OpKind::ListConstruct, parts, Type::of(TypeKind::TensorList));
  Value* merged = emitBefore(point, OpKind::Cat, {list, constantBefore(point, int64_t{catDim})});
  Value* prod = sharedSide == 1 ? emitBefore(point, OpKind::Mm, {merged, chosen[0]->input(1)})
                                : emitBefore(point, OpKind::Mm, {chosen[0]->input(0), merged});
  Value* pieces = emitBefore(point, OpKind::SplitWithSizes, {prod, constantBefore(point, splits), constantBefore(point, int64_t{catDim})},
                       Type::of(TypeKind::TensorList));
  Node* unpack = g->create(OpKind::ListUnpack, {pieces}, chosen.size());
  unpack->insertBefore(point);
  for (size_t i = 0; i < chosen.size(); ++i) {
    unpack->output(i)->setType(chosen[i]->output()->type());
    g->replaceAllUsesWith(chosen[i]->output(), unpack->output(i));
    g->erase(chosen[i]);
  }
}

// Merges the mm nodes of `group`, which share operand `sharedSide`, that are independent of each other and
// have static sizes: in program order, in chunks of at most kBatchChunkElements (a product, or the operand
// concatenated for it), each placed before the first use of its own results.
bool batchSide(Block* b, const std::vector<Node*>& group, int sharedSide) {
  MemberDependencies r(b, group);
  std::vector<Node*> chosen;
  // The chosen members, and the members any of them depends on: a bit each, so that a member is checked
  // against all the chosen at once.
  std::vector<uint64_t> chosenBits(r.words()), chosenDependOn(r.words());
  for (size_t i = 0; i < group.size(); ++i) {
    Node* n = group[i];
    const uint64_t* deps = r.mask(n);
    // Both ways: an earlier merge in this block may have moved nodes, so `group` (in the order the block
    // had when it was scanned) need not be in program order any more.
    bool independent = !(chosenDependOn[i / 64] >> (i % 64) & 1);
    for (size_t w = 0; w < r.words() && independent; ++w) independent = !(deps[w] & chosenBits[w]);
    if (independent && staticSizes(n->input(1 - sharedSide))) {
      chosen.push_back(n);
      chosenBits[i / 64] |= uint64_t{1} << (i % 64);
      for (size_t w = 0; w < r.words(); ++w) chosenDependOn[w] |= deps[w];
    }
  }
  if (chosen.size() < 2) return false;
  std::sort(chosen.begin(), chosen.end(), programOrder);
  std::vector<int64_t> sizes;
  for (Node* n : chosen) sizes.push_back(std::max(numElements(n->input(1 - sharedSide)), numElements(n->output())));
  bool changed = false;
  for (auto [begin, end] : chunkRuns(sizes))
    if (end - begin >= 2) {
      mergeSide(b, {chosen.begin() + begin, chosen.begin() + end}, sharedSide);
      changed = true;
    }
  return changed;
}

// The mm leaves of the sum rooted at `n`: aten::add nodes with alpha 1 (below the root, each used once)
// down to aten::mm nodes used once whose results all have the same static `sizes` (set by the first).
// False when a leaf is anything else.
bool collectMmSum(Node* n, std::optional<std::vector<int64_t>>& sizes, bool root, std::vector<Node*>& adds,
                  std::vector<Node*>& mms) {
  if (!root && n->output()->uses().size() != 1) return false;
  if (n->kind() == OpKind::Add && isConstantEqual(n->input(2), 1.0)) {
    adds.push_back(n);
    return collectMmSum(n->input(0)->node(), sizes, false, adds, mms) &&
           collectMmSum(n->input(1)->node(), sizes, false, adds, mms);
  }
  if (n->kind() != OpKind::Mm) return false;
  auto s = staticSizes(n->output());
  if (!s || (sizes && *s != *sizes)) return false;
  sizes = s;
  mms.push_back(n);
  return true;
}

bool isSumOperand(const Node* n) {
  const auto& uses = n->output()->uses();
  return uses.size() == 1 && uses[0].user->kind() == OpKind::Add && isConstantEqual(uses[0].user->input(2), 1.0);
}

// One term t(x) * b or a * b of a sum of products: its operands (x for a transposed left operand) and its
// mm node.
struct Term {
  Value* left;
  Value* right;
  Node* mm;
};

// Terms multiplied together as one product: `terms` in the order of their rows, and the concatenation of
// their right operands when the graph holds one already (else null).
struct Chunk {
  std::vector<size_t> terms;
  Value* rightRows = nullptr;
};

// The concatenations along rows (aten::cat or a stack along a new first dimension, in `b`) of two or more
// distinct right operands of `terms` that no other such concatenation took. A backward concatenates the
// per-step gate gradients for the input's gradient; the weight gradients multiply the same tensors, so
// their products read that copy instead of making another. A stack after `root` is recreated at `root`
// (its inputs are operands of products before it), taking over its uses; a stack is read as
// [steps * rows, columns].
std::vector<Chunk> existingRowConcatenations(Node* root, const std::vector<Term>& terms, std::vector<bool>& taken) {
  Block* b = root->owningBlock();
  // The terms by right operand, for the 2-D right operands that only one term has.
  std::unordered_map<Value*, int> count;
  for (const Term& t : terms) ++count[t.right];
  std::unordered_map<Value*, size_t> termOf;
  for (size_t i = 0; i < terms.size(); ++i) {
    auto s = staticSizes(terms[i].right);
    if (s && s->size() == 2 && count[terms[i].right] == 1) termOf[terms[i].right] = i;
  }
  std::vector<Chunk> found;
  for (size_t i = 0; i < terms.size(); ++i) {
    if (taken[i] || !termOf.count(terms[i].right)) continue;
    for (const Use& u : terms[i].right->uses()) {
      Node* list = u.user;
      if (list->kind() != OpKind::ListConstruct || list->owningBlock() != b || list->inputs().size() < 2) continue;
      std::vector<size_t> members;
      for (Value* v : list->inputs()) {
        auto it = termOf.find(v);
        if (it == termOf.end() || taken[it->second] ||
            std::find(members.begin(), members.end(), it->second) != members.end())
          break;
        members.push_back(it->second);
      }
      if (members.size() != list->inputs().size()) continue;
      Node* concat = nullptr;
      for (const Use& lu : list->output()->uses())
        if ((lu.user->kind() == OpKind::Cat || lu.user->kind() == OpKind::Stack) && lu.user->owningBlock() == b &&
            constantInt(lu.user->input(1)) == 0)
          concat = lu.user;
      if (!concat) continue;
      Value* rows = concat->output();
      if (concat->kind() == OpKind::Stack) {
        if (root->isBefore(concat)) {
          std::vector<Value*> pieces(list->inputs().begin(), list->inputs().end());
          Value* fresh = emitBefore(root, OpKind::Stack,
                              {emitBefore(root, OpKind::ListConstruct, pieces, list->output()->type()), constantBefore(root, int64_t{0})},
                              rows->type());
          root->graph()->replaceAllUsesWith(rows, fresh);  // the old stack is left to dce: the caller's walk
          rows = fresh;                                      // over the block still holds it
        }
        const auto cols = (*staticSizes(terms[i].right))[1];
        Node* after = rows->node()->next();
        rows = emitBefore(after, OpKind::Reshape, {rows, constantBefore(after, std::vector<int64_t>{-1, cols})});
      } else if (root->isBefore(concat)) {
        continue;  // a cat after the sum is left alone
      }
      for (size_t m : members) taken[m] = true;
      found.push_back({std::move(members), rows});
      break;
    }
  }
  return found;
}

// A sum of products, mm(a1, b1) + mm(a2, b2) + ... (any tree of adds with alpha 1, equal static result
// sizes), becomes few products mm(cat([a1, a2, ...], 1), cat([b1, b2, ...], 0)); when every a_i is t(x_i),
// the left operand is t(cat([x1, x2, ...], 0)), a contiguous copy. This is how a backward's weight
// gradient, accumulated over time steps from one small GEMM per step, becomes a few large GEMMs: the terms
// are taken in chunks of at most kBatchChunkElements per operand (terms whose right operands the graph
// concatenates already form a chunk that reads that concatenation), each product placed as soon as its
// operands exist and summed as the products come, so the per-step tensors need not all be alive at once.
bool batchTree(Node* root) {
  if (root->kind() != OpKind::Add || isSumOperand(root)) return false;
  std::optional<std::vector<int64_t>> sizes;
  std::vector<Node*> adds, mms;
  if (!collectMmSum(root, sizes, true, adds, mms) || mms.size() < 2) return false;
  Block* b = root->owningBlock();
  Graph* g = root->graph();
  bool transposed = std::all_of(mms.begin(), mms.end(), [](Node* m) {
    const Node* a = m->input(0)->node();
    return a->kind() == OpKind::T && staticSizes(a->input(0)) && staticSizes(a->input(0))->size() == 2;
  });
  std::vector<Term> terms;
  for (Node* m : mms) terms.push_back({transposed ? m->input(0)->node()->input(0) : m->input(0), m->input(1), m});

  std::vector<bool> taken(terms.size(), false);
  std::vector<Chunk> chunks = existingRowConcatenations(root, terms, taken);
  // The rest in the order their operands become available, in runs of bounded size.
  auto ready = [&](const Term& t) {
    Node* l = definitionIn(t.left, b);
    Node* r = definitionIn(t.right, b);
    return l->isBefore(r) ? r : l;
  };
  std::vector<size_t> rest;
  for (size_t i = 0; i < terms.size(); ++i)
    if (!taken[i]) rest.push_back(i);
  std::stable_sort(rest.begin(), rest.end(),
                   [&](size_t x, size_t y) { return ready(terms[x])->isBefore(ready(terms[y])); });
  std::vector<int64_t> elements;
  for (size_t i : rest) elements.push_back(std::max(numElements(terms[i].left), numElements(terms[i].right)));
  for (auto [begin, end] : chunkRuns(elements)) chunks.push_back({std::vector<size_t>(rest.begin() + begin, rest.begin() + end)});
  if (std::all_of(chunks.begin(), chunks.end(), [](const Chunk& c) { return c.terms.size() == 1; })) return false;

  // One product per chunk, right after the last of its operands (a chunk of one term keeps its mm).
  Type list = Type::of(TypeKind::TensorList);
  std::vector<Value*> products;
  std::unordered_set<Node*> kept;
  for (const Chunk& c : chunks) {
    if (c.terms.size() == 1) {
      products.push_back(terms[c.terms[0]].mm->output());
      kept.insert(terms[c.terms[0]].mm);
      continue;
    }
    Node* last = c.rightRows ? c.rightRows->node() : b->paramNode();
    std::vector<Value*> lefts, rights;
    for (size_t i : c.terms) {
      lefts.push_back(terms[i].left);
      rights.push_back(terms[i].right);
      for (Value* v : {terms[i].left, terms[i].right})
        if (Node* def = definitionIn(v, b); last->isBefore(def)) last = def;
    }
    Node* at = last->next();
    Value* lhs = emitBefore(at, OpKind::Cat, {emitBefore(at, OpKind::ListConstruct, lefts, list),
                                        constantBefore(at, int64_t{transposed ? 0 : 1})});
    if (transposed) lhs = emitBefore(at, OpKind::T, {lhs});
    Value* rhs = c.rightRows ? c.rightRows
                             : emitBefore(at, OpKind::Cat, {emitBefore(at, OpKind::ListConstruct, rights, list),
                                                      constantBefore(at, int64_t{0})});
    products.push_back(emitBefore(at, OpKind::Mm, {lhs, rhs}, root->output()->type()));
  }

  g->replaceValue(root->output(), sumAsTheyCome(products, b, root->output()->type()));
  for (Node* a : adds) g->erase(a);  // pre-order: each add's one use (its parent) is gone before it
  for (Node* m : mms)
    if (!kept.count(m)) g->erase(m);
  return true;
}

// The terms of the sum rooted at `n`: aten::add nodes of `b` with alpha 1 (below the root, each used
// once) down to values of the root's static sizes and dtype (a broadcasting add is not a term's sum).
// False when an add broadcasts or a term's sizes are unknown.
bool collectTerms(Node* n, const Type& t, bool root, std::vector<Node*>& adds, std::vector<Value*>& terms) {
  adds.push_back(n);
  for (Value* in : {n->input(0), n->input(1)}) {
    Node* def = in->node();
    if (def->kind() == OpKind::Add && def->owningBlock() == n->owningBlock() && in->uses().size() == 1 &&
        isConstantEqual(def->input(2), 1.0)) {
      if (!collectTerms(def, t, false, adds, terms)) return false;
      continue;
    }
    if (!staticSizes(in) || in->type().sizes != t.sizes || in->type().dtype != t.dtype) return false;
    terms.push_back(in);
  }
  return true;
}

// A long sum of same-sized tensors, x1 + x2 + ... + xn (a tree of adds with alpha 1, at least
// kMinStackedTerms terms), becomes few reductions sum(stack([x1, x2, ...]), [0]): a backward accumulates a
// bias's gradient over 100 time steps one add at a time, which fusion would make one kernel of 100 inputs
// per bias (compiled again for every depth and length). As in batchTree, the terms are taken in the order
// they become available, in chunks of at most kBatchChunkElements, each reduced as soon as its terms exist
// and the chunks summed as they come.
bool batchSum(Node* root) {
  if (root->kind() != OpKind::Add || isSumOperand(root) || !isConstantEqual(root->input(2), 1.0)) return false;
  const Type& t = root->output()->type();
  if (!staticSizes(root->output()) || !t.dtype || !isFloating(*t.dtype)) return false;
  std::vector<Node*> adds;
  std::vector<Value*> terms;
  if (!collectTerms(root, t, true, adds, terms) || terms.size() < kMinStackedTerms) return false;
  Block* b = root->owningBlock();
  std::stable_sort(terms.begin(), terms.end(),
                   [&](Value* x, Value* y) { return definitionIn(x, b)->isBefore(definitionIn(y, b)); });
  std::vector<int64_t> elements(terms.size(), numElements(root->output()));
  std::vector<Value*> partials;
  for (auto [begin, end] : chunkRuns(elements)) {
    if (end - begin == 1) {
      partials.push_back(terms[begin]);
      continue;
    }
    std::vector<Value*> chunk(terms.begin() + begin, terms.begin() + end);
    Node* at = definitionIn(chunk.back(), b)->next();
    Value* stacked = emitBefore(at, OpKind::Stack, {emitBefore(at, OpKind::ListConstruct, chunk, Type::of(TypeKind::TensorList)),
                                                    constantBefore(at, int64_t{0})});
    partials.push_back(emitBefore(at, OpKind::SumDim, {stacked, constantBefore(at, std::vector<int64_t>{0}),
                                                       constantBefore(at, false)}, t));
  }
  root->graph()->replaceValue(root->output(), sumAsTheyCome(partials, b, t));
  for (Node* a : adds) root->graph()->erase(a);  // pre-order: each add's one use (its parent) is gone before it
  return true;
}

// Whether `products`, sharing the left operand `x` [M, K], are worth one product of their right operands
// concatenated: the concatenation copies each K x N right operand on every run, and one product instead of
// several saves only the calls. So it pays only where M is large (a kept loop's step at batch 1, run once a
// step by the tape, copied both weights of mm(g, W_hh) and mm(g, W_ih) every step: 8 MB at hidden 512, for
// 2 M multiply-adds) and the right operands small (kMaxConcatenatedRightElements).
bool worthConcatenatingRightOperands(const Value* x, const std::vector<Node*>& products) {
  const auto sizes = staticSizes(x);
  if (!sizes || sizes->size() != 2 || (*sizes)[0] < kMinRowsToConcatenateRightOperands) return false;
  int64_t elements = 0;
  for (const Node* n : products) {
    const int64_t e = numElements(n->input(1));
    if (e == 0) return false;  // sizes unknown
    elements += e;
  }
  return elements <= kMaxConcatenatedRightElements;
}

bool batchBlock(Block* b) {
  bool changed = false;
  for (Node* n : b->nodesList())
    for (Block* inner : n->blocks()) changed |= batchBlock(inner);
  // Side: group mm by shared right operand, then by shared left operand.
  for (int side : {1, 0}) {
    std::unordered_map<Value*, std::vector<Node*>> groups;
    std::vector<Value*> order;
    for (Node* n : *b)
      if (n->kind() == OpKind::Mm) {
        auto& grp = groups[n->input(side)];
        if (grp.empty()) order.push_back(n->input(side));
        grp.push_back(n);
      }
    for (Value* shared : order)
      if (groups[shared].size() >= 2 && (side == 1 || worthConcatenatingRightOperands(shared, groups[shared])))
        changed |= batchSide(b, groups[shared], side);
  }
  for (Node* n : b->nodesList()) changed |= batchTree(n) || batchSum(n);
  return changed;
}

}  // namespace

bool batchMatmuls(Graph& g) {
  bool changed = batchBlock(g.block());
  forEachNode(g.block(), [&](Node* n) {
    if (optimizesInto(n)) changed |= batchMatmuls(*n->subgraph());
  });
  return changed;
}

}  // namespace gj
