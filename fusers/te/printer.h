#pragma once
// Printers of TE IR (STYLE.md, rule 6): Printer writes the canonical text used in tests and dumps;
// CPrinter writes valid C (flat indexing, declarations); CudaPrinter overrides only what differs
// (bound loops become blockIdx/threadIdx, the kernel signature).
#include "fusers/te/mutator.h"

#include <sstream>
#include <string>

namespace gj::te {

class Printer : public Visitor {
 public:
  std::string str(const Stmt& s);
  std::string str(const Expr& e);

 protected:
  using Visitor::visit;
  void visit(const IntImm* op) override;
  void visit(const FloatImm* op) override;
  void visit(const Var* op) override;
  void visit(const Binary* op) override;
  void visit(const Compare* op) override;
  void visit(const Select* op) override;
  void visit(const Call* op) override;
  void visit(const Cast* op) override;
  void visit(const Load* op) override;
  void visit(const Philox* op) override;
  void visit(const Reduce* op) override;
  void visit(const ThreadReduce* op) override;
  void visit(const Block* op) override;
  void visit(const For* op) override;
  void visit(const Store* op) override;
  void visit(const Allocate* op) override;
  void visit(const Free* op) override;
  void visit(const Cond* op) override;
  void visit(const GridSync* op) override;

  virtual void index(const Buf& buf, const std::vector<Expr>& indices);  // buf[i, j]
  std::string printed(const Expr& e);  // e's text as this printer writes it, apart from the text so far
  void philoxCall(const Philox* op, const std::string& fn, const char* streamSuffix);  // fn(seed, offset, stream, index)
  virtual std::string loopMarks(const LoopOptions& o);                     // " // vectorize"
  void indent() { os_ << std::string(2 * depth_, ' '); }

  std::ostringstream os_;
  int depth_ = 0;
};

std::string toString(const Stmt& s);
std::string toString(const Expr& e);
/// Structural equality: same canonical text (variables by name).
bool structurallyEqual(const Stmt& a, const Stmt& b);

/// C: `buf[flat offset]`, typed declarations, libm calls.
class CPrinter : public Printer {
 protected:
  using Printer::visit;
  void visit(const FloatImm* op) override;
  void visit(const Call* op) override;
  void visit(const Cast* op) override;
  void visit(const For* op) override;
  void visit(const Allocate* op) override;
  void visit(const Free* op) override;
  void visit(const Binary* op) override;
  /// support/philox.h's gjPhiloxUniform, whose text the kernel then starts with (usesPhilox_).
  void visit(const Philox* op) override;
  void index(const Buf& buf, const std::vector<Expr>& indices) override;
  /// A float16 or bfloat16 buffer's 16 bits converted by support/half_bits.h's functions, whose text the
  /// kernel then starts with (usesHalfBits_).
  void visit(const Load* op) override;
  void visit(const Store* op) override;
  std::string loopMarks(const LoopOptions&) override { return ""; }
  bool isFloat64(const Expr& e) const { return e->type == ScalarKind::Float64; }
  /// The C type of a buffer element (Int is int64: long long).
  static const char* cType(ScalarKind k) { return k == ScalarKind::Int ? "long long" : scalarKindName(k); }
  /// A buffer's C element type: a storage dtype's (float16 and bfloat16 as their 16 bits).
  static const char* cType(const Buf& b) { return cType(bufDType(*b)); }
  static const char* cType(DType t);
  bool usesPhilox_ = false;
  bool usesHalfBits_ = false;
  bool usesMinMax_ = false;  ///< the kernel calls gjMin / gjMax, whose text it then starts with
};

/// CUDA C: a __global__ kernel over the given buffers; loops bound to blocks and threads become indices.
/// A subexpression the stores of one statement list share (one node reached twice: the LSTM cell's cy
/// inside hy) is computed once, into a `const` temporary declared before the first store that reads it,
/// as the LLVM backend computes it once per loop body. Expressions that load a buffer the kernel also
/// stores are printed where they are read, since the buffer may change in between.
class CudaPrinter final : public CPrinter {
 public:
  /// The kernel's CUDA source. A kernel with a grid barrier (a cooperative launch: every block resident at
  /// once) declares `residentBlocks` blocks a multiprocessor in __launch_bounds__, so that ptxas keeps its
  /// registers low enough for them (0: no bound).
  std::string kernel(const std::string& name, const std::vector<Buf>& inputs, const std::vector<Buf>& outputs,
                     const Stmt& body, int64_t residentBlocks = 0);
  /// `body` (no loops, barriers or temporaries of its own) as __device__ void NAME(long long INDEX, inputs...,
  /// outputs...): one element of a nest flattened over the loop variable `index` (Fuser::emitElementFunction).
  std::string elementFunction(const std::string& name, const std::vector<Buf>& inputs, const std::vector<Buf>& outputs,
                              const std::string& index, const Stmt& body);

 protected:
  using CPrinter::visit;
  void visit(const Expr& e) override;
  void visit(const For* op) override;
  void visit(const Block* op) override;
  void visit(const Store* op) override;
  void visit(const ThreadReduce* op) override;  // gjBlockFold over the kernel's shared scratch
  void visit(const GridSync* op) override;      // cooperative_groups' grid barrier

 private:
  // The subexpressions of `stores` worth a temporary: reached twice or more (a node's children counted
  // once however often the node is reached), neither a leaf nor a reader of a written buffer.
  std::unordered_set<const ExprNode*> sharedIn(const std::vector<const Store*>& stores);
  bool readsWritten(const Expr& e);
  // Declares, children first, the temporaries of the current list that `e` reaches and that are not
  // declared yet.
  void declareShared(const Expr& e);
  void printStore(const Store* op);  // its temporaries, then the store
  // kernel() and elementFunction(): a kernel when `index` is empty, else a device function of element `index`.
  std::string function(const std::string& name, const std::vector<Buf>& inputs, const std::vector<Buf>& outputs,
                       const Stmt& body, int64_t residentBlocks, const std::string& index);

  struct Scope {
    std::unordered_set<const ExprNode*> shared;
    std::unordered_map<const ExprNode*, std::string> names;
  };
  std::vector<Scope> scopes_;
  std::unordered_set<const BufNode*> written_;
  std::unordered_map<const ExprNode*, bool> readsWritten_;
  int temporaries_ = 0;
  bool usesBlockReduce32_ = false, usesBlockReduce64_ = false;  ///< the kernel calls gjBlockFold
  bool usesColumnReduce32_ = false, usesColumnReduce64_ = false;  ///< and gjColumnFold
  bool usesWarpReduce_ = false;                                   ///< and gjWarpFold
  bool usesGridSync_ = false;  ///< the kernel includes cooperative_groups.h
};

}  // namespace gj::te
