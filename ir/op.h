#pragma once
// OpKind and its table, generated from ops.def.
#include "ir/type.h"
#include "support/pointwise.h"

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace gj {

enum class OpKind : uint16_t {  // more than 256 ops: TorchScript's forms beside graphjit's
#define OP(E, NAME, IN, OUT, GROUP, FLAGS, SCHEMA) E,
#include "ir/ops.def"
#undef OP
};

/// What kind of work an op does; fusers and passes decide by group, not by name.
enum class OpGroupKind : uint8_t { Pointwise, Reduction, View, Gemm, Control, Data };

/// The flags column of ops.def.
enum OpFlag : uint8_t {
  kOpPlumbing = 1,        ///< moves values, lists, scalars or control
  kOpDifferentiable = 2,  ///< has a gradient formula (passes/gradient_formulas.cpp)
  kOpFusedByLegacy = 4,   ///< the legacy fuser may put it in a group
  kOpFusedByTe = 8,       ///< the TE fuser may put it in a group
  kOpMetadata = 16,       ///< reads only its tensor operands' sizes, dtype and device, never their values
  kOpFrontend = 32,       ///< TorchScript's form, lowered by the frontend passes before anything runs it
  kOpSubgraph = 64,       ///< runs the graph in its `subgraph` attribute
  kOpComparison = 128,    ///< a tensor comparison: its result is bool whatever its operands' dtype
};

struct OpInfo {
  OpKind kind;
  std::string_view name;
  int numInputs;   ///< -1: variadic
  int numOutputs;  ///< -1: variadic
  OpGroupKind group;
  uint8_t flags;   ///< OpFlag bits
  int pointwise;   ///< a POINTWISE_OP's scalar rule (a PointwiseOp), or -1
  std::string_view schema;

  bool plumbing() const { return flags & kOpPlumbing; }
  bool differentiable() const { return flags & kOpDifferentiable; }
  /// No gradient flows through it, so it may read a value that requires grad (new_zeros, zeros_like).
  bool readsOnlyMetadata() const { return flags & kOpMetadata; }
  /// TorchScript's form (tuples, modules, calls, ...): only the parser and the frontend passes see it.
  bool frontendOnly() const { return flags & kOpFrontend; }
  bool hasSubgraph() const { return flags & kOpSubgraph; }
  bool comparison() const { return flags & kOpComparison; }
  /// The rule support/pointwise.def gives a POINTWISE_OP; nullopt for other ops.
  std::optional<PointwiseOp> pointwiseOp() const {
    return pointwise < 0 ? std::nullopt : std::optional(static_cast<PointwiseOp>(pointwise));
  }
};

/// What an op's argument or result may be, as its schema in ops.def spells it: `Tensor`, `Tensor?`
/// (or None), `Tensor|Scalar`, `Scalar` (int, float or bool), `int`, `float` (an int too), `bool`,
/// `int[]`, `Tensor[]`, `T[]` (either list); `Any` for the generic `T` and for what a variadic marker
/// (`T...`, `inputs...`) covers.
enum class ArgKind : uint8_t { Any, Tensor, OptionalTensor, TensorOrScalar, Scalar, OptionalScalar, Int, Float, Bool,
                               IntList, TensorList, AnyList };

/// An op's schema read as argument and result kinds. `inputs` covers every input when the schema lists
/// them one by one; with `variadicInputs` the inputs from inputs.size() on may be anything (likewise the
/// results).
struct OpSignature {
  std::vector<ArgKind> inputs, outputs;
  std::vector<std::string_view> inputNames;  ///< each of `inputs`' name as the schema writes it ("self")
  bool variadicInputs = false, variadicOutputs = false;
};

/// How the schema of `k` reads (parsed from ops.def once). Each schema states as many arguments as the
/// row's numInputs (tested).
const OpSignature& opSignature(OpKind k);
std::string_view argKindName(ArgKind k);

const OpInfo& opInfo(OpKind k);
/// Every row of ops.def, in order.
std::span<const OpInfo> allOps();
/// The op named `name` taking `numInputs` inputs; when no row has that arity, the first row of that name
/// (so the verifier can report an arity error); nullptr for an unknown name.
const OpInfo* lookupOp(std::string_view name, int numInputs);
/// Whether an argument of kind `want` takes a value of type `got`.
bool argAccepts(ArgKind want, const Type& got);
/// The op named `name` whose schema takes `inputs` (overloads of one arity told apart by their
/// argument kinds: aten::add of ints, of tensors, of lists); else as lookupOp(name, inputs.size()).
const OpInfo* lookupOp(std::string_view name, std::span<const Type> inputs);
std::string_view opGroupName(OpGroupKind g);
/// A pointwise comparison (ops.def's Compare flag: aten::gt, lt, ge, le, eq, ne): its result is a bool
/// tensor, its operands promote to each other's dtype as other pointwise ops' do.
bool isComparison(OpKind k);
/// The operand of a pointwise op that is a bool condition, read as 1 or 0 and left out of its type
/// promotion: aten::where's condition (0), aten::masked_fill's mask (1); -1 for every other op.
int conditionOperand(OpKind k);
/// Whether operand i of pointwise op k takes part in its type promotion (resultType): its tensor operands and
/// the numbers written in a Tensor|Scalar place, and clamp's bounds (PyTorch 1.13 promotes
/// clamp(int64 [2], 0.5) to float32); not a condition operand, add's alpha, a slope or masked_fill's value.
bool promotesType(OpKind k, size_t i);
/// The attribute a node of kind `k` carries in Node::constant(), as the text writes it in brackets: "value"
/// for prim::Constant (a Function constant writes "name"), "name" for prim::GetAttr and prim::CallMethod,
/// "message" for prim::RaiseIf; "" for an op without one.
std::string_view opAttribute(OpKind k);

}  // namespace gj
