#include "ir/op.h"

namespace gj {

namespace {
// The names ops.def's flags column uses.
constexpr uint8_t None = 0, Plumbing = kOpPlumbing, Grad = kOpDifferentiable, Legacy = kOpFusedByLegacy,
                  Te = kOpFusedByTe, Meta = kOpMetadata, Front = kOpFrontend, Subgraph = kOpSubgraph,
                  Compare = kOpComparison;
}  // namespace

static constexpr OpInfo kOps[] = {
#define OP(E, NAME, IN, OUT, GROUP, FLAGS, SCHEMA) {OpKind::E, NAME, IN, OUT, OpGroupKind::GROUP, FLAGS, -1, SCHEMA},
#define POINTWISE_OP(E, NAME, IN, OUT, FLAGS, SCHEMA) \
  {OpKind::E, NAME, IN, OUT, OpGroupKind::Pointwise, FLAGS, static_cast<int>(PointwiseOp::E), SCHEMA},
#include "ir/ops.def"
#undef POINTWISE_OP
#undef OP
};

// A pointwise op takes the operands its rule reads (support/pointwise.def).
static constexpr bool pointwiseAritiesAgree() {
  for (const OpInfo& op : kOps)
    if (op.pointwise >= 0 && op.numInputs != gjPointwiseArity(op.pointwise)) return false;
  return true;
}
static_assert(pointwiseAritiesAgree(), "a POINTWISE_OP row of ir/ops.def and its rule in support/pointwise.def "
                                       "take different numbers of operands");

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

std::string_view opAttribute(OpKind k) {
  if (k == OpKind::Constant) return "value";
  if (k == OpKind::GetAttr || k == OpKind::CallMethod) return "name";
  if (k == OpKind::RaiseIf) return "message";
  return "";
}

const OpInfo* lookupOp(std::string_view name, std::span<const Type> inputs) {
  for (const OpInfo& op : kOps) {
    if (op.name != name || (op.numInputs != -1 && op.numInputs != static_cast<int>(inputs.size()))) continue;
    const OpSignature& sig = opSignature(op.kind);
    bool fits = true;
    for (size_t i = 0; i < inputs.size() && i < sig.inputs.size() && fits; ++i) fits = argAccepts(sig.inputs[i], inputs[i]);
    if (fits) return &op;
  }
  return lookupOp(name, static_cast<int>(inputs.size()));
}

namespace {

bool isScalar(TypeKind k) { return k == TypeKind::Int || k == TypeKind::Float || k == TypeKind::Bool; }

}  // namespace

bool argAccepts(ArgKind want, const Type& type) {
  const TypeKind got = type.kind;
  switch (want) {
    case ArgKind::Any: return true;
    case ArgKind::Tensor: return got == TypeKind::Tensor;
    case ArgKind::OptionalTensor:
      return got == TypeKind::Tensor || got == TypeKind::None ||
             (got == TypeKind::Optional && type.elements.at(0).kind == TypeKind::Tensor);
    case ArgKind::TensorOrScalar: return got == TypeKind::Tensor || isScalar(got);
    case ArgKind::Scalar: return isScalar(got);
    case ArgKind::OptionalScalar:
      return isScalar(got) || got == TypeKind::None ||
             (got == TypeKind::Optional && isScalar(type.elements.at(0).kind));
    case ArgKind::Int: return got == TypeKind::Int;
    case ArgKind::Float: return got == TypeKind::Float || got == TypeKind::Int;
    case ArgKind::Bool: return got == TypeKind::Bool;
    case ArgKind::IntList: return got == TypeKind::IntList;
    case ArgKind::TensorList: return got == TypeKind::TensorList;
    case ArgKind::AnyList:
      return got == TypeKind::IntList || got == TypeKind::TensorList || got == TypeKind::FloatList ||
             got == TypeKind::BoolList;
  }
  return false;
}

namespace {

// The kind a schema's type word names; a word ending in "..." is a variadic marker.
ArgKind argKindOf(std::string_view word) {
  static const std::pair<std::string_view, ArgKind> kWords[] = {
      {"Tensor", ArgKind::Tensor},   {"Tensor?", ArgKind::OptionalTensor}, {"Tensor|Scalar", ArgKind::TensorOrScalar},
      {"Scalar", ArgKind::Scalar},   {"Scalar?", ArgKind::OptionalScalar}, {"int", ArgKind::Int},
      {"float", ArgKind::Float},
      {"bool", ArgKind::Bool},       {"int[]", ArgKind::IntList},          {"Tensor[]", ArgKind::TensorList},
      {"T[]", ArgKind::AnyList},     {"T", ArgKind::Any}};
  for (auto [w, k] : kWords)
    if (w == word) return k;
  return ArgKind::Any;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// The kinds of a parenthesized, comma-separated list that starts at text[0] == '(' (brackets inside an
// argument, as in "Tensor self [N, C]", do not split it); `end` is set past the ')'.
void readList(std::string_view text, std::vector<ArgKind>& kinds, std::vector<std::string_view>* names, bool& variadic,
              size_t& end) {
  int depth = 0;
  size_t start = 1;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '(' || c == '[') ++depth;
    if (c == ']') --depth;
    bool last = c == ')' && --depth == 0;
    if ((c == ',' && depth == 1) || last) {
      std::string_view arg = trim(text.substr(start, i - start));
      std::string_view word = arg.substr(0, arg.find(' '));
      if (word.ends_with("...")) variadic = true;
      else if (!word.empty() && !variadic) {
        kinds.push_back(argKindOf(word));
        if (names) {
          std::string_view name = word.size() < arg.size() ? trim(arg.substr(word.size())) : std::string_view{};
          names->push_back(name.substr(0, name.find(' ')));
        }
      }
      start = i + 1;
    }
    if (last) {
      end = i + 1;
      return;
    }
  }
  end = text.size();
}

OpSignature parseSignature(std::string_view schema) {
  OpSignature sig;
  size_t end = 0;
  if (schema.empty() || schema.front() != '(') {
    sig.variadicInputs = sig.variadicOutputs = true;
    return sig;
  }
  readList(schema, sig.inputs, &sig.inputNames, sig.variadicInputs, end);
  std::string_view rest = schema.substr(end);
  size_t arrow = rest.find("->");
  if (arrow == std::string_view::npos) {
    sig.variadicOutputs = true;
    return sig;
  }
  rest = trim(rest.substr(arrow + 2));
  if (!rest.empty() && rest.front() == '(') {
    readList(rest, sig.outputs, nullptr, sig.variadicOutputs, end);
  } else {
    std::string_view word = rest.substr(0, rest.find_first_of(" ;"));
    if (word.ends_with("...")) sig.variadicOutputs = true;
    else sig.outputs.push_back(argKindOf(word));
  }
  return sig;
}

}  // namespace

const OpSignature& opSignature(OpKind k) {
  static const std::vector<OpSignature> kSignatures = [] {
    std::vector<OpSignature> v;
    for (const OpInfo& op : kOps) v.push_back(parseSignature(op.schema));
    return v;
  }();
  return kSignatures[static_cast<size_t>(k)];
}

std::string_view argKindName(ArgKind k) {
  switch (k) {
    case ArgKind::Any: return "anything";
    case ArgKind::Tensor: return "a Tensor";
    case ArgKind::OptionalTensor: return "a Tensor or None";
    case ArgKind::TensorOrScalar: return "a Tensor or a scalar";
    case ArgKind::Scalar: return "a scalar (int, float or bool)";
    case ArgKind::OptionalScalar: return "a scalar or None";
    case ArgKind::Int: return "an int";
    case ArgKind::Float: return "a float";
    case ArgKind::Bool: return "a bool";
    case ArgKind::IntList: return "an int[]";
    case ArgKind::TensorList: return "a Tensor[]";
    case ArgKind::AnyList: return "a list";
  }
  return "?";
}

bool isComparison(OpKind k) { return opInfo(k).comparison(); }

int conditionOperand(OpKind k) {
  if (k == OpKind::Where) return 0;
  if (k == OpKind::MaskedFill) return 1;
  return -1;
}

bool promotesType(OpKind k, size_t i) {
  if (static_cast<int>(i) == conditionOperand(k)) return false;
  const OpSignature& sig = opSignature(k);
  if (i >= sig.inputs.size()) return false;
  const ArgKind a = sig.inputs[i];
  if (a == ArgKind::Tensor || a == ArgKind::TensorOrScalar) return true;
  return i > 0 && (k == OpKind::Clamp || k == OpKind::ClampMin || k == OpKind::ClampMax);
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
