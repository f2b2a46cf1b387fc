// LLVM IR for a legacy fusion group: a loop over rows, an inner loop over the last dimension.
#include "fusers/legacy/codegen.h"
#include "fusers/group_rules.h"
#include "fusers/llvm_math.h"
#include "support/philox.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>


namespace gj::legacy {

namespace {

class Emitter {
 public:
  Emitter(const KernelSpec& spec, llvm::LLVMContext& ctx, llvm::Module& m)
      : spec_(spec), ctx_(ctx), m_(m), b_(ctx), integer_(spec.dtype == DType::Int64),
        t_(integer_ ? llvm::Type::getInt64Ty(ctx)
                    : spec.dtype == DType::Float64 ? llvm::Type::getDoubleTy(ctx) : llvm::Type::getFloatTy(ctx)),
        i64_(llvm::Type::getInt64Ty(ctx)) {}

  // The kernel ABI of fusers/llvm_math.h: NAME_body(noalias args..., rowBegin, rowEnd) holds the loops
  // over rows and columns, NAME unpacks the argument array.
  void emit(const std::string& name) {
    const size_t nargs = spec_.argSizes.size() + spec_.outputs.size();
    llvm::Function* body = fusion::createKernelBody(m_, name, nargs);
    emitBody(body, nargs);
    fusion::emitKernelEntry(m_, name, body, nargs);
  }

 private:
  int64_t rank() const { return static_cast<int64_t>(spec_.shape.size()); }
  int64_t rowLength() const { return spec_.shape.empty() ? 1 : spec_.shape.back(); }
  llvm::Value* c64(int64_t v) { return llvm::ConstantInt::get(i64_, v); }
  // A constant of the kernel's type (an int64 group's numbers are integers: group_rules' exactIntegerNumber).
  llvm::Value* cf(double v) {
    return integer_ ? llvm::ConstantInt::get(t_, static_cast<uint64_t>(static_cast<int64_t>(v)), /*isSigned=*/true)
                    : llvm::ConstantFP::get(t_, v);
  }

  void emitBody(llvm::Function* f, size_t nargs) {
    auto* entry = llvm::BasicBlock::Create(ctx_, "entry", f);
    auto* rowHead = llvm::BasicBlock::Create(ctx_, "row", f);
    auto* colHead = llvm::BasicBlock::Create(ctx_, "col", f);
    auto* rowLatch = llvm::BasicBlock::Create(ctx_, "row.next", f);
    auto* exit = llvm::BasicBlock::Create(ctx_, "exit", f);
    llvm::Value* rowBegin = f->getArg(static_cast<unsigned>(nargs));
    llvm::Value* rowEnd = f->getArg(static_cast<unsigned>(nargs + 1));
    b_.SetInsertPoint(entry);
    b_.CreateCondBr(b_.CreateICmpSLT(rowBegin, rowEnd), rowHead, exit);

    // Row loop: the row's offset into every load, and into the outputs.
    b_.SetInsertPoint(rowHead);
    llvm::PHINode* row = b_.CreatePHI(i64_, 2, "row");
    row->addIncoming(rowBegin, entry);
    std::vector<llvm::Value*> rowOffset = rowOffsets(row);
    llvm::Value* outBase = b_.CreateMul(row, c64(rowLength()));
    b_.CreateBr(colHead);

    // Column loop: load, compute, store.
    b_.SetInsertPoint(colHead);
    llvm::PHINode* col = b_.CreatePHI(i64_, 2, "col");
    col->addIncoming(c64(0), rowHead);
    values_.assign(spec_.exprs.size(), nullptr);
    // The element's row-major index, for dropout's numbers.
    const bool dropout = std::any_of(spec_.exprs.begin(), spec_.exprs.end(),
                                     [](const KernelSpec::Expr& e) { return e.kind == KernelSpec::ExprKind::Dropout; });
    llvm::Value* linear = dropout ? b_.CreateAdd(outBase, col) : nullptr;
    for (size_t e = 0; e < spec_.exprs.size(); ++e) values_[e] = expr(spec_.exprs[e], f, rowOffset, col, linear);
    for (size_t o = 0; o < spec_.outputs.size(); ++o) {
      llvm::Value* out = f->getArg(static_cast<unsigned>(spec_.argSizes.size() + o));
      llvm::Value* v = values_[spec_.outputs[o]];
      llvm::Type* t = t_;
      if (spec_.outDtypes[o] == DType::Bool) {  // a comparison's 1 or 0, stored as a byte
        t = llvm::Type::getInt8Ty(ctx_);
        v = b_.CreateZExt(integer_ ? b_.CreateICmpNE(v, cf(0)) : b_.CreateFCmpUNE(v, cf(0)), t);
      } else if (isStorageOnly(spec_.outDtypes[o])) {
        t = storageType(spec_.outDtypes[o]);
        v = narrowed(spec_.outDtypes[o], v);
      }
      b_.CreateStore(v, b_.CreateGEP(t, out, b_.CreateAdd(outBase, col)));
    }
    llvm::Value* nextCol = b_.CreateAdd(col, c64(1));
    col->addIncoming(nextCol, b_.GetInsertBlock());
    b_.CreateCondBr(b_.CreateICmpSLT(nextCol, c64(rowLength())), colHead, rowLatch);

    b_.SetInsertPoint(rowLatch);
    llvm::Value* nextRow = b_.CreateAdd(row, c64(1));
    row->addIncoming(nextRow, rowLatch);
    b_.CreateCondBr(b_.CreateICmpSLT(nextRow, rowEnd), rowHead, exit);

    b_.SetInsertPoint(exit);
    b_.CreateRetVoid();
  }

  // For each load: offset + sum over all but the last dimension of index[d] * stride[d], for `row`.
  std::vector<llvm::Value*> rowOffsets(llvm::Value* row) {
    std::vector<llvm::Value*> index(std::max<int64_t>(rank() - 1, 0));
    llvm::Value* rest = row;
    for (int64_t d = rank() - 2; d >= 0; --d) {
      index[d] = d == 0 ? rest : b_.CreateURem(rest, c64(spec_.shape[d]));
      if (d > 0) rest = b_.CreateUDiv(rest, c64(spec_.shape[d]));
    }
    std::vector<llvm::Value*> offsets;
    for (const KernelSpec::Load& l : spec_.loads) {
      llvm::Value* off = c64(l.offset);
      for (int64_t d = 0; d + 1 < rank(); ++d)
        if (l.strides[d] != 0) off = b_.CreateAdd(off, b_.CreateMul(index[d], c64(l.strides[d])));
      offsets.push_back(off);
    }
    return offsets;
  }

  // A storage dtype (float16 and bfloat16 only in float32 groups, so t_ is float; uint8 to int32 only in
  // int64 groups): fusers/llvm_math.h's conversions.
  llvm::Type* storageType(DType t) { return fusion::storageElementType(ctx_, t); }
  llvm::Value* widened(DType t, llvm::Value* bits) { return fusion::emitWidenStorage(b_, t, bits); }
  llvm::Value* narrowed(DType t, llvm::Value* v) { return fusion::emitNarrowStorage(b_, t, v); }

  llvm::Value* expr(const KernelSpec::Expr& e, llvm::Function* f, const std::vector<llvm::Value*>& rowOffset,
                    llvm::Value* col, llvm::Value* linear) {
    switch (e.kind) {
      case KernelSpec::ExprKind::Scalar: return cf(e.scalar);
      case KernelSpec::ExprKind::Load: {
        const KernelSpec::Load& l = spec_.loads[e.load];
        llvm::Value* inner = rank() == 0 || l.strides.back() == 0 ? c64(0) : b_.CreateMul(col, c64(l.strides.back()));
        llvm::Value* p = f->getArg(static_cast<unsigned>(l.arg));
        if (spec_.argDtypes[l.arg] == DType::Bool) {  // a condition, read as 1 or 0
          llvm::Type* i8 = llvm::Type::getInt8Ty(ctx_);
          llvm::Value* byte = b_.CreateLoad(i8, b_.CreateGEP(i8, p, b_.CreateAdd(rowOffset[e.load], inner)));
          llvm::Value* set = b_.CreateICmpNE(byte, llvm::ConstantInt::get(i8, 0));
          return integer_ ? b_.CreateZExt(set, t_) : b_.CreateUIToFP(set, t_);
        }
        if (isStorageOnly(spec_.argDtypes[l.arg])) {
          llvm::Type* st = storageType(spec_.argDtypes[l.arg]);
          return widened(spec_.argDtypes[l.arg],
                         b_.CreateLoad(st, b_.CreateGEP(st, p, b_.CreateAdd(rowOffset[e.load], inner))));
        }
        return b_.CreateLoad(t_, b_.CreateGEP(t_, p, b_.CreateAdd(rowOffset[e.load], inner)));
      }
      case KernelSpec::ExprKind::Op: {
        llvm::Value* v = op(e);
        return e.roundTo ? widened(*e.roundTo, narrowed(*e.roundTo, v)) : v;  // as the unfused op stores it
      }
      case KernelSpec::ExprKind::Dropout: {
        llvm::Value* rng = f->getArg(static_cast<unsigned>(e.rngArg));
        llvm::Value* seed = b_.CreateLoad(i64_, rng);
        llvm::Value* offset = b_.CreateLoad(i64_, b_.CreateConstGEP1_64(i64_, rng, 1));
        llvm::Value* u = fusion::emitPhiloxUniform(b_, seed, offset, c64(e.stream), linear, t_);
        return gjDropout(LlvmAlgebra{*this}, values_[e.args[0]], u, values_[e.args[1]]);
      }
    }
    return nullptr;
  }

  // The primitives support/pointwise.def's rules are written in, as LLVM IR of the kernel's element type.
  // In an int64 group: wrapping arithmetic (no nsw: PyTorch's integers wrap), signed comparisons and
  // extrema; group_rules' integerOp lets in only ops whose rules use no other primitive.
  struct LlvmAlgebra {
    Emitter& e;
    llvm::Value* c(double v) const { return e.cf(v); }
    llvm::Value* add(llvm::Value* x, llvm::Value* y) const {
      return e.integer_ ? e.b_.CreateAdd(x, y) : e.b_.CreateFAdd(x, y);
    }
    llvm::Value* sub(llvm::Value* x, llvm::Value* y) const {
      return e.integer_ ? e.b_.CreateSub(x, y) : e.b_.CreateFSub(x, y);
    }
    // A product with the constant 1 (add's alpha, mostly) is the other operand.
    llvm::Value* mul(llvm::Value* x, llvm::Value* y) const {
      if (isOne(x)) return y;
      if (isOne(y)) return x;
      return e.integer_ ? e.b_.CreateMul(x, y) : e.b_.CreateFMul(x, y);
    }
    llvm::Value* div(llvm::Value* x, llvm::Value* y) const {  // an int64's truncates
      return e.integer_ ? e.b_.CreateSDiv(x, y) : e.b_.CreateFDiv(x, y);
    }
    llvm::Value* neg(llvm::Value* x) const { return e.integer_ ? e.b_.CreateNeg(x) : e.b_.CreateFNeg(x); }
    llvm::Value* exp(llvm::Value* x) const { return fusion::emitExp(e.b_, e.m_, x); }
    llvm::Value* log(llvm::Value* x) const { return fusion::emitLibm(e.b_, e.m_, "log", x); }
    llvm::Value* sqrt(llvm::Value* x) const { return e.b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, x); }
    llvm::Value* tanh(llvm::Value* x) const { return fusion::emitTanh(e.b_, e.m_, x); }
    llvm::Value* sigmoid(llvm::Value* x) const { return fusion::emitSigmoid(e.b_, e.m_, x); }
    llvm::Value* erf(llvm::Value* x) const { return fusion::emitLibm(e.b_, e.m_, "erf", x); }
    llvm::Value* expm1(llvm::Value* x) const { return fusion::emitLibm(e.b_, e.m_, "expm1", x); }
    llvm::Value* log1p(llvm::Value* x) const { return fusion::emitLibm(e.b_, e.m_, "log1p", x); }
    llvm::Value* atan(llvm::Value* x) const { return fusion::emitLibm(e.b_, e.m_, "atan", x); }
    llvm::Value* asin(llvm::Value* x) const { return fusion::emitLibm(e.b_, e.m_, "asin", x); }
    llvm::Value* acos(llvm::Value* x) const { return fusion::emitLibm(e.b_, e.m_, "acos", x); }
    llvm::Value* sinh(llvm::Value* x) const { return fusion::emitLibm(e.b_, e.m_, "sinh", x); }
    llvm::Value* cosh(llvm::Value* x) const { return fusion::emitLibm(e.b_, e.m_, "cosh", x); }
    llvm::Value* erfc(llvm::Value* x) const { return fusion::emitLibm(e.b_, e.m_, "erfc", x); }
    llvm::Value* lgamma(llvm::Value* x) const { return fusion::emitLibm(e.b_, e.m_, "lgamma", x); }
    llvm::Value* sin(llvm::Value* x) const { return e.b_.CreateUnaryIntrinsic(llvm::Intrinsic::sin, x); }
    llvm::Value* cos(llvm::Value* x) const { return e.b_.CreateUnaryIntrinsic(llvm::Intrinsic::cos, x); }
    // an integer is its own floor, ceiling, truncation and rounding
    llvm::Value* floor(llvm::Value* x) const { return e.integer_ ? x : e.b_.CreateUnaryIntrinsic(llvm::Intrinsic::floor, x); }
    llvm::Value* ceil(llvm::Value* x) const { return e.integer_ ? x : e.b_.CreateUnaryIntrinsic(llvm::Intrinsic::ceil, x); }
    llvm::Value* trunc(llvm::Value* x) const { return e.integer_ ? x : e.b_.CreateUnaryIntrinsic(llvm::Intrinsic::trunc, x); }
    llvm::Value* round(llvm::Value* x) const {
      return e.integer_ ? x : e.b_.CreateUnaryIntrinsic(llvm::Intrinsic::roundeven, x);
    }
    // PyTorch's pow by a number: 0.5 and -0.5 are sqrt and 1 / sqrt (NaN at -inf, -0 kept), not C's pow
    llvm::Value* pow(llvm::Value* x, llvm::Value* y) const {
      if (isConstant(y, 0.5)) return sqrt(x);
      if (isConstant(y, -0.5)) return div(c(1), sqrt(x));
      return e.b_.CreateBinaryIntrinsic(llvm::Intrinsic::pow, x, y);
    }
    llvm::Value* atan2(llvm::Value* x, llvm::Value* y) const { return fusion::emitLibm2(e.b_, e.m_, "atan2", x, y); }
    llvm::Value* fmod(llvm::Value* x, llvm::Value* y) const {  // C's fmod; an int64's %
      return e.integer_ ? e.b_.CreateSRem(x, y) : e.b_.CreateFRem(x, y);
    }
    // IEEE 754-2019 maximum / minimum: NaN when either operand is.
    llvm::Value* max(llvm::Value* x, llvm::Value* y) const {
      return e.b_.CreateBinaryIntrinsic(e.integer_ ? llvm::Intrinsic::smax : llvm::Intrinsic::maximum, x, y);
    }
    llvm::Value* min(llvm::Value* x, llvm::Value* y) const {
      return e.b_.CreateBinaryIntrinsic(e.integer_ ? llvm::Intrinsic::smin : llvm::Intrinsic::minimum, x, y);
    }
    llvm::Value* lt(llvm::Value* x, llvm::Value* y) const {
      return e.integer_ ? e.b_.CreateICmpSLT(x, y) : e.b_.CreateFCmpOLT(x, y);
    }
    llvm::Value* gt(llvm::Value* x, llvm::Value* y) const {
      return e.integer_ ? e.b_.CreateICmpSGT(x, y) : e.b_.CreateFCmpOGT(x, y);
    }
    llvm::Value* le(llvm::Value* x, llvm::Value* y) const {
      return e.integer_ ? e.b_.CreateICmpSLE(x, y) : e.b_.CreateFCmpOLE(x, y);
    }
    llvm::Value* ge(llvm::Value* x, llvm::Value* y) const {
      return e.integer_ ? e.b_.CreateICmpSGE(x, y) : e.b_.CreateFCmpOGE(x, y);
    }
    llvm::Value* eq(llvm::Value* x, llvm::Value* y) const {
      return e.integer_ ? e.b_.CreateICmpEQ(x, y) : e.b_.CreateFCmpOEQ(x, y);
    }
    llvm::Value* ne(llvm::Value* x, llvm::Value* y) const {  // true for NaN
      return e.integer_ ? e.b_.CreateICmpNE(x, y) : e.b_.CreateFCmpUNE(x, y);
    }
    llvm::Value* select(llvm::Value* cond, llvm::Value* x, llvm::Value* y) const {
      return e.b_.CreateSelect(cond, x, y);
    }
    static bool isConstant(llvm::Value* v, double value) {
      if (auto* i = llvm::dyn_cast<llvm::ConstantInt>(v)) return static_cast<double>(i->getSExtValue()) == value;
      auto* k = llvm::dyn_cast<llvm::ConstantFP>(v);
      return k && k->isExactlyValue(value);
    }
    static bool isOne(llvm::Value* v) { return isConstant(v, 1.0); }
  };

  // The op's scalar rule (support/pointwise.def) on its operands' values.
  llvm::Value* op(const KernelSpec::Expr& e) {
    auto rule = opInfo(e.op).pointwiseOp();
    if (!rule) throw Error(fmt::format("LLVM codegen: {} is not pointwise", opInfo(e.op).name));
    if (integer_ && !fusion::integerOp(e.op))  // the float primitives have no int64 form
      throw Error(fmt::format("LLVM codegen: {} in an int64 group", opInfo(e.op).name));
    llvm::Value* x[3] = {nullptr, nullptr, nullptr};
    for (size_t i = 0; i < 3 && i < e.args.size(); ++i) x[i] = values_[e.args[i]];
    return applyPointwise(*rule, LlvmAlgebra{*this}, x[0], x[1], x[2]);
  }

  llvm::Value* libm(const char* base, llvm::Value* x) { return fusion::emitLibm(b_, m_, base, x); }
  llvm::Value* exp(llvm::Value* x) { return fusion::emitExp(b_, m_, x); }
  llvm::Value* tanh(llvm::Value* x) { return fusion::emitTanh(b_, m_, x); }

  const KernelSpec& spec_;
  llvm::LLVMContext& ctx_;
  llvm::Module& m_;
  llvm::IRBuilder<> b_;
  bool integer_;  // an int64 group
  llvm::Type* t_;
  llvm::Type* i64_;
  std::vector<llvm::Value*> values_;
};

}  // namespace

Result<std::string> emitCpuKernelIR(const KernelSpec& spec, const std::string& name) {
  llvm::LLVMContext ctx;
  llvm::Module m(name, ctx);
  prepareModuleForHost(m);
  try {
    Emitter(spec, ctx, m).emit(name);
  } catch (const Error& e) {
    return e;
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  m.print(os, nullptr);
  return os.str();
}

Result<CpuKernelCode> compileCpuKernel(const KernelSpec& spec, const std::string& name, const JitOptions& opts) {
  auto ctx = std::make_unique<llvm::LLVMContext>();
  auto m = std::make_unique<llvm::Module>(name, *ctx);
  prepareModuleForHost(*m, opts.contextOrCurrent());
  try {
    Emitter(spec, *ctx, *m).emit(name);
  } catch (const Error& e) {
    return e;
  }
  auto addr = jitCompile(std::move(ctx), std::move(m), name, opts);
  if (!addr) return addr.error();
  return CpuKernelCode{reinterpret_cast<CpuKernelFn>(addr.value().address), addr.value().module};
}

}  // namespace gj::legacy
