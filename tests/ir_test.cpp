// Printer, parser and verifier: round trips of every model's graph, and graph editing invariants.
#include "executors/interpreter.h"
#include "ir/builder.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "models/lstm.h"
#include "support/arena.h"
#include "tests/support/reference.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>

namespace gj {
namespace {

std::vector<Model> everyModel() {
  std::vector<Model> ms;
  for (LstmVariantKind v : allLstmVariants()) {
    ms.push_back(buildLstm(v, {3, 2, 4, 5, 1}));
    ms.push_back(buildLstm(v, {3, 2, 4, 5, 3}));
  }
  ModelConfig small;
  small.seqLength = 3, small.miniBatch = 2, small.inputSize = 4, small.hiddenSize = 5, small.numLayers = 2;
  small.vocab = 11, small.embedding = 6;
  for (const auto& name : modelNames()) ms.push_back(buildModel(name, small));
  return ms;
}

TEST(RoundTrip, EveryModelPrintsParsesAndPrintsIdentically) {
  for (const Model& m : everyModel()) {
    SCOPED_TRACE(m.name);
    EXPECT_TRUE(verify(*m.graph).empty());
    std::string first = printIR(*m.graph);
    auto parsed = parseIR(first, m.name + ".ir");
    EXPECT_EQ(printIR(*parsed), first);
  }
}

TEST(RoundTrip, ParsedGraphComputesTheSameAsTheBuiltOne) {
  Model m = buildLstm(LstmVariantKind::JitPremulBias, {4, 3, 5, 6, 2});
  auto parsed = parseIR(printIR(*m.graph));
  auto inputs = randomInputs(m, 9);
  std::vector<IValue> in(inputs.begin(), inputs.end());
  auto a = Interpreter(*m.graph).run(in);
  auto b = Interpreter(*parsed).run(in);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(test::relError(a[i].toTensor(), b[i].toTensor()), 0.0);
}

TEST(RoundTrip, TypesAndConstantsSurvive) {
  const char* text = R"IR(graph(%x : Float(*, 4, device=cpu, requires_grad=1),
      %y : Double(),
      %z : Tensor(..., device=cpu),
      %w : Long):
  %a : float = prim::Constant[value=0.125]()
  %b : float = prim::Constant[value=-inf]()
  %c : int[] = prim::Constant[value=[1, -2, 3]]()
  %d : bool = prim::Constant[value=1]()
  %e : NoneType = prim::Constant()
  %f : float = prim::Constant[value=1.]()
  %g : float = prim::Constant[value=1e-30]()
  return (%a, %b, %c, %d, %e, %f, %g)
)IR";
  auto g = parseIR(text);
  EXPECT_EQ(printIR(*g), text);
}

TEST(RoundTrip, UnnamedValuesGetNumbersThatDoNotCollideWithNames) {
  Graph g;
  GraphBuilder b(g);
  Value* x = g.addInput(Type::tensor(DType::Float32, {2}), "0");  // a name that looks like a number
  Value* y = b.op(OpKind::Tanh, {x});
  g.registerOutput(b.op(OpKind::Sigmoid, {y}));
  std::string text = printIR(g);
  EXPECT_EQ(printIR(*parseIR(text)), text);
  EXPECT_NE(text.find("%1 : Tensor = aten::tanh(%0)"), std::string::npos) << text;
}

TEST(Graph, SetNameMakesDuplicatesUnique) {
  Graph g;
  Value* a = g.addInput(Type::tensor(), "h");
  Value* b = g.addInput(Type::tensor(), "h");
  Value* c = g.addInput(Type::tensor(), "h.1");
  EXPECT_EQ(a->name(), "h");
  EXPECT_EQ(b->name(), "h.1");
  EXPECT_EQ(c->name(), "h.2");
}

TEST(Graph, ReplaceAllUsesWithUpdatesUseLists) {
  auto g = parseIR(R"IR(graph(%x : Float(3), %y : Float(3)):
  %a : Tensor = aten::sigmoid(%x)
  %b : Tensor = aten::tanh(%a)
  %c : Tensor = aten::mul(%a, %b)
  return (%c)
)IR");
  Value* a = g->findValue("a");
  Value* y = g->findValue("y");
  g->replaceAllUsesWith(a, y);
  EXPECT_FALSE(a->hasUses());
  EXPECT_EQ(y->uses().size(), 2u);
  EXPECT_TRUE(verify(*g).empty());
  g->erase(a->node());
  EXPECT_TRUE(verify(*g).empty());
  EXPECT_EQ(printIR(*g).find("sigmoid"), std::string::npos);
}

TEST(Graph, RemoveInputKeepsUseIndicesConsistent) {
  auto g = parseIR(R"IR(graph(%x : Tensor, %y : Tensor):
  %l : Tensor[] = prim::ListConstruct(%x, %y, %x)
  return (%l)
)IR");
  Node* n = g->findValue("l")->node();
  n->removeInput(0);
  EXPECT_TRUE(verify(*g).empty());
  EXPECT_EQ(n->input(1), g->findValue("x"));
  EXPECT_EQ(g->findValue("x")->uses()[0].index, 1u);
}

TEST(Graph, CloneIsDeepAndEqual) {
  Model m = buildLstm(LstmVariantKind::JitMultilayer, {2, 2, 3, 4, 2});
  auto c = m.graph->clone();
  EXPECT_EQ(printIR(*c), printIR(*m.graph));
  EXPECT_TRUE(verify(*c).empty());
}

// Note [Arena chunks]: objects keep their addresses and values while the arena grows past its largest
// chunk (one huge page, aligned to it), and each is destroyed once, with the arena.
TEST(Arena, ObjectsStayPutThroughHugePageChunksAndAreDestroyedOnce) {
  struct Counted {
    Counted(int64_t v, int64_t* destroyed) : value(v), destroyed(destroyed) {}
    ~Counted() { ++*destroyed; }
    int64_t value;
    int64_t* destroyed;
    std::byte pad[240];
  };
  static_assert(Arena<Counted>::kMaxChunk == 8192);
  // 8 + 16 + ... + 4096 = 8184 objects fill the malloc'd chunks; the rest go to huge-page ones.
  constexpr int64_t kCount = 8184 + 8192 + 100;
  int64_t destroyed = 0;
  std::set<Counted*> hugeChunks;
  {
    Arena<Counted> arena;
    std::vector<Counted*> made;
    for (int64_t i = 0; i < kCount; ++i) made.push_back(arena.make(3 * i + 7, &destroyed));
    EXPECT_EQ(arena.size(), static_cast<size_t>(kCount));
    EXPECT_EQ(arena.capacity(), 8184u + 2 * 8192u);
    for (int64_t i = 0; i < kCount; ++i) ASSERT_EQ(made[i]->value, 3 * i + 7) << "object " << i;
    EXPECT_EQ(std::set<Counted*>(made.begin(), made.end()).size(), made.size());
    // The first object of each huge-page chunk starts its page.
    EXPECT_EQ(reinterpret_cast<uintptr_t>(made[8184]) % arena_detail::kHugePage, 0u);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(made[8184 + 8192]) % arena_detail::kHugePage, 0u);
    EXPECT_EQ(destroyed, 0);
    hugeChunks = {made[8184], made[8184 + 8192]};
  }
  EXPECT_EQ(destroyed, kCount);
#if !defined(__SANITIZE_ADDRESS__)
  // A dead arena's huge chunks go to a pool, and the next arena to need one takes them from there, with no
  // page of them to zero again (under ASan the pool keeps none, so that a use after free is caught).
  Arena<Counted> next;
  std::vector<Counted*> made;
  for (int64_t i = 0; i < kCount; ++i) made.push_back(next.make(i, &destroyed));
  for (Counted* chunk : {made[8184], made[8184 + 8192]}) EXPECT_TRUE(hugeChunks.contains(chunk));
  EXPECT_EQ(made[8184 + 8192 + 99]->value, 8184 + 8192 + 99);
#endif
}

// Note [Dense value maps]: a map made for a graph answers for that graph's values through its array (values
// made after it included) and for another graph's through its hash table; keys never collide across the two,
// though the graphs' ids do.
TEST(Graph, ValueMapsKeepEachGraphsValuesApart) {
  Model a = buildLstm(LstmVariantKind::JitPremul, {2, 2, 3, 4, 1});
  Model b = buildLstm(LstmVariantKind::JitPremul, {2, 2, 3, 4, 1});
  Graph& ga = *a.graph;
  Graph& gb = *b.graph;
  std::vector<Value*> va, vb;
  for (const Node* n : *ga.block())
    for (Value* v : n->outputs()) va.push_back(v);
  for (const Node* n : *gb.block())
    for (Value* v : n->outputs()) vb.push_back(v);
  ASSERT_EQ(va.size(), vb.size());
  ASSERT_GT(va.size(), 10u);
  for (bool dense : {true, false}) {
    ValueMap m = dense ? ValueMap(ga) : ValueMap();
    // a's values to b's, b's (the same ids) to a's in reverse.
    for (size_t i = 0; i < va.size(); ++i) m[va[i]] = vb[i];
    for (size_t i = 0; i < vb.size(); ++i) m[vb[i]] = va[va.size() - 1 - i];
    // A value made after the map, with an id past its array.
    Node* late = ga.create(OpKind::Neg, {va[0]});
    late->insertAfter(va[0]->node());
    EXPECT_FALSE(m.contains(late->output()));
    m[late->output()] = vb[1];
    for (size_t i = 0; i < va.size(); ++i) {
      EXPECT_EQ(m.find(va[i]), vb[i]) << "dense " << dense << ", value " << i;
      EXPECT_EQ(m.at(vb[i]), va[va.size() - 1 - i]) << "dense " << dense << ", value " << i;
    }
    EXPECT_EQ(m.find(late->output()), vb[1]);
    EXPECT_EQ(m.mapOr(ga.inputs()[0]), ga.inputs()[0]) << "an unmapped value stands for itself";
    EXPECT_EQ(m.find(gb.inputs()[0]), nullptr);
    ga.erase(late);
  }
}

// Note [Order keys]: nodes inserted again and again at one place (before the same node, after the same
// node) outrun the room between keys; isBefore must still follow the list, and nodesList (which sizes
// itself from the block's count) must hold every node once.
TEST(Graph, OrderKeysFollowTheListThroughRepeatedInsertsAtOnePlace) {
  Graph g;
  Value* x = g.addInput(Type::tensor(), "x");
  Node* last = g.block()->append(g.create(OpKind::Neg, {x}));
  Node* first = g.create(OpKind::Neg, {x});
  first->insertBefore(last);
  for (int i = 0; i < 3000; ++i) {
    g.create(OpKind::Neg, {x})->insertBefore(last);  // each right before the same node
    g.create(OpKind::Neg, {x})->insertAfter(first);  // each right after the same node
  }
  std::vector<Node*> order = g.block()->nodesList();
  ASSERT_EQ(order.size(), 6002u);
  EXPECT_EQ(order.front(), first);
  EXPECT_EQ(order.back(), last);
  for (size_t i = 0; i + 1 < order.size(); ++i) {
    ASSERT_TRUE(order[i]->isBefore(order[i + 1])) << i;
    ASSERT_FALSE(order[i + 1]->isBefore(order[i])) << i;
  }
  order[10]->moveBefore(order[0]);
  g.erase(order[20]);
  std::vector<Node*> after = g.block()->nodesList();
  ASSERT_EQ(after.size(), 6001u);
  EXPECT_EQ(after.front(), order[10]);
  for (size_t i = 0; i + 1 < after.size(); ++i) ASSERT_TRUE(after[i]->isBefore(after[i + 1])) << i;
}

// Note [Structural equality]
TEST(Graph, StructuralEqualityIgnoresNamesButNotKindsConstantsTypesOrOperands) {
  const char* text = R"IR(graph(%x : Float(3, 4), %y : Float(3, 4)):
  %one : int = prim::Constant[value=1]()
  %a : Float(3, 4) = aten::sigmoid(%x)
  %b : Float(3, 4) = aten::add(%a, %y, %one)
  return (%b, %a)
)IR";
  auto base = parseIR(text);
  std::string renamedText = text;
  for (size_t at; (at = renamedText.find("%a")) != std::string::npos;) renamedText.replace(at, 2, "%gates");
  auto renamed = parseIR(renamedText);
  ASSERT_NE(printIR(*renamed), printIR(*base));
  EXPECT_TRUE(structurallyEqual(*base, *renamed));
  EXPECT_EQ(structuralHash(*base), structuralHash(*renamed));
  EXPECT_TRUE(structurallyEqual(*base, *base->clone()));
  auto differs = [&](const std::string& from, const std::string& to) {
    std::string t = text;
    t.replace(t.find(from), from.size(), to);
    auto other = parseIR(t);
    EXPECT_FALSE(structurallyEqual(*base, *other)) << from << " -> " << to;
    EXPECT_FALSE(structurallyEqual(*other, *base)) << from << " -> " << to;
  };
  differs("value=1", "value=2");
  differs("aten::sigmoid", "aten::tanh");
  differs("%y : Float(3, 4)", "%y : Double(3, 4)");
  differs("%a : Float(3, 4) =", "%a : Float(3, *) =");
  differs("aten::add(%a, %y", "aten::add(%y, %a");
  differs("return (%b, %a)", "return (%a, %b)");
  differs("return (%b, %a)", "return (%b)");
}

TEST(Verifier, RejectsLoopBodyWithWrongArity) {
  Graph g;
  GraphBuilder b(g);
  Value* x = g.addInput(Type::tensor(), "x");
  auto loop = b.beginLoop(b.i(3), {x});
  loop.body->addInput(Type::tensor());  // one parameter too many
  auto outs = b.endLoop(loop, {b.op(OpKind::Tanh, {loop.carried[0]})});
  g.registerOutput(outs[0]);
  auto diags = verify(g);
  ASSERT_FALSE(diags.empty());
  EXPECT_NE(diags[0].message.find("loop body takes 3 parameters but needs 2"), std::string::npos) << diags[0].message;
}

TEST(Verifier, RejectsUseOfAValueFromInsideALoopBody) {
  Graph g;
  GraphBuilder b(g);
  Value* x = g.addInput(Type::tensor(), "x");
  auto loop = b.beginLoop(b.i(2), {x});
  Value* inner = b.op(OpKind::Tanh, {loop.carried[0]});
  b.endLoop(loop, {inner});
  g.registerOutput(b.op(OpKind::Sigmoid, {inner}));  // escapes the body
  auto diags = verify(g);
  ASSERT_FALSE(diags.empty());
  EXPECT_NE(diags[0].message.find("before its definition"), std::string::npos) << diags[0].message;
}

TEST(Ops, TableIsConsistent) {
  for (const OpInfo& op : allOps()) {
    EXPECT_EQ(&opInfo(op.kind), &op) << op.name;
    EXPECT_EQ(lookupOp(op.name, op.numInputs == -1 ? 0 : op.numInputs)->name, op.name);
    EXPECT_NE(op.name.find("::"), std::string_view::npos) << op.name;
    EXPECT_FALSE(op.schema.empty()) << op.name;
  }
  EXPECT_EQ(lookupOp("aten::sum", 1)->kind, OpKind::Sum);
  EXPECT_EQ(lookupOp("aten::sum", 3)->kind, OpKind::SumDim);
  EXPECT_EQ(lookupOp("aten::nope", 1), nullptr);
}

// The verifier reads argument kinds off each op's schema text: every schema must state its row's arity.
TEST(Ops, EverySchemaStatesAsManyArgumentsAsItsRowTakes) {
  for (const OpInfo& op : allOps()) {
    const OpSignature& sig = opSignature(op.kind);
    if (op.numInputs >= 0 && !sig.variadicInputs)
      EXPECT_EQ(static_cast<int>(sig.inputs.size()), op.numInputs) << op.name << ": " << op.schema;
    if (op.numOutputs >= 0 && !sig.variadicOutputs)
      EXPECT_EQ(static_cast<int>(sig.outputs.size()), op.numOutputs) << op.name << ": " << op.schema;
  }
  const OpSignature& add = opSignature(OpKind::Add);
  EXPECT_EQ(add.inputs, (std::vector<ArgKind>{ArgKind::Tensor, ArgKind::TensorOrScalar, ArgKind::Scalar}));
  EXPECT_EQ(opSignature(OpKind::Linear).inputs[2], ArgKind::OptionalTensor);
  EXPECT_EQ(opSignature(OpKind::Sizes).outputs, std::vector<ArgKind>{ArgKind::IntList});
  EXPECT_EQ(opSignature(OpKind::ConvolutionBackward).outputs.size(), 3u);
  EXPECT_TRUE(opSignature(OpKind::ListConstruct).variadicInputs);
}

TEST(Verifier, AnArgumentOrResultOfTheWrongKindIsNamedWithTheSchema) {
  try {
    parseIR(R"IR(graph(%x : Float(2, 3), %d : int):
  %s : int[] = prim::ListConstruct(%d)
  %y : Tensor = aten::softmax(%x, %s)
  %n : Tensor = aten::size(%x, %d)
  return (%y, %n)
)IR", "t.ir");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.where(), "t.ir:3:17");
    EXPECT_EQ(e.message(), "aten::softmax's argument 2 must be an int, but %s is int[]; the schema: (Tensor self, "
                           "int dim) -> Tensor [and 1 more problem(s)]");
  }
  try {
    parseIR("graph(%x : Float(2, 3), %d : int):\n  %n : Tensor = aten::size(%x, %d)\n  return (%n)\n", "u.ir");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), "%n is declared Tensor, but aten::size returns an int; the schema: (Tensor self, int dim) "
                           "-> int");
  }
}

}  // namespace
}  // namespace gj
