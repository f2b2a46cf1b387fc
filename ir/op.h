#pragma once
// OpKind and its table, generated from ops.def.
#include <cstdint>
#include <span>
#include <string_view>

namespace gj {

enum class OpKind : uint8_t {
#define OP(E, NAME, IN, OUT, GROUP, SCHEMA) E,
#include "ir/ops.def"
#undef OP
};

/// What kind of work an op does; fusers and passes decide by group, not by name.
enum class OpGroupKind : uint8_t { Pointwise, Reduction, View, Gemm, Control, Data };

struct OpInfo {
  OpKind kind;
  std::string_view name;
  int numInputs;   ///< -1: variadic
  int numOutputs;  ///< -1: variadic
  OpGroupKind group;
  std::string_view schema;
};

const OpInfo& opInfo(OpKind k);
/// Every row of ops.def, in order.
std::span<const OpInfo> allOps();
/// The op named `name` taking `numInputs` inputs; when no row has that arity, the first row of that name
/// (so the verifier can report an arity error); nullptr for an unknown name.
const OpInfo* lookupOp(std::string_view name, int numInputs);
std::string_view opGroupName(OpGroupKind g);

}  // namespace gj
