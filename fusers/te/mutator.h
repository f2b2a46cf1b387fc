#pragma once
// The TE visitor and mutator. The mutator rebuilds a node only when a child changed, and returns the
// input handle otherwise (STYLE.md, rule 3).
#include "fusers/te/ir.h"

#include <unordered_map>
#include <unordered_set>

namespace gj::te {

class Visitor {
 public:
  virtual ~Visitor() = default;
  /// Dispatches on e's kind. Virtual so that a visitor can act on every expression before (or instead of)
  /// its kind's visit: the CUDA printer prints a shared subexpression by the name it gave it.
  virtual void visit(const Expr& e);
  void visit(const Stmt& s);
#define TE_EXPR(K) virtual void visit(const K* op);
#define TE_STMT(K) virtual void visit(const K* op);
#include "fusers/te/nodes.def"
#undef TE_EXPR
#undef TE_STMT
};

class Mutator {
 public:
  virtual ~Mutator() = default;
  Expr mutate(const Expr& e);
  Stmt mutate(const Stmt& s);

 protected:
#define TE_EXPR(K) virtual Expr mutate(const K* op, const Expr& self);
#define TE_STMT(K) virtual Stmt mutate(const K* op, const Stmt& self);
#include "fusers/te/nodes.def"
#undef TE_EXPR
#undef TE_STMT
};

/// The buffers a statement stores into and loads from, and whether it holds a loop.
struct BufferUse {
  std::unordered_set<const BufNode*> stored, loaded, allocated;
  bool hasLoop = false;
  /// Buffers both stored and loaded (temporaries, accumulators).
  std::unordered_set<const BufNode*> storedAndLoaded() const;
};
BufferUse bufferUse(const Stmt& s);
/// Whether e loads any of `bufs` (the backends ask it of a shared subexpression: one that reads a buffer
/// the nest also stores may change between two uses, so it is computed again at each).
bool loadsAny(const Expr& e, const std::unordered_set<const BufNode*>& bufs);

/// s with structurally equal subexpressions as one node (same kind, fields and operands; Vars and
/// Reduces by identity): the expression DAG the lowering meant, after schedules that rebuilt a shared node
/// once for each of its readers. A printer that names shared nodes (CudaPrinter) then finds them all.
Stmt shareSubexpressions(const Stmt& s);

/// Replaces Vars (by node identity) with expressions.
Expr substitute(const Expr& e, const std::unordered_map<const ExprNode*, Expr>& map);
Stmt substitute(const Stmt& s, const std::unordered_map<const ExprNode*, Expr>& map);

}  // namespace gj::te
