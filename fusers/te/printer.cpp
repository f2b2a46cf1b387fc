#include "fusers/te/printer.h"

#include "fusers/cuda_math.h"
#include "fusers/te/loopnest.h"
#include "support/half_bits_text.h"
#include "support/philox_text.h"

#include <cmath>

#include <fmt/format.h>

namespace gj::te {

static const char* binarySymbol(BinaryOpKind op) {
  switch (op) {
    case BinaryOpKind::Add: return "+";
    case BinaryOpKind::Sub: return "-";
    case BinaryOpKind::Mul: return "*";
    case BinaryOpKind::Div: return "/";
    case BinaryOpKind::Mod: return "%";
    case BinaryOpKind::Min: return "min";
    case BinaryOpKind::Max: return "max";
    case BinaryOpKind::Pow: return "pow";
    case BinaryOpKind::Atan2: return "atan2";
    case BinaryOpKind::Fmod: return "fmod";
  }
  return "?";
}

static const char* compareSymbol(CompareOpKind op) {
  switch (op) {
    case CompareOpKind::LT: return "<";
    case CompareOpKind::LE: return "<=";
    case CompareOpKind::GT: return ">";
    case CompareOpKind::GE: return ">=";
    case CompareOpKind::EQ: return "==";
    case CompareOpKind::NE: return "!=";
  }
  return "?";
}

static const char* callName(CallKind k) {
  switch (k) {
    case CallKind::Exp: return "exp";
    case CallKind::Log: return "log";
    case CallKind::Tanh: return "tanh";
    case CallKind::Sigmoid: return "sigmoid";
    case CallKind::Sqrt: return "sqrt";
    case CallKind::Neg: return "neg";
    case CallKind::Erf: return "erf";
    case CallKind::Sin: return "sin";
    case CallKind::Cos: return "cos";
    case CallKind::Floor: return "floor";
    case CallKind::Ceil: return "ceil";
    case CallKind::Trunc: return "trunc";
    case CallKind::Round: return "round";
    case CallKind::Expm1: return "expm1";
    case CallKind::Log1p: return "log1p";
    case CallKind::Atan: return "atan";
    case CallKind::Asin: return "asin";
    case CallKind::Acos: return "acos";
    case CallKind::Sinh: return "sinh";
    case CallKind::Cosh: return "cosh";
    case CallKind::Erfc: return "erfc";
    case CallKind::Lgamma: return "lgamma";
    case CallKind::RoundHalf: return "round_f16";
    case CallKind::RoundBFloat16: return "round_bf16";
    case CallKind::WrapUInt8: return "wrap_u8";
    case CallKind::WrapInt8: return "wrap_i8";
    case CallKind::WrapInt16: return "wrap_i16";
    case CallKind::WrapInt32: return "wrap_i32";
  }
  return "?";
}

std::string Printer::str(const Stmt& s) {
  os_.str("");
  visit(s);
  return os_.str();
}

std::string Printer::str(const Expr& e) {
  os_.str("");
  visit(e);
  return os_.str();
}

void Printer::visit(const IntImm* op) { os_ << op->value; }
void Printer::visit(const FloatImm* op) {
  std::string s = fmt::format("{}", op->value);
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  os_ << s << (op->type == ScalarKind::Float32 ? "f" : "");
}
void Printer::visit(const Var* op) { os_ << op->name; }
void Printer::visit(const Binary* op) {
  if (op->op == BinaryOpKind::Min || op->op == BinaryOpKind::Max || isFloatFunction(op->op)) {
    os_ << binarySymbol(op->op) << "(";
    visit(op->a);
    os_ << ", ";
    visit(op->b);
    os_ << ")";
    return;
  }
  os_ << "(";
  visit(op->a);
  os_ << " " << binarySymbol(op->op) << " ";
  visit(op->b);
  os_ << ")";
}
void Printer::visit(const Compare* op) {
  os_ << "(";
  visit(op->a);
  os_ << " " << compareSymbol(op->op) << " ";
  visit(op->b);
  os_ << ")";
}
void Printer::visit(const Select* op) {
  os_ << "(";
  visit(op->cond);
  os_ << " ? ";
  visit(op->t);
  os_ << " : ";
  visit(op->f);
  os_ << ")";
}
void Printer::visit(const Call* op) {
  os_ << callName(op->fn) << "(";
  visit(op->arg);
  os_ << ")";
}
// `float(x)` in the canonical text; `((float)(x))` in C, where scalarKindName is the C type.
void Printer::visit(const Cast* op) {
  os_ << scalarKindName(op->type) << "(";
  visit(op->arg);
  os_ << ")";
}
std::string Printer::printed(const Expr& e) {
  std::ostringstream so_far;
  std::swap(so_far, os_);
  visit(e);
  std::swap(so_far, os_);
  return so_far.str();
}
void Printer::index(const Buf& buf, const std::vector<Expr>& indices) {
  os_ << buf->name << "[";
  for (size_t i = 0; i < indices.size(); ++i) {
    if (i) os_ << ", ";
    visit(indices[i]);
  }
  os_ << "]";
}
void Printer::visit(const Load* op) { index(op->buf, op->indices); }
void Printer::visit(const Philox* op) { philoxCall(op, fmt::format("philox_{}", scalarKindName(op->type)), ""); }
void Printer::philoxCall(const Philox* op, const std::string& fn, const char* streamSuffix) {
  os_ << fn << "(";
  visit(op->seed);
  os_ << ", ";
  visit(op->offset);
  os_ << ", " << op->stream << streamSuffix << ", ";
  visit(op->index);
  os_ << ")";
}
void Printer::visit(const ThreadReduce* op) {
  const char* scope = op->scope == ThreadScope::Block ? "block_" : op->scope == ThreadScope::Warp ? "warp_" : "column_";
  os_ << scope << (op->op == ReduceOpKind::Sum ? "sum" : "max") << "(";
  visit(op->value);
  os_ << ")";
}
void Printer::visit(const Reduce* op) {
  os_ << (op->op == ReduceOpKind::Sum ? "sum" : "max") << "(";
  visit(op->body);
  for (size_t i = 0; i < op->vars.size(); ++i) {
    os_ << ", ";
    visit(op->vars[i]);
    os_ << " < " << op->extents[i];
  }
  os_ << ")";
}
void Printer::visit(const Block* op) {
  for (const Stmt& s : op->stmts) visit(s);
}
std::string Printer::loopMarks(const LoopOptions& o) {
  std::string m;
  if (o.vectorize) m += " vectorize";
  if (o.parallel) m += " parallel";
  if (o.gpuBlock >= 0) m += fmt::format(" blockIdx.{}", "xyz"[o.gpuBlock]);
  if (o.gpuThread >= 0) m += fmt::format(" threadIdx.{}", "xyz"[o.gpuThread]);
  return m.empty() ? "" : " //" + m;
}
void Printer::visit(const For* op) {
  indent();
  os_ << "for (int64_t ";
  visit(op->var);
  os_ << " = ";
  visit(op->start);
  os_ << "; ";
  visit(op->var);
  os_ << " < ";
  visit(op->stop);
  os_ << "; ";
  visit(op->var);
  os_ << "++) {" << loopMarks(op->options) << "\n";
  ++depth_;
  visit(op->body);
  --depth_;
  indent();
  os_ << "}\n";
}
void Printer::visit(const Store* op) {
  indent();
  index(op->buf, op->indices);
  os_ << " = ";
  visit(op->value);
  os_ << ";\n";
}
void Printer::visit(const Allocate* op) {
  indent();
  os_ << "allocate " << op->buf->name << "[";
  for (size_t i = 0; i < op->buf->dims.size(); ++i) os_ << (i ? ", " : "") << op->buf->dims[i];
  os_ << "];\n";
}
void Printer::visit(const Free* op) {
  indent();
  os_ << "free " << op->buf->name << ";\n";
}
void Printer::visit(const GridSync*) {
  indent();
  os_ << "grid_sync;\n";
}
void Printer::visit(const Cond* op) {
  indent();
  os_ << "if ";
  visit(op->cond);
  os_ << " {\n";
  ++depth_;
  visit(op->thenStmt);
  --depth_;
  if (op->elseStmt) {
    indent();
    os_ << "} else {\n";
    ++depth_;
    visit(op->elseStmt);
    --depth_;
  }
  indent();
  os_ << "}\n";
}

std::string toString(const Stmt& s) { return Printer().str(s); }
std::string toString(const Expr& e) { return Printer().str(e); }
bool structurallyEqual(const Stmt& a, const Stmt& b) { return toString(a) == toString(b); }

// ---- C ----

void CPrinter::visit(const FloatImm* op) {
  // Non-finite constants by their bits: C has no literal for them, and NVRTC has no math.h macros.
  if (std::isfinite(op->value)) return Printer::visit(op);
  const bool f32 = op->type == ScalarKind::Float32;
  const char* bits = op->value != op->value ? (f32 ? "0x7fc00000" : "0x7ff8000000000000LL")
                     : op->value > 0        ? (f32 ? "0x7f800000" : "0x7ff0000000000000LL")
                                            : (f32 ? "0xff800000" : "0xfff0000000000000LL");
  os_ << (f32 ? "__int_as_float((int)" : "__longlong_as_double((long long)") << bits << "U)";
}
// Whether e reads a buffer: an Int expression that does is a tensor's value, whose sums, differences and
// products wrap as PyTorch's integers do; one that does not is an index, which never overflows.
static bool readsBuffer(const Expr& e) {
  struct Finder : Visitor {
    bool found = false;
    using Visitor::visit;
    void visit(const Load*) override { found = true; }
  } f;
  f.visit(e);
  return f.found;
}

// min and max as the interpreter's: NaN when either operand is (gjMin / gjMax, fusers/cuda_math.h).
void CPrinter::visit(const Binary* op) {
  const bool arithmetic = op->op == BinaryOpKind::Add || op->op == BinaryOpKind::Sub || op->op == BinaryOpKind::Mul;
  if (arithmetic && op->type == ScalarKind::Int && (readsBuffer(op->a) || readsBuffer(op->b))) {
    os_ << fusion::cudaWrapping(printed(op->a), binarySymbol(op->op), printed(op->b));
    return;
  }
  if (op->op == BinaryOpKind::Min || op->op == BinaryOpKind::Max) {
    usesMinMax_ = true;
    os_ << (op->op == BinaryOpKind::Min ? "gjMin(" : "gjMax(");
    visit(op->a);
    os_ << ", ";
    visit(op->b);
    os_ << ")";
    return;
  }
  if (isFloatFunction(op->op)) {
    os_ << binarySymbol(op->op) << (isFloat64(op->a) ? "(" : "f(");
    visit(op->a);
    os_ << ", ";
    visit(op->b);
    os_ << ")";
    return;
  }
  Printer::visit(op);
}
void CPrinter::visit(const Call* op) {
  const char* f = isFloat64(op->arg) ? "" : "f";
  const char* one = isFloat64(op->arg) ? "1.0" : "1.0f";
  switch (op->fn) {
    case CallKind::Sigmoid:
      os_ << "(" << one << " / (" << one << " + exp" << f << "(-(";
      visit(op->arg);
      os_ << "))))";
      return;
    case CallKind::Neg:  // an Int's wraps
      if (op->type == ScalarKind::Int) {
        os_ << fusion::cudaWrapping("0LL", "-", printed(op->arg));
        return;
      }
      os_ << "(-(";
      visit(op->arg);
      os_ << "))";
      return;
    case CallKind::Exp: os_ << "exp" << f; break;
    case CallKind::Log: os_ << "log" << f; break;
    case CallKind::Tanh: os_ << "tanh" << f; break;
    case CallKind::Sqrt: os_ << "sqrt" << f; break;
    case CallKind::Erf: os_ << "erf" << f; break;
    case CallKind::Sin: os_ << "sin" << f; break;
    case CallKind::Cos: os_ << "cos" << f; break;
    case CallKind::Floor: os_ << "floor" << f; break;
    case CallKind::Ceil: os_ << "ceil" << f; break;
    case CallKind::Trunc: os_ << "trunc" << f; break;
    case CallKind::Round: os_ << "rint" << f; break;  // halves to even
    case CallKind::Expm1: os_ << "expm1" << f; break;
    case CallKind::Log1p: os_ << "log1p" << f; break;
    case CallKind::Atan: os_ << "atan" << f; break;
    case CallKind::Asin: os_ << "asin" << f; break;
    case CallKind::Acos: os_ << "acos" << f; break;
    case CallKind::Sinh: os_ << "sinh" << f; break;
    case CallKind::Cosh: os_ << "cosh" << f; break;
    case CallKind::Erfc: os_ << "erfc" << f; break;
    case CallKind::Lgamma: os_ << "lgamma" << f; break;
    case CallKind::RoundHalf: case CallKind::RoundBFloat16: {  // to the 16 bits and back
      usesHalfBits_ = true;
      const DType t = *roundedDtype(op->fn);
      os_ << fusion::cudaWidenFn(t) << "(" << fusion::cudaNarrowFn(t) << "(";
      visit(op->arg);
      os_ << "))";
      return;
    }
    case CallKind::WrapUInt8: case CallKind::WrapInt8: case CallKind::WrapInt16: case CallKind::WrapInt32:
      os_ << "((long long)(" << fusion::cudaElementType(*roundedDtype(op->fn)) << ")(";  // C's conversions
      visit(op->arg);
      os_ << "))";
      return;
  }
  os_ << "(";
  visit(op->arg);
  os_ << ")";
}
void CPrinter::visit(const Philox* op) {
  usesPhilox_ = true;
  philoxCall(op, fmt::format("gjPhiloxUniform<{}>", scalarKindName(op->type)), "LL");
}
void CPrinter::visit(const Load* op) {
  if (!op->buf->storage) return Printer::visit(op);
  if (!isFloating(*op->buf->storage)) {  // a narrow integer, extended by C's conversion
    os_ << "((long long)";
    index(op->buf, op->indices);
    os_ << ")";
    return;
  }
  usesHalfBits_ = true;
  os_ << fusion::cudaWidenFn(*op->buf->storage) << "(";
  index(op->buf, op->indices);
  os_ << ")";
}
void CPrinter::visit(const Store* op) {
  if (!op->buf->storage) return Printer::visit(op);
  if (!isFloating(*op->buf->storage)) {  // a narrow integer, truncated by C's conversion
    indent();
    index(op->buf, op->indices);
    os_ << " = (" << fusion::cudaElementType(*op->buf->storage) << ")(";
    visit(op->value);
    os_ << ");\n";
    return;
  }
  usesHalfBits_ = true;
  indent();
  index(op->buf, op->indices);
  os_ << " = " << fusion::cudaNarrowFn(*op->buf->storage) << "(";
  visit(op->value);
  os_ << ");\n";
}
const char* CPrinter::cType(DType t) { return fusion::cudaElementType(t); }

void CPrinter::visit(const Cast* op) {
  os_ << "((" << cType(op->type) << ")(";
  visit(op->arg);
  os_ << "))";
}
void CPrinter::index(const Buf& buf, const std::vector<Expr>& indices) {
  // Row-major flat offset with constant strides.
  os_ << buf->name << "[";
  int64_t stride = 1;
  std::vector<std::pair<const Expr*, int64_t>> terms;
  for (int64_t d = static_cast<int64_t>(indices.size()) - 1; d >= 0; --d) {
    terms.push_back({&indices[d], stride});
    stride *= buf->dims[d];
  }
  if (terms.empty()) os_ << "0";
  for (size_t t = 0; t < terms.size(); ++t) {
    if (t) os_ << " + ";
    os_ << "(";
    visit(*terms[t].first);
    os_ << ") * " << terms[t].second << "LL";
  }
  os_ << "]";
}
void CPrinter::visit(const For* op) {
  indent();
  os_ << "for (long long ";
  visit(op->var);
  os_ << " = ";
  visit(op->start);
  os_ << "; ";
  visit(op->var);
  os_ << " < ";
  visit(op->stop);
  os_ << "; ";
  visit(op->var);
  os_ << "++) {\n";
  ++depth_;
  visit(op->body);
  --depth_;
  indent();
  os_ << "}\n";
}
void CPrinter::visit(const Allocate* op) {
  int64_t n = 1;
  for (int64_t d : op->buf->dims) n *= d;
  indent();
  os_ << cType(op->buf->type) << " " << op->buf->name << "[" << n << "];\n";
}
void CPrinter::visit(const Free*) {}

// ---- CUDA ----

void CudaPrinter::visit(const For* op) {
  const LoopOptions& o = op->options;
  if (o.gpuBlock < 0 && o.gpuThread < 0) {
    // A few constant trips unrolled, so that a row kept in registers (row_q indexing a thread's slots)
    // stays there rather than in local memory.
    const IntImm* start = op->start.as<IntImm>();
    const IntImm* stop = op->stop.as<IntImm>();
    if (start && stop && stop->value - start->value >= 2 && stop->value - start->value <= 16) {
      indent();
      os_ << "#pragma unroll\n";
    }
    return CPrinter::visit(op);
  }
  // One iteration per block (or thread): the index comes from the hardware, and a guard keeps it in range.
  const char* axis = "xyz" + (o.gpuBlock >= 0 ? o.gpuBlock : o.gpuThread);
  indent();
  os_ << "{\n";
  ++depth_;
  indent();
  os_ << "const long long ";
  visit(op->var);
  os_ << " = ";
  visit(op->start);
  os_ << " + (long long)" << (o.gpuBlock >= 0 ? "blockIdx." : "threadIdx.") << *axis << ";\n";
  indent();
  os_ << "if (";
  visit(op->var);
  os_ << " < ";
  visit(op->stop);
  os_ << ") {\n";
  ++depth_;
  visit(op->body);
  --depth_;
  indent();
  os_ << "}\n";
  --depth_;
  indent();
  os_ << "}\n";
}

void CudaPrinter::visit(const Expr& e) {
  for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it)
    if (auto found = it->names.find(e.get()); found != it->names.end()) {
      os_ << found->second;
      return;
    }
  CPrinter::visit(e);
}

bool CudaPrinter::readsWritten(const Expr& e) {
  if (auto it = readsWritten_.find(e.get()); it != readsWritten_.end()) return it->second;
  return readsWritten_[e.get()] = loadsAny(e, written_);
}

std::unordered_set<const ExprNode*> CudaPrinter::sharedIn(const std::vector<const Store*>& stores) {
  std::unordered_map<const ExprNode*, std::pair<int, Expr>> reached;  // times reached, the node's handle
  struct Count : Visitor {
    using Visitor::visit;
    std::unordered_map<const ExprNode*, std::pair<int, Expr>>* reached;
    void visit(const Expr& e) override {
      auto& [times, handle] = (*reached)[e.get()];
      if (times++ > 0) return;  // a node's children once
      handle = e;
      Visitor::visit(e);
    }
  } count;
  count.reached = &reached;
  for (const Store* st : stores) {
    for (const Expr& i : st->indices) count.visit(i);
    count.visit(st->value);
  }
  std::unordered_set<const ExprNode*> shared;
  for (const auto& [node, seen] : reached) {
    const NodeKind k = node->kind;
    if (seen.first < 2 || k == NodeKind::Var || k == NodeKind::IntImm || k == NodeKind::FloatImm ||
        k == NodeKind::Reduce || k == NodeKind::ThreadReduce || readsWritten(seen.second))
      continue;
    shared.insert(node);
  }
  return shared;
}

void CudaPrinter::declareShared(const Expr& e) {
  Scope& scope = scopes_.back();
  for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it)
    if (it->names.count(e.get())) return;
  struct Children : Visitor {  // e's direct operands
    using Visitor::visit;
    std::vector<Expr>* out;
    bool top = true;
    void visit(const Expr& x) override {
      if (!top) return out->push_back(x);
      top = false;
      Visitor::visit(x);
    }
  } children;
  std::vector<Expr> operands;
  children.out = &operands;
  children.visit(e);
  for (const Expr& x : operands) declareShared(x);
  if (!scope.shared.count(e.get())) return;
  std::string name = fmt::format("_cse{}", temporaries_++);
  indent();
  os_ << "const " << cType(e->type) << " " << name << " = ";
  CPrinter::visit(e);  // e itself by its text; its shared operands by their names
  os_ << ";\n";
  scope.names.emplace(e.get(), std::move(name));
}

void CudaPrinter::printStore(const Store* op) {
  for (const Expr& i : op->indices) declareShared(i);
  declareShared(op->value);
  CPrinter::visit(op);
}

void CudaPrinter::visit(const Block* op) {
  std::vector<const Store*> stores;
  for (const Stmt& st : op->stmts)
    if (const Store* store = st.as<Store>()) stores.push_back(store);
  scopes_.push_back({sharedIn(stores), {}});
  for (const Stmt& st : op->stmts) {
    if (const Store* store = st.as<Store>()) printStore(store);
    else Visitor::visit(st);
  }
  scopes_.pop_back();
}

// A store alone (a loop body of one statement): a list of its own.
void CudaPrinter::visit(const Store* op) {
  scopes_.push_back({sharedIn({op}), {}});
  printStore(op);
  scopes_.pop_back();
}

void CudaPrinter::visit(const ThreadReduce* op) {
  usesMinMax_ = true;  // GjMaxOf's gjMax, and the header that follows it
  const bool f64 = op->type == ScalarKind::Float64;
  const char* fold = op->op == ReduceOpKind::Sum ? "GjAdd>(" : "GjMaxOf>(";
  switch (op->scope) {
    case ThreadScope::Warp:
      usesWarpReduce_ = true;
      os_ << "gjWarpFold<" << fold;
      visit(op->value);
      os_ << ")";
      return;
    case ThreadScope::Block:
      (f64 ? usesBlockReduce64_ : usesBlockReduce32_) = true;
      os_ << "gjBlockFold<" << fold;
      visit(op->value);
      os_ << (f64 ? ", gj_red_f64)" : ", gj_red_f32)");
      return;
    case ThreadScope::Columns:
      (f64 ? usesColumnReduce64_ : usesColumnReduce32_) = true;
      os_ << "gjColumnFold<" << fold;
      visit(op->value);
      os_ << (f64 ? ", gj_cols_f64)" : ", gj_cols_f32)");
      return;
  }
}

void CudaPrinter::visit(const GridSync*) {
  usesGridSync_ = true;
  indent();
  os_ << "cooperative_groups::this_grid().sync();\n";
}

std::string CudaPrinter::kernel(const std::string& name, const std::vector<Buf>& inputs, const std::vector<Buf>& outputs,
                                const Stmt& body, int64_t residentBlocks) {
  return function(name, inputs, outputs, body, residentBlocks, "");
}

std::string CudaPrinter::elementFunction(const std::string& name, const std::vector<Buf>& inputs,
                                         const std::vector<Buf>& outputs, const std::string& index, const Stmt& body) {
  return function(name, inputs, outputs, body, 0, index);
}

std::string CudaPrinter::function(const std::string& name, const std::vector<Buf>& inputs, const std::vector<Buf>& outputs,
                                  const Stmt& body, int64_t residentBlocks, const std::string& index) {
  os_.str("");
  usesPhilox_ = false;
  usesHalfBits_ = false;
  usesMinMax_ = false;
  usesGridSync_ = false;
  usesBlockReduce32_ = usesBlockReduce64_ = usesColumnReduce32_ = usesColumnReduce64_ = usesWarpReduce_ = false;
  scopes_.clear();
  readsWritten_.clear();
  temporaries_ = 0;
  written_ = bufferUse(body).stored;
  const Stmt shared = shareSubexpressions(body);  // what scheduling copied, one node again
  bool first = index.empty();
  // An element function's pointers are plain: a persistent kernel hands it memory that the kernel itself
  // writes in other steps, which the read-only cache (a const __restrict__ load) must not serve.
  const char* pointer = first ? "* __restrict__ " : "* ";
  if (first) os_ << "// generated by graphjit's TE fuser\nextern \"C\" __global__ void " << name << "(";
  else os_ << "// generated by graphjit's TE fuser: one element\n__device__ __forceinline__ void " << name << "(long long " << index;
  for (const Buf& b : inputs) {
    os_ << (first ? "" : ", ") << "const " << cType(b) << pointer << b->name;
    first = false;
  }
  for (const Buf& b : outputs) {
    os_ << (first ? "" : ", ") << cType(b) << pointer << b->name;
    first = false;
  }
  os_ << ") {\n";
  const size_t bodyAt = os_.str().size();
  depth_ = 1;
  visit(shared);
  depth_ = 0;
  os_ << "}\n";
  std::string text = os_.str();
  // The blocks' reductions' shared scratch, one per element type used, at the top of the kernel.
  std::string scratch;
  if (usesBlockReduce32_) scratch += "  __shared__ float gj_red_f32[32];\n";
  if (usesBlockReduce64_) scratch += "  __shared__ double gj_red_f64[32];\n";
  const std::string cols = std::to_string(LoopNest::kGpuRowThreads);
  if (usesColumnReduce32_) scratch += "  __shared__ float gj_cols_f32[" + cols + "];\n";
  if (usesColumnReduce64_) scratch += "  __shared__ double gj_cols_f64[" + cols + "];\n";
  text.insert(bodyAt, scratch);
  if (usesGridSync_ && residentBlocks > 0) {
    const std::string global = "__global__ void ";
    text.insert(text.find(global) + global.size(),
                "__launch_bounds__(" + std::to_string(LoopNest::kGpuRowThreads) + ", " + std::to_string(residentBlocks) + ") ");
  }
  if (usesBlockReduce32_ || usesBlockReduce64_ || usesColumnReduce32_ || usesColumnReduce64_ || usesWarpReduce_)
    text = std::string(fusion::kCudaBlockReduceHeader) + text;
  if (usesMinMax_) text = std::string(fusion::kCudaMinMaxHeader) + text;
  if (usesHalfBits_) text = std::string(kHalfBitsHeader) + "\n" + text;
  if (usesGridSync_) text = "#include <cooperative_groups.h>\n" + text;
  return usesPhilox_ ? std::string(kPhiloxHeader) + "\n" + text : text;
}

}  // namespace gj::te
