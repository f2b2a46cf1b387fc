#include "fusers/llvm_math.h"

#include <llvm/IR/Intrinsics.h>

#include "support/philox.h"

#include <cmath>
#include <string>
#include <vector>

namespace gj::fusion {

static bool isDouble(llvm::Value* x) { return x->getType()->isDoubleTy(); }

llvm::Type* storageElementType(llvm::LLVMContext& ctx, DType t) {
  return llvm::Type::getIntNTy(ctx, static_cast<unsigned>(8 * dtypeSize(t)));
}

llvm::Value* emitWidenStorage(llvm::IRBuilder<>& b, DType t, llvm::Value* bits) {
  llvm::LLVMContext& ctx = b.getContext();
  if (!isFloating(t)) return t == DType::UInt8 ? b.CreateZExt(bits, b.getInt64Ty()) : b.CreateSExt(bits, b.getInt64Ty());
  if (t == DType::Float16) return b.CreateFPExt(b.CreateBitCast(bits, llvm::Type::getHalfTy(ctx)), b.getFloatTy());
  return b.CreateBitCast(b.CreateShl(b.CreateZExt(bits, b.getInt32Ty()), 16), b.getFloatTy());
}

llvm::Value* emitNarrowStorage(llvm::IRBuilder<>& b, DType t, llvm::Value* v) {
  llvm::LLVMContext& ctx = b.getContext();
  if (!isFloating(t)) return b.CreateTrunc(v, storageElementType(ctx, t));
  if (t == DType::Float16) return b.CreateBitCast(b.CreateFPTrunc(v, llvm::Type::getHalfTy(ctx)), b.getInt16Ty());
  auto k = [&](uint32_t c) { return b.getInt32(c); };
  llvm::Value* x = b.CreateBitCast(v, b.getInt32Ty());
  llvm::Value* high = b.CreateLShr(x, 16);
  llvm::Value* isNan = b.CreateICmpUGT(b.CreateAnd(x, k(0x7fffffffu)), k(0x7f800000u));
  llvm::Value* rounded = b.CreateLShr(b.CreateAdd(b.CreateAdd(x, k(0x7fffu)), b.CreateAnd(high, k(1))), 16);
  return b.CreateTrunc(b.CreateSelect(isNan, b.CreateOr(high, k(0x40u)), rounded), b.getInt16Ty());
}

llvm::Value* emitLibm(llvm::IRBuilder<>& b, llvm::Module& m, const char* base, llvm::Value* x) {
  std::string fn = isDouble(x) ? base : std::string(base) + "f";
  llvm::Type* t = x->getType();
  llvm::FunctionCallee callee = m.getOrInsertFunction(fn, llvm::FunctionType::get(t, {t}, false));
  return b.CreateCall(callee, {x});
}

llvm::Value* emitLibm2(llvm::IRBuilder<>& b, llvm::Module& m, const char* base, llvm::Value* x, llvm::Value* y) {
  std::string fn = isDouble(x) ? base : std::string(base) + "f";
  llvm::Type* t = x->getType();
  llvm::FunctionCallee callee = m.getOrInsertFunction(fn, llvm::FunctionType::get(t, {t, t}, false));
  return b.CreateCall(callee, {x, y});
}

llvm::Value* emitExp(llvm::IRBuilder<>& b, llvm::Module& m, llvm::Value* x) {
  if (isDouble(x)) return emitLibm(b, m, "exp", x);
  llvm::Type* t = x->getType();
  auto cf = [&](double v) { return llvm::ConstantFP::get(t, v); };
  llvm::Value* hi = cf(88.3762626647949);
  llvm::Value* lo = cf(-87.3365478515625);
  llvm::Value* xc = b.CreateSelect(b.CreateFCmpOGT(x, hi), hi, x);
  xc = b.CreateSelect(b.CreateFCmpOLT(xc, lo), lo, xc);
  llvm::Value* n =
      b.CreateUnaryIntrinsic(llvm::Intrinsic::floor, b.CreateFAdd(b.CreateFMul(xc, cf(1.44269504088896341)), cf(0.5)));
  llvm::Value* r = b.CreateFSub(xc, b.CreateFMul(n, cf(0.693359375)));
  r = b.CreateFSub(r, b.CreateFMul(n, cf(-2.12194440e-4)));
  llvm::Value* p = cf(1.9875691500e-4);
  for (double c : {1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1})
    p = b.CreateFAdd(b.CreateFMul(p, r), cf(c));
  p = b.CreateFAdd(b.CreateFAdd(b.CreateFMul(p, b.CreateFMul(r, r)), r), cf(1.0));
  llvm::Type* i32 = b.getInt32Ty();
  llvm::Value* bits = b.CreateShl(b.CreateAdd(b.CreateFPToSI(n, i32), llvm::ConstantInt::get(i32, 127)), 23);
  llvm::Value* scaled = b.CreateFMul(p, b.CreateBitCast(bits, t));
  scaled = b.CreateSelect(b.CreateFCmpOGT(x, cf(88.72283935546875)), cf(INFINITY), scaled);
  scaled = b.CreateSelect(b.CreateFCmpOLT(x, lo), cf(0.0), scaled);
  return b.CreateSelect(b.CreateFCmpUNO(x, x), x, scaled);
}

// tanh(x) = sign(x) (1 - t) / (1 + t) with t = exp(-2|x|).
llvm::Value* emitTanh(llvm::IRBuilder<>& b, llvm::Module& m, llvm::Value* x) {
  if (isDouble(x)) return emitLibm(b, m, "tanh", x);
  llvm::Type* t = x->getType();
  llvm::Value* one = llvm::ConstantFP::get(t, 1.0);
  llvm::Value* ax = b.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
  llvm::Value* e = emitExp(b, m, b.CreateFMul(ax, llvm::ConstantFP::get(t, -2.0)));
  llvm::Value* r = b.CreateFDiv(b.CreateFSub(one, e), b.CreateFAdd(one, e));
  return b.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, r, x);
}

llvm::Value* emitSigmoid(llvm::IRBuilder<>& b, llvm::Module& m, llvm::Value* x) {
  llvm::Value* one = llvm::ConstantFP::get(x->getType(), 1.0);
  return b.CreateFDiv(one, b.CreateFAdd(one, emitExp(b, m, b.CreateFNeg(x))));
}

namespace {

// support/philox.h's word algebra over i32 LLVM values.
struct LlvmWords {
  llvm::IRBuilder<>& b;
  llvm::Value* k(unsigned v) const { return b.getInt32(v); }
  llvm::Value* add(llvm::Value* x, llvm::Value* y) const { return b.CreateAdd(x, y); }
  llvm::Value* bitxor(llvm::Value* x, llvm::Value* y) const { return b.CreateXor(x, y); }
  void mulhilo(unsigned a, llvm::Value* x, llvm::Value*& hi, llvm::Value*& lo) const {
    llvm::Value* p = b.CreateMul(b.CreateZExt(x, b.getInt64Ty()), b.getInt64(a));
    hi = b.CreateTrunc(b.CreateLShr(p, 32), b.getInt32Ty());
    lo = b.CreateTrunc(p, b.getInt32Ty());
  }
};

}  // namespace

llvm::Value* emitPhiloxUniform(llvm::IRBuilder<>& b, llvm::Value* seed, llvm::Value* offset, llvm::Value* stream,
                               llvm::Value* index, llvm::Type* t) {
  auto word = [&](llvm::Value* v, unsigned shift) {
    return b.CreateTrunc(shift ? b.CreateLShr(v, shift) : v, b.getInt32Ty());
  };
  llvm::Value* ctr[4] = {word(index, 2), word(stream, 0), word(offset, 0), word(offset, 32)};
  llvm::Value* key[2] = {word(seed, 0), word(seed, 32)};
  gjPhilox4x32_10(LlvmWords{b}, ctr, key);
  llvm::Value* lane = b.CreateAnd(index, b.getInt64(3));
  llvm::Value* bits = ctr[3];
  for (int w = 2; w >= 0; --w) bits = b.CreateSelect(b.CreateICmpEQ(lane, b.getInt64(w)), ctr[w], bits);
  llvm::Value* u = b.CreateUIToFP(b.CreateLShr(bits, 8), t);
  return b.CreateFMul(u, llvm::ConstantFP::get(t, 1.0 / 16777216.0));
}

llvm::Function* createKernelBody(llvm::Module& m, const std::string& name, size_t buffers) {
  llvm::LLVMContext& ctx = m.getContext();
  auto* ptr = llvm::PointerType::getUnqual(ctx);
  auto* i64 = llvm::Type::getInt64Ty(ctx);
  std::vector<llvm::Type*> params(buffers, ptr);
  params.push_back(i64);
  params.push_back(i64);
  auto* ty = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), params, false);
  auto* body = llvm::Function::Create(ty, llvm::Function::InternalLinkage, name + "_body", m);
  body->addFnAttr(llvm::Attribute::AlwaysInline);
  for (size_t i = 0; i < buffers; ++i) body->addParamAttr(static_cast<unsigned>(i), llvm::Attribute::NoAlias);
  return body;
}

void emitKernelEntry(llvm::Module& m, const std::string& name, llvm::Function* body, size_t buffers) {
  llvm::LLVMContext& ctx = m.getContext();
  auto* ptr = llvm::PointerType::getUnqual(ctx);
  auto* i64 = llvm::Type::getInt64Ty(ctx);
  auto* ty = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptr, i64, i64}, false);
  auto* entry = llvm::Function::Create(ty, llvm::Function::ExternalLinkage, name, m);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", entry));
  std::vector<llvm::Value*> args;
  for (size_t i = 0; i < buffers; ++i) args.push_back(b.CreateLoad(ptr, b.CreateConstGEP1_64(ptr, entry->getArg(0), i)));
  args.push_back(entry->getArg(1));
  args.push_back(entry->getArg(2));
  b.CreateCall(body, args);
  b.CreateRetVoid();
}

}  // namespace gj::fusion
