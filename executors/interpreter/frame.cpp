// The interpreter's frame (executors/interpreter/frame.h): blocks run instruction by instruction, each
// node given to its op's kernel, with the storage dtypes widened around the kernels that compute.
#include "executors/interpreter/frame.h"

#include "executors/interpreter/kernels.h"
#include "passes/shape_propagation.h"
#include "passes/util.h"

namespace gj::interp {

namespace {

bool hasEdge(const IValue& v) {
  if (v.isTensor()) return v.toTensor().gradEdge() != nullptr;
  if (v.isTensorList())
    for (const Tensor& t : v.toTensorList())
      if (t.gradEdge()) return true;
  return false;
}

// A cast to an integer or bool dtype: its result takes no gradient, so a value requiring one may reach it
// outside a prim::DifferentiableGraph (createAutodiffSubgraphs lets it).
bool castsToNonFloating(OpKind kind, const Operands& in) {
  if (kind == OpKind::ToDType && in[1].isInt()) {
    const std::optional<DType> d = dtypeFromCode(in[1].toInt());
    return d && !isFloating(*d);
  }
  if (kind == OpKind::TypeAs && in[1].isTensor()) return !isFloating(in[1].toTensor().dtype());
  return false;
}

// ---- storage dtypes (support/dtype.h) ----

// Whether kind computes on its tensors' values, so that a storage dtype among them is widened first: not
// for views, casts, structure or ops that read only sizes and dtypes, which take every dtype as it is.
bool computesInWiderDType(OpKind kind) {
  const OpInfo& info = opInfo(kind);
  if (info.group == OpGroupKind::View || info.group == OpGroupKind::Control) return false;
  if (info.plumbing() || info.readsOnlyMetadata()) return false;
  return kind != OpKind::ToDType && kind != OpKind::TypeAs && kind != OpKind::CastOnDevice;
}

bool meetsStorageDType(const Operands& in) {
  for (const IValue& v : in) {
    if (v.isTensor() && v.toTensor().defined() && isStorageOnly(v.toTensor().dtype())) return true;
    if (v.isTensorList())
      for (const Tensor& t : v.toTensorList())
        if (t.defined() && isStorageOnly(t.dtype())) return true;
  }
  return false;
}

// A number rounded to the dtype it meets a tensor in, as PyTorch converts it before computing: 300
// beside int8 is 44, 0.1 beside float16 is 0.0999755859375. Of the number's kind but for a float16 or
// bfloat16 one, which becomes the float it rounds to.
IValue numberIn(const IValue& v, DType t) {
  const double x = Tensor::scalar(v.toDouble("a number operand"), t).item();
  if (isFloating(t)) return IValue(x);
  return v.isBool() ? IValue(x != 0) : IValue(static_cast<int64_t>(x));
}

Type runtimeType(const IValue& v) {
  if (v.isTensor() && v.toTensor().defined()) {
    const Tensor& t = v.toTensor();
    return Type::tensor(t.dtype(), t.sizes(), t.device());
  }
  if (v.isInt()) return Type::of(TypeKind::Int);
  if (v.isDouble()) return Type::of(TypeKind::Float);
  if (v.isBool()) return Type::of(TypeKind::Bool);
  if (v.isIntList()) return Type::of(TypeKind::IntList);
  if (v.isTensorList()) return Type::of(TypeKind::TensorList);
  return v.isTensor() ? Type::tensor() : Type::of(TypeKind::None);
}

}  // namespace

Frame::Frame(const Graph& g, const GradientTable* gradients, const KernelTable* kernels, RunPlanCache* plans,
             Tape* tape, RunObserver* observer, std::shared_ptr<const void> keepAlive, DeviceKind device)
    : plan_(plans ? &plans->impl().plan(g) : &ownPlan_.emplace(makeGraphPlan(g))), env_(plan_->numSlots),
      gradients_(gradients), kernels_(kernels), plans_(plans), tape_(tape), observer_(observer),
      keepAlive_(std::move(keepAlive)), device_(device) {}

void Frame::runBlock(const Block* b) {
  const BlockPlan& bp = plan_->blocks.at(b);
  const Instr* outer = cur_;  // a Loop or If running this block resumes with its own instruction
  for (const Instr& ins : bp.instrs) {
    cur_ = &ins;
    try {
      runNode(ins.node);
    } catch (const Error& e) {
      if (!e.where().empty()) throw;
      throw Error(e.message(), ins.node->describe(), e.hint());
    }
    for (uint32_t k = 0; k < ins.numDrops; ++k) {
      env_[ins.drops[k]] = IValue();
      if (!packed_.empty()) packed_.erase(ins.drops[k]);
    }
  }
  cur_ = outer;
}

void Frame::runNode(const Node* n) {
  const OpKind kind = cur_->kind;
  const Operands in(env_.data(), *cur_);
  if (computesInWiderDType(kind) && meetsStorageDType(in)) return runWidened(n, in);
  runOp(n, in);
}

void Frame::runOp(const Node* n, const Operands& in) {
  const OpKind kind = cur_->kind;
  if (tape_ && !passesNoGradient(kind) && !castsToNonFloating(kind, in))
    for (size_t i = 0; i < in.size(); ++i)
      USER_CHECK(!hasEdge(in[i]),
                 "input {} of {} requires grad, but the op runs outside a prim::DifferentiableGraph, so its gradient "
                 "would be lost (run create-autodiff-subgraphs after requires-grad)",
                 i, in.op());
  cur_->kernel(*this, n, in);
}

// An op that meets a storage dtype: its tensors in their compute dtypes (float16 in float32, int8 in int64,
// ...), numbers rounded to the dtype they promote to, then each result stored in the dtype the op's type
// rule gives (shape propagation's, the one the fusers and the legacy pipeline read): an int8 sum is int64,
// int8 + int8 int8 again, wrapped, and float16 / float16 float16, rounded once.
void Frame::runWidened(const Node* n, const Operands& in) {
  std::vector<Type> types;
  std::vector<std::vector<Type>> elements(in.size());
  const bool needsGradient = tape_ && !passesNoGradient(cur_->kind);
  for (size_t i = 0; i < in.size(); ++i) {
    USER_CHECK(!needsGradient || !hasEdge(in[i]),
               "{}: gradients through float16, bfloat16 or narrow integer tensors are not supported yet; hint: "
               "compute in float32 (x.float()) where a gradient is needed",
               in.op());
    types.push_back(runtimeType(in[i]));
    if (in[i].isTensorList())
      for (const Tensor& t : in[i].toTensorList()) elements[i].push_back(runtimeType(IValue(t)));
  }
  std::optional<DType> promoted;
  const std::vector<Type> results = outputTypesFor(n, types, elements, &promoted);
  const bool roundNumbers = n->info().pointwiseOp() && promoted && isStorageOnly(*promoted);
  auto widen = [](const Tensor& t) { return t.defined() ? t.to(computeDType(t.dtype())) : t; };
  std::vector<IValue> wide;
  wide.reserve(in.size());
  for (const IValue& v : in) {
    if (v.isTensor()) {
      wide.emplace_back(widen(v.toTensor()));
    } else if (v.isTensorList()) {
      TensorList xs;
      for (const Tensor& t : v.toTensorList()) xs.push_back(widen(t));
      wide.emplace_back(std::move(xs));
    } else if (roundNumbers && (v.isInt() || v.isDouble() || v.isBool())) {
      wide.push_back(numberIn(v, *promoted));
    } else {
      wide.push_back(v);
    }
  }
  std::vector<uint32_t> slots(wide.size());
  for (uint32_t i = 0; i < slots.size(); ++i) slots[i] = i;
  Instr widened = *cur_;
  widened.ins = slots.data();
  widened.numIns = static_cast<uint32_t>(slots.size());
  widened.shared = false;  // its operands are this call's copies: nothing to pack once a run
  const Instr* outer = cur_;
  cur_ = &widened;
  runOp(n, Operands(wide.data(), widened));
  cur_ = outer;
  for (size_t k = 0; k < n->outputs().size(); ++k) {
    IValue& r = at(n->output(k));
    if (r.isTensor() && r.toTensor().defined() && results[k].dtype && r.toTensor().dtype() != *results[k].dtype)
      r = r.toTensor().to(*results[k].dtype);
  }
}

}  // namespace gj::interp
