#pragma once
// Math in LLVM IR shared by both fusers' CPU backends (internal; included only by backend .cpp files).
// float: Cephes' expf (range reduction by ln 2, a degree-6 polynomial, scaling by 2^n through the exponent
// bits), relative error about 1e-7 and vectorizable; NaN passes through, overflow gives inf, results
// below the normal range are 0. tanh and sigmoid are built on it. double: libm.
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

namespace gj::fusion {

llvm::Value* emitExp(llvm::IRBuilder<>& b, llvm::Module& m, llvm::Value* x);
llvm::Value* emitTanh(llvm::IRBuilder<>& b, llvm::Module& m, llvm::Value* x);
llvm::Value* emitSigmoid(llvm::IRBuilder<>& b, llvm::Module& m, llvm::Value* x);
/// A call to libm's `base` (float: basef).
llvm::Value* emitLibm(llvm::IRBuilder<>& b, llvm::Module& m, const char* base, llvm::Value* x);

}  // namespace gj::fusion
