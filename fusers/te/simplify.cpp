#include "fusers/te/simplify.h"

#include "fusers/te/mutator.h"

#include <algorithm>
#include <optional>

namespace gj::te {

namespace {

class Simplifier final : public Mutator {
 public:
  using Mutator::mutate;

 protected:
  Expr mutate(const Binary* op, const Expr& self) override {
    Expr a = mutate(op->a), b = mutate(op->b);
    auto ia = intValue(a), ib = intValue(b);
    if (ia && ib) {
      switch (op->op) {
        // wrapping, as the backends' Int arithmetic (an integer group's values are tensors' elements)
        case BinaryOpKind::Add: return imm(static_cast<int64_t>(static_cast<uint64_t>(*ia) + static_cast<uint64_t>(*ib)));
        case BinaryOpKind::Sub: return imm(static_cast<int64_t>(static_cast<uint64_t>(*ia) - static_cast<uint64_t>(*ib)));
        case BinaryOpKind::Mul: return imm(static_cast<int64_t>(static_cast<uint64_t>(*ia) * static_cast<uint64_t>(*ib)));
        case BinaryOpKind::Div: if (*ib != 0 && *ib != -1) return imm(*ia / *ib); break;
        case BinaryOpKind::Mod: if (*ib != 0 && *ib != -1) return imm(*ia % *ib); break;
        case BinaryOpKind::Min: return imm(std::min(*ia, *ib));
        case BinaryOpKind::Max: return imm(std::max(*ia, *ib));
        case BinaryOpKind::Pow: case BinaryOpKind::Atan2: case BinaryOpKind::Fmod: break;  // floats only
      }
    }
    if (a->type == ScalarKind::Int) {
      if (op->op == BinaryOpKind::Add && ia == 0) return b;
      if ((op->op == BinaryOpKind::Add || op->op == BinaryOpKind::Sub) && ib == 0) return a;
      if (op->op == BinaryOpKind::Mul && (ia == 0 || ib == 0)) return imm(0);
      if (op->op == BinaryOpKind::Mul && ia == 1) return b;
      if ((op->op == BinaryOpKind::Mul || op->op == BinaryOpKind::Div) && ib == 1) return a;
      if (op->op == BinaryOpKind::Mod && ib == 1) return imm(0);
      // (x + c1) + c2 -> x + (c1 + c2)
      if (op->op == BinaryOpKind::Add && ib) {
        if (auto inner = a.as<Binary>(); inner && inner->op == BinaryOpKind::Add)
          if (auto c1 = intValue(inner->b)) return mutate(inner->a + (imm(*c1) + imm(*ib)));
      }
    } else if (op->op == BinaryOpKind::Mul) {
      if (auto f = b.as<FloatImm>(); f && f->value == 1.0) return a;
      if (auto f = a.as<FloatImm>(); f && f->value == 1.0) return b;
    }
    if (a.same(op->a) && b.same(op->b)) return self;
    return Binary::make(op->op, a, b);
  }
  Expr mutate(const Select* op, const Expr& self) override {
    Expr c = mutate(op->cond);
    if (auto cmp = c.as<Compare>()) {
      auto a = intValue(cmp->a), b = intValue(cmp->b);
      if (a && b) {
        bool v = false;
        switch (cmp->op) {
          case CompareOpKind::LT: v = *a < *b; break;
          case CompareOpKind::LE: v = *a <= *b; break;
          case CompareOpKind::GT: v = *a > *b; break;
          case CompareOpKind::GE: v = *a >= *b; break;
          case CompareOpKind::EQ: v = *a == *b; break;
          case CompareOpKind::NE: v = *a != *b; break;
        }
        return mutate(v ? op->t : op->f);
      }
    }
    Expr t = mutate(op->t), f = mutate(op->f);
    if (c.same(op->cond) && t.same(op->t) && f.same(op->f)) return self;
    return Select::make(c, t, f);
  }
  Stmt mutate(const For* op, const Stmt& self) override {
    Expr s = mutate(op->start), e = mutate(op->stop);
    auto is = intValue(s), ie = intValue(e);
    if (is && ie && *ie <= *is) return Block::make({});
    Stmt b = mutate(op->body);
    if (s.same(op->start) && e.same(op->stop) && b.same(op->body)) return self;
    return For::make(op->var, s, e, b, op->options);
  }
  Stmt mutate(const Block* op, const Stmt& self) override {
    std::vector<Stmt> out;
    bool same = true;
    for (const Stmt& st : op->stmts) {
      Stmt m = mutate(st);
      same = same && m.same(st);
      if (auto inner = m.as<Block>()) {  // flatten nested blocks
        same = false;
        out.insert(out.end(), inner->stmts.begin(), inner->stmts.end());
      } else {
        out.push_back(m);
      }
    }
    return same ? self : Block::make(out);
  }
};

}  // namespace

Stmt simplify(const Stmt& s) { return Simplifier().mutate(s); }
Expr simplify(const Expr& e) { return Simplifier().mutate(e); }

}  // namespace gj::te
