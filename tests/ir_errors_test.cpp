// Malformed IR text: every case gives a gj::Error naming file:line:col and what was expected; none crashes.
#include "ir/parser.h"

#include <gtest/gtest.h>

namespace gj {
namespace {

struct BadIR {
  const char* name;
  const char* text;
  const char* where;    // expected "file:line:col"
  const char* message;  // expected substring of the message
};

const BadIR kCases[] = {
    {"Empty", "", "bad.ir:1:1", "expected 'graph' but found end of input"},
    {"NotAGraph", "grph(%x : Tensor):\n  return (%x)\n", "bad.ir:1:1", "expected 'graph' but found identifier 'grph'"},
    {"MissingColonAfterParams", "graph(%x : Tensor)\n  return (%x)\n", "bad.ir:2:3", "expected ':'"},
    {"ParamWithoutType", "graph(%x):\n  return (%x)\n", "bad.ir:1:9", "expected ':'"},
    {"UnknownType", "graph(%x : Flot(3)):\n  return (%x)\n", "bad.ir:1:12", "unknown type 'Flot'"},
    {"NegativeDim", "graph(%x : Float(-3)):\n  return (%x)\n", "bad.ir:1:18", "negative dimension -3"},
    {"BadDevice", "graph(%x : Float(3, device=tpu)):\n  return (%x)\n", "bad.ir:1:28", "unknown device 'tpu'"},
    {"UnterminatedType", "graph(%x : Float(3, 4):\n  return (%x)\n", "bad.ir:1:23", "expected ')'"},
    {"UndefinedValue", "graph(%x : Tensor):\n  %y : Tensor = aten::tanh(%z)\n  return (%y)\n", "bad.ir:2:28",
     "use of undefined value %z"},
    {"UseBeforeDef",
     "graph(%x : Tensor):\n  %b : Tensor = aten::tanh(%a)\n  %a : Tensor = aten::sigmoid(%x)\n  return (%b)\n",
     "bad.ir:2:28", "use of undefined value %a"},
    {"Redefinition", "graph(%x : Tensor):\n  %x : Tensor = aten::tanh(%x)\n  return (%x)\n", "bad.ir:2:3",
     "%x is defined twice (first at bad.ir:1:7)"},
    {"UnknownOp", "graph(%x : Tensor):\n  %y : Tensor = aten::tahn(%x)\n  return (%y)\n", "bad.ir:2:17",
     "unknown op 'aten::tahn'"},
    {"OpWithoutNamespace", "graph(%x : Tensor):\n  %y : Tensor = tanh(%x)\n  return (%y)\n", "bad.ir:2:17",
     "expected an op name such as aten::mm"},
    {"WrongArity", "graph(%x : Tensor):\n  %y : Tensor = aten::mm(%x)\n  return (%y)\n", "bad.ir:2:17",
     "aten::mm expects 2 inputs but has 1"},
    {"MissingReturn", "graph(%x : Tensor):\n  %y : Tensor = aten::tanh(%x)\n", "bad.ir:3:1",
     "unexpected end of input: expected 'return'"},
    {"TrailingText", "graph(%x : Tensor):\n  return (%x)\n  %y\n", "bad.ir:3:3", "after the graph's return"},
    {"UnexpectedCharacter", "graph(%x : Tensor):\n  %y : Tensor = aten::tanh(%x) $\n  return (%y)\n", "bad.ir:2:32",
     "unexpected character '$'"},
    {"EmptyValueName", "graph(% : Tensor):\n  return ()\n", "bad.ir:1:7", "expected a value name after '%'"},
    {"ConstantTypeMismatch", "graph():\n  %c : int = prim::Constant[value=1.5]()\n  return (%c)\n", "bad.ir:2:35",
     "constant 1.5 does not fit its declared type int"},
    {"ConstantWithoutValue", "graph():\n  %c : int = prim::Constant()\n  return (%c)\n", "bad.ir:2:14",
     "constant of type int holds None"},
    {"AttributeOnNonConstant", "graph(%x : Tensor):\n  %y : Tensor = aten::tanh[value=1](%x)\n  return (%y)\n",
     "bad.ir:2:34", "aten::tanh takes no value attribute"},
    {"ReturnInsideBlock",
     "graph(%x : Tensor, %n : int, %t : bool):\n  %y : Tensor = prim::Loop(%n, %t, %x)\n    block0(%i : int, %a : "
     "Tensor):\n      return (%a)\n  return (%y)\n",
     "bad.ir:4:7", "'return' inside a block"},
    {"ArrowOutsideBlock", "graph(%x : Tensor):\n  -> (%x)\n", "bad.ir:2:3", "'->' outside a block"},
    {"BlockNumbering",
     "graph(%c : bool, %x : Tensor):\n  %y : Tensor = prim::If(%c)\n    block1():\n      -> (%x)\n  return (%y)\n",
     "bad.ir:3:5", "expected block0 but found block1"},
    {"LoopBodyArity",
     "graph(%x : Tensor, %n : int, %t : bool):\n  %y : Tensor = prim::Loop(%n, %t, %x)\n    block0(%i : int):\n     "
     " -> (%t, %x)\n  return (%y)\n",
     "bad.ir:2:17", "loop body takes 1 parameters but needs 2"},
    {"LoopTripCountType",
     "graph(%x : Tensor, %n : float, %t : bool):\n  %y : Tensor = prim::Loop(%n, %t, %x)\n    block0(%i : int, %a : "
     "Tensor):\n      -> (%t, %a)\n  return (%y)\n",
     "bad.ir:2:17", "the trip count must be int but %n is float"},
    {"IfWithOneBlock",
     "graph(%c : bool, %x : Tensor):\n  %y : Tensor = prim::If(%c)\n    block0():\n      -> (%x)\n  return (%y)\n",
     "bad.ir:2:17", "prim::If takes one condition and has two blocks"},
    {"ValueEscapesBlock",
     "graph(%c : bool, %x : Tensor):\n  %y : Tensor = prim::If(%c)\n    block0():\n      %z : Tensor = "
     "aten::tanh(%x)\n      -> (%z)\n    block1():\n      -> (%x)\n  return (%z)\n",
     "bad.ir:8:11", "%z is not visible here"},
    {"IntOutOfRange", "graph():\n  %c : int = prim::Constant[value=99999999999999999999]()\n  return (%c)\n",
     "bad.ir:2:35", "integer '99999999999999999999' is out of range"},
    // Found by fuzzing (tests/fuzz/regressions/ir/float-literal-out-of-range.ir): std::stod threw.
    {"FloatOutOfRange", "graph():\n  %c : float = prim::Constant[value=5.5e555555]()\n  return (%c)\n",
     "bad.ir:2:37", "float '5.5e555555' is out of range"},
    {"BadRequiresGrad", "graph(%x : Float(2, requires_grad=2)):\n  return (%x)\n", "bad.ir:1:35",
     "requires_grad must be 0 or 1"},
    {"ListLiteralOfFloats", "graph():\n  %c : int[] = prim::Constant[value=[1.5]]()\n  return (%c)\n", "bad.ir:2:37",
     "constant [1.5] does not fit its declared type int[]"},
    // TorchScript's text (tests/data/torchscript holds whole graphs PyTorch printed)
    {"TensorConstantData", "graph():\n  %c : Tensor = prim::Constant[value=<Tensor>]()\n  return (%c)\n", "bad.ir:2:38",
     "a tensor constant's data is not in the text"},
    {"TensorConstantNotATensor", "graph():\n  %c : int = prim::Constant[value={2}]()\n  return (%c)\n", "bad.ir:2:36",
     "a {...} constant is a tensor, but it is declared int"},
    {"PythonCall", "graph(%x : Tensor):\n  %y : Tensor = ^not_fusible[]()(%x)\n  return (%y)\n", "bad.ir:2:17",
     "a call of the Python function 'not_fusible' (TorchScript's ^ op): graphjit runs no Python"},
    {"DictType", "graph(%d : Dict(str, Tensor)):\n  return ()\n", "bad.ir:1:12", "TorchScript's type Dict is not supported"},
    {"ListOfTuples", "graph(%d : (int, int)[]):\n  return ()\n", "bad.ir:1:22", "lists of (int, int) are not supported"},
    {"UnterminatedString", "graph():\n  %s : str = prim::Constant[value=\"abc]()\n  return (%s)\n", "bad.ir:2:35",
     "unterminated string"},
    {"UnknownEscape", "graph():\n  %s : str = prim::Constant[value=\"a\\qb\"]()\n  return (%s)\n", "bad.ir:2:38",
     "unknown escape '\\q'"},
    {"GetAttrWithoutName", "graph(%self : __torch__.M):\n  %w : Tensor = prim::GetAttr(%self)\n  return (%w)\n",
     "bad.ir:2:17", "prim::GetAttr needs a name=\"...\" attribute"},
    {"NameOnConstantOfInt", "graph():\n  %f : int = prim::Constant[name=\"f\"]()\n  return (%f)\n", "bad.ir:2:34",
     "a constant with name= is a Function, but it is declared int"},
    {"StrIntoInt", "graph():\n  %s : int = prim::Constant[value=\"x\"]()\n  return (%s)\n", "bad.ir:2:35",
     "constant \"x\" does not fit its declared type int"},
    {"UnknownOpNamesPythonSource",
     "graph(%x : Tensor):\n  %y : Tensor = aten::frobnicate(%x) # model.py:12:4\n  return (%y)\n",
     "bad.ir:2:17 (Python source model.py:12:4)", "unknown op 'aten::frobnicate'"},
    {"StridesNotNumbers", "graph(%x : Float(2, strides=[a])):\n  return (%x)\n", "bad.ir:1:30",
     "a stride is an integer or '*'"},
    {"TupleElementOfAnotherType",
     "graph(%x : Tensor):\n  %n : NoneType = prim::Constant()\n  %t : (Tensor, Tensor) = prim::TupleConstruct(%n, %x)\n"
     "  %a : Tensor, %b : Tensor = prim::TupleUnpack(%t)\n  return (%a)\n",
     "bad.ir:3:27", "element 0 of %t is Tensor, but %n is NoneType"},
    {"TupleUnpackedIntoTooFew",
     "graph(%x : Tensor):\n  %t : (Tensor, Tensor) = prim::TupleConstruct(%x, %x)\n"
     "  %a : Tensor = prim::TupleUnpack(%t)\n  return (%a)\n",
     "bad.ir:3:17", "%t is (Tensor, Tensor), but prim::TupleUnpack unpacks it into 1 value"},
    {"ParamNodeWritten", "graph(%x : Tensor):\n  %y : Tensor = prim::Param()\n  return (%y)\n", "bad.ir:2:17",
     "prim::Param cannot be written as a node"},
};

class MalformedIR : public testing::TestWithParam<BadIR> {};

TEST_P(MalformedIR, ReportsWhereAndWhat) {
  const BadIR& c = GetParam();
  try {
    parseIR(c.text, "bad.ir");
    FAIL() << "parsed without error:\n" << c.text;
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), c.where) << e.what();
    EXPECT_NE(e.message().find(c.message), std::string::npos) << "message: " << e.message();
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, MalformedIR, testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });

// Types and blocks nested thousands deep (what the fuzzer wrote: a type with 7000 `?`) are errors at the
// first level past the bound, not a stack overflow in the parser or in printing the type.
TEST(MalformedIRHints, DeepNestingIsAnErrorNotAStackOverflow) {
  auto errorOf = [](const std::string& text) -> std::string {
    try {
      parseIR(text, "deep.ir");
    } catch (const Error& e) {
      return e.what();
    }
    return "parsed";
  };
  const std::string optionals = "graph(%x : Float(3)" + std::string(7000, '?') + "):\n  return (%x)\n";
  EXPECT_NE(errorOf(optionals).find("deep.ir:1:12: type nested more than 32 levels deep"), std::string::npos)
      << errorOf(optionals);
  const std::string tuples = "graph(%x : " + std::string(5000, '(') + "int" + std::string(5000, ')') + "):\n  return (%x)\n";
  EXPECT_NE(errorOf(tuples).find("type nested more than 32 levels deep"), std::string::npos) << errorOf(tuples);
  EXPECT_EQ(errorOf("graph(%x : Float(3)" + std::string(20, '?') + "):\n  return (%x)\n"), "parsed");
  // 300 ifs, each inside the one before
  std::string ifs = "graph(%c : bool):\n";
  for (int i = 0; i < 300; ++i) ifs += "  prim::If(%c)\n    block0():\n";
  ifs += "      -> ()\n";
  for (int i = 0; i < 300; ++i) ifs += "    block1():\n      -> ()\n";
  ifs += "  return (%c)\n";
  EXPECT_NE(errorOf(ifs).find("blocks nested more than 256 deep"), std::string::npos) << errorOf(ifs).substr(0, 300);
}

TEST(MalformedIRHints, UnknownOpSuggestsTheClosestName) {
  try {
    parseIR("graph(%x : Tensor):\n  %y : Tensor = aten::sigmod(%x)\n  return (%y)\n");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(e.hint().find("did you mean 'aten::sigmoid'"), std::string::npos) << e.hint();
  }
}

TEST(MalformedIRHints, MissingFileIsAClearError) {
  try {
    parseIRFile("/nonexistent/model.ir");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot open IR file '/nonexistent/model.ir'"), std::string::npos);
  }
}

// Every prefix of a valid program is malformed in some way; none may crash or hang.
TEST(MalformedIRFuzz, EveryPrefixOfAValidProgramFailsCleanly) {
  std::string text =
      "graph(%x : Float(3, 4), %n : int):\n"
      "  %t : bool = prim::Constant[value=1]()\n"
      "  %y : Tensor = prim::Loop(%n, %t, %x)\n"
      "    block0(%i : int, %a : Tensor):\n"
      "      %b : Tensor = aten::tanh(%a)\n"
      "      -> (%t, %b)\n"
      "  return (%y)\n";
  EXPECT_NO_THROW(parseIR(text));
  size_t failures = 0;
  for (size_t n = 0; n + 2 < text.size(); ++n) {
    try {
      parseIR(text.substr(0, n), "p.ir");
    } catch (const Error& e) {
      ++failures;
      EXPECT_NE(e.where().find("p.ir:"), std::string::npos) << "prefix " << n << ": " << e.what();
    }
  }
  EXPECT_EQ(failures, text.size() - 2);
}

}  // namespace
}  // namespace gj
