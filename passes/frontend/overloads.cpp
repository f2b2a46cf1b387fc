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

}  // namespace

bool lowerOverloads(Graph& g) {
  std::vector<Node*> done;
  forEachNode(g.block(), [&](Node* n) {
    const std::optional<OpKind> plain = withoutDType(n->kind());
    if (!plain) return;
    Value* dtype = n->inputs().back();
    std::vector<Value*> operands(n->inputs().begin(), n->inputs().end() - 1);
    if (dtype->type().kind != TypeKind::None) {  // the operand cast first, as PyTorch does
      auto code = constantInt(dtype);
      auto d = code ? fromScalarType(*code) : std::nullopt;
      if (!d)
        throw Error(fmt::format("{}'s dtype must be a constant torch.float32, float64, int64 or bool", n->info().name),
                    n->where(), "write the dtype as a constant, or cast first");
      Node* code2 = g.createConstant(static_cast<int64_t>(*d));
      code2->insertBefore(n);
      Node* cast = g.create(OpKind::ToDType, {operands[0], code2->output()});
      cast->insertBefore(n);
      operands[0] = cast->output();
    }
    Node* m = g.create(*plain, operands);
    m->output()->setType(n->output()->type());
    m->setLoc(n->loc());
    m->setPySource(n->pySource());
    m->insertBefore(n);
    g.replaceValue(n->output(), m->output());
    done.push_back(n);
  });
  for (Node* n : done) g.erase(n);
  return !done.empty();
}

}  // namespace gj
