// The TE fuser's CUDA C printer (printer.h, CudaPrinter): a GPU loop nest as a kernel, or as a
// __device__ element function, with its shared memory, barriers and warp reductions.
#include "fusers/te/printer.h"

#include "fusers/cuda_math.h"
#include "fusers/te/loopnest.h"
#include "support/half_bits_text.h"
#include "support/philox_text.h"

#include <fmt/format.h>

#include <cmath>

namespace gj::te {

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
