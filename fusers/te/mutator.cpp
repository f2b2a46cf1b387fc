#include "fusers/te/mutator.h"

#include <bit>
#include <cstdint>
#include <string>

namespace gj::te {

// ---- Visitor ----

void Visitor::visit(const Expr& e) {
  switch (e.kind()) {
#define TE_EXPR(K) \
  case NodeKind::K: return visit(static_cast<const K*>(e.get()));
#define TE_STMT(K) \
  case NodeKind::K: break;
#include "fusers/te/nodes.def"
#undef TE_EXPR
#undef TE_STMT
  }
}

void Visitor::visit(const Stmt& s) {
  if (!s) return;
  switch (s.kind()) {
#define TE_EXPR(K) \
  case NodeKind::K: break;
#define TE_STMT(K) \
  case NodeKind::K: return visit(static_cast<const K*>(s.get()));
#include "fusers/te/nodes.def"
#undef TE_EXPR
#undef TE_STMT
  }
}

void Visitor::visit(const IntImm*) {}
void Visitor::visit(const FloatImm*) {}
void Visitor::visit(const Var*) {}
void Visitor::visit(const Binary* op) { visit(op->a), visit(op->b); }
void Visitor::visit(const Compare* op) { visit(op->a), visit(op->b); }
void Visitor::visit(const Select* op) { visit(op->cond), visit(op->t), visit(op->f); }
void Visitor::visit(const Call* op) { visit(op->arg); }
void Visitor::visit(const Cast* op) { visit(op->arg); }
void Visitor::visit(const Load* op) {
  for (const Expr& i : op->indices) visit(i);
}
void Visitor::visit(const Philox* op) { visit(op->seed), visit(op->offset), visit(op->index); }
void Visitor::visit(const Reduce* op) { visit(op->body); }
void Visitor::visit(const ThreadReduce* op) { visit(op->value); }
void Visitor::visit(const Block* op) {
  for (const Stmt& s : op->stmts) visit(s);
}
void Visitor::visit(const For* op) { visit(op->start), visit(op->stop), visit(op->body); }
void Visitor::visit(const Store* op) {
  for (const Expr& i : op->indices) visit(i);
  visit(op->value);
}
void Visitor::visit(const Allocate*) {}
void Visitor::visit(const Free*) {}
void Visitor::visit(const GridSync*) {}
void Visitor::visit(const Cond* op) { visit(op->cond), visit(op->thenStmt), visit(op->elseStmt); }

// ---- Mutator ----

Expr Mutator::mutate(const Expr& e) {
  switch (e.kind()) {
#define TE_EXPR(K) \
  case NodeKind::K: return mutate(static_cast<const K*>(e.get()), e);
#define TE_STMT(K) \
  case NodeKind::K: break;
#include "fusers/te/nodes.def"
#undef TE_EXPR
#undef TE_STMT
  }
  return e;
}

Stmt Mutator::mutate(const Stmt& s) {
  if (!s) return s;
  switch (s.kind()) {
#define TE_EXPR(K) \
  case NodeKind::K: break;
#define TE_STMT(K) \
  case NodeKind::K: return mutate(static_cast<const K*>(s.get()), s);
#include "fusers/te/nodes.def"
#undef TE_EXPR
#undef TE_STMT
  }
  return s;
}

static bool sameAll(const std::vector<Expr>& a, const std::vector<Expr>& b) {
  for (size_t i = 0; i < a.size(); ++i)
    if (!a[i].same(b[i])) return false;
  return true;
}

Expr Mutator::mutate(const IntImm*, const Expr& self) { return self; }
Expr Mutator::mutate(const FloatImm*, const Expr& self) { return self; }
Expr Mutator::mutate(const Var*, const Expr& self) { return self; }
Expr Mutator::mutate(const Binary* op, const Expr& self) {
  Expr a = mutate(op->a), b = mutate(op->b);
  if (a.same(op->a) && b.same(op->b)) return self;
  return Binary::make(op->op, a, b);
}
Expr Mutator::mutate(const Compare* op, const Expr& self) {
  Expr a = mutate(op->a), b = mutate(op->b);
  if (a.same(op->a) && b.same(op->b)) return self;
  return Compare::make(op->op, a, b);
}
Expr Mutator::mutate(const Select* op, const Expr& self) {
  Expr c = mutate(op->cond), t = mutate(op->t), f = mutate(op->f);
  if (c.same(op->cond) && t.same(op->t) && f.same(op->f)) return self;
  return Select::make(c, t, f);
}
Expr Mutator::mutate(const Call* op, const Expr& self) {
  Expr a = mutate(op->arg);
  if (a.same(op->arg)) return self;
  return Call::make(op->fn, a);
}
Expr Mutator::mutate(const Cast* op, const Expr& self) {
  Expr a = mutate(op->arg);
  if (a.same(op->arg)) return self;
  return Cast::make(op->type, a);
}
Expr Mutator::mutate(const Load* op, const Expr& self) {
  std::vector<Expr> idx;
  for (const Expr& i : op->indices) idx.push_back(mutate(i));
  if (sameAll(idx, op->indices)) return self;
  return Load::make(op->buf, idx);
}
Expr Mutator::mutate(const Philox* op, const Expr& self) {
  Expr s = mutate(op->seed), o = mutate(op->offset), i = mutate(op->index);
  if (s.same(op->seed) && o.same(op->offset) && i.same(op->index)) return self;
  return Philox::make(s, o, op->stream, i, op->type);
}
Expr Mutator::mutate(const ThreadReduce* op, const Expr& self) {
  Expr v = mutate(op->value);
  if (v.same(op->value)) return self;
  return ThreadReduce::make(op->op, v, op->scope);
}
Expr Mutator::mutate(const Reduce* op, const Expr& self) {
  Expr b = mutate(op->body);
  if (b.same(op->body)) return self;
  return Reduce::make(op->op, b, op->vars, op->extents);
}

Stmt Mutator::mutate(const Block* op, const Stmt& self) {
  std::vector<Stmt> ss;
  bool same = true;
  for (const Stmt& s : op->stmts) {
    ss.push_back(mutate(s));
    same = same && ss.back().same(s);
  }
  return same ? self : Block::make(ss);
}
Stmt Mutator::mutate(const For* op, const Stmt& self) {
  Expr s = mutate(op->start), e = mutate(op->stop);
  Stmt b = mutate(op->body);
  if (s.same(op->start) && e.same(op->stop) && b.same(op->body)) return self;
  return For::make(op->var, s, e, b, op->options);
}
Stmt Mutator::mutate(const Store* op, const Stmt& self) {
  std::vector<Expr> idx;
  for (const Expr& i : op->indices) idx.push_back(mutate(i));
  Expr v = mutate(op->value);
  if (sameAll(idx, op->indices) && v.same(op->value)) return self;
  return Store::make(op->buf, idx, v);
}
Stmt Mutator::mutate(const Allocate*, const Stmt& self) { return self; }
Stmt Mutator::mutate(const Free*, const Stmt& self) { return self; }
Stmt Mutator::mutate(const GridSync*, const Stmt& self) { return self; }
Stmt Mutator::mutate(const Cond* op, const Stmt& self) {
  Expr c = mutate(op->cond);
  Stmt t = mutate(op->thenStmt), e = mutate(op->elseStmt);
  if (c.same(op->cond) && t.same(op->thenStmt) && e.same(op->elseStmt)) return self;
  return Cond::make(c, t, e);
}

namespace {
class Substituter final : public Mutator {
 public:
  explicit Substituter(const std::unordered_map<const ExprNode*, Expr>& m) : map_(m) {}

 public:
  using Mutator::mutate;

 protected:
  Expr mutate(const Var* op, const Expr& self) override {
    auto it = map_.find(op);
    return it == map_.end() ? self : it->second;
  }

 private:
  const std::unordered_map<const ExprNode*, Expr>& map_;
};
}  // namespace

namespace {

// A node's kind, fields and operands (by node: operands are shared first), as a key. Vars and Reduces are
// keyed by identity: two Vars of one name are different variables.
std::string shallowKey(const Expr& e) {
  auto id = [](const Expr& x) { return std::to_string(reinterpret_cast<uintptr_t>(x.get())); };
  auto k = [](auto v) { return std::to_string(static_cast<int>(v)); };
  switch (e.kind()) {
    case NodeKind::IntImm: return "i" + std::to_string(e.as<IntImm>()->value);
    case NodeKind::FloatImm:
      return "f" + k(e->type) + ":" + std::to_string(std::bit_cast<uint64_t>(e.as<FloatImm>()->value));
    case NodeKind::Binary: {
      const Binary* b = e.as<Binary>();
      return "b" + k(b->op) + ":" + id(b->a) + ":" + id(b->b);
    }
    case NodeKind::Compare: {
      const Compare* c = e.as<Compare>();
      return "c" + k(c->op) + ":" + id(c->a) + ":" + id(c->b);
    }
    case NodeKind::Select: {
      const Select* s = e.as<Select>();
      return "s" + id(s->cond) + ":" + id(s->t) + ":" + id(s->f);
    }
    case NodeKind::Call: return "k" + k(e.as<Call>()->fn) + ":" + id(e.as<Call>()->arg);
    case NodeKind::Cast: return "t" + k(e->type) + ":" + id(e.as<Cast>()->arg);
    case NodeKind::Load: {
      const Load* l = e.as<Load>();
      std::string key = "l" + std::to_string(reinterpret_cast<uintptr_t>(l->buf.get()));
      for (const Expr& i : l->indices) key += ":" + id(i);
      return key;
    }
    case NodeKind::Philox: {
      const Philox* p = e.as<Philox>();
      return "p" + k(e->type) + ":" + id(p->seed) + ":" + id(p->offset) + ":" + std::to_string(p->stream) + ":" +
             id(p->index);
    }
    default: return "v" + id(e);  // Var, Reduce, ThreadReduce
  }
}

class Sharer final : public Mutator {
 public:
  using Mutator::mutate;

 protected:
#define TE_EXPR(K) \
  Expr mutate(const K* op, const Expr& self) override { return share(op, [&] { return Mutator::mutate(op, self); }); }
#define TE_STMT(K)
#include "fusers/te/nodes.def"
#undef TE_EXPR
#undef TE_STMT

 private:
  // Each input node rebuilt once (a DAG stays one, however often a node is reached), then merged with an
  // equal node built before.
  template <typename F>
  Expr share(const ExprNode* in, F rebuild) {
    if (auto it = done_.find(in); it != done_.end()) return it->second;
    Expr e = rebuild();
    auto [it, added] = nodes_.try_emplace(shallowKey(e), e);
    return done_[in] = it->second;
  }
  std::unordered_map<const ExprNode*, Expr> done_;
  std::unordered_map<std::string, Expr> nodes_;
};

}  // namespace

Stmt shareSubexpressions(const Stmt& s) { return Sharer().mutate(s); }

Expr substitute(const Expr& e, const std::unordered_map<const ExprNode*, Expr>& map) {
  return Substituter(map).mutate(e);
}
Stmt substitute(const Stmt& s, const std::unordered_map<const ExprNode*, Expr>& map) {
  return Substituter(map).mutate(s);
}

bool loadsAny(const Expr& e, const std::unordered_set<const BufNode*>& bufs) {
  struct Find : Visitor {
    using Visitor::visit;
    const std::unordered_set<const BufNode*>* bufs;
    bool found = false;
    void visit(const Load* op) override {
      found = found || bufs->count(op->buf.get());
      Visitor::visit(op);
    }
  } find;
  find.bufs = &bufs;
  find.visit(e);
  return find.found;
}

BufferUse bufferUse(const Stmt& s) {
  struct Scan : Visitor {
    using Visitor::visit;
    BufferUse use;
    void visit(const Store* op) override {
      use.stored.insert(op->buf.get());
      Visitor::visit(op);
    }
    void visit(const Load* op) override {
      use.loaded.insert(op->buf.get());
      Visitor::visit(op);
    }
    void visit(const For* op) override {
      use.hasLoop = true;
      Visitor::visit(op);
    }
    void visit(const Allocate* op) override {
      use.allocated.insert(op->buf.get());
      Visitor::visit(op);
    }
  } scan;
  scan.visit(s);
  return std::move(scan.use);
}

std::unordered_set<const BufNode*> BufferUse::storedAndLoaded() const {
  std::unordered_set<const BufNode*> both;
  for (const BufNode* b : stored)
    if (loaded.count(b)) both.insert(b);
  return both;
}

}  // namespace gj::te
