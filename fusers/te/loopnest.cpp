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

namespace {

// ---- finding and replacing one loop ----

// Rebuilds the statement with the loop whose variable is `name` replaced by f(loop).
class LoopRewriter final : public Mutator {
 public:
  LoopRewriter(std::string name, std::function<Stmt(const For*)> f) : name_(std::move(name)), f_(std::move(f)) {}
  bool found = false;

 public:
  using Mutator::mutate;

 protected:
  Stmt mutate(const For* op, const Stmt& self) override {
    if (op->var.as<Var>()->name == name_) {
      found = true;
      return f_(op);
    }
    return Mutator::mutate(op, self);
  }

 private:
  std::string name_;
  std::function<Stmt(const For*)> f_;
};

int64_t constantTrips(const For* op, const std::string& what) {
  auto s = intValue(op->start), e = intValue(op->stop);
  USER_CHECK(s && e, "{}: loop {} needs constant bounds", what, op->var.as<Var>()->name);
  return *e - *s;
}

Stmt withVar(const Stmt& body, const Expr& var, const Expr& value) {
  return substitute(body, {{var.get(), value}});
}

}  // namespace


LoopNest::LoopNest(Stmt root, std::vector<Buf> inputs, std::vector<Buf> outputs, size_t scratch)
    : root_(std::move(root)), inputs_(std::move(inputs)), outputs_(std::move(outputs)), scratch_(scratch) {
  IR_CHECK(scratch_ <= outputs_.size()) << "LoopNest: " << scratch_ << " scratch buffers of " << outputs_.size();
}

std::vector<std::string> LoopNest::loopNames() const {
  struct Collect : Visitor {
    using Visitor::visit;
    std::vector<std::string> names;
    void visit(const For* op) override {
      names.push_back(op->var.as<Var>()->name);
      Visitor::visit(op);
    }
  } c;
  c.visit(root_);
  return c.names;
}

static Stmt rewriteLoop(const Stmt& root, const std::string& var, const char* what,
                        std::function<Stmt(const For*)> f) {
  LoopRewriter r(var, std::move(f));
  Stmt out = r.mutate(root);
  USER_CHECK(r.found, "{}: no loop named {}", what, var);
  return out;
}

void LoopNest::splitWithTail(const std::string& var, int64_t factor) {
  USER_CHECK(factor > 0, "splitWithTail: factor must be positive, got {}", factor);
  root_ = rewriteLoop(root_, var, "splitWithTail", [&](const For* op) {
    int64_t n = constantTrips(op, "splitWithTail");
    int64_t start = *intValue(op->start);
    Expr outer = Var::make(var + "_outer"), inner = Var::make(var + "_inner"), tail = Var::make(var + "_tail");
    std::vector<Stmt> parts;
    if (n / factor > 0) {
      Stmt body = withVar(op->body, op->var, imm(start) + outer * imm(factor) + inner);
      parts.push_back(For::make(outer, imm(0), imm(n / factor), For::make(inner, imm(0), imm(factor), body, op->options)));
    }
    if (n % factor)
      parts.push_back(For::make(tail, imm(0), imm(n % factor),
                                withVar(op->body, op->var, imm(start + (n / factor) * factor) + tail), op->options));
    return te::simplify(Block::make(parts));
  });
}

void LoopNest::splitWithMask(const std::string& var, int64_t factor) {
  USER_CHECK(factor > 0, "splitWithMask: factor must be positive, got {}", factor);
  root_ = rewriteLoop(root_, var, "splitWithMask", [&](const For* op) {
    int64_t n = constantTrips(op, "splitWithMask");
    int64_t start = *intValue(op->start);
    Expr outer = Var::make(var + "_outer"), inner = Var::make(var + "_inner");
    Expr index = imm(start) + outer * imm(factor) + inner;
    Stmt body = withVar(op->body, op->var, index);
    if (n % factor) body = Cond::make(Compare::make(CompareOpKind::LT, index, imm(start + n)), body);
    return te::simplify(For::make(outer, imm(0), imm((n + factor - 1) / factor),
                              For::make(inner, imm(0), imm(factor), body, op->options)));
  });
}

void LoopNest::reorder(const std::string& outer, const std::string& inner) {
  root_ = rewriteLoop(root_, outer, "reorder", [&](const For* a) {
    const For* b = a->body.as<For>();
    USER_CHECK(b && b->var.as<Var>()->name == inner, "reorder: loop {} must contain only loop {}", outer, inner);
    return For::make(b->var, b->start, b->stop, For::make(a->var, a->start, a->stop, b->body, a->options),
                     b->options);
  });
}

void LoopNest::flatten(const std::vector<std::string>& vars) {
  USER_CHECK(!vars.empty(), "flatten: no loops given");
  root_ = rewriteLoop(root_, vars[0], "flatten", [&](const For* first) {
    std::vector<const For*> chain = {first};
    for (size_t k = 1; k < vars.size(); ++k) {
      const For* next = chain.back()->body.as<For>();
      USER_CHECK(next && next->var.as<Var>()->name == vars[k], "flatten: loop {} must contain only loop {}",
                 vars[k - 1], vars[k]);
      chain.push_back(next);
    }
    std::vector<int64_t> trips;
    int64_t total = 1;
    for (const For* f : chain) {
      USER_CHECK(intValue(f->start) == 0, "flatten: loop {} must start at 0", f->var.as<Var>()->name);
      trips.push_back(constantTrips(f, "flatten"));
      total *= trips.back();
    }
    Expr flat = Var::make(vars[0] + "_flat");
    std::unordered_map<const ExprNode*, Expr> map;
    int64_t inner = 1;
    for (int64_t k = static_cast<int64_t>(chain.size()) - 1; k >= 0; --k) {
      Expr idx = inner == 1 ? flat : flat / imm(inner);
      if (k > 0) idx = idx % imm(trips[k]);
      map[chain[k]->var.get()] = idx;
      inner *= trips[k];
    }
    return te::simplify(For::make(flat, imm(0), imm(total), substitute(chain.back()->body, map), chain.back()->options));
  });
}

static void setOption(Stmt& root, const std::string& var, const char* what,
                      const std::function<void(LoopOptions&)>& f) {
  root = rewriteLoop(root, var, what, [&](const For* op) {
    LoopOptions o = op->options;
    f(o);
    return For::make(op->var, op->start, op->stop, op->body, o);
  });
}

void LoopNest::vectorize(const std::string& var) { setOption(root_, var, "vectorize", [](LoopOptions& o) { o.vectorize = true; }); }
void LoopNest::parallelize(const std::string& var) {
  setOption(root_, var, "parallelize", [](LoopOptions& o) { o.parallel = true; });
}
void LoopNest::bindGpu(const std::string& var, bool block, int axis) {
  USER_CHECK(axis >= 0 && axis <= 2, "bindGpu: axis must be 0, 1 or 2, got {}", axis);
  setOption(root_, var, "bindGpu", [&](LoopOptions& o) { (block ? o.gpuBlock : o.gpuThread) = axis; });
}

void LoopNest::unroll(const std::string& var) {
  root_ = rewriteLoop(root_, var, "unroll", [&](const For* op) {
    int64_t n = constantTrips(op, "unroll");
    USER_CHECK(n <= 1024, "unroll: loop {} has {} iterations; unroll loops of at most 1024", var, n);
    std::vector<Stmt> copies;
    for (int64_t k = 0; k < n; ++k) copies.push_back(withVar(op->body, op->var, imm(*intValue(op->start) + k)));
    return te::simplify(Block::make(copies));
  });
}

void LoopNest::inlineBuffer(const Buf& buf) {
  // Find the one store into buf and the loop variables it is indexed by.
  struct Find : Visitor {
    using Visitor::visit;
    const Buf& buf;
    const Store* store = nullptr;
    int stores = 0;
    explicit Find(const Buf& b) : buf(b) {}
    void visit(const Store* op) override {
      if (op->buf == buf) store = op, ++stores;
      Visitor::visit(op);
    }
  } find(buf);
  find.visit(root_);
  USER_CHECK(find.stores == 1, "inlineBuffer: {} must be stored exactly once (found {})", buf->name, find.stores);
  for (const Expr& i : find.store->indices)
    USER_CHECK(i.as<Var>(), "inlineBuffer: {} must be indexed by its loops' variables", buf->name);
  const Store* producer = find.store;
  // Loads of buf become the stored value with the indices substituted; the producer nest goes away.
  struct Inline : Mutator {
    using Mutator::mutate;
    const Buf& buf;
    const Store* producer;
    Inline(const Buf& b, const Store* p) : buf(b), producer(p) {}
    Expr mutate(const Load* op, const Expr& self) override {
      Expr m = Mutator::mutate(op, self);
      const Load* l = m.as<Load>();
      if (l->buf != buf) return m;
      std::unordered_map<const ExprNode*, Expr> map;
      for (size_t k = 0; k < l->indices.size(); ++k) map[producer->indices[k].get()] = l->indices[k];
      return substitute(producer->value, map);
    }
    Stmt mutate(const For* op, const Stmt& self) override {
      // A nest whose only content is the producer disappears.
      struct Only : Visitor {
        using Visitor::visit;
        const Store* p;
        bool other = false, has = false;
        explicit Only(const Store* s) : p(s) {}
        void visit(const Store* s) override { (s == p ? has : other) = true; }
      } only(producer);
      only.visit(self);
      if (only.has && !only.other) return Block::make({});
      return Mutator::mutate(op, self);
    }
    Stmt mutate(const Allocate* op, const Stmt& self) override { return op->buf == buf ? Block::make({}) : self; }
    Stmt mutate(const Free* op, const Stmt& self) override { return op->buf == buf ? Block::make({}) : self; }
  };
  root_ = te::simplify(Inline(buf, producer).mutate(root_));
}

void LoopNest::lowerReductions() {
  struct Lower : Mutator {
    using Mutator::mutate;
    Stmt mutate(const Store* op, const Stmt& self) override {
      const Reduce* r = op->value.as<Reduce>();
      if (!r) return self;
      const double init = foldIdentity(r->op);
      Stmt body = Store::make(op->buf, op->indices, foldInto(r->op, Load::make(op->buf, op->indices), r->body));
      for (int64_t k = static_cast<int64_t>(r->vars.size()) - 1; k >= 0; --k)
        body = For::make(r->vars[k], imm(0), imm(r->extents[k]), body);
      return Block::make({Store::make(op->buf, op->indices, FloatImm::make(init, op->buf->type)), body});
    }
  };
  root_ = te::simplify(Lower().mutate(root_));
}

namespace {

// Whether some load of `e` indexes a dimension other than its last (innermost) with `var`: a loop over
// `var` would read it with a stride.
bool readsAlongOuterDimension(const Expr& e, const ExprNode* var) {
  for (const Load* l : loadsOf(e))
    for (size_t d = 0; d + 1 < l->indices.size(); ++d)
      if (mentions(l->indices[d], var)) return true;
  return false;
}

// for v1..vk { allocate acc; acc[0] = sum(body, r1..rm); out[i] = acc[0]; free acc }, whose body reads
// along some r in an outer dimension, and along r in the last only what does not move with vk (a sum over
// the batch of [batch, n]; a product's a[i, r] * b[r, j]): the reduction, or null when the nest is not of
// that form.
struct StridedSum {
  std::vector<const For*> loops;
  const Reduce* reduce = nullptr;
  const Store* out = nullptr;
};

std::optional<StridedSum> stridedSum(const Stmt& nest) {
  StridedSum m;
  Stmt s = nest;
  while (const For* f = s.as<For>()) {
    m.loops.push_back(f);
    s = f->body;
  }
  const Block* b = s.as<Block>();
  if (m.loops.empty() || !b || b->stmts.size() != 4) return std::nullopt;
  const Allocate* alloc = b->stmts[0].as<Allocate>();
  const Store* acc = b->stmts[1].as<Store>();
  m.out = b->stmts[2].as<Store>();
  if (!alloc || !acc || !m.out || !b->stmts[3].as<Free>() || acc->buf != alloc->buf) return std::nullopt;
  m.reduce = acc->value.as<Reduce>();
  const Load* result = m.out->value.as<Load>();
  if (!m.reduce || m.reduce->op != ReduceOpKind::Sum || !result || result->buf != acc->buf) return std::nullopt;
  // A load contiguous along r keeps the nest as it is, unless it is one value for the whole innermost
  // output loop (a product's a[i, r] beside b[r, j]), which the turned-around loop reads once an r.
  const ExprNode* inner = m.loops.back()->var.get();
  bool strided = false;
  for (const Expr& r : m.reduce->vars) {
    for (const Load* l : loadsOf(m.reduce->body)) {
      if (l->indices.empty() || !mentions(l->indices.back(), r.get())) continue;
      for (const Expr& i : l->indices)
        if (mentions(i, inner)) return std::nullopt;  // contiguous along r, and along the output
    }
    strided = strided || readsAlongOuterDimension(m.reduce->body, r.get());
  }
  if (!strided) return std::nullopt;
  return m;
}

// interchangeStridedReductions halves an output loop whose halves are this many elements each, times a
// whole number (one AVX-512 vector of float32), when the sum reads at least kHalveMinReads elements: a
// batch-1 step's product by a weight of 1 MB of float32 (hidden 256), which one core's L2 (1 MB here) does
// not hold and two hold. Below that a thread team costs more than the halves save (graphbench's cells
// group at hidden 128; bench/results/ has the runs).
constexpr int64_t kHalfMultiple = 16;
constexpr int64_t kHalveMinReads = 1 << 18;

}  // namespace

void LoopNest::interchangeStridedReductions() {
  const Block* top = root_.as<Block>();
  std::vector<Stmt> nests = top ? top->stmts : std::vector<Stmt>{root_};
  // Consecutive sums over the same ranges (the LSTM's four bias gradients, slices of one output) share
  // one pair of nests: fewer functions to compile, and one pass over the rows.
  struct Pending {
    std::vector<const For*> loops;
    std::vector<Expr> rvars;
    std::vector<int64_t> extents;
    std::vector<Stmt> inits, adds;
  };
  std::optional<Pending> pending;
  std::vector<Stmt> out;
  auto flush = [&] {
    if (!pending) return;
    // The innermost output loop in two halves, under a loop of two iterations that holds both nests of
    // each: the halves write disjoint outputs, so the schedule may give each to a thread (a batch-1 step's
    // product then reads half its weight on each core, from that core's L2). A half is a whole number of
    // vectors, and the sum large (kHalveMinReads).
    const For* last = pending->loops.back();
    const auto lastStart = intValue(last->start), lastStop = intValue(last->stop);
    const int64_t half = lastStart && lastStop ? (*lastStop - *lastStart) / 2 : 0;
    int64_t reads = 2 * half;
    for (int64_t e : pending->extents) reads *= e;
    for (size_t k = 0; k + 1 < pending->loops.size(); ++k) {
      auto a = intValue(pending->loops[k]->start), b = intValue(pending->loops[k]->stop);
      reads *= a && b ? *b - *a : 1;
    }
    const bool halve = half > 0 && half % kHalfMultiple == 0 && *lastStop - *lastStart == 2 * half &&
                       reads >= kHalveMinReads;
    const std::string lastName = last->var.as<Var>()->name;
    const Expr whichHalf = Var::make(lastName + "_half"), inHalf = Var::make(lastName + "_in");
    auto overOutput = [&](Stmt body) {
      if (halve)
        body = For::make(inHalf, imm(0), imm(half),
                         withVar(body, last->var, imm(*lastStart) + whichHalf * imm(half) + inHalf), last->options);
      else
        body = For::make(last->var, last->start, last->stop, body, last->options);
      for (auto it = pending->loops.rbegin() + 1; it != pending->loops.rend(); ++it)
        body = For::make((*it)->var, (*it)->start, (*it)->stop, body, (*it)->options);
      return body;
    };
    Stmt add = overOutput(Block::make(pending->adds));
    for (int64_t k = static_cast<int64_t>(pending->rvars.size()) - 1; k >= 0; --k)
      add = For::make(pending->rvars[k], imm(0), imm(pending->extents[k]), add);
    Stmt init = overOutput(Block::make(pending->inits));
    if (halve) {
      out.push_back(For::make(whichHalf, imm(0), imm(2), Block::make({init, add})));
    } else {
      out.push_back(init);
      out.push_back(add);
    }
    pending.reset();
  };
  auto sameRanges = [](const Pending& p, const StridedSum& m) {
    if (p.loops.size() != m.loops.size() || p.extents != m.reduce->extents) return false;
    for (size_t k = 0; k < p.loops.size(); ++k)
      if (!equal(p.loops[k]->start, m.loops[k]->start) || !equal(p.loops[k]->stop, m.loops[k]->stop))
        return false;
    return true;
  };
  for (const Stmt& nest : nests) {
    auto m = stridedSum(nest);
    if (!m) {
      flush();
      out.push_back(nest);
      continue;
    }
    if (pending && !sameRanges(*pending, *m)) flush();
    if (!pending) pending = Pending{m->loops, m->reduce->vars, m->reduce->extents, {}, {}};
    // In the pending pair's variables.
    std::unordered_map<const ExprNode*, Expr> rename;
    for (size_t k = 0; k < m->loops.size(); ++k) rename[m->loops[k]->var.get()] = pending->loops[k]->var;
    for (size_t k = 0; k < m->reduce->vars.size(); ++k) rename[m->reduce->vars[k].get()] = pending->rvars[k];
    const Store* o = m->out;
    pending->inits.push_back(substitute(Store::make(o->buf, o->indices, FloatImm::make(0.0, o->buf->type)), rename));
    pending->adds.push_back(
        substitute(Store::make(o->buf, o->indices, Load::make(o->buf, o->indices) + m->reduce->body), rename));
  }
  flush();
  root_ = te::simplify(Block::make(out));
}

void LoopNest::simplify() { root_ = te::simplify(root_); }

// Innermost loops of each top-level nest vectorize; the outermost loop of a nest parallelizes when the
// nest is large.
void LoopNest::scheduleCpu(int64_t parallelGrain) {
  struct Mark : Mutator {
    using Mutator::mutate;
    int64_t grain;
    std::unordered_set<const BufNode*> io;  // the kernel's inputs and outputs (not temporaries)
    int depth = 0;
    explicit Mark(int64_t g) : grain(g) {}
    // Statements executed, roughly: trips times the body's work, summed over a block's statements.
    static int64_t work(const Stmt& s) {
      if (const Block* b = s.as<Block>()) {
        int64_t w = 0;
        for (const Stmt& x : b->stmts) w += work(x);
        return w;
      }
      const For* f = s.as<For>();
      if (!f) return 1;
      auto a = intValue(f->start), b = intValue(f->stop);
      return (a && b ? *b - *a : 1) * work(f->body);
    }
    // `e` as v + c (c a constant, 0 for v itself), when it is of that form.
    static std::optional<int64_t> offsetFrom(const Expr& e, const ExprNode* v) {
      if (e.get() == v) return 0;
      const Binary* b = e.as<Binary>();
      if (!b || b->op != BinaryOpKind::Add) return std::nullopt;
      if (b->a.get() == v && b->b.as<IntImm>()) return b->b.as<IntImm>()->value;
      if (b->b.get() == v && b->a.as<IntImm>()) return b->a.as<IntImm>()->value;
      return std::nullopt;
    }
    // Whether two accesses of one buffer from iterations i != i' of loop `v` (`trips` iterations) can
    // touch the same element: not when their indices are equal and involve `v`, nor when they differ
    // only in one dimension, v + a against v + b with |a - b| >= trips (two slices of one output).
    static bool mayOverlap(const std::vector<Expr>& x, const std::vector<Expr>& y, const ExprNode* v,
                           std::optional<int64_t> trips) {
      if (x.size() != y.size()) return true;
      bool involvesV = false, apart = false;
      for (size_t d = 0; d < x.size(); ++d) {
        const bool vx = mentions(x[d], v), vy = mentions(y[d], v);
        involvesV = involvesV || vx;
        if (equal(x[d], y[d])) continue;
        auto a = offsetFrom(x[d], v), b = offsetFrom(y[d], v);
        if (!vx || !vy || !a || !b || !trips || std::abs(*a - *b) < *trips) return true;
        apart = true;
      }
      return !involvesV && !apart;
    }
    // Whether iterations of loop `v` depend on each other through a buffer the body stores and reads (and
    // does not allocate itself): a reduction's accumulation. A body that only reads back what the same
    // iteration stores (out[j] = out[j] + x[r, j] under loop j) carries nothing.
    static bool carriesDependence(const Stmt& body, const Expr& v, std::optional<int64_t> trips) {
      BufferUse use = bufferUse(body);
      for (const BufNode* buf : use.storedAndLoaded()) {
        if (use.allocated.count(buf)) continue;  // private to an iteration
        struct Access : Visitor {
          using Visitor::visit;
          const BufNode* buf;
          std::vector<std::pair<const std::vector<Expr>*, bool>> accesses;  // indices, is a store
          void visit(const Store* op) override {
            if (op->buf.get() == buf) accesses.push_back({&op->indices, true});
            Visitor::visit(op);
          }
          void visit(const Load* op) override {
            if (op->buf.get() == buf) accesses.push_back({&op->indices, false});
            Visitor::visit(op);
          }
        } access;
        access.buf = buf;
        access.visit(body);
        for (const auto& [x, xStores] : access.accesses)
          for (const auto& [y, yStores] : access.accesses)
            if ((xStores || yStores) && mayOverlap(*x, *y, v.get(), trips)) return true;
      }
      return false;
    }
    // acc[0] = acc[0] + x or max(acc[0], x), acc a one-element temporary, every load contiguous in the
    // loop's variable `v` (it appears in no index but the last): a reduction the vectorizer may reorder
    // (it accumulates in a register; forcing vectorization lets it reassociate the sum). Strided
    // reductions (a bias gradient summed over the batch) stay scalar: gathers do not pay.
    bool reducesIntoTemporary(const Stmt& body, const Expr& v) const {
      const Store* st = body.as<Store>();
      if (!st || st->buf->dims != std::vector<int64_t>{1}) return false;
      const Binary* b = st->value.as<Binary>();
      if (!b || (b->op != BinaryOpKind::Add && b->op != BinaryOpKind::Max)) return false;
      const Load* acc = b->a.as<Load>();
      if (!acc || acc->buf != st->buf || io.count(st->buf.get())) return false;
      return !readsAlongOuterDimension(b->b, v.get());
    }
    Stmt mutate(const For* op, const Stmt& self) override {
      ++depth;
      Stmt body = mutate(op->body);
      --depth;
      LoopOptions o = op->options;
      auto a = intValue(op->start), b = intValue(op->stop);
      const bool carried = carriesDependence(body, op->var, a && b ? std::optional<int64_t>(*b - *a) : std::nullopt);
      if ((!bufferUse(body).hasLoop && !carried) || reducesIntoTemporary(body, op->var)) o.vectorize = true;
      if (depth == 0 && !carried && work(self) >= grain) o.parallel = true;
      return For::make(op->var, op->start, op->stop, body, o);
    }
  } mark(parallelGrain);
  for (const std::vector<Buf>* list : {&inputs_, &outputs_})
    for (const Buf& b : *list) mark.io.insert(b.get());
  root_ = mark.mutate(root_);
}

namespace {

// The floating-point nodes of e, each distinct node once (a Reduce's body times its extents and one fold).
int64_t expressionOps(const Expr& e) {
  struct Count : Visitor {
    using Visitor::visit;
    std::unordered_set<const ExprNode*> seen;
    int64_t ops = 0;
    void visit(const Expr& x) override {
      if (!seen.insert(x.get()).second) return;
      Visitor::visit(x);
    }
    void visit(const Binary* op) override {
      ops += op->type != ScalarKind::Int;
      Visitor::visit(op);
    }
    void visit(const Compare* op) override {
      ops += op->a->type != ScalarKind::Int;
      Visitor::visit(op);
    }
    void visit(const Call* op) override {
      ++ops;
      Visitor::visit(op);
    }
    void visit(const Reduce* op) override {
      int64_t n = 1;
      for (int64_t e : op->extents) n *= e;
      ops += n * (expressionOps(op->body) + 1);
    }
  } c;
  c.visit(e);
  return c.ops;
}

}  // namespace

int64_t floatingOps(const Stmt& s) {
  if (const Block* b = s.as<Block>()) {
    int64_t ops = 0;
    for (const Stmt& st : b->stmts) ops += floatingOps(st);
    return ops;
  }
  if (const For* f = s.as<For>()) {
    auto a = intValue(f->start), b = intValue(f->stop);
    return (a && b ? std::max<int64_t>(*b - *a, 0) : 1) * floatingOps(f->body);
  }
  if (const Store* st = s.as<Store>()) return expressionOps(st->value);
  if (const Cond* c = s.as<Cond>()) return std::max(floatingOps(c->thenStmt), floatingOps(c->elseStmt));
  return 0;
}

}  // namespace gj::te
