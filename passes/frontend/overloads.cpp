// lower-overloads: the overloads TorchScript prints with arguments graphjit's rows leave out.
#include "passes/frontend.h"
#include "passes/util.h"
#include "support/error.h"

#include <fmt/format.h>

namespace gj {

namespace {

// Each overload and its row without the trailing dtype: aten::sum(self, dtype) -> aten::sum(self).
constexpr std::pair<OpKind, OpKind> kWithoutDType[] = {
    {OpKind::SumDType, OpKind::Sum},           {OpKind::SumDimDType, OpKind::SumDim},
    {OpKind::MeanDType, OpKind::Mean},         {OpKind::MeanDimDType, OpKind::MeanDim},
    {OpKind::SoftmaxDType, OpKind::Softmax},   {OpKind::LogSoftmaxDType, OpKind::LogSoftmax}};

std::optional<OpKind> withoutDType(OpKind k) {
  for (auto [overload, plain] : kWithoutDType)
    if (overload == k) return plain;
  return std::nullopt;
}

// PyTorch's ScalarType codes (c10/core/ScalarType.h) of the dtypes graphjit has.
std::optional<DType> fromScalarType(int64_t code) {
  switch (code) {
    case 4: return DType::Int64;
    case 6: return DType::Float32;
    case 7: return DType::Float64;
    case 11: return DType::Bool;
    default: return std::nullopt;
  }
}

// The factories with options, and their rows without: aten::zeros_like(self, dtype, layout, device,
// pin_memory, memory_format) -> aten::zeros_like(self). `options` is where the dtype is.
struct Factory {
  OpKind overload, plain;
  size_t options;
};
constexpr Factory kFactories[] = {{OpKind::ZerosLikeOptions, OpKind::ZerosLike, 1},
                                  {OpKind::OnesLikeOptions, OpKind::OnesLike, 1},
                                  {OpKind::FullLikeOptions, OpKind::FullLike, 2}};

const Factory* factory(OpKind k) {
  for (const Factory& f : kFactories)
    if (f.overload == k) return &f;
  return nullptr;
}

// A `kind` node on `inputs` before `at`, reporting at at's positions: the op it lowers.
Value* emitAt(Node* at, OpKind kind, const std::vector<Value*>& inputs) {
  Value* v = emitBefore(at, kind, inputs);
  v->node()->setPositionsOf(at);
  return v;
}

// x in the dtype a ScalarType code names (a constant), for an op's `dtype` argument that is not None.
Value* castTo(Node* n, Value* x, Value* dtype) {
  auto code = constantInt(dtype);
  auto d = code ? fromScalarType(*code) : std::nullopt;
  if (!d)
    throw Error(fmt::format("{}'s dtype must be a constant torch.float32, float64, int64 or bool", n->info().name),
                n->where(), "write the dtype as a constant, or cast first");
  return emitAt(n, OpKind::ToDType, {x, constantBefore(n, static_cast<int64_t>(*d))});
}

// zeros_like / ones_like / full_like: a dtype casts the result; the layout must be strided (None or 0) and
// pin_memory None or false; a device is taken as the one the graph runs on (a trace records its example's);
// the memory format is a layout hint graphjit's contiguous results need not follow.
Value* lowerFactory(Node* n, const Factory& f) {
  Value* layout = n->input(f.options + 1);
  Value* pinMemory = n->input(f.options + 3);
  const bool strided = layout->type().kind == TypeKind::None || constantInt(layout) == 0;
  const bool pageable = pinMemory->type().kind == TypeKind::None || constantBool(pinMemory) == false;
  if (!strided || !pageable)
    throw Error(fmt::format("{} with a layout other than torch.strided or pinned memory", n->info().name), n->where(),
                "leave layout and pin_memory out: graphjit's results are strided, on the device the graph runs on");
  std::vector<Value*> operands(n->inputs().begin(), n->inputs().begin() + static_cast<long>(f.options));
  Value* dtype = n->input(f.options);
  if (dtype->type().kind != TypeKind::None) operands[0] = castTo(n, operands[0], dtype);
  return emitAt(n, f.plain, operands);
}

// gelu(x, approximate): 'none' is aten::gelu(x); 'tanh' is 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))).
Value* lowerGelu(Node* n) {
  Value* x = n->input(0);
  const auto mode = constantString(n->input(1));
  if (mode == "none") return emitAt(n, OpKind::Gelu, {x});
  if (mode != "tanh")
    throw Error("aten::gelu's approximate must be the constant 'none' or 'tanh'", n->where(),
                "pass approximate='none' or approximate='tanh'");
  auto k = [&](double v) { return constantBefore(n, v); };
  Value* one = constantBefore(n, int64_t{1});
  Value* cube = emitAt(n, OpKind::Mul, {emitAt(n, OpKind::Mul, {x, x}), x});
  Value* inner = emitAt(n, OpKind::Add, {x, emitAt(n, OpKind::Mul, {cube, k(0.044715)}), one});
  Value* t = emitAt(n, OpKind::Tanh, {emitAt(n, OpKind::Mul, {inner, k(0.79788456080286536)})});
  return emitAt(n, OpKind::Mul, {emitAt(n, OpKind::Mul, {x, k(0.5)}), emitAt(n, OpKind::Add, {t, k(1.0), one})});
}

// The overload n lowered to graphjit's rows, or nullptr when n is none of them.
Value* lowerOverload(Node* n) {
  if (const Factory* f = factory(n->kind())) return lowerFactory(n, *f);
  if (n->kind() == OpKind::GeluApproximate) return lowerGelu(n);
  const std::optional<OpKind> plain = withoutDType(n->kind());
  if (!plain) return nullptr;
  Value* dtype = n->inputs().back();
  std::vector<Value*> operands(n->inputs().begin(), n->inputs().end() - 1);
  if (dtype->type().kind != TypeKind::None) operands[0] = castTo(n, operands[0], dtype);  // first, as PyTorch
  return emitAt(n, *plain, operands);
}

}  // namespace

bool lowerOverloads(Graph& g) {
  std::vector<Node*> done;
  forEachNode(g.block(), [&](Node* n) {
    Value* lowered = lowerOverload(n);
    if (!lowered) return;
    lowered->setType(n->output()->type());
    g.replaceValue(n->output(), lowered);
    done.push_back(n);
  });
  for (Node* n : done) g.erase(n);
  return !done.empty();
}

}  // namespace gj
