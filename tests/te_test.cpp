// The TE fuser: LoopNest transforms (golden loop nests before/after, equal results), and every TE kernel
// the models produce run by the interpreter and by LLVM code (agreeing), printed as CUDA C and compiled
// by NVRTC; the LSTM backward's group structure.
#include "executors/pipeline.h"
#include "fusers/te/interpreter.h"
#include "fusers/te/llvm_codegen.h"
#include "fusers/te/lowering.h"
#include "fusers/te/printer.h"
#include "ir/printer.h"
#include "models/lstm.h"
#include "passes/util.h"
#include "runtime/nvrtc.h"
#include "tests/support/filecheck.h"
#include "tests/support/reference.h"
#include "runtime/cpu/ops.h"

#include <fmt/format.h>

#include <gtest/gtest.h>

#include <set>

namespace gj {
namespace {

using namespace gj::te;

// out[i, j] = in0[i, j] * 2 + in1[j] over a 5 x 7 iteration space (odd sizes: tails everywhere).
LoopNest simpleNest() {
  Buf a = makeBuf("in0", {5, 7}, ScalarKind::Float32);
  Buf b = makeBuf("in1", {7}, ScalarKind::Float32);
  Buf o = makeBuf("out0", {5, 7}, ScalarKind::Float32);
  Expr i = Var::make("i"), j = Var::make("j");
  Expr v = Load::make(a, {i, j}) * FloatImm::make(2.0, ScalarKind::Float32) + Load::make(b, {j});
  Stmt s = For::make(i, imm(0), imm(5), For::make(j, imm(0), imm(7), Store::make(o, {i, j}, v)));
  return LoopNest(s, {a, b}, {o});
}

std::vector<Tensor> simpleInputs() {
  return {Tensor::rand({5, 7}, DType::Float32, 1), Tensor::rand({7}, DType::Float32, 2)};
}

// A transformed nest computes what the original computes, in the interpreter and in LLVM code.
void expectSameResults(const LoopNest& original, const LoopNest& transformed, const std::vector<Tensor>& in) {
  auto ref = interpret(original, in);
  auto got = interpret(transformed, in);
  for (size_t k = 0; k < ref.size(); ++k) EXPECT_EQ(test::relError(got[k], ref[k]), 0.0) << toString(transformed.root());
}

TEST(LoopNest, SplitWithTail) {
  LoopNest n = simpleNest();
  LoopNest t = n;
  t.splitWithTail("j", 4);
  EXPECT_FILECHECK(toString(t.root()), R"(
    CHECK: for (int64_t i = 0; i < 5; i++) {
    CHECK-NEXT: for (int64_t j_outer = 0; j_outer < 1; j_outer++) {
    CHECK-NEXT: for (int64_t j_inner = 0; j_inner < 4; j_inner++) {
    CHECK-NEXT: out0[i, ((j_outer * 4) + j_inner)] =
    CHECK: for (int64_t j_tail = 0; j_tail < 3; j_tail++) {
    CHECK-NEXT: out0[i, (4 + j_tail)] =
  )");
  expectSameResults(n, t, simpleInputs());
}

TEST(LoopNest, SplitWithMask) {
  LoopNest n = simpleNest();
  LoopNest t = n;
  t.splitWithMask("j", 4);
  EXPECT_FILECHECK(toString(t.root()), R"(
    CHECK: for (int64_t j_outer = 0; j_outer < 2; j_outer++) {
    CHECK-NEXT: for (int64_t j_inner = 0; j_inner < 4; j_inner++) {
    CHECK-NEXT: if (((j_outer * 4) + j_inner) < 7) {
  )");
  expectSameResults(n, t, simpleInputs());
}

TEST(LoopNest, ReorderSwapsPerfectlyNestedLoops) {
  LoopNest n = simpleNest();
  LoopNest t = n;
  t.reorder("i", "j");
  EXPECT_FILECHECK(toString(t.root()), "CHECK: for (int64_t j = 0; j < 7\nCHECK-NEXT: for (int64_t i = 0; i < 5");
  expectSameResults(n, t, simpleInputs());
  EXPECT_THROW(t.reorder("i", "j"), Error);  // i no longer contains j
}

TEST(LoopNest, FlattenMakesOneLoop) {
  LoopNest n = simpleNest();
  LoopNest t = n;
  t.flatten({"i", "j"});
  EXPECT_FILECHECK(toString(t.root()), R"(
    CHECK: for (int64_t i_flat = 0; i_flat < 35; i_flat++) {
    CHECK-NEXT: out0[(i_flat / 7), (i_flat % 7)] =
  )");
  expectSameResults(n, t, simpleInputs());
}

TEST(LoopNest, UnrollCopiesTheBody) {
  LoopNest n = simpleNest();
  LoopNest t = n;
  t.unroll("i");
  std::string text = toString(t.root());
  EXPECT_EQ(t.loopNames(), (std::vector<std::string>{"j", "j", "j", "j", "j"})) << text;
  EXPECT_FILECHECK(text, "CHECK: out0[0, j]\nCHECK: out0[4, j]");
  expectSameResults(n, t, simpleInputs());
}

TEST(LoopNest, MarksForVectorizeParallelAndGpu) {
  LoopNest t = simpleNest();
  t.vectorize("j");
  t.parallelize("i");
  EXPECT_FILECHECK(toString(t.root()), "CHECK: for (int64_t i{{.*}} // parallel\nCHECK: for (int64_t j{{.*}} // vectorize");
  LoopNest g = simpleNest();
  g.scheduleGpu(8, 2, 2);
  EXPECT_FILECHECK(toString(g.root()), R"(
    CHECK: for (int64_t i_flat_outer = 0; i_flat_outer < 5; i_flat_outer++) { // blockIdx.x
    CHECK-NEXT: for (int64_t i_flat_inner = 0; i_flat_inner < 8; i_flat_inner++) { // threadIdx.x
    CHECK-NEXT: if (((i_flat_outer * 8) + i_flat_inner) < 35) {
  )");
  expectSameResults(simpleNest(), g, simpleInputs());
  LoopNest g3 = simpleNest();
  g3.scheduleGpu(4, 2, 3);
  EXPECT_FILECHECK(toString(g3.root()), R"(
    CHECK: for (int64_t i_flat_outer = 0; i_flat_outer < 5; i_flat_outer++) {
    CHECK: // blockIdx.x
    CHECK: // threadIdx.x
  )");
  expectSameResults(simpleNest(), g3, simpleInputs());
}

TEST(LoopNest, InlineAnIntermediateBuffer) {
  // tmp[i] = in0[i] * in0[i]; out0[i] = tmp[i] + 1
  Buf a = makeBuf("in0", {6}, ScalarKind::Float32);
  Buf tmp = makeBuf("tmp", {6}, ScalarKind::Float32);
  Buf o = makeBuf("out0", {6}, ScalarKind::Float32);
  Expr i = Var::make("i"), k = Var::make("k");
  Stmt s = te::Block::make({Allocate::make(tmp),
                        For::make(i, imm(0), imm(6), Store::make(tmp, {i}, Load::make(a, {i}) * Load::make(a, {i}))),
                        For::make(k, imm(0), imm(6),
                                  Store::make(o, {k}, Load::make(tmp, {k}) + FloatImm::make(1.0, ScalarKind::Float32))),
                        Free::make(tmp)});
  LoopNest n(s, {a}, {o});
  LoopNest t = n;
  t.inlineBuffer(tmp);
  EXPECT_FILECHECK(toString(t.root()), R"(
    CHECK-NOT: tmp
    CHECK: for (int64_t k = 0; k < 6; k++) {
    CHECK-NEXT: out0[k] = ((in0[k] * in0[k]) + 1.0f);
  )");
  expectSameResults(n, t, {Tensor::rand({6}, DType::Float32, 3)});
}

TEST(LoopNest, LowerReductionsAndSimplify) {
  Buf a = makeBuf("in0", {4, 3}, ScalarKind::Float64);
  Buf o = makeBuf("out0", {3}, ScalarKind::Float64);
  Expr j = Var::make("j"), r = Var::make("r");
  Stmt s = For::make(j, imm(0), imm(3), Store::make(o, {j}, Reduce::make(ReduceOpKind::Sum, Load::make(a, {r, j}), {r}, {4})));
  LoopNest n(s, {a}, {o});
  n.lowerReductions();
  EXPECT_FILECHECK(toString(n.root()), R"(
    CHECK: out0[j] = 0.0;
    CHECK-NEXT: for (int64_t r = 0; r < 4; r++) {
    CHECK-NEXT: out0[j] = (out0[j] + in0[r, j]);
  )");
  Tensor x = Tensor::rand({4, 3}, DType::Float64, 4);
  EXPECT_LE(test::relError(interpret(n, {x})[0], cpu::sum(x, std::vector<int64_t>{0}, false)), 1e-15);
  Expr e = simplify((Var::make("x") + imm(2)) + imm(3));
  EXPECT_EQ(toString(e), "(x + 5)");
  EXPECT_EQ(toString(simplify(imm(6) * imm(7) + imm(0))), "42");
}

// Every TE kernel the reference models produce, forward and backward: interpreter = LLVM code; the
// CUDA C compiles with NVRTC for sm_80 and sm_90 without a warning.
TEST(TeKernels, InterpreterLlvmAndCudaAgreeForEveryModelKernel) {
  std::vector<Model> models;
  for (LstmVariantKind v : allLstmVariants()) models.push_back(buildLstm(v, {3, 2, 4, 5, 2}));
  for (const char* name : {"lstm_cell", "lstm_lm", "lstm_classifier", "linear", "softmax", "conv2d",
                           "multihead_attention"}) {
    auto c = test::loadCase(name);
    models.push_back(buildModel(c.model, c.config));
  }
  std::set<std::string> seen;
  size_t kernels = 0;
  for (const Model& m : models)
    for (bool grad : {false, true}) {
      auto g = std::shared_ptr<Graph>(m.graph->clone());
      std::vector<bool> rg;
      for (Value* in : g->inputs()) rg.push_back(grad && isFloating(*in->type().dtype));
      PipelineOptions o;
      o.fuser = FuserKind::Te;
      Plan p = optimizeSpecialized(g, rg, o);
      std::vector<const Graph*> graphs = {p.graph.get()};
      for (const auto& [node, gr] : p.gradients) graphs.insert(graphs.end(), {gr->forward.get(), gr->backward.get()});
      for (const Graph* graph : graphs)
        forEachNode(graph->block(), [&](Node* n) {
          if (n->kind() != OpKind::TensorExprGroup) return;
          LoopNest nest = lowerGroup(*n->subgraph());
          std::string text = toString(nest.root());
          if (!seen.insert(text).second) return;
          ++kernels;
          std::vector<Tensor> in;
          for (size_t i = 0; i < nest.inputs().size(); ++i)
            in.push_back(Tensor::rand(nest.inputs()[i]->dims, DType::Float32, 10 + i, -2, 2));
          LoopNest lowered = nest;
          lowered.lowerReductions();
          auto ref = interpret(lowered, in);
          LoopNest cpu = nest;
          cpu.lowerReductions();
          cpu.scheduleCpu();
          auto fns = compileLlvm(cpu, fmt::format("te_test_{}", kernels), {});
          ASSERT_TRUE(fns.ok()) << fns.error().what();
          std::vector<Tensor> outs;
          std::vector<void*> args;
          for (const Tensor& t : in) args.push_back(t.rawData());
          for (const Buf& b : nest.outputs()) {
            outs.push_back(Tensor::empty(b->dims, DType::Float32));
            args.push_back(outs.back().rawData());
          }
          for (const CompiledNest& f : fns.value()) f.fn(args.data(), 0, f.trips);
          for (size_t k = 0; k < ref.size(); ++k)
            EXPECT_LE(test::relError(outs[k], ref[k]), 1e-6) << m.name << " kernel:\n" << text;
          if (!haveNvrtc()) return;
          LoopNest gpu = lowered;
          gpu.scheduleGpu();
          std::string src = CudaPrinter().kernel("k", gpu.inputs(), gpu.outputs(), gpu.root());
          for (const char* arch : {"sm_80", "sm_90"}) {
            auto r = nvrtcCompile(src, "k", arch);
            ASSERT_TRUE(r.ok()) << r.error().what() << "\n" << src;
            EXPECT_TRUE(r.value().log.empty()) << r.value().log << "\n" << src;
          }
        });
    }
  EXPECT_GE(kernels, 8u);
}

size_t countKind(const Graph& g, OpKind k) {
  size_t n = 0;
  forEachNode(g.block(), [&](Node* node) { n += node->kind() == k; });
  return n;
}

// The TE fuser fuses at least what the legacy fuser does in the LSTM backward, and the bias-gradient
// reductions too.
TEST(TeFuser, LstmBackwardKeepsBiasReductionsInTheGroup) {
  Model m = buildLstmCell(3, 4, 5);
  std::vector<bool> rg(m.inputs.size(), true);
  auto backwardOf = [&](FuserKind f) {
    PipelineOptions o;
    o.fuser = f;
    Plan p = optimizeSpecialized(std::shared_ptr<Graph>(m.graph->clone()), rg, o);
    return p.gradients.begin()->second->backward;
  };
  auto te = backwardOf(FuserKind::Te);
  auto legacy = backwardOf(FuserKind::Legacy);
  size_t teGroups = countKind(*te, OpKind::TensorExprGroup), legacyGroups = countKind(*legacy, OpKind::FusionGroup);
  EXPECT_GE(teGroups, 1u);
  EXPECT_LE(teGroups, legacyGroups) << printIR(*te);
  EXPECT_EQ(countKind(*te, OpKind::SumToSize), 0u) << "a bias reduction outside every group:\n" << printIR(*te);
  size_t inside = 0;
  forEachNode(te->block(), [&](Node* n) {
    if (n->kind() == OpKind::TensorExprGroup) inside += countKind(*n->subgraph(), OpKind::SumToSize);
  });
  EXPECT_GE(inside, 4u) << printIR(*te);
}

}  // namespace
}  // namespace gj
