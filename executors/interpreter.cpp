#include "executors/interpreter.h"

#include "executors/interpreter/frame.h"

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

static std::vector<IValue> runFrame(const Graph& g, interp::Frame& f, std::vector<IValue> inputs) {
  const interp::GraphPlan& p = f.plan();
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
  interp::Frame f(g_, gradients_, kernels_, plans_, opts.tape, opts.observer, opts.keepAlive, opts.device);
  return runFrame(g_, f, std::move(inputs));
}

}  // namespace gj
