// TE statements to LLVM IR: one visitor over the same nodes the printers walk (STYLE.md, rule 6).
#include "fusers/te/llvm_codegen.h"

#include "fusers/llvm_math.h"
#include "fusers/te/mutator.h"
#include "support/error.h"

#include <fmt/format.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/MDBuilder.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>

#include <unordered_map>
#include <unordered_set>

namespace gj::te {

namespace {

class Emitter {
 public:
  Emitter(const LoopNest& nest, llvm::LLVMContext& ctx, llvm::Module& m)
      : nest_(nest), ctx_(ctx), m_(m), b_(ctx), i64_(llvm::Type::getInt64Ty(ctx)),
        written_(bufferUse(nest.root()).storedAndLoaded()) {}

  // One function per top-level statement of the root.
  std::vector<CompiledNest> emit(const std::string& name) {
    const Block* top = nest_.root().as<Block>();
    std::vector<Stmt> nests = top ? top->stmts : std::vector<Stmt>{nest_.root()};
    std::vector<CompiledNest> out;
    for (size_t k = 0; k < nests.size(); ++k) {
      const For* f = nests[k].as<For>();
      int64_t trips = 1;
      if (f) {
        auto s = f->start.as<IntImm>(), e = f->stop.as<IntImm>();
        USER_CHECK(s && e && s->value == 0, "TE LLVM codegen: top-level loop {} needs bounds [0, constant)",
                   f->var.as<Var>()->name);
        trips = e->value;
      }
      emitFunction(fmt::format("{}_{}", name, k), nests[k]);
      out.push_back({nullptr, trips, f && f->options.parallel, nullptr});
    }
    return out;
  }

 private:
  llvm::Type* typeOf(ScalarKind k) {
    switch (k) {
      case ScalarKind::Int: return i64_;
      case ScalarKind::Float32: return llvm::Type::getFloatTy(ctx_);
      case ScalarKind::Float64: return llvm::Type::getDoubleTy(ctx_);
      case ScalarKind::Bool: return llvm::Type::getInt1Ty(ctx_);
    }
    return i64_;
  }

  // The kernel ABI of fusers/llvm_math.h: FNAME_body (noalias buffers) holds the nest, FNAME unpacks.
  void emitFunction(const std::string& fname, const Stmt& s) {
    const size_t nbufs = nest_.inputs().size() + nest_.outputs().size();
    fn_ = fusion::createKernelBody(m_, fname, nbufs);
    b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", fn_));
    bufs_.clear();
    unsigned a = 0;
    for (const std::vector<Buf>* list : {&nest_.inputs(), &nest_.outputs()})
      for (const Buf& buf : *list) bufs_[buf.get()] = fn_->getArg(a++);
    scopes_.assign(1, {});
    if (const For* f = s.as<For>()) {
      // The outermost loop runs over [begin, end).
      loop(f, fn_->getArg(a), fn_->getArg(a + 1));
    } else {
      stmt(s);
    }
    b_.CreateRetVoid();
    fusion::emitKernelEntry(m_, fname, fn_, nbufs);
  }

  llvm::Value* lookup(const ExprNode* e) {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it)
      if (auto f = it->find(e); f != it->end()) return f->second;
    return nullptr;
  }

  llvm::Value* expr(const Expr& e) {
    if (llvm::Value* v = lookup(e.get())) return v;  // a shared subexpression, computed once
    llvm::Value* v = exprUncached(e);
    if (e.kind() != NodeKind::Var && !readsTemporary(e)) scopes_.back()[e.get()] = v;
    return v;
  }

  // Whether e loads a buffer the nest also stores (a temporary or an accumulator): such a value can
  // change between two uses, so it is emitted again at each (GVN merges what is really the same).
  bool readsTemporary(const Expr& e) {
    if (written_.empty()) return false;
    if (auto it = readsWritten_.find(e.get()); it != readsWritten_.end()) return it->second;
    return readsWritten_[e.get()] = loadsAny(e, written_);
  }

  llvm::Value* address(const Buf& buf, const std::vector<Expr>& idx) {
    llvm::Value* off = llvm::ConstantInt::get(i64_, 0);
    for (size_t d = 0; d < idx.size(); ++d)
      off = b_.CreateAdd(b_.CreateMul(off, llvm::ConstantInt::get(i64_, buf->dims[d])), expr(idx[d]));
    auto it = bufs_.find(buf.get());
    IR_CHECK(it != bufs_.end()) << "TE LLVM codegen: buffer " << buf->name << " is not allocated";
    return b_.CreateGEP(elementType(*buf), it->second, off);
  }

  // A buffer's elements in memory: a storage dtype's (fusion::storageElementType), else its type's.
  llvm::Type* elementType(const BufNode& buf) {
    return buf.storage ? fusion::storageElementType(ctx_, *buf.storage) : typeOf(buf.type);
  }

  llvm::Value* exprUncached(const Expr& e) {
    switch (e.kind()) {
      case NodeKind::IntImm: return llvm::ConstantInt::get(i64_, e.as<IntImm>()->value);
      case NodeKind::FloatImm: return llvm::ConstantFP::get(typeOf(e->type), e.as<FloatImm>()->value);
      case NodeKind::Var: {
        llvm::Value* v = lookup(e.get());
        IR_CHECK(v) << "TE LLVM codegen: unbound variable " << e.as<Var>()->name;
        return v;
      }
      case NodeKind::Binary: return binary(e.as<Binary>());
      case NodeKind::Compare: return compare(e.as<Compare>());
      case NodeKind::Select: {
        const Select* s = e.as<Select>();
        return b_.CreateSelect(expr(s->cond), expr(s->t), expr(s->f));
      }
      case NodeKind::Call: return call(e.as<Call>());
      case NodeKind::Cast: return cast(e.as<Cast>());
      case NodeKind::Load: {
        const Load* l = e.as<Load>();
        llvm::Value* v = b_.CreateLoad(elementType(*l->buf), address(l->buf, l->indices));
        return l->buf->storage ? fusion::emitWidenStorage(b_, *l->buf->storage, v) : v;
      }
      case NodeKind::Philox: {
        const Philox* r = e.as<Philox>();
        return fusion::emitPhiloxUniform(b_, expr(r->seed), expr(r->offset), llvm::ConstantInt::get(i64_, r->stream),
                                         expr(r->index), typeOf(r->type));
      }
      case NodeKind::Reduce: case NodeKind::ThreadReduce: break;
      case NodeKind::Block: case NodeKind::For: case NodeKind::Store: case NodeKind::Allocate: case NodeKind::Free:
      case NodeKind::Cond: case NodeKind::GridSync:
        break;
    }
    throw Error("TE LLVM codegen: unexpected node (lower reductions first)");
  }

  llvm::Value* binary(const Binary* op) {
    llvm::Value* a = expr(op->a);
    llvm::Value* c = expr(op->b);
    bool isInt = op->type == ScalarKind::Int;
    switch (op->op) {
      case BinaryOpKind::Add: return isInt ? b_.CreateAdd(a, c) : b_.CreateFAdd(a, c);
      case BinaryOpKind::Sub: return isInt ? b_.CreateSub(a, c) : b_.CreateFSub(a, c);
      case BinaryOpKind::Mul: return isInt ? b_.CreateMul(a, c) : b_.CreateFMul(a, c);
      case BinaryOpKind::Div: return isInt ? b_.CreateSDiv(a, c) : b_.CreateFDiv(a, c);
      case BinaryOpKind::Mod: return b_.CreateSRem(a, c);
      // Floats: IEEE 754-2019 minimum/maximum, NaN if either operand is (as the interpreter), and a form
      // the loop vectorizer turns into a vector reduction.
      case BinaryOpKind::Min:
        return isInt ? b_.CreateSelect(b_.CreateICmpSLT(a, c), a, c)
                     : b_.CreateBinaryIntrinsic(llvm::Intrinsic::minimum, a, c);
      case BinaryOpKind::Max:
        return isInt ? b_.CreateSelect(b_.CreateICmpSGT(a, c), a, c)
                     : b_.CreateBinaryIntrinsic(llvm::Intrinsic::maximum, a, c);
      case BinaryOpKind::Pow: return b_.CreateBinaryIntrinsic(llvm::Intrinsic::pow, a, c);
      case BinaryOpKind::Atan2: return fusion::emitLibm2(b_, m_, "atan2", a, c);
      case BinaryOpKind::Fmod: return b_.CreateFRem(a, c);  // C's fmod
    }
    return nullptr;
  }

  llvm::Value* compare(const Compare* op) {
    llvm::Value* a = expr(op->a);
    llvm::Value* c = expr(op->b);
    if (op->a->type == ScalarKind::Int) {
      switch (op->op) {
        case CompareOpKind::LT: return b_.CreateICmpSLT(a, c);
        case CompareOpKind::LE: return b_.CreateICmpSLE(a, c);
        case CompareOpKind::GT: return b_.CreateICmpSGT(a, c);
        case CompareOpKind::GE: return b_.CreateICmpSGE(a, c);
        case CompareOpKind::EQ: return b_.CreateICmpEQ(a, c);
        case CompareOpKind::NE: return b_.CreateICmpNE(a, c);
      }
    }
    switch (op->op) {
      case CompareOpKind::LT: return b_.CreateFCmpOLT(a, c);
      case CompareOpKind::LE: return b_.CreateFCmpOLE(a, c);
      case CompareOpKind::GT: return b_.CreateFCmpOGT(a, c);
      case CompareOpKind::GE: return b_.CreateFCmpOGE(a, c);
      case CompareOpKind::EQ: return b_.CreateFCmpOEQ(a, c);
      case CompareOpKind::NE: return b_.CreateFCmpUNE(a, c);
    }
    return nullptr;
  }

  llvm::Value* call(const Call* op) {
    llvm::Value* x = expr(op->arg);
    switch (op->fn) {
      case CallKind::Exp: return fusion::emitExp(b_, m_, x);
      case CallKind::Log: return fusion::emitLibm(b_, m_, "log", x);
      case CallKind::Tanh: return fusion::emitTanh(b_, m_, x);
      case CallKind::Sigmoid: return fusion::emitSigmoid(b_, m_, x);
      case CallKind::Sqrt: return b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, x);
      case CallKind::Neg: return op->type == ScalarKind::Int ? b_.CreateNeg(x) : b_.CreateFNeg(x);  // an Int's wraps
      case CallKind::Erf: return fusion::emitLibm(b_, m_, "erf", x);
      case CallKind::Sin: return b_.CreateUnaryIntrinsic(llvm::Intrinsic::sin, x);
      case CallKind::Cos: return b_.CreateUnaryIntrinsic(llvm::Intrinsic::cos, x);
      case CallKind::Floor: return b_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, x);
      case CallKind::Ceil: return b_.CreateUnaryIntrinsic(llvm::Intrinsic::ceil, x);
      case CallKind::Trunc: return b_.CreateUnaryIntrinsic(llvm::Intrinsic::trunc, x);
      case CallKind::Round: return b_.CreateUnaryIntrinsic(llvm::Intrinsic::roundeven, x);
      case CallKind::Expm1: return fusion::emitLibm(b_, m_, "expm1", x);
      case CallKind::Log1p: return fusion::emitLibm(b_, m_, "log1p", x);
      case CallKind::Atan: return fusion::emitLibm(b_, m_, "atan", x);
      case CallKind::Asin: return fusion::emitLibm(b_, m_, "asin", x);
      case CallKind::Acos: return fusion::emitLibm(b_, m_, "acos", x);
      case CallKind::Sinh: return fusion::emitLibm(b_, m_, "sinh", x);
      case CallKind::Cosh: return fusion::emitLibm(b_, m_, "cosh", x);
      case CallKind::Erfc: return fusion::emitLibm(b_, m_, "erfc", x);
      case CallKind::Lgamma: return fusion::emitLibm(b_, m_, "lgamma", x);
      case CallKind::RoundHalf: case CallKind::RoundBFloat16: case CallKind::WrapUInt8: case CallKind::WrapInt8:
      case CallKind::WrapInt16: case CallKind::WrapInt32: {
        const DType t = *roundedDtype(op->fn);
        return fusion::emitWidenStorage(b_, t, fusion::emitNarrowStorage(b_, t, x));
      }
    }
    return nullptr;
  }

  llvm::Value* cast(const Cast* op) {
    llvm::Value* x = expr(op->arg);
    llvm::Type* to = typeOf(op->type);
    ScalarKind from = op->arg->type;
    auto isFloat = [](ScalarKind k) { return k == ScalarKind::Float32 || k == ScalarKind::Float64; };
    if (isFloat(from) && isFloat(op->type)) return b_.CreateFPCast(x, to);
    if (isFloat(op->type)) return from == ScalarKind::Bool ? b_.CreateUIToFP(x, to) : b_.CreateSIToFP(x, to);
    if (op->type == ScalarKind::Bool) return isFloat(from) ? b_.CreateFCmpUNE(x, llvm::ConstantFP::get(x->getType(), 0))
                                                           : b_.CreateICmpNE(x, llvm::ConstantInt::get(x->getType(), 0));
    return isFloat(from) ? b_.CreateFPToSI(x, to) : b_.CreateIntCast(x, to, from != ScalarKind::Bool);
  }

  void stmt(const Stmt& s) {
    if (!s) return;
    switch (s.kind()) {
      case NodeKind::Block:
        for (const Stmt& x : s.as<Block>()->stmts) stmt(x);
        return;
      case NodeKind::For: {
        const For* f = s.as<For>();
        return loop(f, expr(f->start), expr(f->stop));
      }
      case NodeKind::Store: {
        const Store* st = s.as<Store>();
        llvm::Value* at = address(st->buf, st->indices);  // the address, then the value (tests/data/codegen)
        llvm::Value* v = expr(st->value);
        if (st->buf->storage) v = fusion::emitNarrowStorage(b_, *st->buf->storage, v);
        b_.CreateStore(v, at);
        return;
      }
      case NodeKind::Allocate: {
        const Buf& buf = s.as<Allocate>()->buf;
        int64_t n = 1;
        for (int64_t d : buf->dims) n *= d;
        USER_CHECK(n <= (1 << 14), "TE LLVM codegen: temporary {} of {} elements is too large for the stack",
                   buf->name, n);
        // In the entry block, so a temporary inside a loop is one stack slot (that SROA can promote to a
        // register), not a new one per iteration.
        llvm::IRBuilder<> entry(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
        bufs_[buf.get()] = entry.CreateAlloca(typeOf(buf->type), llvm::ConstantInt::get(i64_, n), buf->name);
        return;
      }
      case NodeKind::Free: return;
      case NodeKind::GridSync: IR_CHECK(false) << "LLVM backend: a grid barrier (GPU only) in a CPU nest"; return;
      case NodeKind::Cond: {
        const Cond* c = s.as<Cond>();
        auto* thenBB = llvm::BasicBlock::Create(ctx_, "then", fn_);
        auto* elseBB = llvm::BasicBlock::Create(ctx_, "else", fn_);
        auto* done = llvm::BasicBlock::Create(ctx_, "endif", fn_);
        b_.CreateCondBr(expr(c->cond), thenBB, elseBB);
        for (auto [bb, body] : {std::pair{thenBB, c->thenStmt}, std::pair{elseBB, c->elseStmt}}) {
          b_.SetInsertPoint(bb);
          scopes_.emplace_back();
          stmt(body);
          scopes_.pop_back();
          b_.CreateBr(done);
        }
        b_.SetInsertPoint(done);
        return;
      }
      case NodeKind::IntImm: case NodeKind::FloatImm: case NodeKind::Var: case NodeKind::Binary:
      case NodeKind::Compare: case NodeKind::Select: case NodeKind::Call: case NodeKind::Cast: case NodeKind::Load:
      case NodeKind::Philox: case NodeKind::Reduce: case NodeKind::ThreadReduce:
        break;
    }
    throw Error("TE LLVM codegen: an expression used as a statement");
  }

  // for (v = lo; v < hi; ++v) body, with the vectorizer asked in when the schedule says so.
  void loop(const For* f, llvm::Value* lo, llvm::Value* hi) {
    auto* pre = b_.GetInsertBlock();
    auto* head = llvm::BasicBlock::Create(ctx_, "loop", fn_);
    auto* body = llvm::BasicBlock::Create(ctx_, "body", fn_);
    auto* exit = llvm::BasicBlock::Create(ctx_, "exit", fn_);
    b_.CreateBr(head);
    b_.SetInsertPoint(head);
    llvm::PHINode* v = b_.CreatePHI(i64_, 2, f->var.as<Var>()->name);
    v->addIncoming(lo, pre);
    b_.CreateCondBr(b_.CreateICmpSLT(v, hi), body, exit);
    b_.SetInsertPoint(body);
    scopes_.emplace_back();
    scopes_.back()[f->var.get()] = v;
    stmt(f->body);
    scopes_.pop_back();
    llvm::Value* next = b_.CreateAdd(v, llvm::ConstantInt::get(i64_, 1));
    v->addIncoming(next, b_.GetInsertBlock());
    llvm::BranchInst* latch = b_.CreateBr(head);
    if (f->options.vectorize) {
      llvm::MDNode* enable = llvm::MDNode::get(
          ctx_, {llvm::MDString::get(ctx_, "llvm.loop.vectorize.enable"),
                 llvm::ConstantAsMetadata::get(llvm::ConstantInt::getTrue(ctx_))});
      llvm::MDNode* self = llvm::MDNode::getDistinct(ctx_, {nullptr, enable});
      self->replaceOperandWith(0, self);
      latch->setMetadata(llvm::LLVMContext::MD_loop, self);
    }
    b_.SetInsertPoint(exit);
  }

  const LoopNest& nest_;
  llvm::LLVMContext& ctx_;
  llvm::Module& m_;
  llvm::IRBuilder<> b_;
  llvm::Type* i64_;
  llvm::Function* fn_ = nullptr;
  std::unordered_map<const BufNode*, llvm::Value*> bufs_;
  std::unordered_set<const BufNode*> written_;
  std::unordered_map<const ExprNode*, bool> readsWritten_;
  std::vector<std::unordered_map<const ExprNode*, llvm::Value*>> scopes_;
};

LoopNest lowered(const LoopNest& nest) {
  LoopNest n = nest;
  n.lowerReductions();
  return n;
}

}  // namespace

Result<std::string> emitLlvmIR(const LoopNest& nest, const std::string& name) {
  llvm::LLVMContext ctx;
  llvm::Module m(name, ctx);
  prepareModuleForHost(m);
  try {
    Emitter(lowered(nest), ctx, m).emit(name);
  } catch (const Error& e) {
    return e;
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  m.print(os, nullptr);
  return os.str();
}

Result<std::vector<CompiledNest>> compileLlvm(const LoopNest& nest, const std::string& name, const JitOptions& opts) {
  auto ctx = std::make_unique<llvm::LLVMContext>();
  auto m = std::make_unique<llvm::Module>(name, *ctx);
  prepareModuleForHost(*m, opts.contextOrCurrent());
  std::vector<CompiledNest> nests;
  try {
    nests = Emitter(lowered(nest), *ctx, *m).emit(name);
  } catch (const Error& e) {
    return e;
  }
  // A nest of tensors with no elements simplifies to no loops at all: nothing to compile or run.
  if (nests.empty()) return nests;
  // One module, one JIT add; the first lookup compiles every function in it.
  auto first = jitCompile(std::move(ctx), std::move(m), name + "_0", opts);
  if (!first) return first.error();
  nests[0].fn = reinterpret_cast<NestFn>(first.value().address);
  for (size_t k = 1; k < nests.size(); ++k) {
    auto addr = jitLookup(fmt::format("{}_{}", name, k), opts.contextOrCurrent());
    if (!addr) return addr.error();
    nests[k].fn = reinterpret_cast<NestFn>(addr.value());
  }
  for (CompiledNest& n : nests) n.module = first.value().module;
  return nests;
}

}  // namespace gj::te
