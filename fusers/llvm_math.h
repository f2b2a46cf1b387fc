#pragma once
// Math in LLVM IR shared by both fusers' CPU backends (internal; included only by backend .cpp files).
// float: Cephes' expf (range reduction by ln 2, a degree-6 polynomial, scaling by 2^n through the exponent
// bits), relative error about 1e-7 and vectorizable; NaN passes through, overflow gives inf, results
// below the normal range are 0. tanh and sigmoid are built on it. double: libm.
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include "support/dtype.h"

namespace gj::fusion {

llvm::Value* emitExp(llvm::IRBuilder<>& b, llvm::Module& m, llvm::Value* x);
llvm::Value* emitTanh(llvm::IRBuilder<>& b, llvm::Module& m, llvm::Value* x);
llvm::Value* emitSigmoid(llvm::IRBuilder<>& b, llvm::Module& m, llvm::Value* x);
/// support/philox.h's uniform number in [0, 1) of type t for element `index` of the stream (seed, offset, stream),
/// all i64: the rounds of gjPhilox4x32_10 over 32-bit LLVM words (vectorizable: no calls, no branches).
llvm::Value* emitPhiloxUniform(llvm::IRBuilder<>& b, llvm::Value* seed, llvm::Value* offset, llvm::Value* stream,
                               llvm::Value* index, llvm::Type* t);
/// A storage dtype's element in memory: float16 and bfloat16 as an i16, uint8 to int32 as integers of their
/// width.
llvm::Type* storageElementType(llvm::LLVMContext& ctx, DType t);
/// A storage element widened to the value a kernel computes with, and a value narrowed to one. A float16 or
/// bfloat16 value's float from its 16 bits, and a float's 16 bits rounded to nearest even, as support/half.h
/// converts on the host: float16 by LLVM's half (F16C's conversions), bfloat16 by integer arithmetic on the
/// float's bits, a NaN kept quiet. A narrow integer extended to an i64 (uint8 by zeros, the others by the
/// sign), and an i64 truncated to its width (wrapping, as C's conversion).
llvm::Value* emitWidenStorage(llvm::IRBuilder<>& b, DType t, llvm::Value* bits);
llvm::Value* emitNarrowStorage(llvm::IRBuilder<>& b, DType t, llvm::Value* v);
/// A call to libm's `base` (float: basef).
llvm::Value* emitLibm(llvm::IRBuilder<>& b, llvm::Module& m, const char* base, llvm::Value* x);
/// The same for a function of two operands of one type (atan2).
llvm::Value* emitLibm2(llvm::IRBuilder<>& b, llvm::Module& m, const char* base, llvm::Value* x, llvm::Value* y);

// The CPU kernel ABI both fusers compile to: NAME(ptr args, i64 begin, i64 end), where args holds one
// pointer per buffer (inputs, then outputs) and [begin, end) is the share of the outer loop this call
// runs. The code lives in NAME_body(ptr noalias buf0, ..., i64 begin, i64 end), internal and always
// inlined into NAME, so the noalias facts become alias scopes: every buffer is its own allocation
// (outputs are made fresh for each call, inputs are only read), and without them LLVM guards each
// vectorized loop with run-time overlap checks and keeps a scalar copy of it.

/// Declares NAME_body with `buffers` noalias pointer parameters and then begin, end (its last two).
llvm::Function* createKernelBody(llvm::Module& m, const std::string& name, size_t buffers);
/// Defines NAME, which unpacks the argument array and calls `body`.
void emitKernelEntry(llvm::Module& m, const std::string& name, llvm::Function* body, size_t buffers);

}  // namespace gj::fusion
