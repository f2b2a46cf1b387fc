#include "ir/op.h"

namespace gj {

static constexpr OpInfo kOps[] = {
#define OP(E, NAME, IN, OUT, GROUP, SCHEMA) {OpKind::E, NAME, IN, OUT, OpGroupKind::GROUP, SCHEMA},
#include "ir/ops.def"
#undef OP
};

const OpInfo& opInfo(OpKind k) { return kOps[static_cast<size_t>(k)]; }

std::span<const OpInfo> allOps() { return kOps; }

const OpInfo* lookupOp(std::string_view name, int numInputs) {
  const OpInfo* first = nullptr;
  for (const OpInfo& op : kOps) {
    if (op.name != name) continue;
    if (op.numInputs == -1 || op.numInputs == numInputs) return &op;
    if (!first) first = &op;
  }
  return first;
}

std::string_view opGroupName(OpGroupKind g) {
  switch (g) {
    case OpGroupKind::Pointwise: return "pointwise";
    case OpGroupKind::Reduction: return "reduction";
    case OpGroupKind::View: return "view";
    case OpGroupKind::Gemm: return "gemm";
    case OpGroupKind::Control: return "control";
    case OpGroupKind::Data: return "data";
  }
  return "?";
}

}  // namespace gj
