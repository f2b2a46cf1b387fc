// The TE fuser's GPU schedule (LoopNest::scheduleGpu and its launch): a nest's elements over blocks and
// threads, rows a warp or a block each with their sums in shared memory, split reductions.
#include "fusers/te/loopnest.h"

#include "fusers/te/mutator.h"
#include "fusers/te/nest_queries.h"
#include "fusers/te/printer.h"
#include "support/error.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>
#include <optional>
#include <unordered_set>

namespace gj::te {

using namespace nest;

LoopNest::GpuLaunch LoopNest::gpuLaunch() const {
  struct Collect : Visitor {
    using Visitor::visit;
    GpuLaunch launch;
    void visit(const For* op) override {
      const LoopOptions& o = op->options;
      if (o.gpuBlock >= 0 || o.gpuThread >= 0) {
        const IntImm* start = op->start.as<IntImm>();
        const IntImm* stop = op->stop.as<IntImm>();
        USER_CHECK(start && stop, "GPU-bound loop {} has bounds that are not constant",
                   op->var.as<Var>()->name);
        int64_t& extent = o.gpuBlock >= 0 ? launch.blocks[o.gpuBlock] : launch.threads[o.gpuThread];
        extent = std::max(extent, stop->value - start->value);
      }
      Visitor::visit(op);
    }
    void visit(const GridSync*) override { launch.cooperative = true; }
  } c;
  c.visit(root_);
  return c.launch;
}

namespace {

// Whether x (an expression or a statement) holds a Reduce.
template <typename X>
bool holdsReduce(const X& x) {
  struct Find : Visitor {
    using Visitor::visit;
    bool found = false;
    void visit(const Reduce*) override { found = true; }
  } f;
  f.visit(x);
  return f.found;
}

// A reduction along contiguous elements: every load that reads along a reduced variable has the last one
// in its last index (a row's elements, one after another: x[i, r]; x[i, r0, r1]), not a sum over the
// batch (x[r, j]), whose outputs' threads read neighbours as they are.
bool alongRows(const Reduce* r) {
  if (r->vars.empty()) return false;  // nothing to fold across threads
  for (const Load* l : loadsOf(r->body)) {
    bool reads = false;
    for (const Expr& v : r->vars)
      for (const Expr& i : l->indices) reads = reads || mentions(i, v.get());
    if (reads && (l->indices.empty() || !mentions(l->indices.back(), r->vars.back().get()))) return false;
  }
  return true;
}

// The statements of a nest's innermost body.
std::vector<Stmt> statementsOf(const Stmt& body) {
  if (const Block* b = body.as<Block>()) return b->stmts;
  return {body};
}

// The longest run a row nest's body walks: its reductions' elements and its loops' trips.
int64_t rowLength(const Stmt& body) {
  int64_t most = 0;
  for (const Stmt& st : statementsOf(body)) {
    if (const Store* store = st.as<Store>(); store && store->value.as<Reduce>()) {
      int64_t n = 1;
      for (int64_t e : store->value.as<Reduce>()->extents) n *= e;
      most = std::max(most, n);
    } else if (const For* f = st.as<For>()) {
      most = std::max(most, *intValue(f->stop) - *intValue(f->start));
    }
  }
  return most;
}

// A reduction `store` (buf[0] = Reduce(...)) rfactored across threads: this thread folds element
// q * step + first (first < step) of the flattened reduction for every q into a register of its own (under
// `guard` too, when given), then buf[0] = ThreadReduce of those registers over the threads of `scope`. `element`, when
// given, rewrites the reduction's body knowing q first.
std::vector<Stmt> rfactored(const Store* store, const Expr& first, int64_t step, const Expr& guard, ThreadScope scope,
                            const std::function<Expr(const Expr& body, const Expr& q)>& element = nullptr) {
  const Reduce* r = store->value.as<Reduce>();
  int64_t n = 1;
  for (int64_t e : r->extents) n *= e;
  const Expr q = Var::make(r->vars.front().as<Var>()->name + "_q");
  const Expr flat = q * imm(step) + first;
  std::unordered_map<const ExprNode*, Expr> at;
  int64_t stride = n;
  for (size_t k = 0; k < r->vars.size(); ++k) {  // flat < n: the outermost needs no %, the innermost no /
    stride /= r->extents[k];
    Expr v = stride == 1 ? flat : flat / imm(stride);
    at[r->vars[k].get()] = simplify(k == 0 ? v : v % imm(r->extents[k]));
  }
  const Buf part = makeBuf(store->buf->name + "_part", {1}, store->buf->type);
  const Expr acc = Load::make(part, {imm(0)}), value = substitute(element ? element(r->body, q) : r->body, at);
  // first < step, so flat < n always holds where step divides n: no guard then.
  Stmt fold = Store::make(part, {imm(0)}, foldInto(r->op, acc, value));
  if (n % step) fold = Cond::make(Compare::make(CompareOpKind::LT, flat, imm(n)), fold);
  if (guard) fold = Cond::make(guard, fold);
  return {Allocate::make(part), Store::make(part, {imm(0)}, FloatImm::make(foldIdentity(r->op), part->type)),
          For::make(q, imm(0), imm((n + step - 1) / step), fold),
          Store::make(store->buf, store->indices, ThreadReduce::make(r->op, acc, scope)), Free::make(part)};
}

// The column nest's body, its outputs' loop flattened into `j` (< outputs), for blocks taking 32 outputs,
// a lane each: warp `slot` of `slots` (a block's t / 32 of its warps; over a split, its row slice's too)
// folds every slots-th element of each reduction, then a ThreadReduce over the block's warps gives each
// lane its output's value, and `across`, when given, carries that block value on across the blocks of a
// split (splitColumns). A store into an output by warp slot 0 only, for an output there is. A guard is
// left out where it always holds (outputs a multiple of 32).
Stmt columnBodyForThreads(const Stmt& body, const Expr& j, int64_t outputs, const Expr& slot, int64_t slots,
                          const std::function<std::vector<Stmt>(const Stmt& blockValue)>& across = nullptr) {
  const Expr inRange = outputs % 32 ? Compare::make(CompareOpKind::LT, j, imm(outputs)) : Expr();
  std::unordered_set<const BufNode*> temporaries;
  for (const Stmt& st : statementsOf(body))
    if (const Allocate* a = st.as<Allocate>()) temporaries.insert(a->buf.get());
  std::vector<Stmt> out;
  for (const Stmt& st : statementsOf(body)) {
    const Store* store = st.as<Store>();
    if (store && store->value.as<Reduce>()) {
      std::vector<Stmt> folded = rfactored(store, slot, slots, inRange, ThreadScope::Columns);
      for (Stmt& x : folded) {
        const Store* result = x.as<Store>();
        if (across && result && result->value.as<ThreadReduce>())
          for (Stmt y : across(x)) out.push_back(std::move(y));
        else
          out.push_back(std::move(x));
      }
    } else if (store && !temporaries.count(store->buf.get())) {
      const Stmt first = Cond::make(Compare::make(CompareOpKind::EQ, slot, imm(0)), st);
      out.push_back(inRange ? Cond::make(inRange, first) : first);
    } else {
      out.push_back(st);
    }
  }
  return Block::make(out);
}

// A top-level nest whose loops (a perfect chain with constant bounds) walk outputs, and whose body folds
// into one-element temporaries it allocates: with `rows`, along each row's contiguous elements, besides
// plain statements and loops over the row (a softmax's, a layer norm's, a row sum's: stat[0] = sum(x[i, r]));
// else along outer dimensions of what it reads, with plain statements only (a bias gradient: acc[0] =
// sum(x[r, j]); out[j] = acc[0]). Its loops, or empty when the nest is not of that form.
std::vector<const For*> foldingLoops(const Stmt& nest, bool rows) {
  std::vector<const For*> loops;
  Stmt s = nest;
  while (const For* f = s.as<For>()) {
    if (!intValue(f->start) || !intValue(f->stop)) return {};
    loops.push_back(f);
    s = f->body;
  }
  bool reduces = false;
  std::unordered_set<const BufNode*> allocated;
  for (const Stmt& st : statementsOf(s)) {
    if (const Allocate* a = st.as<Allocate>()) {
      allocated.insert(a->buf.get());
    } else if (const Store* store = st.as<Store>()) {
      if (const Reduce* r = store->value.as<Reduce>()) {
        if (!allocated.count(store->buf.get()) || store->buf->dims != std::vector<int64_t>{1} || r->vars.empty() ||
            alongRows(r) != rows)
          return {};
        reduces = true;
      } else if (holdsReduce(store->value)) {
        return {};
      }
    } else if (const For* f = st.as<For>(); f && rows) {
      if (!intValue(f->start) || !intValue(f->stop) || holdsReduce(st)) return {};
    } else if (!st.as<Free>()) {
      return {};
    }
  }
  return reduces ? loops : std::vector<const For*>{};
}

// A row's elements of one input kept in registers: loads `buf[prefix..., v]` (v the row's variable of a
// reduction or loop over the whole row, prefix not mentioning it) by more than one statement of a short
// row's body, read once into `row` (a slot per element a thread takes) and then from there.
struct RowCache {
  Buf buf;                   ///< the input
  std::vector<Expr> prefix;  ///< its indices but the last
  Buf row;                   ///< the thread's slots
  std::string key;           ///< buf and prefix, printed
  bool filled = false;
};

// The variable a row-body statement walks the whole row with, and the row's length: a reduction's one
// variable, or a loop's from 0; null otherwise.
std::pair<const ExprNode*, int64_t> rowVariable(const Stmt& st) {
  if (const Store* store = st.as<Store>(); store && store->value.as<Reduce>()) {
    const Reduce* r = store->value.as<Reduce>();
    if (r->vars.size() == 1) return {r->vars[0].get(), r->extents[0]};
  } else if (const For* f = st.as<For>(); f && *intValue(f->start) == 0) {
    return {f->var.get(), *intValue(f->stop)};
  }
  return {nullptr, 0};
}

// Loads of an input at `v` in the last index (the rest not mentioning v), keyed by buffer and prefix.
std::vector<const Load*> rowLoads(const Stmt& st, const ExprNode* v, const std::unordered_set<const BufNode*>& stored) {
  std::vector<const Load*> out;
  for (const Load* l : loadsOf(st)) {
    if (stored.count(l->buf.get()) || l->indices.empty() || l->indices.back().get() != v) continue;
    bool clean = true;
    for (size_t k = 0; k + 1 < l->indices.size(); ++k) clean = clean && !mentions(l->indices[k], v);
    if (clean) out.push_back(l);
  }
  return out;
}

std::string rowKey(const Load* l) {
  std::string k = l->buf->name;
  for (size_t i = 0; i + 1 < l->indices.size(); ++i) k += "|" + toString(l->indices[i]);
  return k;
}

// x with its loads of kept rows at v made loads of the row's slot `slot`.
template <typename X>
X fromRowCache(const X& x, const ExprNode* v, const std::vector<RowCache>& caches, const Expr& slot) {
  struct Swap : Mutator {
    using Mutator::mutate;
    const ExprNode* v;
    const std::vector<RowCache>& caches;
    Expr slot;
    Swap(const ExprNode* var, const std::vector<RowCache>& c, Expr s) : v(var), caches(c), slot(std::move(s)) {}
    Expr mutate(const Load* op, const Expr& self) override {
      if (!op->indices.empty() && op->indices.back().get() == v) {
        const std::string k = rowKey(op);
        for (const RowCache& c : caches)
          if (c.key == k) return Load::make(c.row, {slot});
      }
      return Mutator::mutate(op, self);
    }
  } swap(v, caches, slot);
  return swap.mutate(x);
}

// The row nest's body for `threads` threads (a block's, or a warp's with scope Warp), `t` being the thread's
// index among them (module doc of scheduleGpu): each reduction folded by every thread over every
// threads-th element, then across them; each loop over the row strided the same way; a store into anything
// but the body's temporaries by thread 0 only. A row of at most kGpuPersistentRowMost elements keeps each
// input that two or more statements read along it in registers (RowCache): read from memory once, as the
// statistics and the normalization that follows both need it.
//
// `across`, when given, replaces each reduction's final store (buf[0] = ThreadReduce over the block) with
// what finishes the fold across the row's blocks (a split reduction).
Stmt rowBodyForThreads(const Stmt& body, const Expr& t, int64_t threads, ThreadScope scope,
                       const std::function<std::vector<Stmt>(const Stmt& blockValue)>& across = nullptr) {
  std::unordered_set<const BufNode*> temporaries, stored;
  for (const Stmt& st : statementsOf(body)) {
    if (const Allocate* a = st.as<Allocate>()) temporaries.insert(a->buf.get());
    for (const BufNode* b : bufferUse(st).stored) stored.insert(b);
  }
  const Expr T = imm(threads);
  // The rows to keep: an input's row read by two statements or more, over the same short row.
  std::vector<RowCache> caches;
  std::unordered_map<std::string, std::unordered_set<const StmtNode*>> readers;
  int64_t length = -1;
  for (const Stmt& st : statementsOf(body)) {
    const auto [v, n] = rowVariable(st);
    if (!v) continue;
    if (length >= 0 && n != length) length = 0;  // rows of different lengths: nothing kept
    if (length < 0) length = n;
    for (const Load* l : rowLoads(st, v, stored)) {
      const std::string k = rowKey(l);
      if (readers[k].insert(st.get()).second && readers[k].size() == 2)
        caches.push_back({l->buf, {l->indices.begin(), l->indices.end() - 1}, Buf(), k});
    }
  }
  if (length <= 0 || length > LoopNest::kGpuPersistentRowMost) caches.clear();
  const int64_t slots = length > 0 ? (length + threads - 1) / threads : 0;
  for (RowCache& c : caches) c.row = makeBuf(c.buf->name + "_row", {slots}, c.buf->type);
  std::vector<Stmt> out;
  // The first statement to read a kept row reads it all in first.
  auto fill = [&](const Stmt& st, const ExprNode* v) {
    for (const Load* l : rowLoads(st, v, stored)) {
      for (RowCache& c : caches) {
        if (c.filled || c.key != rowKey(l)) continue;
        c.filled = true;
        const Expr q = Var::make(c.row->name + "_q"), at = q * T + t;
        std::vector<Expr> idx = c.prefix;
        idx.push_back(at);
        out.push_back(Allocate::make(c.row));
        out.push_back(For::make(q, imm(0), imm(slots),
                                Cond::make(Compare::make(CompareOpKind::LT, at, imm(length)),
                                           Store::make(c.row, {q}, Load::make(c.buf, idx)))));
      }
    }
  };
  for (const Stmt& st : statementsOf(body)) {
    const Store* store = st.as<Store>();
    const For* loop = st.as<For>();
    const ExprNode* v = rowVariable(st).first;
    if (v && !caches.empty()) fill(st, v);
    if (store && store->value.as<Reduce>()) {
      std::function<Expr(const Expr&, const Expr&)> kept;
      if (!caches.empty()) kept = [&](const Expr& e, const Expr& q) { return fromRowCache(e, v, caches, q); };
      for (Stmt x : rfactored(store, t, threads, Expr(), scope, kept)) {
        const Store* result = x.as<Store>();
        if (across && result && result->value.as<ThreadReduce>()) {
          for (Stmt y : across(x)) out.push_back(std::move(y));
        } else {
          out.push_back(std::move(x));
        }
      }
    } else if (loop) {
      const int64_t start = *intValue(loop->start), stop = *intValue(loop->stop);
      const Expr q = Var::make(loop->var.as<Var>()->name + "_q");
      const Expr index = imm(start) + q * T + t;
      Stmt source = v && !caches.empty() ? fromRowCache(loop->body, v, caches, q) : loop->body;
      const Stmt inner = substitute(source, {{loop->var.get(), index}});
      out.push_back(For::make(q, imm(0), imm((stop - start + threads - 1) / threads),
                              Cond::make(Compare::make(CompareOpKind::LT, index, imm(stop)), inner)));
    } else if (store && !temporaries.count(store->buf.get())) {
      out.push_back(Cond::make(Compare::make(CompareOpKind::EQ, t, imm(0)), st));
    } else {
      out.push_back(st);
    }
  }
  for (const RowCache& c : caches)
    if (c.filled) out.push_back(Free::make(c.row));
  return Block::make(out);
}

}  // namespace

Stmt LoopNest::flatBody(const Stmt& nest, const std::vector<const For*>& loops, const Expr& at) const {
  std::vector<std::string> chain;
  for (const For* f : loops) chain.push_back(f->var.as<Var>()->name);
  LoopNest flat(nest, inputs_, outputs_);
  flat.flatten(chain);
  const For* all = flat.root().as<For>();
  if (!all) return Block::make({});  // loops of no trips (an empty tensor's) folded away: nothing to compute
  return substitute(all->body, {{all->var.get(), all->start + at}});
}

std::vector<Stmt> LoopNest::acrossBlocks(const Stmt& result, const Expr& base, int64_t bases, const Expr& slice,
                                         int64_t split, const Expr& writer) {
  const Store* blockValue = result.as<Store>();
  const ThreadReduce* tr = blockValue->value.as<ThreadReduce>();
  const Buf partial = makeBuf(blockValue->buf->name + "_partials", {bases * split}, blockValue->buf->type);
  outputs_.push_back(partial);
  ++partials_;
  const Expr S = imm(split), mine = Load::make(blockValue->buf, blockValue->indices);
  const Expr k = Var::make(blockValue->buf->name + "_k");
  const Expr next = foldInto(tr->op, mine, Load::make(partial, {base * S + k}));
  return {result,  // the block's value, in every thread that holds it
          Cond::make(writer, Store::make(partial, {base * S + slice}, mine)), GridSync::make(),
          // Every block of the base folds the base's partials in one order.
          Store::make(blockValue->buf, blockValue->indices, FloatImm::make(foldIdentity(tr->op), blockValue->buf->type)),
          For::make(k, imm(0), S, Store::make(blockValue->buf, blockValue->indices, next))};
}

Stmt LoopNest::blockGrid(const Expr& b, const Expr& t, int64_t blocks, const Stmt& body) const {
  LoopOptions threadLoop, blockLoop;
  threadLoop.gpuThread = 0;
  blockLoop.gpuBlock = 0;
  LoopNest one(For::make(b, imm(0), imm(blocks), For::make(t, imm(0), imm(kGpuRowThreads), body, threadLoop), blockLoop),
               inputs_, outputs_);
  one.simplify();
  return one.root();
}

Stmt LoopNest::splitRows(const Stmt& nest, const std::vector<const For*>& loops, int64_t rowCount, int64_t split) {
  // Blocks b of rowCount x split: row b / split, its slice b % split; the row's thread g = slice x 256 + t
  // of split x 256.
  const std::string name = loops.front()->var.as<Var>()->name;
  const Expr b = Var::make(name + "_block"), t = Var::make(name + "_thread");
  const Expr row = b / imm(split), slice = b % imm(split);
  const Expr g = slice * imm(kGpuRowThreads) + t;
  auto across = [&](const Stmt& result) {
    return acrossBlocks(result, row, rowCount, slice, split, Compare::make(CompareOpKind::EQ, t, imm(0)));
  };
  const Stmt body = rowBodyForThreads(flatBody(nest, loops, row), g, split * kGpuRowThreads, ThreadScope::Block,
                                      across);
  return blockGrid(b, t, rowCount * split, body);
}

Stmt LoopNest::splitColumns(const Stmt& nest, const std::vector<const For*>& loops, int64_t outputs, int64_t split) {
  // Blocks b of groups x split: 32 outputs (group b / split), slice b % split of their elements; warp
  // slot slice x 8 + t / 32 of split x 8 folds every (split x 8)-th element. The block's value of each
  // lane's output is in every warp of the block; the first warp writes it.
  const int64_t warps = kGpuRowThreads / 32, groups = (outputs + 31) / 32;
  const std::string name = loops.front()->var.as<Var>()->name;
  const Expr b = Var::make(name + "_block"), t = Var::make(name + "_thread");
  const Expr group = b / imm(split), slice = b % imm(split);
  const Expr j = group * imm(32) + t % imm(32);
  auto across = [&](const Stmt& result) {
    return acrossBlocks(result, j, groups * 32, slice, split, Compare::make(CompareOpKind::LT, t, imm(32)));
  };
  const Stmt body = columnBodyForThreads(flatBody(nest, loops, j), j, outputs, slice * imm(warps) + t / imm(32),
                                        split * warps, across);
  return blockGrid(b, t, groups * split, body);
}

void LoopNest::scheduleGpu(int64_t blockSize, int64_t blockCount, int loopLevel, int64_t splitBlocks) {
  USER_CHECK(loopLevel == 2 || loopLevel == 3, "GPU loop level must be 2 or 3, got {}", loopLevel);
  USER_CHECK(blockSize > 0 && blockCount > 0, "GPU block size and count must be positive");
  const Block* top = root_.as<Block>();
  std::vector<Stmt> nests = top ? top->stmts : std::vector<Stmt>{root_};
  // Every nest of the kernel runs in one launch: with a row nest, whose barriers every thread of the block
  // reaches, the others take its block size too.
  bool rows = false;
  int rowNests = 0, columnNests = 0;
  for (const Stmt& nest : nests) {
    rowNests += !foldingLoops(nest, true).empty();
    columnNests += !foldingLoops(nest, false).empty();
  }
  rows = rowNests + columnNests > 0;
  if (rows) blockSize = kGpuRowThreads;
  // A split column reduction (kGpuSplitColumnLeast): the kernel's one folding nest, a column nest of few
  // 32-output groups over long columns, spread over groups x columnSplit blocks; the kernel's other nests
  // then run in that grid, loop level 3, so that every thread reaches the grid barrier.
  int64_t columnSplit = 1, splitGrid = 0;
  if (columnNests == 1 && rowNests == 0) {
    for (const Stmt& nest : nests) {
      std::vector<const For*> loops = foldingLoops(nest, false);
      if (loops.empty()) continue;
      int64_t outputs = 1;
      for (const For* f : loops) outputs *= *intValue(f->stop) - *intValue(f->start);
      const int64_t groups = (outputs + 31) / 32, length = rowLength(loops.back()->body);
      if (length >= kGpuSplitColumnLeast)
        columnSplit = std::min(splitBlocks / groups, length / kGpuSplitColumnElementsLeast);
      if (columnSplit >= 2) splitGrid = groups * columnSplit;
      else columnSplit = 1;
    }
  }
  if (splitGrid) {
    loopLevel = 3;
    blockCount = splitGrid;
  }
  std::vector<Stmt> out;
  for (const Stmt& nest : nests) {
    if (std::vector<const For*> loops = foldingLoops(nest, false); !loops.empty() && columnSplit >= 2) {
      int64_t outputs = 1;
      for (const For* f : loops) outputs *= *intValue(f->stop) - *intValue(f->start);
      out.push_back(splitColumns(nest, loops, outputs, columnSplit));
      continue;
    }
    if (std::vector<const For*> loops = foldingLoops(nest, false); !loops.empty()) {
      // 32 outputs a block, a lane each; the block's warps split each output's elements.
      int64_t outputs = 1;
      for (const For* f : loops) outputs *= *intValue(f->stop) - *intValue(f->start);
      const std::string name = loops.front()->var.as<Var>()->name;
      const Expr block = Var::make(name + "_block"), t = Var::make(name + "_thread");
      const Expr j = block * imm(32) + t % imm(32);
      const Stmt body = flatBody(nest, loops, j);
      LoopOptions threadLoop, blockLoop;
      threadLoop.gpuThread = 0;
      blockLoop.gpuBlock = 0;
      Stmt s = For::make(t, imm(0), imm(kGpuRowThreads),
                         columnBodyForThreads(body, j, outputs, t / imm(32), kGpuRowThreads / 32), threadLoop);
      LoopNest one(For::make(block, imm(0), imm((outputs + 31) / 32), s, blockLoop), inputs_, outputs_);
      one.simplify();
      out.push_back(one.root());
      continue;
    }
    if (std::vector<const For*> loops = foldingLoops(nest, true); !loops.empty()) {
      const std::string name = loops.front()->var.as<Var>()->name;
      const Expr t = Var::make(name + "_thread");
      LoopOptions threadLoop, blockLoop;
      threadLoop.gpuThread = 0;
      blockLoop.gpuBlock = 0;
      int64_t rowCount = 1;
      for (const For* f : loops) rowCount *= *intValue(f->stop) - *intValue(f->start);
      const int64_t length = rowLength(loops.back()->body);
      const int64_t split = nests.size() == 1 && rowCount <= kGpuSplitRowsMost && length >= kGpuSplitRowLeast
                                ? std::min(splitBlocks / rowCount, length / kGpuSplitElementsLeast)
                                : 1;
      if (split >= 2) {
        out.push_back(splitRows(nest, loops, rowCount, split));
        continue;
      }
      if (length <= kGpuWarpRowMost) {
        // A warp a row, 8 rows a block: the row loops flattened into the row each warp takes, its lanes
        // inside, whose shuffles need no barrier.
        const int64_t warps = kGpuRowThreads / 32;
        const Expr block = Var::make(name + "_block"), lane = t % imm(32), row = block * imm(warps) + t / imm(32);
        const Stmt body = rowBodyForThreads(flatBody(nest, loops, row), lane, 32, ThreadScope::Warp);
        const Stmt inRange = Cond::make(Compare::make(CompareOpKind::LT, row, imm(rowCount)), body);
        LoopNest one(For::make(block, imm(0), imm((rowCount + warps - 1) / warps),
                               For::make(t, imm(0), imm(kGpuRowThreads), inRange, threadLoop), blockLoop),
                     inputs_, outputs_);
        one.simplify();
        out.push_back(one.root());
        continue;
      }
      // A block a row: the row loops flattened and bound to blocks, the whole block's threads inside.
      Stmt s = For::make(t, imm(0), imm(kGpuRowThreads),
                         rowBodyForThreads(loops.back()->body, t, kGpuRowThreads, ThreadScope::Block), threadLoop);
      std::vector<std::string> chain;
      for (auto it = loops.rbegin(); it != loops.rend(); ++it) s = For::make((*it)->var, (*it)->start, (*it)->stop, s);
      for (const For* f : loops) chain.push_back(f->var.as<Var>()->name);
      LoopNest one(s, inputs_, outputs_);
      one.flatten(chain);
      one.bindGpu(chain[0] + "_flat", true, 0);
      one.simplify();
      out.push_back(one.root());
      continue;
    }
    LoopNest one(nest, inputs_, outputs_);
    one.lowerReductions();
    const For* f = one.root().as<For>();
    if (!f) {
      out.push_back(one.root());
      continue;
    }
    // Each other nest: flatten, then split and bind.
    std::vector<std::string> chain;
    for (const For* g = f; g; g = g->body.as<For>()) chain.push_back(g->var.as<Var>()->name);
    one.flatten(chain);
    std::string flat = chain[0] + "_flat";
    if (loopLevel == 2) {
      one.splitWithMask(flat, blockSize);
      one.bindGpu(flat + "_outer", true, 0);
      one.bindGpu(flat + "_inner", false, 0);
    } else {
      one.splitWithMask(flat, blockCount * blockSize);
      one.splitWithMask(flat + "_inner", blockSize);
      one.bindGpu(flat + "_inner_outer", true, 0);
      one.bindGpu(flat + "_inner_inner", false, 0);
    }
    out.push_back(one.root());
  }
  root_ = Block::make(out);
}

}  // namespace gj::te
