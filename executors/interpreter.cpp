#include "executors/interpreter.h"

#include "ir/printer.h"
#include "passes/contiguous_operands.h"
#include "passes/shape_propagation.h"
#include "passes/util.h"
#include "runtime/ops/ops.h"
#include "runtime/gemm.h"

#include <algorithm>
#include <cassert>
#include <iterator>
#include <limits>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <unordered_set>

namespace gj {

namespace {

// checkInputType against a declared type; `name` spells the input for a message, called only when the
// check fails (a backward graph takes hundreds of inputs on every call).
template <typename Name>
void checkType(const Type& t, const IValue& v, Name name) {
  switch (t.kind) {
    case TypeKind::Tensor: {
      const Tensor& x = v.isTensor() ? v.toTensor() : v.toTensor(name().c_str());
      USER_CHECK(x.defined(), "input {}: undefined tensor", name());
      USER_CHECK(!t.dtype || *t.dtype == x.dtype(), "input {}: expected dtype {}, got {}", name(),
                 dtypeName(*t.dtype), dtypeName(x.dtype()));
      if (!t.sizes) return;
      bool ok = static_cast<int64_t>(t.sizes->size()) == x.dim();
      for (size_t d = 0; ok && d < t.sizes->size(); ++d)
        ok = (*t.sizes)[d] == kUnknownDim || (*t.sizes)[d] == x.size(static_cast<int64_t>(d));
      USER_CHECK(ok, "input {}: expected shape {} ({}), got {}", name(), t.str(), name(), shapeStr(x.sizes()));
      return;
    }
    case TypeKind::Int: if (!v.isInt()) (void)v.toInt(name().c_str()); return;
    case TypeKind::Float: if (!v.isDouble()) (void)v.toDouble(name().c_str()); return;
    case TypeKind::Bool: if (!v.isBool()) (void)v.toBool(name().c_str()); return;
    case TypeKind::IntList: if (!v.isIntList()) (void)v.toIntList(name().c_str()); return;
    case TypeKind::TensorList: if (!v.isTensorList()) (void)v.toTensorList(name().c_str()); return;
    case TypeKind::None: USER_CHECK(v.isNone(), "input {}: expected None, got {}", name(), v.describe()); return;
    case TypeKind::FloatList: case TypeKind::BoolList: case TypeKind::Tuple: case TypeKind::Optional:
    case TypeKind::Str: case TypeKind::Device: case TypeKind::Function: case TypeKind::Class:
      IR_CHECK(false) << "input " << name() << " of type " << t.str() << " reached the interpreter (requireLowered)";
      return;
  }
}

}  // namespace

void checkInputType(const Value* input, const IValue& v) {
  checkType(input->type(), v, [input] { return "%" + input->name(); });
}

namespace {

// Note [Run plans]: what a run derives from a graph's structure alone, made once per graph and kept in
// the executor's RunPlanCache. A batch-1 LSTM step is a few microseconds of work, and an interpreter that
// finds its way through the IR on every run spends more than that on cache misses: a node's operand list,
// each operand's Value for its id, a frame slot per id ever handed out (passes leave thousands of dead
// ids; each frame built and destroyed all of them). So each value the graph holds gets a dense slot, and
// each block becomes a flat array of instructions, one per node, holding the slots of the node's operands
// and results and of the values whose last use it is (runBlock drops those once the node has run, so a
// long unrolled graph holds only what is still to be read rather than every value until the frame ends;
// a block's outputs are kept, its caller reads them).
constexpr uint32_t kNoSlot = std::numeric_limits<uint32_t>::max();

struct Instr {
  const Node* node;
  OpKind kind;            // node's (dispatch without a miss on the node)
  // aten::mm: many products share its right operand, so it is packed once per run (sharesRightOperand);
  // aten::contiguous: only such products read its result (see Frame::handsOverUncopied).
  bool shared = false;
  const uint32_t* ins;    // slots of node's operands
  const uint32_t* outs;   // of its results
  const uint32_t* drops;  // of the values to drop after it
  uint32_t numIns, numOuts, numDrops;
};

// A running node's operands, read in place from the frame's slots (nothing copied: the node writes only
// its own results' slots, and the frame's slots do not move while it runs).
class Operands {
 public:
  Operands(const IValue* env, const Instr& ins) : env_(env), slots_(ins.ins), size_(ins.numIns) {}
  const IValue& operator[](size_t i) const { return env_[slots_[i]]; }
  size_t size() const { return size_; }
  /// These operands from `from` on.
  Operands from(size_t first) const { return Operands(env_, slots_ + first, size_ - first); }
  std::vector<IValue> copy() const {
    std::vector<IValue> xs;
    xs.reserve(size_);
    for (size_t i = 0; i < size_; ++i) xs.push_back((*this)[i]);
    return xs;
  }

  class Iterator {
   public:
    Iterator(const IValue* env, const uint32_t* slot) : env_(env), slot_(slot) {}
    const IValue& operator*() const { return env_[*slot_]; }
    Iterator& operator++() {
      ++slot_;
      return *this;
    }
    bool operator!=(const Iterator& o) const { return slot_ != o.slot_; }

   private:
    const IValue* env_;
    const uint32_t* slot_;
  };
  Iterator begin() const { return {env_, slots_}; }
  Iterator end() const { return {env_, slots_ + size_}; }

 private:
  Operands(const IValue* env, const uint32_t* slots, size_t size) : env_(env), slots_(slots), size_(size) {}
  const IValue* env_;
  const uint32_t* slots_;
  size_t size_;
};

struct BlockPlan {
  std::vector<Instr> instrs;
  std::vector<uint32_t> slots;  // what the instructions point into
};

struct GraphPlan {
  std::vector<uint32_t> slotOf;  // by Value::id(); kNoSlot for ids the graph no longer holds
  uint32_t numSlots = 0;
  std::unordered_map<const Block*, BlockPlan> blocks;
  // The graph's inputs (slot and declared type: a backward graph takes hundreds, each Value a cache miss
  // away) and its outputs' slots.
  std::vector<uint32_t> inputSlots, outputSlots;
  std::vector<Type> inputTypes;
  std::vector<bool> outputMoves;  // the last output reading its slot takes the value (a frame ends there)
  // The outputs hold slots 0 to n - 1, in order, to the end of the run: the frame's slot vector cut to
  // them is the result, where moving each out cost as much again as storing it (a forward graph that
  // saves values for its backward returns hundreds). When they are distinct values of the top block (an
  // input among them).
  bool outputsFirst = false;
};

GraphPlan makeGraphPlan(const Graph& g);

}  // namespace

struct RunPlanCache::Impl {
  const GraphPlan& plan(const Graph& g) {
    std::lock_guard<std::mutex> lock(mu);
    auto [it, added] = plans.try_emplace(&g);
    if (added) it->second = std::make_unique<GraphPlan>(makeGraphPlan(g));
    return *it->second;
  }
  std::mutex mu;
  std::unordered_map<const Graph*, std::unique_ptr<const GraphPlan>> plans;  // stable addresses
};

RunPlanCache::RunPlanCache() : impl_(std::make_unique<Impl>()) {}
RunPlanCache::~RunPlanCache() = default;

namespace {

// A tensor operand that may be written as a number (aten::add(%x, %one, %alpha)): a number becomes a 0-dim
// tensor of the dtype it promotes to beside `like` (resultType: int64 [2] < 1.5 compares in float32, bool
// [2] >= -1 in int64), which the kernel's own promotion of two tensors then keeps.
Tensor tensorOrScalar(const IValue& v, const Tensor& like, const char* what) {
  if (v.isTensor()) return v.toTensor(what);
  const DType number = v.isBool() ? DType::Bool : v.isInt() ? DType::Int64 : DType::Float64;
  const DType t = resultType({promotionOperand(like), {number, OperandKind::Number}});
  return Tensor::scalar(v.toDouble(what), t);
}

// A pointwise op on the CPU's reference kernels: operand 0 a tensor, operand 1 (ops of two or more) a
// tensor or a scalar, operand 2 a scalar (add's alpha).
Tensor pointwise(const Node* n, const Operands& in) {
  const PointwiseOp op = *n->info().pointwiseOp();
  const std::string what(n->info().name);
  const int arity = pointwiseArity(op);
  const Tensor& a = in[0].toTensor(what.c_str());
  if (op == PointwiseOp::Where) {  // self and other may each be a scalar, of the other's dtype (both: float)
    const IValue& tensorOne = in[1].isTensor() ? in[1] : in[2];
    const Tensor like = tensorOne.isTensor() ? tensorOne.toTensor(what.c_str()) : Tensor::scalar(0, DType::Float32);
    return ops::where(a, tensorOrScalar(in[1], like, what.c_str()), tensorOrScalar(in[2], like, what.c_str()));
  }
  if (op == PointwiseOp::Pow && !in[1].isTensor()) {  // PyTorch's pow by a number 0.5 or -0.5: sqrt, rsqrt
    const double e = in[1].toDouble(what.c_str());
    USER_CHECK(!(in[1].isInt() && e < 0 && !isFloating(a.dtype())),
               "pow: integers to negative integer powers are not allowed (PyTorch refuses them too); hint: raise a "
               "float tensor (x.float()) instead");
    if (e == 0.5 || e == -0.5) return ops::pointwise(e > 0 ? PointwiseOp::Sqrt : PointwiseOp::Rsqrt, a, Tensor(), 0);
  }
  if (op == PointwiseOp::MaximumBackward)  // three tensors
    return ops::maximumBackward(a, in[1].toTensor(what.c_str()), in[2].toTensor(what.c_str()));
  // clamp's None bound is no bound (the peephole pass makes such a clamp a clamp_min or clamp_max)
  const double inf = std::numeric_limits<double>::infinity();
  auto bound = [&](size_t i, double none) { return in[i].isNone() ? IValue(none) : in[i]; };
  const bool clamp = op == PointwiseOp::Clamp;
  // A number that takes no part in promotion (hardtanh's bounds, masked_fill's value) is in self's dtype
  // (beside an integer tensor, hardtanh's upper bound too: 2.5 beside int64 is 2).
  Tensor b;
  if (arity >= 2) {
    const IValue second = clamp ? bound(1, -inf) : in[1];
    b = second.isTensor() || promotesType(n->kind(), 1) ? tensorOrScalar(second, a, what.c_str())
                                                        : Tensor::scalar(second.toDouble(what.c_str()), a.dtype());
  }
  double c = arity >= 3 ? (clamp ? bound(2, inf) : in[2]).toDouble(what.c_str()) : 0.0;
  if (op == PointwiseOp::Hardtanh && !isFloating(a.dtype())) c = Tensor::scalar(c, a.dtype()).item();
  return ops::pointwise(op, a, b, c);
}

ops::Conv2dParams convParams(const Operands& in) {
  auto pair = [](const std::vector<int64_t>& v, const char* what) {
    USER_CHECK(v.size() == 1 || v.size() == 2, "conv2d: {} must have 1 or 2 elements, got {}", what, v.size());
    return std::pair{v[0], v.size() == 2 ? v[1] : v[0]};
  };
  ops::Conv2dParams p;
  std::tie(p.strideH, p.strideW) = pair(in[3].toIntList("conv2d stride"), "stride");
  std::tie(p.padH, p.padW) = pair(in[4].toIntList("conv2d padding"), "padding");
  std::tie(p.dilationH, p.dilationW) = pair(in[5].toIntList("conv2d dilation"), "dilation");
  p.groups = in[6].toInt("conv2d groups");
  return p;
}

// max_pool2d's window from its arguments (self, kernel_size, stride, padding, dilation, ceil_mode).
ops::Pool2dParams poolParams(const Node* n, const Operands& in) {
  const char* op = n->info().name.data();
  return ops::pool2dParams(op, in[1].toIntList(op), in[2].toIntList(op), in[3].toIntList(op), in[4].toIntList(op),
                           in[5].toBool("ceil_mode"));
}

bool hasEdge(const IValue& v) {
  if (v.isTensor()) return v.toTensor().gradEdge() != nullptr;
  if (v.isTensorList())
    for (const Tensor& t : v.toTensorList())
      if (t.gradEdge()) return true;
  return false;
}

class Frame {
 public:
  Frame(const Graph& g, const GradientTable* gradients, const KernelTable* kernels, RunPlanCache* plans, Tape* tape,
        RunObserver* observer, std::shared_ptr<const void> keepAlive, DeviceKind device)
      : plan_(plans ? &plans->impl().plan(g) : &ownPlan_.emplace(makeGraphPlan(g))), env_(plan_->numSlots),
        gradients_(gradients), kernels_(kernels), plans_(plans), tape_(tape), observer_(observer),
        keepAlive_(std::move(keepAlive)), device_(device) {}

  void runBlock(const Block* b) {
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
  IValue& at(const Value* v) {
    assert(v->id() < plan_->slotOf.size() && plan_->slotOf[v->id()] != kNoSlot);
    return env_[plan_->slotOf[v->id()]];
  }
  IValue& slot(uint32_t s) { return env_[s]; }
  // Slots 0 to n - 1, the rest dropped; the frame is done.
  std::vector<IValue> takeFirstSlots(size_t n) {
    env_.resize(n);
    return std::move(env_);
  }
  const GraphPlan& plan() const { return *plan_; }

 private:
  // The running node's single result.
  // A graph this frame runs in an interpreter of its own (a subgraph, a step's forward): on its device.
  RunOptions nestedRun() const {
    RunOptions ro;
    ro.device = device_;
    return ro;
  }
  void set(const Node* n, IValue v) {
    assert(cur_ && cur_->node == n && cur_->numOuts == 1);
    env_[cur_->outs[0]] = std::move(v);
  }
  void set(const Node* n, Tensor t) {  // stored in place (IValue::operator=(Tensor&&))
    assert(cur_ && cur_->node == n && cur_->numOuts == 1);
    env_[cur_->outs[0]] = std::move(t);
  }

  void runLoop(const Node* n) {
    const Block* body = n->block(0);
    int64_t trips = at(n->input(0)).toInt("loop trip count");
    bool cond = at(n->input(1)).toBool("loop condition");
    size_t carried = n->inputs().size() - 2;
    std::vector<IValue> state;
    for (size_t k = 0; k < carried; ++k) state.push_back(at(n->input(k + 2)));
    for (int64_t i = 0; i < trips && cond; ++i) {
      at(body->inputs()[0]) = i;
      for (size_t k = 0; k < carried; ++k) at(body->inputs()[k + 1]) = std::move(state[k]);
      runBlock(body);
      cond = at(body->outputs()[0]).toBool("loop condition");
      for (size_t k = 0; k < carried; ++k) state[k] = at(body->outputs()[k + 1]);
      // Drop the body's own references so that carried lists stay uniquely owned (appends in place).
      for (size_t k = 0; k < carried; ++k)
        if (definedIn(body->outputs()[k + 1], body)) at(body->outputs()[k + 1]) = IValue();
    }
    for (size_t k = 0; k < carried; ++k) at(n->output(k)) = std::move(state[k]);
  }

  void runIf(const Node* n) {
    const Block* b = n->block(at(n->input(0)).toBool("if condition") ? 0 : 1);
    runBlock(b);
    for (size_t k = 0; k < n->outputs().size(); ++k) at(n->output(k)) = at(b->outputs()[k]);
  }

  void runNode(const Node* n);
  void runOp(const Node* n, const Operands& in);
  void runWidened(const Node* n, const Operands& in);
  void runListAppend(const Node* n);
  void runSubgraph(const Node* n, const Operands& in) {
    if (tape_ && cur_->kind == OpKind::DifferentiableGraph) return recordStep(n, in);
    if ((isFusionGroupOp(cur_->kind) || cur_->kind == OpKind::RecurrenceGroup) && kernels_) {
      if (auto it = kernels_->find(n); it != kernels_->end() && runKernel(n, *it->second, in)) return;
    }
    if (cur_->kind == OpKind::FallbackGraph) {
      // Same tape and observer: values keep their grad edges across the call.
      const Graph& sub = *n->subgraph();
      Frame f(sub, gradients_, kernels_, plans_, tape_, observer_, keepAlive_, device_);
      for (size_t i = 0; i < in.size(); ++i) f.at(sub.inputs()[i]) = in[i];
      f.runBlock(sub.block());
      for (size_t k = 0; k < n->outputs().size(); ++k) at(n->output(k)) = f.at(sub.outputs()[k]);
      return;
    }
    auto outs = Interpreter(*n->subgraph(), gradients_, kernels_, plans_).run(in.copy(), nestedRun());
    for (size_t k = 0; k < outs.size(); ++k) at(n->output(k)) = std::move(outs[k]);
  }
  // Runs a compiled fusion group; false (the caller runs the subgraph) when the kernel refuses.
  bool runKernel(const Node* n, const CompiledKernel& k, const Operands& in) {
    std::vector<const Tensor*>& ts = kernelInputs_;  // into the frame's slots, which the kernel does not write
    ts.clear();
    for (const IValue& v : in) {
      if (!v.isTensor() || !v.toTensor().defined()) return false;
      ts.push_back(&v.toTensor());
    }
    std::vector<Tensor> outs;
    try {
      outs = k.run(std::span<const Tensor* const>(ts));
    } catch (const Error&) {
      return false;
    }
    assert(cur_->node == n && cur_->numOuts == outs.size());
    for (size_t i = 0; i < outs.size(); ++i) env_[cur_->outs[i]] = std::move(outs[i]);
    return true;
  }
  void recordStep(const Node* n, const Operands& in);
  Tensor mm(const Tensor& a, const Tensor& b);
  static bool packable(const Tensor& b);
  // Whether the running aten::contiguous may hand over its operand as it is: when every reader is a
  // product that packs it (contiguous-operands gives a shared weight a row-major copy for sgemm; packing
  // reads either layout, so the copy would be a pass over the weight for nothing). A product that then
  // does not pack (its left operand too tall, say) multiplies by the view: slower, the same values.
  bool handsOverUncopied(const Tensor& x) const { return cur_->shared && packable(x); }
  static bool definedIn(const Value* v, const Block* b) { return v->node()->owningBlock() == b; }

  std::optional<GraphPlan> ownPlan_;  // without a RunPlanCache
  const GraphPlan* plan_;
  std::vector<IValue> env_;  // by slot
  const Instr* cur_ = nullptr;
  std::vector<const Tensor*> kernelInputs_;  // runKernel's
  // aten::mm's right operands packed for oneDNN's matmul primitive, by value, each with the tensor it was
  // packed from (its storage held, so the address cannot come back as another tensor's).
  struct PackedOperand {
    Tensor from;
    int64_t rows = 0;                  // A's, which the packing is for
    std::unique_ptr<PackedGemmB> gemm;  // null where packing does not pay: plain sgemm
  };
  std::unordered_map<uint32_t, PackedOperand> packed_;  // by the operand's slot
  const GradientTable* gradients_;
  const KernelTable* kernels_;
  RunPlanCache* plans_;
  Tape* tape_;
  RunObserver* observer_;
  std::shared_ptr<const void> keepAlive_;
  DeviceKind device_;
};

// A right operand the packed path takes: a float32 matrix on the CPU, row-major or transposed, with
// oneDNN as the GEMM library and a packed layout on this CPU.
bool Frame::packable(const Tensor& b) {
  return PackedGemmB::available() && b.defined() && b.dtype() == DType::Float32 &&
         b.device() == DeviceKind::Cpu && b.dim() == 2 && b.numel() > 0 && (b.stride(1) == 1 || b.stride(0) == 1);
}

// aten::mm, with B packed once per run when many small products share it (runtime/gemm.h,
// PackedGemmB): A dense, with at most as many rows as the products contiguous-operands lays out for.
Tensor Frame::mm(const Tensor& a, const Tensor& b) {
  const bool candidate = packable(b) && a.defined() && a.dtype() == DType::Float32 && a.device() == DeviceKind::Cpu &&
                         a.dim() == 2 && a.isContiguous() && a.size(0) <= kRowMajorOperandMaxRows && a.size(1) == b.size(0) &&
                         a.numel() > 0;
  if (!candidate) return ops::mm(a, b);
  if (!cur_->shared) return ops::mm(a, b);
  const int64_t m = a.size(0), k = a.size(1), nn = b.size(1);
  PackedOperand& p = packed_[cur_->ins[1]];
  const bool same = p.from.defined() && p.from.storage() == b.storage() && p.from.rawData() == b.rawData() &&
                    p.from.sizes() == b.sizes() && p.from.strides() == b.strides() && p.rows == m;
  if (!same) {
    const bool transB = b.stride(1) != 1;
    const int64_t ldb = std::max<int64_t>(transB ? b.stride(1) : b.stride(0), transB ? k : nn);
    p.gemm = PackedGemmB::pack(m, nn, k, b.data<float>(), ldb, transB);
    p.from = b;
    p.rows = m;
  }
  if (!p.gemm) return ops::mm(a, b);
  Tensor out = Tensor::empty({m, nn}, DType::Float32);
  p.gemm->multiply(a.data<float>(), out.data<float>());
  return out;
}

// Runs the forward graph of n's Gradient on detached inputs, records a tape step, and gives the
// outputs edges to it.
void Frame::recordStep(const Node* n, const Operands& in) {
  IR_CHECK(gradients_ && gradients_->count(n)) << "no Gradient for " << n->describe();
  auto step = std::make_shared<TapeStep>();
  step->gradient = gradients_->at(n);
  step->kernels = kernels_;
  step->plans = plans_;
  step->keepAlive = keepAlive_;
  const Gradient& grad = *step->gradient;
  std::vector<IValue> detached;
  for (const IValue& v : in) detached.push_back(detach(v));
  auto outs = Interpreter(*grad.forward, nullptr, kernels_, plans_).run(std::move(detached), nestedRun());
  for (size_t i = 0; i < grad.gradInputs.size(); ++i) {
    const IValue& v = in[grad.gradInputs[i]];
    std::vector<std::shared_ptr<const GradEdge>> edges;
    if (!grad.reached.empty() && !grad.reached[i]) {
      // no gradient reaches this input: no edge, so that the tape adds nothing (not zeros) to it
    } else if (v.isTensorList()) {
      for (const Tensor& t : v.toTensorList()) edges.push_back(t.gradEdge());
    } else if (v.isTensor()) {
      edges.push_back(v.toTensor().gradEdge());
    }
    step->inputEdges.push_back(std::move(edges));
    step->inputIsList.push_back(v.isTensorList());
  }
  for (size_t k = 0; k < grad.numOutputs; ++k) {
    IValue& o = outs[k];
    bool isList = o.isTensorList();
    step->outputIsList.push_back(isList);
    std::vector<Tensor> elems = isList ? o.toTensorList() : std::vector<Tensor>{o.toTensor("differentiable output")};
    step->outputs.push_back(elems);
    step->grads.emplace_back(elems.size());
    for (size_t e = 0; e < elems.size(); ++e) {
      if (!isFloating(elems[e].dtype())) continue;
      auto edge = std::make_shared<GradEdge>();
      edge->step = step;
      edge->slot = k;
      edge->element = isList ? static_cast<int64_t>(e) : -1;
      edge->dtype = elems[e].dtype();
      elems[e] = elems[e].withGradEdge(std::move(edge));
    }
    at(n->output(k)) = isList ? IValue(std::move(elems)) : IValue(elems[0]);
    o = IValue();
  }
  // The outputs' places stay, empty: backward puts their gradients there and hands the vector to the
  // backward graph as it is. An unrolled 100-step layer saves about 700 tensors a run, and a copy of the
  // vector each way was a tenth of the frame's own cost.
  step->saved = std::move(outs);
  tape_->record(std::move(step));
}

// The values of `b` (its params and its nodes' results) by the index of the node after which nothing
// reads them, nested blocks included; a result nothing reads goes right after its node.
std::vector<std::vector<const Value*>> lastUses(const Block* b) {
  std::unordered_map<const Node*, size_t> position;
  for (const Node* n : *b) position.emplace(n, position.size());
  std::vector<std::vector<const Value*>> drops(position.size());
  auto plan = [&](const Value* v, std::optional<size_t> definedAt) {
    std::optional<size_t> last = definedAt;
    for (const Use& u : v->uses()) {
      const Node* user = u.user;
      while (user->owningBlock() != b) user = user->owningBlock()->owningNode();
      if (user == b->returnNode()) return;
      last = std::max(last.value_or(0), position.at(user));
    }
    if (last) drops[*last].push_back(v);
  };
  for (const Value* v : b->inputs()) plan(v, std::nullopt);
  for (const Node* n : *b)
    for (const Value* v : n->outputs()) plan(v, position.at(n));
  return drops;
}

// Whether aten::mm n's right operand is the right operand of other products too (an unrolled RNN's
// weight, 100 steps), or comes from outside a loop whose body n is in: then packing it once pays.
bool sharesRightOperand(const Node* n) {
  const Value* b = n->input(1);
  int products = 0;
  for (const Use& u : b->uses()) products += u.user->kind() == OpKind::Mm && u.index == 1;
  return products >= 2 || inLoopBelow(n, b->node()->owningBlock());
}

GraphPlan makeGraphPlan(const Graph& g) {
  GraphPlan p;
  p.slotOf.assign(g.numValueIds(), kNoSlot);
  // The top block's values share slots whose lifetimes do not overlap: a slot freed by a node's drops
  // goes to a later node's results (an unrolled 100-step forward: about 700 slots, not 5000, which the
  // frame makes and destroys on every run). The values of nested blocks, which run many times, each get a
  // slot of their own.
  std::vector<uint32_t> freed;
  auto reuse = [&](const Value* v) {
    uint32_t s = p.numSlots;
    if (freed.empty()) ++p.numSlots;
    else s = freed.back(), freed.pop_back();
    p.slotOf[v->id()] = s;
  };
  auto own = [&](const Value* v) { p.slotOf[v->id()] = p.numSlots++; };
  std::vector<const Block*> blocks;
  auto nested = [&](auto&& self, const Block* b) -> void {
    blocks.push_back(b);
    for (const Value* v : b->inputs()) own(v);
    for (const Node* n : *b) {
      for (const Value* v : n->outputs()) own(v);
      for (const Block* inner : n->blocks()) self(self, inner);
    }
  };
  const Block* top = g.block();
  blocks.push_back(top);
  const auto topDrops = lastUses(top);
  std::unordered_set<const Value*> distinct(g.outputs().begin(), g.outputs().end());
  p.outputsFirst = !g.outputs().empty() && distinct.size() == g.outputs().size() &&
                   std::all_of(g.outputs().begin(), g.outputs().end(),
                               [&](const Value* v) { return v->node()->owningBlock() == top; });
  if (p.outputsFirst)
    for (const Value* v : g.outputs()) own(v);  // never dropped: the return node reads them
  for (const Value* v : top->inputs())
    if (p.slotOf[v->id()] == kNoSlot) reuse(v);  // an input returned as it is has its output's slot
  for (size_t i = 0; const Node* n : *top) {
    for (const Value* v : n->outputs())  // before the node's drops: its operands are still read
      if (p.slotOf[v->id()] == kNoSlot) reuse(v);
    for (const Block* inner : n->blocks()) nested(nested, inner);
    for (const Value* v : topDrops[i++]) freed.push_back(p.slotOf[v->id()]);
  }
  for (const Value* v : g.inputs()) {
    p.inputSlots.push_back(p.slotOf[v->id()]);
    p.inputTypes.push_back(v->type());
  }
  for (const Value* v : g.outputs()) p.outputSlots.push_back(p.slotOf[v->id()]);
  std::unordered_set<uint32_t> later;
  p.outputMoves.resize(p.outputSlots.size());
  for (size_t i = p.outputSlots.size(); i-- > 0;) p.outputMoves[i] = later.insert(p.outputSlots[i]).second;
  for (const Block* b : blocks) {
    BlockPlan& bp = p.blocks[b];
    std::vector<std::vector<const Value*>> nestedDrops;
    const auto& blockDrops = b == top ? topDrops : (nestedDrops = lastUses(b));
    struct Ranges { size_t ins, outs, drops; };
    std::vector<Ranges> at;
    for (size_t i = 0; const Node* n : *b) {
      at.push_back({bp.slots.size(), 0, 0});
      for (const Value* v : n->inputs()) bp.slots.push_back(p.slotOf[v->id()]);
      at.back().outs = bp.slots.size();
      for (const Value* v : n->outputs()) bp.slots.push_back(p.slotOf[v->id()]);
      at.back().drops = bp.slots.size();
      for (const Value* v : blockDrops[i++]) bp.slots.push_back(p.slotOf[v->id()]);
      bool shared = false;
      if (n->kind() == OpKind::Mm) shared = sharesRightOperand(n);
      if (n->kind() == OpKind::Contiguous) {
        shared = !n->output()->uses().empty();
        for (const Use& u : n->output()->uses())
          shared = shared && u.user->kind() == OpKind::Mm && u.index == 1 && sharesRightOperand(u.user);
      }
      auto count = [](size_t k) { return static_cast<uint32_t>(k); };
      bp.instrs.push_back({n, n->kind(), shared, nullptr, nullptr, nullptr, count(n->inputs().size()),
                           count(n->outputs().size()), count(blockDrops[i - 1].size())});
    }
    for (size_t i = 0; i < bp.instrs.size(); ++i) {  // slots is complete: point into it
      bp.instrs[i].ins = bp.slots.data() + at[i].ins;
      bp.instrs[i].outs = bp.slots.data() + at[i].outs;
      bp.instrs[i].drops = bp.slots.data() + at[i].drops;
    }
  }
  return p;
}

// Appends in place when this node holds the only reference to the list: the list value is defined in
// this block and this is its one use. Otherwise copies, so other holders never see the change.
void Frame::runListAppend(const Node* n) {
  const Value* listValue = n->input(0);
  IValue& slot = at(listValue);
  std::shared_ptr<TensorList> list = slot.tensorListPtr("prim::ListAppend");
  if (listValue->uses().size() == 1 && definedIn(listValue, n->owningBlock())) slot = IValue();
  if (list.use_count() > 1) list = std::make_shared<TensorList>(*list);
  list->push_back(at(n->input(1)).toTensor("prim::ListAppend element"));
  set(n, IValue(std::move(list)));
}
// Arithmetic on numbers (TorchScript's size arithmetic): two ints (or bools, as 0 and 1) stay an int, as
// Python's; a float on either side makes a float; true division and pow give a float. Ints wrap on
// overflow, as TorchScript's int64 does; a division by zero is an error, as Python's ZeroDivisionError.
static IValue scalarArithmetic(OpKind kind, const IValue& a, const IValue& b, const char* name) {
  USER_CHECK((a.isInt() || a.isBool() || a.isDouble()) && (b.isInt() || b.isBool() || b.isDouble()),
             "{}: expected two numbers", name);
  if (kind == OpKind::ScalarDiv || kind == OpKind::ScalarPow) {
    const double x = a.toDouble(name), y = b.toDouble(name);
    if (kind == OpKind::ScalarPow) return IValue(std::pow(x, y));
    USER_CHECK(y != 0, "{}: division by zero (Python's ZeroDivisionError)", name);
    return IValue(x / y);
  }
  if (!a.isDouble() && !b.isDouble()) {
    const auto x = static_cast<uint64_t>(a.isBool() ? int64_t{a.toBool(name)} : a.toInt(name));
    const auto y = static_cast<uint64_t>(b.isBool() ? int64_t{b.toBool(name)} : b.toInt(name));
    const auto sx = static_cast<int64_t>(x), sy = static_cast<int64_t>(y);
    if (kind == OpKind::ScalarAdd) return IValue(static_cast<int64_t>(x + y));
    if (kind == OpKind::ScalarSub) return IValue(static_cast<int64_t>(x - y));
    if (kind == OpKind::ScalarMul) return IValue(static_cast<int64_t>(x * y));
    if (kind == OpKind::ScalarMin) return IValue(std::min(sx, sy));
    return IValue(std::max(sx, sy));  // ScalarMax
  }
  const double x = a.toDouble(name), y = b.toDouble(name);
  if (kind == OpKind::ScalarAdd) return IValue(x + y);
  if (kind == OpKind::ScalarSub) return IValue(x - y);
  if (kind == OpKind::ScalarMul) return IValue(x * y);
  // NaN wins, as Python's min and max of floats do not promise; TorchScript's prim::min gives the NaN
  if (std::isnan(x) || std::isnan(y)) return IValue(x + y);
  return IValue(kind == OpKind::ScalarMin ? std::min(x, y) : std::max(x, y));
}

// Bitwise ops on ints and bools, as Python's: two bools give a bool (and, or, xor), otherwise an int with a bool
// as 0 or 1. A shift wraps in int64 (x << 64 and beyond is 0) and fills with the sign (x >> 63 and beyond is 0
// or -1); a negative count is an error, as Python's ValueError.
static IValue scalarBitwise(OpKind kind, const IValue& a, const IValue& b, const char* name) {
  USER_CHECK((a.isInt() || a.isBool()) && (b.isInt() || b.isBool()), "{}: expected two ints or bools, got {} and {}",
             name, a.describe(), b.describe());
  const bool shift = kind == OpKind::ScalarLShift || kind == OpKind::ScalarRShift;
  if (a.isBool() && b.isBool() && !shift) {
    const bool x = a.toBool(name), y = b.toBool(name);
    return IValue(kind == OpKind::ScalarAnd ? x && y : kind == OpKind::ScalarOr ? x || y : x != y);
  }
  const int64_t x = a.isBool() ? int64_t{a.toBool(name)} : a.toInt(name);
  const int64_t y = b.isBool() ? int64_t{b.toBool(name)} : b.toInt(name);
  if (kind == OpKind::ScalarAnd) return IValue(x & y);
  if (kind == OpKind::ScalarOr) return IValue(x | y);
  if (kind == OpKind::ScalarXor) return IValue(x ^ y);
  USER_CHECK(y >= 0, "{}: negative shift count {} (Python's ValueError)", name, y);
  if (kind == OpKind::ScalarLShift)
    return IValue(y >= 64 ? int64_t{0} : static_cast<int64_t>(static_cast<uint64_t>(x) << y));
  return IValue(y >= 64 ? (x < 0 ? int64_t{-1} : int64_t{0}) : x >> y);
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

// An op that meets a storage dtype: its tensors in their compute dtypes (float16 in float32, int8 in int64,
// ...), numbers rounded to the dtype they promote to, then each result stored in the dtype the op's type
// rule gives (shape propagation's, the one the fusers and the legacy pipeline read): an int8 sum is int64,
// int8 + int8 int8 again, wrapped, and float16 / float16 float16, rounded once.
void Frame::runWidened(const Node* n, const Operands& in) {
  const char* const name = opInfo(cur_->kind).name.data();
  std::vector<Type> types;
  std::vector<std::vector<Type>> elements(in.size());
  const bool needsGradient = tape_ && !passesNoGradient(cur_->kind);
  for (size_t i = 0; i < in.size(); ++i) {
    USER_CHECK(!needsGradient || !hasEdge(in[i]), "{}: gradients through {} tensors are not supported yet; hint: compute in float32 "
               "(x.float()) where a gradient is needed", name, "float16, bfloat16 or narrow integer");
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

void Frame::runNode(const Node* n) {
  const OpKind kind = cur_->kind;
  if (kind == OpKind::ListAppend) return runListAppend(n);
  if (kind == OpKind::Loop) return runLoop(n);  // reads its operands from their slots
  if (kind == OpKind::If) return runIf(n);
  const Operands in(env_.data(), *cur_);
  if (computesInWiderDType(kind) && meetsStorageDType(in)) return runWidened(n, in);
  runOp(n, in);
}

void Frame::runOp(const Node* n, const Operands& in) {
  const OpKind kind = cur_->kind;
  const char* const name = opInfo(kind).name.data();  // for the operand accessors' messages
  if (tape_ && !passesNoGradient(kind) && !castsToNonFloating(kind, in))
    for (size_t i = 0; i < in.size(); ++i)
      USER_CHECK(!hasEdge(in[i]),
                 "input {} of {} requires grad, but the op runs outside a prim::DifferentiableGraph, so its gradient "
                 "would be lost (run create-autodiff-subgraphs after requires-grad)",
                 i, name);
  auto T = [&](size_t i) -> const Tensor& { return in[i].toTensor(name); };
  auto I = [&](size_t i) { return in[i].toInt(name); };
  auto Ints = [&](size_t i) -> const std::vector<int64_t>& { return in[i].toIntList(name); };
  auto OptT = [&](size_t i) { return in[i].isNone() ? Tensor() : T(i); };  // a Tensor? operand (None: undefined)
  switch (kind) {
    case OpKind::Param:
    case OpKind::Return:
      IR_CHECK(false) << "param/return node in a block's node list";
      return;
    case OpKind::Constant:
      std::visit([&](const auto& v) {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, std::monostate>) set(n, IValue());
        else if constexpr (std::is_same_v<V, std::string> || std::is_same_v<V, std::vector<double>>)
          IR_CHECK(false) << "a str or float[] constant reached the interpreter (requireLowered)";
        else set(n, IValue(v));
      }, n->constant());
      return;
    case OpKind::ListConstruct:
      if (n->output()->type().kind == TypeKind::IntList) {
        std::vector<int64_t> xs;
        for (const IValue& v : in) xs.push_back(v.toInt("int list element"));
        set(n, IValue(std::move(xs)));
      } else {
        TensorList xs;
        for (const IValue& v : in) xs.push_back(v.toTensor("tensor list element"));
        set(n, IValue(std::move(xs)));
      }
      return;
    case OpKind::ListUnpack: {
      const TensorList& xs = in[0].toTensorList("prim::ListUnpack");
      USER_CHECK(xs.size() == n->outputs().size(), "prim::ListUnpack: the list has {} elements but {} outputs",
                 xs.size(), n->outputs().size());
      for (size_t k = 0; k < xs.size(); ++k) at(n->output(k)) = xs[k];
      return;
    }
    case OpKind::ListAppend: IR_CHECK(false) << "handled by runListAppend"; return;
#include "ir/frontend_cases.inc"
      IR_CHECK(false) << n->info().name << " reached the interpreter (requireLowered)";
      return;
    case OpKind::Loop:
    case OpKind::If:
      IR_CHECK(false) << "handled before the switch";
      return;
    case OpKind::GetItem: {
      int64_t idx = I(1);
      if (in[0].isIntList()) {
        const auto& xs = in[0].toIntList();
        int64_t sz = static_cast<int64_t>(xs.size());
        USER_CHECK(idx >= -sz && idx < sz, "list index {} out of range for a list of {}", idx, sz);
        set(n, IValue(xs[idx < 0 ? idx + sz : idx]));
      } else {
        const TensorList& xs = in[0].toTensorList("aten::__getitem__");
        int64_t sz = static_cast<int64_t>(xs.size());
        USER_CHECK(idx >= -sz && idx < sz, "list index {} out of range for a list of {}", idx, sz);
        set(n, IValue(xs[idx < 0 ? idx + sz : idx]));
      }
      return;
    }
    case OpKind::Len:
      set(n, IValue(static_cast<int64_t>(in[0].isIntList() ? in[0].toIntList().size()
                                                            : in[0].toTensorList("aten::len").size())));
      return;
    case OpKind::Size: set(n, IValue(T(0).size(I(1)))); return;
    case OpKind::Sizes: set(n, IValue(T(0).sizes())); return;
    case OpKind::IntAdd: set(n, IValue(I(0) + I(1))); return;
    case OpKind::IntSub: set(n, IValue(I(0) - I(1))); return;
    case OpKind::ScalarAdd: case OpKind::ScalarSub: case OpKind::ScalarMul: case OpKind::ScalarMin:
    case OpKind::ScalarMax: case OpKind::ScalarDiv: case OpKind::ScalarPow:
      set(n, scalarArithmetic(n->kind(), in[0], in[1], name));
      return;
    case OpKind::ScalarAnd: case OpKind::ScalarOr: case OpKind::ScalarXor: case OpKind::ScalarLShift:
    case OpKind::ScalarRShift:
      set(n, scalarBitwise(n->kind(), in[0], in[1], name));
      return;
    case OpKind::IntEq: case OpKind::IntNe: case OpKind::IntLt: case OpKind::IntLe: case OpKind::IntGt:
    case OpKind::IntGe:
      if (!in[0].isDouble() && !in[1].isDouble()) {  // ints and bools (True == True) exactly
        auto integer = [&](const IValue& v) { return v.isBool() ? int64_t{v.toBool()} : v.toInt(name); };
        set(n, IValue(*compareScalars(n->kind(), integer(in[0]), integer(in[1]))));
      } else {
        set(n, IValue(*compareScalars(n->kind(), in[0].toDouble(name), in[1].toDouble(name))));
      }
      return;
    case OpKind::BoolNot: set(n, IValue(!in[0].toBool("aten::__not__"))); return;
    case OpKind::RaiseIf:
      if (in[0].toBool("prim::RaiseIf"))
        throw Error(std::get<std::string>(n->constant()), n->where(),
                    "the graph's own check failed on these inputs (TorchScript's `raise`)");
      return;
    case OpKind::ListConcat:
      if (in[0].isIntList()) {
        std::vector<int64_t> xs = in[0].toIntList();
        const auto& ys = in[1].toIntList("aten::add");
        xs.insert(xs.end(), ys.begin(), ys.end());
        set(n, IValue(std::move(xs)));
      } else {
        TensorList xs = in[0].toTensorList("aten::add");
        const TensorList& ys = in[1].toTensorList("aten::add");
        xs.insert(xs.end(), ys.begin(), ys.end());
        set(n, IValue(std::move(xs)));
      }
      return;
    case OpKind::IntOfTensor: {
      const Tensor& x = T(0);
      USER_CHECK(x.numel() == 1, "aten::Int: a tensor of {} elements ({}) has no single value", x.numel(),
                 shapeStr(x.sizes()));
      set(n, IValue(static_cast<int64_t>(x.item(0))));
      return;
    }
    case OpKind::FloorDiv: {
      USER_CHECK(I(1) != 0, "aten::floordiv: division by zero");
      int64_t q = I(0) / I(1);
      if ((I(0) % I(1) != 0) && ((I(0) < 0) != (I(1) < 0))) --q;
      set(n, IValue(q));
      return;
    }
    case OpKind::Remainder: {
      USER_CHECK(I(1) != 0, "aten::remainder: division by zero");
      int64_t r = I(0) % I(1);
      if (r != 0 && ((r < 0) != (I(1) < 0))) r += I(1);
      set(n, IValue(r));
      return;
    }
    case OpKind::DifferentiableGraph:
    case OpKind::FallbackGraph:
    case OpKind::FusionGroup:
    case OpKind::TensorExprGroup:
    case OpKind::RecurrenceGroup:
      return runSubgraph(n, in);
    case OpKind::Profile:
      if (observer_) observer_->profiled(n, in[0]);
      set(n, in[0]);
      return;
    case OpKind::TypeCheck: {
      bool ok = true;
      for (size_t i = 0; i < in.size(); ++i) {
        at(n->output(i)) = in[i];
        if (!ok) continue;
        std::string why = typeMismatch(n->output(i)->type(), in[i]);
        if (why.empty()) continue;
        ok = false;
        if (observer_) observer_->guardFailed(n, fmt::format("input %{}: {}", n->input(i)->name(), why));
      }
      at(n->outputs().back()) = IValue(ok);
      return;
    }
    case OpKind::Mm: set(n, mm(T(0), T(1))); return;
    case OpKind::Bmm: set(n, ops::bmm(T(0), T(1))); return;
    case OpKind::Matmul: set(n, ops::matmul(T(0), T(1))); return;
    case OpKind::Addmm:
      set(n, ops::addmm(T(0), T(1), T(2), in[3].toDouble("addmm beta"), in[4].toDouble("addmm alpha")));
      return;
    case OpKind::Linear: set(n, ops::linear(T(0), T(1), OptT(2))); return;
    case OpKind::T: set(n, T(0).t()); return;
    case OpKind::Transpose: set(n, T(0).transpose(I(1), I(2))); return;
    case OpKind::Permute: set(n, T(0).permute(Ints(1))); return;
    case OpKind::Select: set(n, T(0).select(I(1), I(2))); return;
    case OpKind::Slice: set(n, T(0).slice(I(1), I(2), I(3), I(4))); return;
    case OpKind::View: set(n, T(0).view(Ints(1))); return;
    case OpKind::Reshape: set(n, T(0).reshape(Ints(1))); return;
    case OpKind::Unsqueeze: set(n, T(0).unsqueeze(I(1))); return;
    case OpKind::Squeeze: set(n, T(0).squeeze(I(1))); return;
    case OpKind::Expand: set(n, T(0).expand(Ints(1))); return;
    case OpKind::Chunk: set(n, IValue(T(0).chunk(I(1), I(2)))); return;
    case OpKind::Unbind: set(n, IValue(T(0).unbind(I(1)))); return;
    case OpKind::Contiguous: set(n, handsOverUncopied(T(0)) ? T(0) : T(0).contiguous()); return;
    case OpKind::TypeAs: set(n, T(0).to(T(1).dtype())); return;
    case OpKind::DTypeOf: set(n, IValue(static_cast<int64_t>(T(0).dtype()))); return;
    case OpKind::ToDType: {
      auto d = dtypeFromCode(I(1));
      USER_CHECK(d, "aten::to: {} is not a dtype code (0 Float, 1 Double, 2 Long, 3 Bool, 4 Byte, 5 Char, 6 Short, "
                 "7 Int, 8 Half, 9 BFloat16)", I(1));
      set(n, T(0).to(*d));
      return;
    }
    case OpKind::Sum: set(n, ops::sum(T(0))); return;
    case OpKind::SumDim: set(n, ops::sum(T(0), Ints(1), in[2].toBool("keepdim"))); return;
    case OpKind::Mean: set(n, ops::mean(T(0))); return;
    case OpKind::MeanDim: set(n, ops::mean(T(0), Ints(1), in[2].toBool("keepdim"))); return;
    case OpKind::Amax: set(n, ops::amax(T(0), Ints(1), in[2].toBool("keepdim"))); return;
    case OpKind::Amin: set(n, ops::amin(T(0), Ints(1), in[2].toBool("keepdim"))); return;
    case OpKind::Softmax: set(n, ops::softmax(T(0), I(1))); return;
    case OpKind::Var: set(n, ops::var(T(0), Ints(1), in[2].toBool("unbiased"), in[3].toBool("keepdim"))); return;
    case OpKind::Std: set(n, ops::stdDev(T(0), Ints(1), in[2].toBool("unbiased"), in[3].toBool("keepdim"))); return;
    case OpKind::LayerNorm:
    case OpKind::NativeLayerNorm: {
      auto r = ops::layerNorm(T(0), Ints(1), OptT(2), OptT(3), in[4].toDouble("eps"));
      at(n->output(0)) = r.out;
      if (n->kind() == OpKind::NativeLayerNorm) at(n->output(1)) = r.mean, at(n->output(2)) = r.rstd;
      return;
    }
    case OpKind::LogSoftmax: set(n, ops::logSoftmax(T(0), I(1))); return;
    case OpKind::NllLoss: set(n, ops::nllLoss(T(0), T(1))); return;
    case OpKind::CrossEntropy: set(n, ops::crossEntropy(T(0), T(1))); return;
    case OpKind::Embedding: set(n, ops::embedding(T(0), T(1))); return;
    case OpKind::Cat: set(n, ops::cat(in[0].toTensorList("aten::cat"), I(1))); return;
    case OpKind::Stack: set(n, ops::stack(in[0].toTensorList("aten::stack"), I(1))); return;
    case OpKind::Conv2d: set(n, ops::conv2d(T(0), T(1), OptT(2), convParams(in))); return;
    case OpKind::BatchNorm:
    case OpKind::NativeBatchNorm: {
      auto r = ops::batchNorm(T(0), OptT(1), OptT(2), OptT(3), OptT(4), in[5].toBool("training"),
                              in[6].toDouble("momentum"), in[7].toDouble("eps"));
      at(n->output(0)) = r.out;
      if (n->kind() == OpKind::NativeBatchNorm) {
        at(n->output(1)) = r.mean, at(n->output(2)) = r.invstd;
        at(n->output(3)) = r.runningMean, at(n->output(4)) = r.runningVar;
      }
      return;
    }
    case OpKind::MaxPool2d:
    case OpKind::MaxPool2dWithIndices: {
      auto r = ops::maxPool2d(T(0), poolParams(n, in));
      at(n->output(0)) = r.out;
      if (n->kind() == OpKind::MaxPool2dWithIndices) at(n->output(1)) = r.indices;
      return;
    }
    case OpKind::AdaptiveAvgPool2d: {
      const auto& size = Ints(1);
      USER_CHECK(size.size() == 1 || size.size() == 2, "aten::adaptive_avg_pool2d: output_size must have 1 or 2 "
                 "elements, got {}", size.size());
      set(n, ops::adaptiveAvgPool2d(T(0), size[0], size.back()));
      return;
    }
    case OpKind::Flatten: set(n, ops::flatten(T(0), I(1), I(2))); return;
    case OpKind::ZerosLike: set(n, Tensor::zeros(T(0).sizes(), T(0).dtype(), T(0).device())); return;
    case OpKind::Detach: set(n, T(0).withGradEdge(nullptr)); return;  // the same values, off the tape
    case OpKind::OnesLike: set(n, Tensor::full(T(0).sizes(), T(0).dtype(), 1.0, T(0).device())); return;
    case OpKind::FullLike:
      set(n, Tensor::full(T(0).sizes(), T(0).dtype(), in[1].toDouble("full_like fill_value"), T(0).device()));
      return;
    case OpKind::NewZeros: {
      const auto sizes = Ints(1);
      for (int64_t s : sizes) USER_CHECK(s >= 0, "aten::new_zeros: negative size in {}", shapeStr(sizes));
      set(n, Tensor::zeros(sizes, T(0).dtype(), T(0).device()));
      return;
    }
    case OpKind::MaxDim: case OpKind::MinDim: {
      auto r = ops::extremeAlong(T(0), I(1), in[2].toBool("keepdim"), n->kind() == OpKind::MinDim);
      at(n->output(0)) = r.values;
      at(n->output(1)) = r.indices;
      return;
    }
    case OpKind::ValueSelectingBackward:
      set(n, ops::valueSelectingBackward(T(0), I(1), T(2), Ints(3), in[4].toBool("keepdim")));
      return;
    case OpKind::Sort: {
      auto r = ops::sort(T(0), I(1), in[2].toBool("descending"));
      at(n->output(0)) = r.values;
      at(n->output(1)) = r.indices;
      return;
    }
    case OpKind::IndexSelect: set(n, ops::indexSelect(T(0), I(1), T(2))); return;
    case OpKind::BitwiseAnd: case OpKind::BitwiseOr: case OpKind::BitwiseXor: case OpKind::LeftShift:
    case OpKind::RightShift: {
      const ops::BitwiseOp op = kind == OpKind::BitwiseAnd  ? ops::BitwiseOp::And
                                : kind == OpKind::BitwiseOr  ? ops::BitwiseOp::Or
                                : kind == OpKind::BitwiseXor ? ops::BitwiseOp::Xor
                                : kind == OpKind::LeftShift  ? ops::BitwiseOp::LeftShift
                                                             : ops::BitwiseOp::RightShift;
      set(n, ops::bitwise(op, T(0), tensorOrScalar(in[1], T(0), name)));
      return;
    }
    case OpKind::BitwiseNot: set(n, ops::bitwiseNot(T(0))); return;
    case OpKind::IndexSelectBackward: set(n, ops::indexSelectBackward(T(0), Ints(1), I(2), T(3))); return;
    case OpKind::PackPaddedSequence: {
      auto r = ops::packPaddedSequence(T(0), T(1), in[2].toBool("batch_first"));
      at(n->output(0)) = r.data;
      at(n->output(1)) = r.batchSizes;
      return;
    }
    case OpKind::PackPaddedSequenceBackward:
      set(n, ops::packPaddedSequenceBackward(T(0), Ints(1), T(2), in[3].toBool("batch_first")));
      return;
    case OpKind::SumToSize: set(n, ops::sumToSize(T(0), Ints(1))); return;
    case OpKind::SelectBackward: set(n, ops::selectBackward(T(0), Ints(1), I(2), I(3))); return;
    case OpKind::SliceBackward: set(n, ops::sliceBackward(T(0), Ints(1), I(2), I(3), I(4), I(5))); return;
    case OpKind::EmbeddingBackward: set(n, ops::embeddingBackward(T(0), T(1), I(2))); return;
    case OpKind::SoftmaxBackward: set(n, ops::softmaxBackward(T(0), T(1), I(2))); return;
    case OpKind::LogSoftmaxBackward: set(n, ops::logSoftmaxBackward(T(0), T(1), I(2))); return;
    case OpKind::NllLossBackward: set(n, ops::nllLossBackward(T(0), T(1), T(2))); return;
    case OpKind::NativeBatchNormBackward: {
      auto r = ops::batchNormBackward(T(0), T(1), OptT(2), T(5), T(6), in[7].toBool("train"), in[8].toDouble("eps"));
      at(n->output(0)) = r.input, at(n->output(1)) = r.weight, at(n->output(2)) = r.bias;
      return;
    }
    case OpKind::MaxPool2dWithIndicesBackward:
      set(n, ops::maxPool2dBackward(T(0), T(1), T(7), poolParams(n, in.from(1))));
      return;
    case OpKind::AdaptiveAvgPool2dBackward: set(n, ops::adaptiveAvgPool2dBackward(T(0), T(1))); return;
    case OpKind::ConvolutionBackward: {
      // stride..groups at 3..6, as in conv2d; the bias gradient only where the graph reads it
      auto g = ops::conv2dBackward(T(0), T(1), T(2), convParams(in), n->output(2)->hasUses());
      at(n->output(0)) = g.input;
      at(n->output(1)) = g.weight;
      at(n->output(2)) = g.bias;
      return;
    }
    case OpKind::NativeLayerNormBackward: {
      auto g = ops::layerNormBackward(T(0), T(1), Ints(2), T(3), T(4), OptT(5), OptT(6));
      at(n->output(0)) = g.input;
      at(n->output(1)) = g.weight;
      at(n->output(2)) = g.bias;
      return;
    }
    case OpKind::VarBackward:
      set(n, ops::varBackward(T(0), T(1), Ints(2), in[3].toBool("unbiased"), in[4].toBool("keepdim")));
      return;
    case OpKind::PhiloxDropout:
      set(n, ops::dropout(T(0), in[1].toDouble("dropout p"), in[2].toBool("train"), T(3), I(4)));
      return;
    case OpKind::PhiloxUniform: set(n, ops::uniform(T(0), T(1), I(2))); return;
    case OpKind::CastOnDevice: {
      const std::vector<int64_t>& from = Ints(1);
      const int64_t to = T(0).device() == DeviceKind::Cpu ? I(2) : I(3);
      const bool casts = to >= 0 && std::find(from.begin(), from.end(), static_cast<int64_t>(T(0).dtype())) != from.end();
      const auto d = casts ? dtypeFromCode(to) : std::nullopt;
      USER_CHECK(!casts || d, "prim::cast_on_device: {} is not a dtype code", to);
      set(n, casts ? T(0).to(*d) : T(0));
      return;
    }
    case OpKind::Full: {
      const auto d = dtypeFromCode(I(2));
      USER_CHECK(d, "prim::full: {} is not a dtype code", I(2));
      for (int64_t s : Ints(0)) USER_CHECK(s >= 0, "prim::full: negative size {} in {}", s, shapeStr(Ints(0)));
      set(n, Tensor::full(Ints(0), *d, in[1].toDouble("full fill_value"), device_));
      return;
    }
    case OpKind::SplitWithSizes: set(n, IValue(ops::splitWithSizes(T(0), Ints(1), I(2)))); return;
#include "ir/pointwise_cases.inc"
      set(n, pointwise(n, in));
      return;
    case OpKind::SumBackward: set(n, ops::sumBackward(T(0), Ints(1), Ints(2), in[3].toBool("keepdim"))); return;
    case OpKind::MeanBackward: set(n, ops::meanBackward(T(0), Ints(1), Ints(2), in[3].toBool("keepdim"))); return;
  }
}

}  // namespace

std::string typeMismatch(const Type& t, const IValue& v) {
  if (!t.isTensor()) return {};
  if (!v.isTensor()) return fmt::format("expected a tensor, got {}", v.describe());
  const Tensor& x = v.toTensor();
  if (t.dtype && *t.dtype != x.dtype())
    return fmt::format("dtype {} where {} was expected", dtypeName(x.dtype()), dtypeName(*t.dtype));
  if (t.device && *t.device != x.device())
    return fmt::format("device {} where {} was expected", deviceName(x.device()), deviceName(*t.device));
  if (!t.sizes) return {};
  if (static_cast<int64_t>(t.sizes->size()) != x.dim())
    return fmt::format("rank {} where {} was expected ({} vs {})", x.dim(), t.sizes->size(), shapeStr(x.sizes()),
                       t.str());
  for (size_t d = 0; d < t.sizes->size(); ++d)
    if ((*t.sizes)[d] != kUnknownDim && (*t.sizes)[d] != x.size(static_cast<int64_t>(d)))
      return fmt::format("size {} in dimension {} where {} was expected ({} vs {})", x.size(static_cast<int64_t>(d)),
                         d, (*t.sizes)[d], shapeStr(x.sizes()), t.str());
  return {};
}

static std::vector<IValue> runFrame(const Graph& g, Frame& f, std::vector<IValue> inputs) {
  const GraphPlan& p = f.plan();
  USER_CHECK(inputs.size() == p.inputSlots.size(), "the graph takes {} inputs but {} were given",
             p.inputSlots.size(), inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    checkType(p.inputTypes[i], inputs[i], [&] { return "%" + g.inputs()[i]->name(); });
    f.slot(p.inputSlots[i]) = std::move(inputs[i]);
  }
  f.runBlock(g.block());
  if (p.outputsFirst) return f.takeFirstSlots(p.outputSlots.size());
  std::vector<IValue> out;
  out.reserve(p.outputSlots.size());
  for (size_t i = 0; i < p.outputSlots.size(); ++i) {
    IValue& v = f.slot(p.outputSlots[i]);
    if (p.outputMoves[i]) out.push_back(std::move(v));
    else out.push_back(v);
  }
  return out;
}

std::vector<IValue> Interpreter::run(std::vector<IValue> inputs) const { return run(std::move(inputs), RunOptions{}); }

std::vector<IValue> Interpreter::runWithTape(std::vector<IValue> inputs, const std::vector<bool>& requiresGrad,
                                             Tape& tape) const {
  RunOptions opts;
  opts.tape = &tape;
  opts.requiresGrad = requiresGrad;
  return run(std::move(inputs), opts);
}

std::vector<IValue> Interpreter::run(std::vector<IValue> inputs, const RunOptions& opts) const {
  if (opts.tape) {
    USER_CHECK(opts.requiresGrad.size() == inputs.size(), "{} requires_grad flags for {} inputs",
               opts.requiresGrad.size(), inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
      inputs[i] = detach(inputs[i]);
      if (!opts.requiresGrad[i] || !inputs[i].isTensor()) continue;
      const Tensor& t = inputs[i].toTensor();
      inputs[i] = t.withGradEdge(leafEdge(i, t.dtype()));
    }
  }
  Frame f(g_, gradients_, kernels_, plans_, opts.tape, opts.observer, opts.keepAlive, opts.device);
  return runFrame(g_, f, std::move(inputs));
}

}  // namespace gj
