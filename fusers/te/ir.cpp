#include "fusers/te/ir.h"

#include "support/error.h"

#include <bit>

namespace gj::te {

NodeBase::~NodeBase() = default;

ScalarKind scalarKindOf(DType t) {
  switch (t) {
    case DType::Float32: return ScalarKind::Float32;
    case DType::Float64: return ScalarKind::Float64;
    case DType::Int64: return ScalarKind::Int;
    case DType::Bool: return ScalarKind::Bool;
    case DType::UInt8:
    case DType::Int8:
    case DType::Int16:
    case DType::Int32:
    case DType::Float16:
    case DType::BFloat16: break;  // storage dtypes: a buffer's `storage`, its values Float32 (lowering/values.h)
  }
  IR_CHECK(false) << "te: no scalar kind for the storage dtype " << dtypeName(t);
  return ScalarKind::Float32;
}

DType dtypeOf(ScalarKind k) {
  switch (k) {
    case ScalarKind::Int: return DType::Int64;
    case ScalarKind::Float32: return DType::Float32;
    case ScalarKind::Float64: return DType::Float64;
    case ScalarKind::Bool: return DType::Bool;
  }
  return DType::Float32;
}

const char* scalarKindName(ScalarKind k) {
  switch (k) {
    case ScalarKind::Int: return "int";
    case ScalarKind::Float32: return "float";
    case ScalarKind::Float64: return "double";
    case ScalarKind::Bool: return "bool";
  }
  return "?";
}

Buf makeBuf(std::string name, std::vector<int64_t> dims, ScalarKind type, std::optional<DType> storage) {
  return std::make_shared<const BufNode>(BufNode{std::move(name), std::move(dims), type, storage});
}

DType bufDType(const BufNode& b) { return b.storage.value_or(dtypeOf(b.type)); }

CallKind roundingCall(DType t) {
  switch (t) {
    case DType::Float16: return CallKind::RoundHalf;
    case DType::BFloat16: return CallKind::RoundBFloat16;
    case DType::UInt8: return CallKind::WrapUInt8;
    case DType::Int8: return CallKind::WrapInt8;
    case DType::Int16: return CallKind::WrapInt16;
    case DType::Int32: return CallKind::WrapInt32;
    case DType::Float32: case DType::Float64: case DType::Int64: case DType::Bool: break;
  }
  IR_CHECK(false) << "te: " << dtypeName(t) << " is not a storage dtype";
  return CallKind::RoundHalf;
}

std::optional<DType> roundedDtype(CallKind k) {
  for (DType t : {DType::Float16, DType::BFloat16, DType::UInt8, DType::Int8, DType::Int16, DType::Int32})
    if (roundingCall(t) == k) return t;
  return std::nullopt;
}

std::optional<int64_t> intValue(const Expr& e) {
  if (auto i = e.as<IntImm>()) return i->value;
  return std::nullopt;
}

bool equal(const Expr& a, const Expr& b) {
  if (a.same(b)) return true;
  if (!a || !b || a.kind() != b.kind() || a->type != b->type) return false;
  auto all = [](const std::vector<Expr>& x, const std::vector<Expr>& y) {
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i)
      if (!equal(x[i], y[i])) return false;
    return true;
  };
  switch (a.kind()) {
    case NodeKind::IntImm: return a.as<IntImm>()->value == b.as<IntImm>()->value;
    case NodeKind::FloatImm:  // by the bits: 0.0 and -0.0 differ
      return std::bit_cast<uint64_t>(a.as<FloatImm>()->value) == std::bit_cast<uint64_t>(b.as<FloatImm>()->value);
    case NodeKind::Var: return false;  // one Var is only equal to itself (a.same(b) above)
    case NodeKind::Binary: {
      auto x = a.as<Binary>(), y = b.as<Binary>();
      return x->op == y->op && equal(x->a, y->a) && equal(x->b, y->b);
    }
    case NodeKind::Compare: {
      auto x = a.as<Compare>(), y = b.as<Compare>();
      return x->op == y->op && equal(x->a, y->a) && equal(x->b, y->b);
    }
    case NodeKind::Select: {
      auto x = a.as<Select>(), y = b.as<Select>();
      return equal(x->cond, y->cond) && equal(x->t, y->t) && equal(x->f, y->f);
    }
    case NodeKind::Call: {
      auto x = a.as<Call>(), y = b.as<Call>();
      return x->fn == y->fn && equal(x->arg, y->arg);
    }
    case NodeKind::Cast: return equal(a.as<Cast>()->arg, b.as<Cast>()->arg);
    case NodeKind::Load: {
      auto x = a.as<Load>(), y = b.as<Load>();
      return x->buf == y->buf && all(x->indices, y->indices);
    }
    case NodeKind::Philox: {
      auto x = a.as<Philox>(), y = b.as<Philox>();
      return x->stream == y->stream && equal(x->seed, y->seed) && equal(x->offset, y->offset) &&
             equal(x->index, y->index);
    }
    case NodeKind::Reduce: {
      auto x = a.as<Reduce>(), y = b.as<Reduce>();
      return x->op == y->op && x->extents == y->extents && all(x->vars, y->vars) && equal(x->body, y->body);
    }
    case NodeKind::ThreadReduce: {
      auto x = a.as<ThreadReduce>(), y = b.as<ThreadReduce>();
      return x->op == y->op && x->scope == y->scope && equal(x->value, y->value);
    }
    case NodeKind::Block: case NodeKind::For: case NodeKind::Store: case NodeKind::Allocate: case NodeKind::Free:
    case NodeKind::Cond: case NodeKind::GridSync:
      return false;  // statements, never expressions
  }
  return false;
}

Expr IntImm::make(int64_t v) { return Expr(std::make_shared<const IntImm>(v)); }
Expr FloatImm::make(double v, ScalarKind t) { return Expr(std::make_shared<const FloatImm>(v, t)); }
Expr Var::make(std::string name) { return Expr(std::make_shared<const Var>(std::move(name))); }

Expr Binary::make(BinaryOpKind op, Expr a, Expr b) {
  IR_CHECK(a->type == b->type) << "te::Binary operands of types " << scalarKindName(a->type) << " and "
                               << scalarKindName(b->type);
  return Expr(std::make_shared<const Binary>(op, std::move(a), std::move(b)));
}
Expr Compare::make(CompareOpKind op, Expr a, Expr b) {
  IR_CHECK(a->type == b->type) << "te::Compare operands of different types";
  return Expr(std::make_shared<const Compare>(op, std::move(a), std::move(b)));
}
Expr Select::make(Expr cond, Expr t, Expr f) {
  IR_CHECK(cond->type == ScalarKind::Bool && t->type == f->type) << "te::Select wants a bool and equal types";
  return Expr(std::make_shared<const Select>(std::move(cond), std::move(t), std::move(f)));
}
Expr Call::make(CallKind fn, Expr arg) { return Expr(std::make_shared<const Call>(fn, std::move(arg))); }
Expr Cast::make(ScalarKind t, Expr arg) {
  if (arg->type == t) return arg;
  return Expr(std::make_shared<const Cast>(t, std::move(arg)));
}
Expr Load::make(Buf buf, std::vector<Expr> indices) {
  IR_CHECK(indices.size() == buf->dims.size()) << "te::Load of " << buf->name << " with " << indices.size()
                                               << " indices for " << buf->dims.size() << " dims";
  return Expr(std::make_shared<const Load>(std::move(buf), std::move(indices)));
}
Expr Philox::make(Expr seed, Expr offset, int64_t stream, Expr index, ScalarKind t) {
  IR_CHECK(seed->type == ScalarKind::Int && offset->type == ScalarKind::Int && index->type == ScalarKind::Int &&
           (t == ScalarKind::Float32 || t == ScalarKind::Float64))
      << "te::Philox takes Int seed, offset and index and gives a float";
  return Expr(std::make_shared<const Philox>(std::move(seed), std::move(offset), stream, std::move(index), t));
}
Expr ThreadReduce::make(ReduceOpKind op, Expr value, ThreadScope scope) {
  return Expr(std::make_shared<const ThreadReduce>(op, std::move(value), scope));
}

Expr Reduce::make(ReduceOpKind op, Expr body, std::vector<Expr> vars, std::vector<int64_t> extents) {
  IR_CHECK(vars.size() == extents.size()) << "te::Reduce vars and extents differ in number";
  return Expr(std::make_shared<const Reduce>(op, std::move(body), std::move(vars), std::move(extents)));
}

Stmt Block::make(std::vector<Stmt> stmts) { return Stmt(std::make_shared<const Block>(std::move(stmts))); }
Stmt For::make(Expr var, Expr start, Expr stop, Stmt body, LoopOptions options) {
  IR_CHECK(var.as<Var>()) << "te::For needs a Var";
  return Stmt(std::make_shared<const For>(std::move(var), std::move(start), std::move(stop), std::move(body), options));
}
Stmt Store::make(Buf buf, std::vector<Expr> indices, Expr value) {
  IR_CHECK(indices.size() == buf->dims.size()) << "te::Store to " << buf->name << " with " << indices.size()
                                               << " indices for " << buf->dims.size() << " dims";
  return Stmt(std::make_shared<const Store>(std::move(buf), std::move(indices), std::move(value)));
}
Stmt Allocate::make(Buf buf) { return Stmt(std::make_shared<const Allocate>(std::move(buf))); }
Stmt Free::make(Buf buf) { return Stmt(std::make_shared<const Free>(std::move(buf))); }
Stmt GridSync::make() { return Stmt(std::make_shared<const GridSync>()); }
Stmt Cond::make(Expr cond, Stmt thenStmt, Stmt elseStmt) {
  return Stmt(std::make_shared<const Cond>(std::move(cond), std::move(thenStmt), std::move(elseStmt)));
}

Expr operator+(const Expr& a, const Expr& b) { return Binary::make(BinaryOpKind::Add, a, b); }
Expr operator-(const Expr& a, const Expr& b) { return Binary::make(BinaryOpKind::Sub, a, b); }
Expr operator*(const Expr& a, const Expr& b) { return Binary::make(BinaryOpKind::Mul, a, b); }
Expr operator/(const Expr& a, const Expr& b) { return Binary::make(BinaryOpKind::Div, a, b); }
Expr operator%(const Expr& a, const Expr& b) { return Binary::make(BinaryOpKind::Mod, a, b); }
Expr imm(int64_t v) { return IntImm::make(v); }

}  // namespace gj::te
