// Tests of passes/subgraph_regions.h: growRegions' rounds (Note [Rounds of region growth]), and the shared
// group bodies (Note [Shared group bodies]): a region takes a kept body only when it computes what the body
// computes, and the graph's results are unchanged either way.
#include "passes/subgraph_regions.h"
#include "passes/shape_propagation.h"
#include "tests/passes/pass_test.h"

#include <algorithm>

namespace gj {
namespace {

using test::randomFor;

struct Merged {
  std::unique_ptr<Graph> graph;
  std::vector<Node*> groups;
  size_t shared = 0;
};

// Parses `ir`, propagates shapes, and merges each region (named by the values its nodes define) into a
// fusion group with one GroupBodies; the merged graph computes what the parsed one does.
Merged mergeRegions(const std::string& ir, const std::vector<std::vector<std::string>>& regions) {
  Merged m{parseIR(ir), {}, 0};
  propagateShapes(*m.graph);
  GroupBodies bodies;
  for (const std::vector<std::string>& names : regions) {
    std::vector<Node*> region;
    for (const std::string& name : names) region.push_back(m.graph->findValue(name)->node());
    std::sort(region.begin(), region.end(), [](const Node* a, const Node* b) { return a->isBefore(b); });
    m.groups.push_back(bodies.merge(region, OpKind::FusionGroup, {}));
  }
  verifyOrThrow(*m.graph);
  m.shared = bodies.shared();
  auto before = parseIR(ir);
  auto in = randomFor(*before, 11);
  auto want = Interpreter(*before).run(in);
  auto got = Interpreter(*m.graph).run(in);
  EXPECT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size() && i < got.size(); ++i)
    EXPECT_LE(test::relError(got[i].toTensor(), want[i].toTensor()), 1e-12) << "output " << i << "\n" << printIR(*m.graph);
  return m;
}

// Two steps of one cell: tanh, then a product with a fresh input; the second reads the first's result.
std::string twoSteps(const std::string& secondProduct, const std::string& firstSecondOperand = "%y",
                     const std::string& secondTanhOperand = "%b") {
  return fmt::format(R"IR(graph(%x : Double(3, 4), %y : Double(3, 4), %z : Double(3, 4)):
  %one : int = prim::Constant[value=1]()
  %a : Tensor = aten::tanh(%x)
  %b : Tensor = aten::mul(%a, {})
  %c : Tensor = aten::tanh({})
  %d : Tensor = {}
  %e : Tensor = aten::add(%b, %d, %one)
  return (%e)
)IR", firstSecondOperand, secondTanhOperand, secondProduct);
}

TEST(GroupBodies, AlikeRegionsShareOneBody) {
  Merged m = mergeRegions(twoSteps("aten::mul(%c, %z)"), {{"a", "b"}, {"c", "d"}});
  ASSERT_EQ(m.groups.size(), 2u);
  EXPECT_EQ(m.shared, 1u);
  EXPECT_EQ(m.groups[0]->subgraph(), m.groups[1]->subgraph());
  // The second group reads the first's output and %z, in the body's input order.
  EXPECT_EQ(m.groups[1]->input(0), m.groups[0]->output());
  EXPECT_EQ(m.groups[1]->input(1)->name(), "z");
}

TEST(GroupBodies, OperandsInAnotherOrderAreAnotherBody) {
  Merged m = mergeRegions(twoSteps("aten::mul(%z, %c)"), {{"a", "b"}, {"c", "d"}});
  EXPECT_EQ(m.shared, 0u);
  EXPECT_NE(m.groups[0]->subgraph(), m.groups[1]->subgraph());
}

TEST(GroupBodies, AnotherConstantIsAnotherBody) {
  const std::string ir = R"IR(graph(%x : Double(3, 4), %y : Double(3, 4), %z : Double(3, 4)):
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %a : Tensor = aten::tanh(%x)
  %b : Tensor = aten::add(%a, %y, %one)
  %c : Tensor = aten::tanh(%b)
  %d : Tensor = aten::add(%c, %z, %two)
  %e : Tensor = aten::add(%b, %d, %one)
  return (%e)
)IR";
  Merged m = mergeRegions(ir, {{"a", "b"}, {"c", "d"}});
  EXPECT_EQ(m.shared, 0u);
}

TEST(GroupBodies, AValueReadTwiceIsNotTwoInputs) {
  // The first body reads %x twice (one input); the second region reads two values there.
  Merged m = mergeRegions(twoSteps("aten::mul(%c, %z)", "%x"), {{"a", "b"}, {"c", "d"}});
  EXPECT_EQ(m.shared, 0u);
  EXPECT_EQ(m.groups[0]->inputs().size(), 1u);
  EXPECT_EQ(m.groups[1]->inputs().size(), 2u);
}

TEST(GroupBodies, OneValueMayFeedTwoInputsOfAKeptBody) {
  // The kept body has two inputs; the second region reads %z for both: the body computes it all the same.
  Merged m = mergeRegions(twoSteps("aten::mul(%c, %z)", "%y", "%z"), {{"a", "b"}, {"c", "d"}});
  EXPECT_EQ(m.shared, 1u);
  EXPECT_EQ(m.groups[1]->input(0), m.groups[1]->input(1));
}

TEST(GroupBodies, AnOutputReadOutsideIsAnotherBody) {
  // %a is read after the first region, so its body returns two values; the second returns one.
  const std::string ir = R"IR(graph(%x : Double(3, 4), %y : Double(3, 4), %z : Double(3, 4)):
  %one : int = prim::Constant[value=1]()
  %a : Tensor = aten::tanh(%x)
  %b : Tensor = aten::mul(%a, %y)
  %c : Tensor = aten::tanh(%b)
  %d : Tensor = aten::mul(%c, %z)
  %e : Tensor = aten::add(%a, %d, %one)
  return (%e)
)IR";
  Merged m = mergeRegions(ir, {{"a", "b"}, {"c", "d"}});
  EXPECT_EQ(m.shared, 0u);
  EXPECT_EQ(m.groups[0]->outputs().size(), 2u);
}

// The regions growRegions closes on `ir`, each as its nodes' first output names, when a tanh or sigmoid joins a
// region of its own shape; close leaves every region as it is.
std::vector<std::vector<std::string>> regionsOf(const std::string& ir) {
  auto g = parseIR(ir);
  propagateShapes(*g);
  auto joins = [](const Node* n, const Region& r) {
    const bool pointwise = n->kind() == OpKind::Tanh || n->kind() == OpKind::Sigmoid;
    return pointwise && (r.nodes.empty() || r.nodes.front()->output()->type().sizes == n->output()->type().sizes);
  };
  std::vector<std::vector<std::string>> regions;
  growRegions(g->block(), joins, [&](std::vector<Node*>& region, std::vector<Node*>&) {
    regions.emplace_back();
    for (const Node* n : region) regions.back().push_back(n->output()->name());
    return false;
  });
  return regions;
}

using Names = std::vector<std::vector<std::string>>;

TEST(GrowRegions, TakesWhatFollowsAnOpOfAnotherShapeInAnotherRound) {
  // %m reads the region {a} and cannot join it; %b and %c, of another shape, read %m: the first round closes
  // {a} and passes them by, the second takes them.
  const std::string ir = R"IR(graph(%x : Double(4, 6), %w : Double(6, 3)):
  %a : Tensor = aten::tanh(%x)
  %m : Tensor = aten::mm(%a, %w)
  %b : Tensor = aten::tanh(%m)
  %c : Tensor = aten::sigmoid(%b)
  return (%c)
)IR";
  EXPECT_EQ(regionsOf(ir), (Names{{"a"}, {"b", "c"}}));
}

TEST(GrowRegions, TakesAnIndependentRegionOfAnotherShapeInAnotherRound) {
  const std::string ir = R"IR(graph(%x : Double(4, 6), %y : Double(2, 3)):
  %a : Tensor = aten::tanh(%x)
  %b : Tensor = aten::tanh(%y)
  %c : Tensor = aten::sigmoid(%a)
  %d : Tensor = aten::sigmoid(%b)
  return (%c, %d)
)IR";
  EXPECT_EQ(regionsOf(ir), (Names{{"a", "c"}, {"b", "d"}}));
}

TEST(GrowRegions, ARegionLeftAsItIsIsNotGrownAgain) {
  // Every round closes a region: {a, c} first, then {b}; no node is offered twice.
  const std::string ir = R"IR(graph(%x : Double(4, 6), %y : Double(2, 3)):
  %a : Tensor = aten::tanh(%x)
  %b : Tensor = aten::tanh(%y)
  %c : Tensor = aten::sigmoid(%a)
  return (%c, %b)
)IR";
  EXPECT_EQ(regionsOf(ir), (Names{{"a", "c"}, {"b"}}));
}

}  // namespace
}  // namespace gj
