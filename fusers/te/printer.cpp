// The TE IR as text (Printer) and as C (CPrinter); the CUDA printer is cuda_printer.cpp.
#include "fusers/te/printer.h"

#include "fusers/cuda_math.h"
#include "fusers/te/loopnest.h"

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

}  // namespace gj::te
