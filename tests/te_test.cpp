// The TE fuser: LoopNest transforms (golden loop nests before/after, equal results), and every TE kernel
// the models produce run by the interpreter and by LLVM code (agreeing), printed as CUDA C and compiled
// by NVRTC; the LSTM backward's group structure.
#include "executors/function.h"
#include "executors/interpreter.h"
#include "executors/pipeline.h"
#include "fusers/te/interpreter.h"
#include "fusers/te/llvm_codegen.h"
#include "fusers/te/lowering.h"
#include "fusers/te/printer.h"
#include "fusers/te/te_fuser.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "models/lstm.h"
#include "passes/frontend.h"
#include "passes/util.h"
#include "runtime/cuda/device.h"
#include "runtime/nvrtc.h"
#include "tests/support/filecheck.h"
#include "tests/support/kernel_dump.h"
#include "tests/support/build_config.h"
#include "tests/support/reference.h"
#include "tests/support/registry.h"
#include "runtime/ops/ops.h"

#include <fmt/format.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
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

// Runs a CPU nest compiled by LLVM, each of its nests over its whole range; empty in a build without LLVM.
std::vector<Tensor> runNestWithLlvm(const LoopNest& cpu, const std::string& name, const std::vector<Tensor>& in) {
  if (!test::kHaveLlvm) return {};
  auto fns = compileLlvm(cpu, name, {});
  EXPECT_TRUE(fns.ok()) << fns.error().what();
  if (!fns.ok()) return {};
  std::vector<Tensor> outs;
  std::vector<void*> args;
  for (const Tensor& t : in) args.push_back(t.rawData());
  for (const Buf& b : cpu.outputs()) {
    outs.push_back(Tensor::empty(b->dims, dtypeOf(b->type)));
    args.push_back(outs.back().rawData());
  }
  for (const CompiledNest& f : fns.value()) f.fn(args.data(), 0, f.trips);
  outs.resize(outs.size() - cpu.scratch());  // as a launch hands back
  return outs;
}

// Expressions compare by structure, Vars and buffers by identity: two loops over variables that merely
// share a name are not the same loop.
TEST(TeIr, EqualComparesStructureAndVarsByIdentity) {
  Expr i = Var::make("i"), alsoI = Var::make("i");
  Buf a = makeBuf("a", {4}, ScalarKind::Float32), b = makeBuf("a", {4}, ScalarKind::Float32);
  EXPECT_TRUE(equal(i * imm(4) + imm(1), i * imm(4) + imm(1)));
  EXPECT_FALSE(equal(i + imm(1), alsoI + imm(1))) << "two Vars named i";
  EXPECT_FALSE(equal(i + imm(1), i + imm(2)));
  EXPECT_FALSE(equal(i + imm(1), i - imm(1)));
  EXPECT_TRUE(equal(Load::make(a, {i}), Load::make(a, {i})));
  EXPECT_FALSE(equal(Load::make(a, {i}), Load::make(b, {i}))) << "two buffers named a";
  EXPECT_FALSE(equal(FloatImm::make(1.0, ScalarKind::Float32), FloatImm::make(1.0, ScalarKind::Float64)));
  EXPECT_TRUE(equal(Call::make(CallKind::Exp, Load::make(a, {imm(0)})), Call::make(CallKind::Exp, Load::make(a, {imm(0)}))));
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
  // The launch each needs: 35 elements in blocks of 8 -> 5 blocks; at level 3, 2 blocks of 4 threads.
  LoopNest::GpuLaunch l2 = g.gpuLaunch(), l3 = g3.gpuLaunch();
  EXPECT_EQ(l2.blocks, (std::array<int64_t, 3>{5, 1, 1}));
  EXPECT_EQ(l2.threads, (std::array<int64_t, 3>{8, 1, 1}));
  EXPECT_EQ(l3.blocks, (std::array<int64_t, 3>{2, 1, 1}));
  EXPECT_EQ(l3.threads, (std::array<int64_t, 3>{4, 1, 1}));
  EXPECT_EQ(simpleNest().gpuLaunch().blocks, (std::array<int64_t, 3>{1, 1, 1}));
}

// The CPU schedule vectorizes a reduction into a one-element temporary when its loads are contiguous in
// the reduction variable (a softmax row), and keeps it scalar when they stride (a sum over the batch).
TEST(LoopNest, ScheduleCpuVectorizesContiguousReductionsOnly) {
  SKIP_WITHOUT_LLVM();
  for (bool contiguous : {true, false}) {
    Buf in = makeBuf("in0", {6, 9}, ScalarKind::Float32), out = makeBuf("out0", {contiguous ? 6 : 9},
                                                                          ScalarKind::Float32);
    Buf acc = makeBuf("acc", {1}, ScalarKind::Float32);
    Expr i = Var::make("i"), r = Var::make("r");
    Expr x = contiguous ? Load::make(in, {i, r}) : Load::make(in, {r, i});
    Stmt body = te::Block::make({Allocate::make(acc),
                                 Store::make(acc, {imm(0)}, Reduce::make(ReduceOpKind::Sum, x, {r}, {contiguous ? 9 : 6})),
                                 Store::make(out, {i}, Load::make(acc, {imm(0)})), Free::make(acc)});
    LoopNest n(For::make(i, imm(0), imm(contiguous ? 6 : 9), body), {in}, {out});
    LoopNest t = n;
    t.lowerReductions();
    t.scheduleCpu();
    std::string text = toString(t.root());
    EXPECT_EQ(text.find("for (int64_t r = 0; r < " + std::to_string(contiguous ? 9 : 6) + "; r++) { // vectorize") !=
                  std::string::npos,
              contiguous)
        << text;
    Tensor a = Tensor::rand({6, 9}, DType::Float32, 3);
    LoopNest ref = n;
    ref.lowerReductions();
    auto outs = runNestWithLlvm(t, contiguous ? "te_reduce_contiguous" : "te_reduce_strided", {a});
    ASSERT_EQ(outs.size(), 1u);
    EXPECT_LE(test::relError(outs[0], interpret(ref, {a})[0]), 1e-6) << text;
  }
}

// A sum over the batch (strided in the reduction variable) is interchanged on the CPU: the output is
// zeroed, then each batch row is added to it by a contiguous, vectorized inner loop; the outer loop over
// the rows accumulates and is neither vectorized nor parallel. Same values (same summation order).
TEST(LoopNest, InterchangeStridedReductionsMakesTheInnerLoopContiguous) {
  SKIP_WITHOUT_LLVM();
  Buf in = makeBuf("in0", {64, 40}, ScalarKind::Float32), out = makeBuf("out0", {120}, ScalarKind::Float32);
  // Two sums over the batch into slices of out0 (as the LSTM's bias gradients): one pair of nests.
  auto strided = [&](const char* name, int64_t offset, Expr scale) {
    Buf acc = makeBuf(name, {1}, ScalarKind::Float32);
    Expr j = Var::make(std::string("j") + name), r = Var::make(std::string("r") + name);
    Expr x = Load::make(in, {r, j}) * scale;
    Stmt body = te::Block::make({Allocate::make(acc),
                                 Store::make(acc, {imm(0)}, Reduce::make(ReduceOpKind::Sum, x, {r}, {64})),
                                 Store::make(out, {j + imm(offset)}, Load::make(acc, {imm(0)})), Free::make(acc)});
    return For::make(j, imm(0), imm(40), body);
  };
  // out0[0, 40) is a contiguous sum (a softmax-like row): it stays as it is.
  Expr k = Var::make("k"), c = Var::make("c");
  Buf acc2 = makeBuf("acc2", {1}, ScalarKind::Float32);
  Stmt rows = te::Block::make({Allocate::make(acc2),
                               Store::make(acc2, {imm(0)}, Reduce::make(ReduceOpKind::Sum, Load::make(in, {k, c}), {c}, {40})),
                               Store::make(out, {k}, Load::make(acc2, {imm(0)})), Free::make(acc2)});
  LoopNest n(te::Block::make({strided("a", 40, FloatImm::make(1.0, ScalarKind::Float32)),
                              strided("b", 80, FloatImm::make(2.0, ScalarKind::Float32)),
                              For::make(k, imm(0), imm(40), rows)}),
             {in}, {out});
  LoopNest t = n;
  t.interchangeStridedReductions();
  t.lowerReductions();
  t.scheduleCpu(/*parallelGrain=*/16);
  EXPECT_FILECHECK(toString(t.root()), R"(
    CHECK: for (int64_t ja = 0; ja < 40; ja++) { // vectorize parallel
    CHECK-NEXT: out0[(ja + 40)] = 0.0f;
    CHECK-NEXT: out0[(ja + 80)] = 0.0f;
    CHECK: for (int64_t ra = 0; ra < 64; ra++) {
    CHECK-NEXT: for (int64_t ja = 0; ja < 40; ja++) { // vectorize
    CHECK-NEXT: out0[(ja + 40)] = (out0[(ja + 40)] + in0[ra, ja]);
    CHECK-NEXT: out0[(ja + 80)] = (out0[(ja + 80)] + (in0[ra, ja] * 2.0f));
    CHECK: for (int64_t k = 0; k < 40; k++) { // parallel
    CHECK: acc2[0] = 0.0f;
  )");
  Tensor a = Tensor::rand({64, 40}, DType::Float32, 8);
  LoopNest ref = n;
  ref.lowerReductions();
  auto expect = interpret(ref, {a});
  EXPECT_LE(test::relError(interpret(t, {a})[0], expect[0]), 0.0);
  auto outs = runNestWithLlvm(t, "te_interchanged_sum", {a});
  ASSERT_EQ(outs.size(), 1u);
  EXPECT_LE(test::relError(outs[0], expect[0]), 1e-6);
}

// An interchanged sum whose output loop halves into whole vectors (512 columns: two of 256) and that reads
// 2^18 elements becomes one loop over the two halves, each zeroing and summing its own columns: the halves
// write disjoint outputs, so the schedule makes that loop parallel, and each half run alone, in either
// order, gives its columns. The same sum over half the rows reads too little to pay for a thread team,
// and keeps its two nests.
TEST(LoopNest, LargeInterchangedSumsSplitTheirOutputsInHalves) {
  SKIP_WITHOUT_LLVM();
  auto columnSums = [](int64_t rows) {
    Buf in = makeBuf("in0", {rows, 512}, ScalarKind::Float32), out = makeBuf("out0", {512}, ScalarKind::Float32);
    Buf acc = makeBuf("acc", {1}, ScalarKind::Float32);
    Expr j = Var::make("j"), r = Var::make("r");
    Stmt body = te::Block::make(
        {Allocate::make(acc), Store::make(acc, {imm(0)}, Reduce::make(ReduceOpKind::Sum, Load::make(in, {r, j}), {r}, {rows})),
         Store::make(out, {j}, Load::make(acc, {imm(0)})), Free::make(acc)});
    return LoopNest(For::make(j, imm(0), imm(512), body), {in}, {out});
  };
  auto scheduled = [](LoopNest n) {
    n.interchangeStridedReductions();
    n.lowerReductions();
    n.scheduleCpu(/*parallelGrain=*/16);
    return n;
  };
  EXPECT_EQ(toString(scheduled(columnSums(256)).root()).find("_half"), std::string::npos)
      << "2^17 elements read: not halved";
  LoopNest n = columnSums(512);
  LoopNest t = scheduled(n);
  EXPECT_FILECHECK(toString(t.root()), R"(
    CHECK: for (int64_t j_half = 0; j_half < 2; j_half++) { // parallel
    CHECK-NEXT: for (int64_t j_in = 0; j_in < 256; j_in++) { // vectorize
    CHECK-NEXT: out0[((j_half * 256) + j_in)] = 0.0f;
    CHECK: for (int64_t r = 0; r < 512; r++) {
    CHECK-NEXT: for (int64_t j_in = 0; j_in < 256; j_in++) { // vectorize
    CHECK-NEXT: out0[((j_half * 256) + j_in)] = (out0[((j_half * 256) + j_in)] + in0[r, ((j_half * 256) + j_in)]);
  )");
  Tensor a = Tensor::rand({512, 512}, DType::Float32, 9);
  LoopNest ref = n;
  ref.lowerReductions();
  const Tensor expect = interpret(ref, {a})[0];
  EXPECT_LE(test::relError(interpret(t, {a})[0], expect), 0.0);
  auto fns = compileLlvm(t, "te_halved_sum", {});
  ASSERT_TRUE(fns.ok()) << fns.error().what();
  ASSERT_EQ(fns.value().size(), 1u);
  const CompiledNest& f = fns.value()[0];
  EXPECT_TRUE(f.parallel);
  EXPECT_EQ(f.trips, 2);
  Tensor o = Tensor::full({512}, DType::Float32, 7.0);  // not zero: each half zeroes its own columns
  std::vector<void*> args{a.rawData(), o.rawData()};
  f.fn(args.data(), 1, 2);  // the second half alone first, as another thread may run it
  EXPECT_LE(test::relError(o.slice(0, 256, 512), expect.slice(0, 256, 512)), 1e-6);
  EXPECT_EQ(o.item(0), 7.0) << "the second half wrote the first's columns";
  f.fn(args.data(), 0, 1);
  EXPECT_LE(test::relError(o, expect), 1e-6);
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
  EXPECT_LE(test::relError(interpret(n, {x})[0], ops::sum(x, std::vector<int64_t>{0}, false)), 1e-15);
  Expr e = simplify((Var::make("x") + imm(2)) + imm(3));
  EXPECT_EQ(toString(e), "(x + 5)");
  EXPECT_EQ(toString(simplify(imm(6) * imm(7) + imm(0))), "42");
}

// A compiled kernel run on copies of `in` on the GPU; its outputs back on the host.
std::vector<Tensor> runOnGpu(const CompiledKernel& kernel, const std::vector<Tensor>& in) {
  std::vector<Tensor> onDevice;
  for (const Tensor& t : in) onDevice.push_back(t.to(DeviceKind::Cuda));
  std::vector<Tensor> outs = kernel.run(onDevice);
  for (Tensor& o : outs) o = o.to(DeviceKind::Cpu);
  return outs;
}

// Runs fusion node `n` of `graph` through the TE fuser on the GPU; empty without a device.
std::vector<Tensor> runGroupOnGpu(const Graph& graph, Node* n, const std::vector<Tensor>& in) {
  if (!cuda::available()) return {};
  static auto fuser = makeFuser(FuserKind::Te, {.device = DeviceKind::Cuda});
  KernelTable kernels;
  FusionReport report;
  fuser->compile(graph, kernels, report);
  EXPECT_TRUE(kernels.contains(n)) << (report.warnings.empty() ? "no kernel" : report.warnings.front());
  if (!kernels.contains(n)) return {};
  return runOnGpu(*kernels.at(n), in);
}

// Runs a GPU-scheduled nest on the GPU as the TE fuser would (compileGpuNest); empty without a device.
std::vector<Tensor> runNestOnGpu(const LoopNest& gpu, const std::vector<Tensor>& in) {
  if (!cuda::available()) return {};
  return runOnGpu(*compileGpuNest(gpu, "k"), in);
}

// Every TE kernel the reference models produce, forward and backward: interpreter = LLVM code; the
// CUDA C compiles with NVRTC for sm_80 and sm_90 without a warning.
//
// With a GPU, the group also runs there through the TE fuser (its default schedule) and must match.
TEST(TeKernels, InterpreterLlvmAndCudaAgreeForEveryModelKernel) {
  std::vector<Model> models;
  for (LstmVariantKind v : allLstmVariants()) models.push_back(buildLstm(v, {3, 2, 4, 5, 2}));
  models.push_back(buildLstm(LstmVariantKind::Jit, {3, 1, 4, 5, 2}));  // batch 1: products in the groups
  for (bool decompose : {false, true}) {  // layer norms: row groups, forward and backward
    ModelConfig ln{.seqLength = 2, .miniBatch = 3, .inputSize = 4, .hiddenSize = 5, .numLayers = 2};
    ln.decomposeLayerNorm = decompose;
    models.push_back(buildModel("lnlstm", ln));
  }
  for (const char* name : {"lstm_cell", "lstm_lm", "lstm_classifier", "linear", "softmax", "conv2d",
                           "multihead_attention"}) {
    auto c = test::loadCase(name);
    models.push_back(buildModel(c.model, c.config));
  }
  std::set<std::string> seen;
  size_t kernels = 0, products = 0;
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
          LoopNest cpu = cpuLoopNest(*n->subgraph());
          std::vector<Tensor> outs = runNestWithLlvm(cpu, fmt::format("te_test_{}", kernels), in);
          for (size_t k = 0; k < outs.size(); ++k)
            EXPECT_LE(test::relError(outs[k], ref[k]), 1e-6) << m.name << " kernel:\n" << text;
          products += nest.scratch() > 0;
          if (!haveNvrtc() || nest.scratch() > 0) return;  // a group with a product is the CPU's only
          LoopNest gpu = lowered;
          gpu.scheduleGpu();
          std::string src = CudaPrinter().kernel("k", gpu.inputs(), gpu.outputs(), gpu.root());
          for (const char* arch : {"sm_80", "sm_90"}) {
            auto r = nvrtcCompile(src, "k", arch);
            ASSERT_TRUE(r.ok()) << r.error().what() << "\n" << src;
            EXPECT_TRUE(r.value().log.empty()) << r.value().log << "\n" << src;
          }
          std::vector<Tensor> onGpu = runGroupOnGpu(*graph, n, in);
          for (size_t k = 0; k < onGpu.size(); ++k)
            EXPECT_LE(test::relError(onGpu[k], ref[k]), 1e-5) << m.name << " on the GPU, kernel:\n" << text;
        });
    }
  EXPECT_GE(kernels, 8u);
  EXPECT_GE(products, 2u);  // the batch-1 LSTM's steps: h W^T (forward), dgates W (backward) in the cell's kernel
}

// A graph through the pipeline with the TE fuser: every group's loop nest run by the interpreter and by
// LLVM code must equal the group's subgraph run unfused by the graph interpreter (to 1e-13 in float64,
// 1e-6 when `dtype` is float32); its CUDA C compiles with NVRTC. Returns the ops the groups hold.
std::multiset<OpKind> checkTeGroups(const std::string& ir, DType dtype) {
  auto g = std::shared_ptr<Graph>(parseIR(ir));
  PipelineOptions o;
  o.fuser = FuserKind::Te;
  Plan p = optimizeSpecialized(g, std::vector<bool>(g->inputs().size(), false), o);
  std::multiset<OpKind> fused;
  static int k = 0;  // JIT symbol names are process-wide
  forEachNode(p.graph->block(), [&](Node* n) {
    if (n->kind() != OpKind::TensorExprGroup) return;
    const Graph& sub = *n->subgraph();
    for (const Node* m : *sub.block()) fused.insert(m->kind());
    LoopNest nest = lowerGroup(sub);
    std::vector<Tensor> in;
    std::vector<IValue> args;
    for (size_t i = 0; i < nest.inputs().size(); ++i) {
      in.push_back(Tensor::rand(nest.inputs()[i]->dims, dtypeOf(nest.inputs()[i]->type), 40 + i, -3, 3));
      args.emplace_back(in.back());
    }
    auto ref = Interpreter(sub).run(args);
    LoopNest lowered = nest;
    lowered.lowerReductions();
    auto interpreted = interpret(lowered, in);
    // The CPU's nest: outputs read back, strided sums interchanged; parallel from a small size on, so
    // that the parallel path runs too.
    LoopNest cpu = cpuLoopNest(sub, /*parallelGrain=*/64);
    auto cpuInterpreted = interpret(cpu, in);
    std::vector<Tensor> outs = runNestWithLlvm(cpu, fmt::format("te_lowering_{}_{}", dtypeName(dtype), k++), in);
    const double tol = dtype == DType::Float64 ? 1e-13 : 1e-6;
    for (size_t j = 0; j < ref.size(); ++j) {
      const Tensor& r = ref[j].toTensor();
      EXPECT_GT(r.numel() == 0 ? 1.0 : ops::sum(ops::mul(r, r), std::vector<int64_t>{}, false).item(0), 0.0);
      EXPECT_LE(test::relError(interpreted[j], r), tol) << "interpreter, output " << j << ":\n" << toString(nest.root());
      EXPECT_LE(test::relError(cpuInterpreted[j], r), tol) << "interpreter, CPU nest, output " << j << ":\n"
                                                           << toString(cpu.root());
      if (outs.empty()) continue;  // no LLVM in this build
      EXPECT_EQ(outs[j].dtype(), r.dtype()) << "output " << j;
      EXPECT_LE(test::relError(outs[j], r), tol) << "LLVM, output " << j << ":\n" << toString(cpu.root());
    }
    if (!haveNvrtc()) return;
    LoopNest gpu = lowered;
    gpu.scheduleGpu(64, 4, 3);
    std::string src = CudaPrinter().kernel("k", gpu.inputs(), gpu.outputs(), gpu.root());
    auto r = nvrtcCompile(src, "k", "sm_80");
    ASSERT_TRUE(r.ok()) << r.error().what() << "\n" << src;
    EXPECT_TRUE(r.value().log.empty()) << r.value().log << "\n" << src;
    std::vector<Tensor> onGpu = runNestOnGpu(gpu, in);
    for (size_t j = 0; j < onGpu.size(); ++j)
      EXPECT_LE(test::relError(onGpu[j], ref[j].toTensor()), dtype == DType::Float64 ? 1e-13 : 1e-5)
          << "on the GPU, output " << j << ":\n" << src;
  });
  return fused;
}

std::string typed(std::string ir, DType t) {
  for (size_t at = ir.find("T("); at != std::string::npos; at = ir.find("T(", at))
    ir.replace(at, 1, t == DType::Float64 ? "Double" : "Float");
  return ir;
}

class TeLowering : public testing::TestWithParam<DType> {};

// Output partitioning: the parts of a cat are stored into their slices, reductions among them too.
TEST_P(TeLowering, CatOfPointwiseValuesAndReductions) {
  auto fused = checkTeGroups(typed(R"IR(
graph(%a : T(4, 6), %b : T(4, 6), %c : T(6)):
  %one : int = prim::Constant[value=1]()
  %x : T(4, 6) = aten::mul(%a, %b)
  %y : T(4, 6) = aten::sigmoid(%x)
  %z : T(4, 6) = aten::add(%y, %c, %one)
  %l : Tensor[] = prim::ListConstruct(%x, %z, %a)
  %cat : T(4, 18) = aten::cat(%l, %one)
  %s6 : int[] = prim::Constant[value=[6]]()
  %sx : T(6) = aten::sum_to_size(%x, %s6)
  %sz : T(6) = aten::sum_to_size(%z, %s6)
  %l2 : Tensor[] = prim::ListConstruct(%sx, %sz)
  %zero : int = prim::Constant[value=0]()
  %cat2 : T(12) = aten::cat(%l2, %zero)
  return (%cat, %cat2, %y)
)IR", GetParam()), GetParam());
  EXPECT_EQ(fused.count(OpKind::Cat), 2u);
  EXPECT_EQ(fused.count(OpKind::SumToSize), 2u);
}

TEST_P(TeLowering, MeanOverDimsAndOverEverything) {
  auto fused = checkTeGroups(typed(R"IR(
graph(%a : T(3, 5, 7), %b : T(7)):
  %one : int = prim::Constant[value=1]()
  %x : T(3, 5, 7) = aten::mul(%a, %b)
  %y : T(3, 5, 7) = aten::tanh(%x)
  %d : int[] = prim::Constant[value=[0, 2]]()
  %t : bool = prim::Constant[value=1]()
  %f : bool = prim::Constant[value=0]()
  %m1 : T(1, 5, 1) = aten::mean(%y, %d, %t)
  %dl : int[] = prim::Constant[value=[-1]]()
  %m2 : T(3, 5) = aten::mean(%x, %dl, %f)
  %m3 : T() = aten::mean(%y)
  %s : T(3, 5) = aten::sum(%y, %dl, %f)
  return (%m1, %m2, %m3, %s, %y)
)IR", GetParam()), GetParam());
  EXPECT_EQ(fused.count(OpKind::MeanDim), 2u);
  EXPECT_EQ(fused.count(OpKind::Mean), 1u);
  EXPECT_EQ(fused.count(OpKind::SumDim), 1u);
}

TEST_P(TeLowering, SoftmaxAndLogSoftmaxOverAnyDim) {
  auto fused = checkTeGroups(typed(R"IR(
graph(%a : T(4, 9, 5), %b : T(5)):
  %x : T(4, 9, 5) = aten::div(%a, %b)
  %d1 : int = prim::Constant[value=1]()
  %sm : T(4, 9, 5) = aten::softmax(%x, %d1)
  %dl : int = prim::Constant[value=-1]()
  %ls : T(4, 9, 5) = aten::log_softmax(%x, %dl)
  %d0 : int = prim::Constant[value=0]()
  %s0 : T(4, 9, 5) = aten::softmax(%a, %d0)
  return (%sm, %ls, %s0)
)IR", GetParam()), GetParam());
  EXPECT_EQ(fused.count(OpKind::Softmax), 2u);
  EXPECT_EQ(fused.count(OpKind::LogSoftmax), 1u);
}

// Row groups: layer norms (both forms, with and without weight and bias) read by the group's other ops,
// their statistics as outputs, over one and over two trailing dims.
TEST_P(TeLowering, LayerNormIsReadInsideTheGroup) {
  auto fused = checkTeGroups(typed(R"IR(
graph(%x : T(5, 12), %h : T(5, 12), %w : T(12), %b : T(12)):
  %one : int = prim::Constant[value=1]()
  %s : int[] = prim::Constant[value=[12]]()
  %eps : float = prim::Constant[value=1.0000000000000001e-05]()
  %t : bool = prim::Constant[value=1]()
  %none : NoneType = prim::Constant()
  %y : T(5, 12) = aten::add(%x, %h, %one)
  %ln : T(5, 12) = aten::layer_norm(%y, %s, %w, %b, %eps, %t)
  %o : T(5, 12), %m : T(5, 1), %r : T(5, 1) = aten::native_layer_norm(%x, %s, %none, %b, %eps)
  %z : T(5, 12) = aten::tanh(%ln)
  %q : T(5, 12) = aten::mul(%z, %o)
  return (%q, %m, %r, %ln)
)IR", GetParam()), GetParam());
  EXPECT_EQ(fused.count(OpKind::LayerNorm), 1u);
  EXPECT_EQ(fused.count(OpKind::NativeLayerNorm), 1u);
  auto twoDims = checkTeGroups(typed(R"IR(
graph(%x : T(3, 4, 6), %w : T(4, 6)):
  %s : int[] = prim::Constant[value=[4, 6]]()
  %eps : float = prim::Constant[value=0.001]()
  %t : bool = prim::Constant[value=1]()
  %none : NoneType = prim::Constant()
  %e : T(3, 4, 6) = aten::exp(%x)
  %ln : T(3, 4, 6) = aten::layer_norm(%e, %s, %w, %none, %eps, %t)
  %y : T(3, 4, 6) = aten::sigmoid(%ln)
  return (%y)
)IR", GetParam()), GetParam());
  EXPECT_EQ(twoDims.count(OpKind::LayerNorm), 1u);
}

// A row group of two row shapes: a layer norm over [3, 8] rows, chunked, and the [3, 4] pieces' own layer
// norm, in one loop over the 3 rows (the layer-norm LSTM's step).
TEST_P(TeLowering, ChunksOfALayerNormShareItsRows) {
  auto fused = checkTeGroups(typed(R"IR(
graph(%x : T(3, 8), %w : T(8), %b : T(8), %c : T(3, 4)):
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %s8 : int[] = prim::Constant[value=[8]]()
  %s4 : int[] = prim::Constant[value=[4]]()
  %eps : float = prim::Constant[value=1.0000000000000001e-05]()
  %t : bool = prim::Constant[value=1]()
  %none : NoneType = prim::Constant()
  %ln : T(3, 8) = aten::layer_norm(%x, %s8, %w, %b, %eps, %t)
  %l : Tensor[] = aten::chunk(%ln, %two, %one)
  %p : T(3, 4), %q : T(3, 4) = prim::ListUnpack(%l)
  %sp : T(3, 4) = aten::sigmoid(%p)
  %m : T(3, 4) = aten::mul(%sp, %c)
  %tq : T(3, 4) = aten::tanh(%q)
  %y : T(3, 4) = aten::add(%m, %tq, %one)
  %ln2 : T(3, 4) = aten::layer_norm(%y, %s4, %none, %none, %eps, %t)
  %z : T(3, 4) = aten::mul(%ln2, %sp)
  return (%z, %y)
)IR", GetParam()), GetParam());
  EXPECT_EQ(fused.count(OpKind::LayerNorm), 2u);
  EXPECT_EQ(fused.count(OpKind::Chunk), 1u);
}

// custom_lstms' decomposed layer norm: mean, std (biased) and var (unbiased) over the last dim, kept,
// read by the pointwise ops around them: one group.
TEST_P(TeLowering, DecomposedLayerNormIsOneGroup) {
  auto fused = checkTeGroups(typed(R"IR(
graph(%x : T(6, 10), %w : T(10), %b : T(10)):
  %one : int = prim::Constant[value=1]()
  %last : int[] = prim::Constant[value=[-1]]()
  %t : bool = prim::Constant[value=1]()
  %f : bool = prim::Constant[value=0]()
  %y : T(6, 10) = aten::sigmoid(%x)
  %mu : T(6, 1) = aten::mean(%y, %last, %t)
  %sigma : T(6, 1) = aten::std(%y, %last, %f, %t)
  %v : T(6, 1) = aten::var(%y, %last, %t, %t)
  %c : T(6, 10) = aten::sub(%y, %mu, %one)
  %n : T(6, 10) = aten::div(%c, %sigma)
  %a : T(6, 10) = aten::mul(%n, %w)
  %o : T(6, 10) = aten::add(%a, %b, %one)
  %p : T(6, 10) = aten::mul(%o, %v)
  return (%p, %sigma)
)IR", GetParam()), GetParam());
  EXPECT_EQ(fused.count(OpKind::MeanDim), 1u);
  EXPECT_EQ(fused.count(OpKind::Std), 1u);
  EXPECT_EQ(fused.count(OpKind::Var), 1u);
  EXPECT_EQ(fused.count(OpKind::Div), 1u);
}

// The backward in one group: the input gradient from the row's sums of g w and g w xhat; the weight and
// bias gradients summed over the rows in nests of their own; var's gradient beside it.
TEST_P(TeLowering, LayerNormBackwardIsOneGroup) {
  auto fused = checkTeGroups(typed(R"IR(
graph(%a : T(7, 9), %b : T(7, 9), %x : T(7, 9), %mean : T(7, 1), %rstd : T(7, 1), %w : T(9), %bias : T(9), %gv : T(7, 1)):
  %s : int[] = prim::Constant[value=[9]]()
  %last : int[] = prim::Constant[value=[1]]()
  %t : bool = prim::Constant[value=1]()
  %g : T(7, 9) = aten::mul(%a, %b)
  %dx : T(7, 9), %dw : T(9), %db : T(9) = aten::native_layer_norm_backward(%g, %x, %s, %mean, %rstd, %w, %bias)
  %dv : T(7, 9) = aten::_var_backward(%gv, %x, %last, %t, %t)
  %y : T(7, 9) = aten::tanh(%dx)
  %one : int = prim::Constant[value=1]()
  %z : T(7, 9) = aten::add(%y, %dv, %one)
  return (%z, %dw, %db)
)IR", GetParam()), GetParam());
  EXPECT_EQ(fused.count(OpKind::NativeLayerNormBackward), 1u);
  EXPECT_EQ(fused.count(OpKind::VarBackward), 1u);
  EXPECT_EQ(fused.count(OpKind::Mul), 1u);
}

// The weight and bias gradients' nests run after the row loop, so they cannot read a row op's value: a
// gradient that is itself a layer norm of the same rows is refused by the lowering (the fuser then runs
// the group unfused), and the same group with the gradient computed pointwise lowers and runs.
TEST(TeLowering, AColumnSumCannotReadARowStatistic) {
  const char* ir = R"IR(
graph(%a : Float(7, 9), %x : Float(7, 9), %mean : Float(7, 1), %rstd : Float(7, 1), %w : Float(9), %bias : Float(9)):
  %s : int[] = prim::Constant[value=[9]]()
  %none : NoneType = prim::Constant()
  %eps : float = prim::Constant[value=1e-05]()
  %f : bool = prim::Constant[value=0]()
  %g : Float(7, 9) = GRAD
  %dx : Float(7, 9), %dw : Float(9), %db : Float(9) = aten::native_layer_norm_backward(%g, %x, %s, %mean, %rstd, %w, %bias)
  return (%dx, %dw, %db)
)IR";
  auto withGrad = [&](const char* grad) {
    std::string text = ir;
    text.replace(text.find("GRAD"), 4, grad);
    return parseIR(text);
  };
  auto rowGrad = withGrad("aten::layer_norm(%a, %s, %none, %none, %eps, %f)");
  try {
    lowerGroup(*rowGrad);
    ADD_FAILURE() << "a column sum of a layer norm's rows was lowered";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("a column sum cannot read the row statistics of aten::layer_norm"),
              std::string::npos)
        << e.what();
  }
  auto pointwiseGrad = withGrad("aten::tanh(%a)");
  LoopNest nest = lowerGroup(*pointwiseGrad);
  nest.lowerReductions();
  std::vector<IValue> args;
  std::vector<Tensor> in;
  for (size_t i = 0; i < nest.inputs().size(); ++i) {
    in.push_back(Tensor::rand(nest.inputs()[i]->dims, DType::Float32, 60 + static_cast<int>(i), 0.5, 2));
    args.emplace_back(in.back());
  }
  auto ref = Interpreter(*pointwiseGrad).run(args);
  const std::vector<Tensor> out = interpret(nest, in);
  ASSERT_EQ(out.size(), 3u);
  for (size_t k = 0; k < out.size(); ++k) EXPECT_LE(test::relError(out[k], ref[k].toTensor()), 1e-5) << k;
}

// Type promotion inside a kernel: float32 with float64 computes in float64; a 0-dim float64 operand
// leaves a float32 tensor in float32; the gradient ops promote the same way.
TEST(TeLowering, PromotesFloat32WithFloat64) {
  auto fused = checkTeGroups(R"IR(
graph(%x : Float(3, 4), %s : Double(3, 4), %b : Double(4), %c : Double(), %g : Double(3, 4)):
  %one : int = prim::Constant[value=1]()
  %h : Float(3, 4) = aten::tanh(%x)
  %m : Double(3, 4) = aten::mul(%h, %s)
  %z : Double(3, 4) = aten::sigmoid(%m)
  %o : Double(3, 4) = aten::add(%h, %b, %one)
  %p : Float(3, 4) = aten::mul(%h, %c)
  %q : Float(3, 4) = aten::tanh(%p)
  %gz : Double(3, 4) = aten::tanh_backward(%g, %q)
  return (%z, %o, %q, %gz)
)IR", DType::Float32);
  EXPECT_EQ(fused.count(OpKind::Mul), 2u);
  EXPECT_EQ(fused.count(OpKind::TanhBackward), 1u);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, TeLowering, testing::Values(DType::Float32, DType::Float64),
                         [](const testing::TestParamInfo<DType>& i) { return std::string(dtypeName(i.param)); });

// Softmax rows that hold -inf, +inf and NaN give PyTorch's answers (NaN rows stay NaN).
TEST(TeLowering, SoftmaxOfNonFiniteRowsMatchesTheRuntime) {
  SKIP_WITHOUT_LLVM();
  auto g = std::shared_ptr<Graph>(parseIR(R"IR(
graph(%a : Float(3, 4)):
  %one : float = prim::Constant[value=1.0]()
  %x : Float(3, 4) = aten::mul(%a, %one)
  %d : int = prim::Constant[value=1]()
  %s : Float(3, 4) = aten::softmax(%x, %d)
  %l : Float(3, 4) = aten::log_softmax(%x, %d)
  return (%s, %l)
)IR"));
  PipelineOptions o;
  o.fuser = FuserKind::Te;
  Plan p = optimizeSpecialized(g, {false}, o);
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  Tensor a = Tensor::fromVector({3, 4}, {-inf, 1, 2, 3, inf, 0, 1, 2, nan, 1, 2, 3}, DType::Float32);
  const Node* group = nullptr;
  forEachNode(p.graph->block(), [&](Node* n) { group = n->kind() == OpKind::TensorExprGroup ? n : group; });
  ASSERT_NE(group, nullptr) << printIR(*p.graph);
  LoopNest nest = lowerGroup(*group->subgraph());
  nest.lowerReductions();
  nest.scheduleCpu();
  std::vector<Tensor> outs = runNestWithLlvm(nest, "te_softmax_nonfinite", {a});
  ASSERT_EQ(outs.size(), 2u);
  Tensor refs[2] = {ops::softmax(a, 1), ops::logSoftmax(a, 1)};
  for (int k = 0; k < 2; ++k)
    for (int64_t i = 0; i < 12; ++i) {
      double want = refs[k].item(i), got = outs[k].item(i);
      if (std::isnan(want)) EXPECT_TRUE(std::isnan(got)) << k << " " << i;
      else if (std::isinf(want)) EXPECT_EQ(got, want) << k << " " << i;
      else EXPECT_NEAR(got, want, 1e-6) << k << " " << i;
    }
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

// The TE fuser's row and column schedules on the GPU (a block a row, 32 columns a block:
// LoopNest::scheduleGpu) at odd row lengths, a batch of 1 and of 3, the input a transposed view: softmax,
// log_softmax, layer norm, a row sum and mean, a column sum over 37 rows, forward and backward, against the
// TE fuser's CPU kernels (LLVM; the unfused float32 log_softmax is oneDNN's, 1e-6
// from 0 on a row of one element, where both fusers give 0), or the unfused path in a build without LLVM
// (and without oneDNN: the CUDA-only build that runs it on a GPU). On the emulated driver under its race
// checker.
TEST(TeGpuRows, MatchTheCpuAtOddSizes) {
  if (auto d = cuda::device(); !d) GTEST_SKIP() << d.error().what();
  for (int64_t n : {1, 31, 33, 1000, 4097})
    for (int64_t rows : {1, 17}) {
      SCOPED_TRACE(fmt::format("{} rows of {}", rows, n));
      const std::string text = fmt::format(R"IR(graph(%x : Float({0}, {1}), %w : Float({1}), %b : Float({1}),
      %y : Float(37, {1})):
  %one : int = prim::Constant[value=1]()
  %n : int = prim::Constant[value={1}]()
  %shape : int[] = prim::ListConstruct(%n)
  %dims : int[] = prim::ListConstruct(%one)
  %eps : float = prim::Constant[value=1.0000000000000001e-05]()
  %false : bool = prim::Constant[value=0]()
  %true : bool = prim::Constant[value=1]()
  %p : Float({0}, {1}) = aten::softmax(%x, %one)
  %lp : Float({0}, {1}) = aten::log_softmax(%x, %one)
  %ln : Float({0}, {1}) = aten::layer_norm(%x, %shape, %w, %b, %eps, %false)
  %s : Float({0}) = aten::sum(%x, %dims, %false)
  %m : Float({0}, 1) = aten::mean(%x, %dims, %true)
  %t : Float({0}, {1}) = aten::tanh(%ln)
  %u : Float({0}, {1}) = aten::mul(%p, %t)
  %v : Float({0}, {1}) = aten::mul(%lp, %m)
  %zero : int = prim::Constant[value=0]()
  %batch : int[] = prim::ListConstruct(%zero)
  %yy : Float(37, {1}) = aten::mul(%y, %y)
  %c : Float({1}) = aten::sum(%yy, %batch, %false)
  return (%u, %v, %s, %c)
)IR", rows, n);
      auto g = parseIR(text);
      const std::vector<IValue> in = {Tensor::rand({n, rows}, DType::Float32, 7, -2, 2).t(),
                                      Tensor::rand({n}, DType::Float32, 8, 0.5, 1.5),
                                      Tensor::rand({n}, DType::Float32, 9, -1, 1),
                                      Tensor::rand({37, n}, DType::Float32, 10, -1, 1)};
      const std::vector<bool> rg = {true, true, true, true};
      std::vector<Tensor> gos;
      for (const Shape& sh : {Shape{rows, n}, Shape{rows, n}, Shape{rows}, Shape{n}})
        gos.push_back(Tensor::rand(sh, DType::Float32, 10 + gos.size(), 0.5, 1.5));
      // The TE fuser's CPU kernels where LLVM is built, else (the CUDA-only build, on a GPU) the unfused
      // path, which has no oneDNN there either.
      const FuserKind reference = test::kHaveLlvm ? FuserKind::Te : FuserKind::None;
      Function cpu(*g, {.fuser = reference, .executor = ExecutorKind::Legacy});
      auto want = cpu.forward(in, rg);
      auto wantGrads = cpu.backward(gos);
      Function gpu(*g, {.fuser = FuserKind::Te, .executor = ExecutorKind::Legacy, .device = DeviceKind::Cuda});
      auto got = gpu.forward(in, rg);
      std::vector<Tensor> onDevice;
      for (const Tensor& go : gos) onDevice.push_back(go.to(DeviceKind::Cuda));
      auto grads = gpu.backward(onDevice);
      EXPECT_GT(gpu.stats().kernelRuns, 0) << "no fused kernel ran";
      for (size_t k = 0; k < want.size(); ++k)
        EXPECT_LE(test::relError(got[k].toTensor().to(DeviceKind::Cpu), want[k].toTensor()), 1e-5) << "output " << k;
      for (size_t k = 0; k < wantGrads.size(); ++k)
        EXPECT_LE(test::relError(grads[k].to(DeviceKind::Cpu), wantGrads[k]), 1e-4) << "gradient " << k;
    }
}


// The TE fuser's (last) group of g's forward plan for the GPU, scheduled for a device that holds 4 split
// blocks: a cooperative launch over all 4.
void expectASplitLaunch(const Graph& g) {
  PipelineOptions o;
  o.fuser = FuserKind::Te;
  o.fuserOptions.device = DeviceKind::Cuda;
  Plan plan = optimizeSpecialized(std::shared_ptr<Graph>(g.clone()), {false}, o);
  const Node* group = nullptr;
  forEachNode(plan.graph->block(), [&](Node* k) { group = k->kind() == OpKind::TensorExprGroup ? k : group; });
  ASSERT_NE(group, nullptr) << printIR(*plan.graph);
  const LoopNest gpu = gpuLoopNest(*group->subgraph(), {}, 4);
  const LoopNest::GpuLaunch launch = gpu.gpuLaunch();
  EXPECT_TRUE(launch.cooperative);
  EXPECT_EQ(launch.blocks[0], 4);
  // Every block resident at once: the kernel bounds its registers for as many a multiprocessor.
  const std::string source = CudaPrinter().kernel("k", gpu.inputs(), gpu.outputs(), gpu.root(), 2);
  EXPECT_NE(source.find("__global__ void __launch_bounds__(256, 2) k("), std::string::npos) << source;
}

// A split reduction (LoopNest::kGpuSplitRowsMost): a few long rows, each over several blocks that meet at
// a grid barrier (a cooperative launch), each block folding the row's partials in one order. A sum of
// exponentials and a maximum, a softmax (its row loops split across the blocks too) and a layer norm
// (a mean, then a variance that needs it, then the row), forward and backward, against the unfused CPU
// path (no LLVM needed: these run in the CUDA-only build on a GPU too); twice, bitwise the same. The emulated device holds 4 such blocks (2 multiprocessors).
TEST(TeGpuRows, SplitReductionsMatchTheCpu) {
  if (auto d = cuda::device(); !d) GTEST_SKIP() << d.error().what();
  const char* bodies[] = {
      R"IR(  %e : Float({0}, {1}) = aten::exp(%x)
  %s : Float({0}) = aten::sum(%e, %dims, %false)
  %m : Float({0}) = aten::amax(%x, %dims, %false)
  %r : Float({0}) = aten::mul(%s, %m)
  return (%r))IR",
      R"IR(  %p : Float({0}, {1}) = aten::softmax(%x, %one)
  %r : Float({0}, {1}) = aten::mul(%p, %x)
  return (%r))IR",
      R"IR(  %n : int = prim::Constant[value={1}]()
  %shape : int[] = prim::ListConstruct(%n)
  %eps : float = prim::Constant[value=1.0000000000000001e-05]()
  %ln : Float({0}, {1}) = aten::layer_norm(%x, %shape, %none, %none, %eps, %false)
  %r : Float({0}, {1}) = aten::tanh(%ln)
  return (%r))IR"};
  for (const char* body : bodies)
    for (int64_t rows : {1, 2}) {
      const int64_t n = 16411;  // just over kGpuSplitRowLeast: 4 blocks a row of 1, 2 a row of 2
      const std::string text = fmt::format(R"IR(graph(%x : Float({0}, {1})):
  %one : int = prim::Constant[value=1]()
  %dims : int[] = prim::ListConstruct(%one)
  %false : bool = prim::Constant[value=0]()
  %none : NoneType = prim::Constant()
)IR", rows, n) + fmt::format(fmt::runtime(body), rows, n) + "\n";
      SCOPED_TRACE(text);
      auto g = parseIR(text);
      expectASplitLaunch(*g);

      const std::vector<IValue> in = {Tensor::rand({rows, n}, DType::Float32, 21, -2, 2)};
      const bool perRow = std::string(body).find("%r : Float({0}) =") != std::string::npos;
      const Shape outShape = perRow ? Shape{rows} : Shape{rows, n};
      const Tensor go = Tensor::rand(outShape, DType::Float32, 22, 0.5, 1.5);
      Function cpu(*g, {.fuser = FuserKind::None, .executor = ExecutorKind::Legacy});
      auto want = cpu.forward(in, {true});
      auto wantGrads = cpu.backward({go});
      Function gpu(*g, {.fuser = FuserKind::Te, .executor = ExecutorKind::Legacy, .device = DeviceKind::Cuda});
      std::vector<Tensor> outs;
      for (int run = 0; run < 2; ++run) {
        auto got = gpu.forward(in, {true});
        outs.push_back(got[0].toTensor().to(DeviceKind::Cpu));
        auto grads = gpu.backward({go.to(DeviceKind::Cuda)});
        EXPECT_LE(test::relError(grads[0].to(DeviceKind::Cpu), wantGrads[0]), 1e-4) << "gradient";
      }
      EXPECT_GT(gpu.stats().kernelRuns, 0) << "no fused kernel ran";
      EXPECT_TRUE(gpu.stats().warnings.empty()) << gpu.stats().warnings.front();
      EXPECT_LE(test::relError(outs[0], want[0].toTensor()), 1e-5);
      EXPECT_EQ(std::memcmp(outs[0].rawData(), outs[1].rawData(), outs[0].numel() * sizeof(float)), 0)
          << "two runs differ";
    }
}

// A split column reduction (LoopNest::kGpuSplitColumnLeast): a sum over a long batch into few outputs (a
// bias gradient's shape) beside a pointwise output in one kernel; each group of 32 outputs over several
// blocks that meet at a grid barrier, the pointwise nest in the same grid. Outputs of 40 (a group with
// idle lanes) and 64 (whole groups), columns of 1031 elements (odd: the last block's share shorter)
// against the unfused CPU path; twice, bitwise the same. The emulated device holds 4 blocks.
TEST(TeGpuRows, SplitColumnReductionsMatchTheCpu) {
  if (auto d = cuda::device(); !d) GTEST_SKIP() << d.error().what();
  for (int64_t columns : {40, 64}) {
    const int64_t rows = 1031;
    const std::string text = fmt::format(R"IR(graph(%x : Float({0}, {1})):
  %zero : int = prim::Constant[value=0]()
  %dims : int[] = prim::ListConstruct(%zero)
  %false : bool = prim::Constant[value=0]()
  %y : Float({0}, {1}) = aten::tanh(%x)
  %z : Float({0}, {1}) = aten::mul(%y, %x)
  %s : Float({1}) = aten::sum(%z, %dims, %false)
  return (%s, %y)
)IR", rows, columns);
    SCOPED_TRACE(text);
    auto g = parseIR(text);
    expectASplitLaunch(*g);  // 2 groups of 32 outputs, each over 2 blocks

    const std::vector<IValue> in = {Tensor::rand({rows, columns}, DType::Float32, 23, -2, 2)};
    Function cpu(*g, {.fuser = FuserKind::None, .executor = ExecutorKind::Legacy});
    auto want = cpu.forward(in, {false});
    Function gpu(*g, {.fuser = FuserKind::Te, .executor = ExecutorKind::Legacy, .device = DeviceKind::Cuda});
    std::vector<Tensor> sums;
    for (int run = 0; run < 2; ++run) {
      auto got = gpu.forward(in, {false});
      sums.push_back(got[0].toTensor().to(DeviceKind::Cpu));
      EXPECT_LE(test::relError(got[1].toTensor().to(DeviceKind::Cpu), want[1].toTensor()), 1e-5) << "pointwise";
    }
    EXPECT_GT(gpu.stats().kernelRuns, 0) << "no fused kernel ran";
    EXPECT_TRUE(gpu.stats().warnings.empty()) << gpu.stats().warnings.front();
    EXPECT_LE(test::relError(sums[0], want[0].toTensor()), 1e-5);
    EXPECT_EQ(std::memcmp(sums[0].rawData(), sums[1].rawData(), sums[0].numel() * sizeof(float)), 0)
        << "two runs differ";
  }
}

// FunctionOptions::fuserOptions.timeKernels on the device: each fused kernel's launches counted and timed, its bytes
// those of its inputs and outputs (a softmax of 3 rows of 40 times x: 480 B in, 480 B out).
TEST(TeGpuRows, KernelTimesCountEachLaunchAndItsBytes) {
  if (auto d = cuda::device(); !d) GTEST_SKIP() << d.error().what();
  auto g = parseIR(R"IR(graph(%x : Float(3, 40)):
  %one : int = prim::Constant[value=1]()
  %p : Float(3, 40) = aten::softmax(%x, %one)
  %r : Float(3, 40) = aten::mul(%p, %x)
  return (%r))IR");
  Function f(*g, {.fuser = FuserKind::Te, .executor = ExecutorKind::Legacy, .device = DeviceKind::Cuda,
                  .fuserOptions = {.timeKernels = true}});
  const std::vector<IValue> in = {Tensor::rand({3, 40}, DType::Float32, 5, -1, 1).to(DeviceKind::Cuda)};
  for (int run = 0; run < 3; ++run) f.forward(in);
  const FunctionStats s = f.stats();
  ASSERT_EQ(s.kernelTimes.size(), 1u) << s.str();
  EXPECT_EQ(s.kernelTimes[0].launches, 3);
  EXPECT_EQ(s.kernelTimes[0].bytes, 960);
  EXPECT_GT(s.kernelTimes[0].ms, 0);
  EXPECT_NE(s.kernelTimes[0].kernel.find("prim::TensorExprGroup"), std::string::npos) << s.kernelTimes[0].kernel;
  Function untimed(*g, {.fuser = FuserKind::Te, .executor = ExecutorKind::Legacy, .device = DeviceKind::Cuda});
  untimed.forward(in);
  EXPECT_TRUE(untimed.stats().kernelTimes.empty());
}

// The cell's kernel in CUDA C computes each gate's sigmoid or tanh once an element (3 sigmoids, whose text
// is expf, and 2 tanh, as the legacy kernel does): hy's store reads cy's value from a temporary instead of
// printing cy's expression again. InterpreterLlvmAndCudaAgreeForEveryModelKernel runs such kernels.
TEST(TeFuser, CudaTextComputesSharedSubexpressionsOnce) {
  Model m = buildLstmCell(3, 4, 5);
  PipelineOptions o;
  o.fuser = FuserKind::Te;
  Plan p = optimizeSpecialized(std::shared_ptr<Graph>(m.graph->clone()), std::vector<bool>(m.inputs.size(), false), o);
  const Node* group = nullptr;
  forEachNode(p.graph->block(), [&](Node* n) { group = n->kind() == OpKind::TensorExprGroup ? n : group; });
  ASSERT_NE(group, nullptr) << printIR(*p.graph);
  LoopNest gpu = lowerGroup(*group->subgraph());
  gpu.lowerReductions();
  gpu.scheduleGpu();
  const std::string src = CudaPrinter().kernel("k", gpu.inputs(), gpu.outputs(), gpu.root());
  auto count = [&](std::string_view what) {
    size_t n = 0;
    for (size_t at = src.find(what); at != std::string::npos; at = src.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("expf("), 3u) << src;
  EXPECT_EQ(count("tanhf("), 2u) << src;
  EXPECT_GE(count("const float _cse"), 1u) << src;
  if (!haveNvrtc()) return;
  auto r = nvrtcCompile(src, "k", "sm_90");
  ASSERT_TRUE(r.ok()) << r.error().what() << "\n" << src;
}

// A TE kernel's buffers are distinct allocations, and the LLVM IR says so (noalias): the LSTM cell's
// loop vectorizes (AVX-512 or AVX2 vectors of float) without run-time overlap checks and a scalar copy
// of the loop behind them, which once doubled the optimized module and its compile time.
TEST(TeFuser, CpuKernelsVectorizeWithoutOverlapChecks) {
  SKIP_WITHOUT_LLVM();
  size_t modules = 0;
  // A size no other test compiles, so nothing comes from the cache.
  for (const auto& [name, text] : test::dumpedKernels(buildLstmCell(4, 16, 48), FuserKind::Te, "te_noalias_test")) {
    if (!name.ends_with(".opt.ll")) continue;
    ++modules;
    EXPECT_NE(text.find(" x float>"), std::string::npos) << name << " is not vectorized";
    for (const char* check : {"found.conflict", "bound0"})
      EXPECT_EQ(text.find(check), std::string::npos) << name << " checks for overlapping buffers (" << check << ")";
  }
  EXPECT_EQ(modules, 1u);
}

// m's plan through the pipeline with the TE fuser, `rg` its inputs' requires-grad flags.
Plan teTrainingPlan(const Model& m, const std::vector<bool>& rg) {
  PipelineOptions o;
  o.fuser = FuserKind::Te;
  return optimizeSpecialized(std::shared_ptr<Graph>(m.graph->clone()), rg, o);
}

// The layer-norm LSTM under the TE fuser, unrolled: every row op of the forward and of the backward
// (layer norm and its backward; the decomposed form's mean, std and var's gradient) runs inside a group.
// A step is one group forward (the gates' two layer norms over [B, 4H] rows, their chunks read at offsets,
// the [B, H] cell and its layer norm: one loop over B) and two backward (the cell's, ending in the
// concatenated gate gradients, then the gates' layer-norm backward, which reads them whole).
TEST(TeFuser, LayerNormLstmFusesEveryLayerNormForwardAndBackward) {
  for (bool decompose : {false, true}) {
    ModelConfig c{.seqLength = 3, .miniBatch = 2, .inputSize = 4, .hiddenSize = 5, .numLayers = 1};
    c.decomposeLayerNorm = decompose;
    Model m = buildModel("lnlstm", c);
    Plan p = teTrainingPlan(m, std::vector<bool>(m.inputs.size(), true));
    ASSERT_EQ(p.gradients.size(), 1u);
    const Gradient& grad = *p.gradients.begin()->second;
    for (const Graph* g : {grad.forward.get(), grad.backward.get()}) {
      SCOPED_TRACE(fmt::format("{}, {}", m.name, g == grad.forward.get() ? "forward" : "backward"));
      size_t withRowOps = 0;
      std::multiset<OpKind> fused;
      for (const Node* n : *g->block()) {
        EXPECT_FALSE(te::rowOp(n).has_value()) << "unfused: " << n->describe();
        if (n->kind() != OpKind::TensorExprGroup) continue;
        bool any = false;
        for (const Node* inner : *n->subgraph()->block()) {
          fused.insert(inner->kind());
          any = any || te::rowOp(inner);
        }
        withRowOps += any ? 1 : 0;
      }
      const bool forward = g == grad.forward.get();
      // (The decomposed backward has more: mean's gradient, aten::_mean_backward, is not fused.)
      if (forward || !decompose) EXPECT_EQ(withRowOps, (forward ? 1u : 2u) * c.seqLength) << printIR(*g);
      else EXPECT_GE(withRowOps, 2u * c.seqLength) << printIR(*g);
      if (!decompose) {
        EXPECT_EQ(fused.count(forward ? OpKind::NativeLayerNorm : OpKind::NativeLayerNormBackward), 3u * c.seqLength);
      } else {
        EXPECT_EQ(fused.count(forward ? OpKind::Std : OpKind::VarBackward), 3u * c.seqLength);
      }
    }
  }
}

// On the CPU the TE fuser computes a small batch's step product in the step's kernel: h W^T forward,
// dgates W backward (each in the group of the step that reads it), as one nest ahead of the pointwise
// one. A batch-1 layer, trained through the profiling executor: the groups hold the products, and the
// outputs and gradients are the unfused run's (1e-5, 1e-4); the fused run launched one kernel a step.
// For CUDA the fuser leaves the products to cuBLAS.
TEST(TeFuser, SmallProductsJoinTheStepsKernelOnTheCpu) {
  SKIP_WITHOUT_LLVM();
  const int64_t steps = 6;
  Model m = buildLstm(LstmVariantKind::JitPremul, {steps, 1, 8, 16, 1});
  std::vector<bool> rg;
  std::vector<IValue> in;
  for (const Tensor& t : randomInputs(m, 5)) {
    in.emplace_back(t);
    rg.push_back(isFloating(t.dtype()));
  }
  // The groups, forward and backward.
  Plan p = teTrainingPlan(m, rg);
  ASSERT_EQ(p.gradients.size(), 1u);
  const Gradient& grad = *p.gradients.begin()->second;
  for (const Graph* g : {grad.forward.get(), grad.backward.get()}) {
    size_t products = 0, unfused = 0;
    forEachNode(g->block(), [&](Node* n) {
      if (n->kind() == OpKind::TensorExprGroup)
        for (const Node* inner : *n->subgraph()->block()) products += inner->kind() == OpKind::Mm;
      const auto a = n->kind() == OpKind::Mm ? staticSizes(n->input(0)) : std::nullopt;
      unfused += a && (*a)[0] == 1;
    });
    const bool forward = g == grad.forward.get();
    EXPECT_EQ(products, forward ? steps : steps - 1) << printIR(*g);
    EXPECT_EQ(unfused, forward ? 0u : 1u) << printIR(*g);  // hx's gradient, which no step reads
  }
  // The values, against the unfused run.
  std::vector<IValue> outs[2];
  std::vector<Tensor> grads[2];
  FunctionStats stats;
  for (int k = 0; k < 2; ++k) {
    Function f(*m.graph, {.fuser = k == 0 ? FuserKind::None : FuserKind::Te, .executor = ExecutorKind::Profiling});
    for (int run = 0; run < 2; ++run) {  // the profiling run, then the optimized one
      outs[k] = f.forward(in, rg);
      std::vector<Tensor> gy;
      for (size_t i = 0; i < outs[k].size(); ++i)
        gy.push_back(Tensor::rand(outs[k][i].toTensor().sizes(), DType::Float32, 70 + i, -1, 1));
      grads[k] = f.backward(gy);
    }
    stats = f.stats();
  }
  ASSERT_EQ(outs[0].size(), outs[1].size());
  for (size_t i = 0; i < outs[0].size(); ++i)
    EXPECT_LE(test::relError(outs[1][i].toTensor(), outs[0][i].toTensor()), 1e-5) << "output " << i;
  ASSERT_EQ(grads[0].size(), grads[1].size());
  for (size_t i = 0; i < grads[0].size(); ++i)
    EXPECT_LE(test::relError(grads[1][i], grads[0][i]), 1e-4) << "gradient " << i;
  EXPECT_EQ(stats.kernelRefusals, 0);
  EXPECT_GE(stats.kernelRuns, 2 * steps);  // the optimized run's steps, forward and backward
  // The same graph grouped for CUDA: no product joins.
  PipelineOptions none;
  Plan unfused =
      optimizeSpecialized(std::shared_ptr<Graph>(m.graph->clone()), std::vector<bool>(rg.size(), false), none);
  for (DeviceKind device : {DeviceKind::Cpu, DeviceKind::Cuda}) {
    auto g = std::shared_ptr<Graph>(unfused.graph->clone());
    ASSERT_GT(fuseTensorExprGroups(*g, device), 0);
    size_t products = 0;
    forEachNode(g->block(), [&](Node* n) {
      if (n->kind() == OpKind::TensorExprGroup)
        for (const Node* inner : *n->subgraph()->block()) products += inner->kind() == OpKind::Mm;
    });
    EXPECT_EQ(products, device == DeviceKind::Cpu ? steps : 0) << deviceName(device) << ":\n" << printIR(*g);
  }
}

// Every step of an unrolled LSTM computes the same cell, so each fuser's groups print alike and share
// one compiled kernel, forward and backward, however the regions' nodes and inputs happened to be found
// (the first step's group once listed its inputs in another order and compiled a second kernel).
TEST(Fusers, EveryStepOfAnUnrolledLstmSharesOneKernel) {
  Model m = buildLstm(LstmVariantKind::Jit, {5, 3, 4, 6, 1});
  std::vector<bool> rg;
  for (const InputSpec& in : m.inputs) rg.push_back(isFloating(in.dtype));
  for (FuserKind f : {FuserKind::Legacy, FuserKind::Te}) {
    OpKind groupKind = f == FuserKind::Te ? OpKind::TensorExprGroup : OpKind::FusionGroup;
    PipelineOptions o;
    o.fuser = f;
    o.unrollLoops = true;
    Plan p = optimizeSpecialized(std::shared_ptr<Graph>(m.graph->clone()), rg, o);
    ASSERT_EQ(p.gradients.size(), 1u);
    const Gradient& grad = *p.gradients.begin()->second;
    for (const Graph* g : {grad.forward.get(), grad.backward.get()}) {
      std::set<std::string> bodies;
      std::set<const CompiledKernel*> kernels;
      size_t steps = 0, others = 0;
      forEachNode(g->block(), [&](Node* n) {
        if (n->kind() != groupKind) return;
        bool cell = false;  // a step's group: the gates' activations or their gradients
        for (const Node* m : *n->subgraph()->block())
          cell = cell || m->kind() == OpKind::Tanh || m->kind() == OpKind::TanhBackward;
        if (!cell) {
          ++others;
          return;
        }
        ++steps;
        bodies.insert(printIR(*n->subgraph()));
        if (auto it = p.kernels.find(n); it != p.kernels.end()) kernels.insert(it->second.get());
      });
      EXPECT_EQ(steps, 5u) << printIR(*g);
      // Another round of region growth (Note [Rounds of region growth]) sums the steps' bias gradients
      // ([4H] each, another shape than the steps' [B, H]) in one group of their own, in either fuser.
      EXPECT_EQ(others, g == grad.backward.get() ? 1u : 0u) << printIR(*g);
      EXPECT_EQ(bodies.size(), 1u) << fuserName(f) << ":\n" << printIR(*g);
      if (test::kHaveLlvm) {
        EXPECT_EQ(kernels.size(), 1u) << fuserName(f);
      }
    }
  }
}

}  // namespace
}  // namespace gj

namespace gj {
namespace {

// prim::philox_dropout between two pointwise ops, and its gradient: fused by both fusers, forward and backward.
const char* kDropoutIR = R"IR(graph(%x : T(37, 29), %w : T(29), %rng : Long(2)):
  %p : float = prim::Constant[value=0.3]()
  %t : bool = prim::Constant[value=1]()
  %s : int = prim::Constant[value=5]()
  %a : T(37, 29) = aten::mul(%x, %w)
  %y : T(37, 29) = prim::philox_dropout(%a, %p, %t, %rng, %s)
  %z : T(37, 29) = aten::tanh(%y)
  return (%y, %z)
)IR";

std::vector<IValue> dropoutInputs(DType t, int64_t seed) {
  return {Tensor::rand({37, 29}, t, 3, 0.5, 2.0), Tensor::rand({29}, t, 4, 0.5, 2.0),
          Tensor::fromVector({2}, {static_cast<double>(seed), 9}, DType::Int64)};
}

std::vector<bool> maskOf(const Tensor& t) {
  std::vector<bool> m;
  for (int64_t i = 0; i < t.numel(); ++i) m.push_back(t.item(i) != 0);
  return m;
}

std::vector<IValue> onDevice(std::vector<IValue> in, DeviceKind d) {
  for (IValue& v : in) v = v.toTensor().to(d);
  return in;
}

// aten::rand_like as PyTorch prints it: prim::philox_uniform on the graph's %rng, the numbers of the host
// kernel on every path (fused around or not, on the CPU and the device), and no gradient through them:
// z = r x + x gives x the gradient g (r + 1) and y none.
TEST(RandLike, SameNumbersOnEveryPathAndNoGradientThroughThem) {
  auto g = std::shared_ptr<Graph>(parseIR(R"IR(graph(%x : Float(37, 29), %y : Float(37, 29)):
  %none : NoneType = prim::Constant()
  %one : int = prim::Constant[value=1]()
  %r : Tensor = aten::rand_like(%y, %none, %none, %none, %none, %none)
  %m : Tensor = aten::mul(%r, %x)
  %z : Tensor = aten::add(%m, %x, %one)
  return (%z, %r)
)IR"));
  lowerTorchScript(*g);
  ASSERT_EQ(g->inputs().size(), 3u);
  ASSERT_EQ(g->inputs()[2]->name(), "rng");
  Tensor x = Tensor::rand({37, 29}, DType::Float32, 3, 0.5, 2.0), y = Tensor::rand({37, 29}, DType::Float32, 4);
  Tensor rng = Tensor::fromVector({2}, {4242, 3}, DType::Int64), go = Tensor::rand({37, 29}, DType::Float32, 8, 0.5, 1.5);
  const Tensor r = ops::uniform(y, rng, 0);
  const Tensor z = ops::add(ops::mul(r, x), x);
  const Tensor gx = ops::mul(go, ops::add(r, Tensor::full({37, 29}, DType::Float32, 1.0)));
  std::vector<DeviceKind> devices = {DeviceKind::Cpu};
  if (cuda::available()) devices.push_back(DeviceKind::Cuda);
  for (DeviceKind d : devices)
    for (FuserKind f : allFusers())
      for (ExecutorKind e : allExecutors()) {
        if (d == DeviceKind::Cpu && f != FuserKind::None && !test::kHaveLlvm) continue;
        const std::string where = fmt::format("fuser {}, executor {}, on {}", fuserName(f), executorName(e), deviceName(d));
        Function fn(*g, {.fuser = f, .executor = e, .device = d});
        for (int run = 0; run < 2; ++run) {  // the profiling executor's profiled run, then its optimized plan
          auto out = fn.forward(onDevice({x, y, rng}, d), {true, true, false});
          EXPECT_EQ(test::relError(out[1].toTensor().to(DeviceKind::Cpu), r), 0.0) << where;
          EXPECT_LE(test::relError(out[0].toTensor().to(DeviceKind::Cpu), z), 1e-6) << where;
          auto grads = fn.backward({go.to(d), Tensor()});
          EXPECT_LE(test::relError(grads[0].to(DeviceKind::Cpu), gx), 1e-6) << where;
          if (grads[1].defined()) {
            EXPECT_EQ(test::relError(grads[1].to(DeviceKind::Cpu), Tensor::zeros({37, 29}, DType::Float32)), 0.0) << where;
          }
        }
      }
}

// torch.autocast's casts pick their dtype by the device a tensor is on: bfloat16 on the CPU and float16 on
// the device for this trace, and none on the CPU where its flag is off.
TEST(Autocast, TheReducedDtypeIsTheDevicesOwn) {
  auto g = std::shared_ptr<Graph>(parseIR(R"IR(graph(%x : Float(2, 3)):
  %t : bool = prim::Constant[value=1]()
  %f : bool = prim::Constant[value=0]()
  %half : int = prim::Constant[value=5]()
  %bf16 : int = prim::Constant[value=15]()
  %a : Tensor = aten::_autocast_to_reduced_precision(%x, %t, %t, %half, %bf16)
  %b : Tensor = aten::_autocast_to_reduced_precision(%x, %t, %f, %half, %bf16)
  %c : Tensor = aten::_autocast_to_full_precision(%a, %t, %t)
  return (%a, %b, %c)
)IR"));
  lowerTorchScript(*g);
  const Tensor x = Tensor::rand({2, 3}, DType::Float32, 5, -2.0, 2.0);
  std::vector<DeviceKind> devices = {DeviceKind::Cpu};
  if (cuda::available()) devices.push_back(DeviceKind::Cuda);
  for (DeviceKind d : devices) {
    const DType reduced = d == DeviceKind::Cpu ? DType::BFloat16 : DType::Float16;
    Function fn(*g, {.executor = ExecutorKind::Legacy, .device = d});
    auto out = fn.forward({x.to(d)});
    const Tensor a = out[0].toTensor().to(DeviceKind::Cpu), b = out[1].toTensor().to(DeviceKind::Cpu),
                 c = out[2].toTensor().to(DeviceKind::Cpu);
    ASSERT_EQ(a.dtype(), reduced) << deviceName(d);
    EXPECT_EQ(test::relError(a.to(DType::Float32), x.to(reduced).to(DType::Float32)), 0.0) << deviceName(d);
    EXPECT_EQ(b.dtype(), d == DeviceKind::Cpu ? DType::Float32 : DType::Float16) << deviceName(d);
    EXPECT_EQ(c.dtype(), DType::Float32) << deviceName(d);
    EXPECT_EQ(test::relError(c, a.to(DType::Float32)), 0.0) << deviceName(d);
  }
}

// One seed and offset, one mask: the graph interpreter, the TE interpreter on the TE group's loop nest, and
// every fuser's compiled kernels (LLVM on the CPU; NVRTC's CUDA C on a device, the emulated driver in CI)
// drop the same elements, forward and backward (whose gradient regenerates the mask), and keep the same
// values; another seed drops others. Every dropout sits inside a group, forward and backward.
TEST(Dropout, MaskIsTheSameOnEveryPath) {
  for (DType dt : {DType::Float32, DType::Float64}) {
    auto g = std::shared_ptr<Graph>(parseIR(typed(kDropoutIR, dt)));
    const double tol = dt == DType::Float32 ? 1e-6 : 1e-13;
    std::vector<IValue> in = dropoutInputs(dt, 1234567);
    auto ref = Interpreter(*g).run(in);
    const std::vector<bool> mask = maskOf(ref[0].toTensor());
    EXPECT_NE(maskOf(Interpreter(*g).run(dropoutInputs(dt, 7654321))[0].toTensor()), mask);
    size_t dropped = std::count(mask.begin(), mask.end(), false);
    EXPECT_GT(dropped, mask.size() / 5);
    EXPECT_LT(dropped, mask.size() * 2 / 5);

    // The TE interpreter on the nest of the graph taken as one group (it holds only what a group may).
    {
      std::vector<Tensor> args;
      for (const IValue& v : in) args.push_back(v.toTensor());
      LoopNest nest = lowerGroup(*g);
      auto outs = interpret(nest, args);
      EXPECT_EQ(maskOf(outs[0]), mask) << "TE interpreter";
      EXPECT_LE(test::relError(outs[0], ref[0].toTensor()), tol) << "TE interpreter";
    }
    PipelineOptions o;
    o.fuser = FuserKind::Te;
    Plan plan = optimizeSpecialized(std::shared_ptr<Graph>(g->clone()), {true, true, false}, o);
    for (const Graph* graph : {plan.graph.get(), plan.gradients.begin()->second->forward.get(),
                               plan.gradients.begin()->second->backward.get()})
      for (const Node* n : *graph->block())
        EXPECT_NE(n->kind(), OpKind::PhiloxDropout) << "a dropout outside every group:\n" << printIR(*graph);

    std::vector<DeviceKind> devices = {DeviceKind::Cpu};
    if (cuda::available()) devices.push_back(DeviceKind::Cuda);
    Tensor go = Tensor::rand({37, 29}, dt, 8, 0.5, 1.5);
    for (DeviceKind d : devices)
      for (FuserKind f : allFusers()) {
        if (d == DeviceKind::Cpu && f != FuserKind::None && !test::kHaveLlvm) continue;
        std::string where = fmt::format("fuser {} on {} ({})", fuserName(f), deviceName(d), dtypeName(dt));
        Function fn(*g, {.fuser = f, .executor = ExecutorKind::Legacy, .device = d});
        auto out = fn.forward(onDevice(in, d), {true, true, false});
        Tensor y = out[0].toTensor().to(DeviceKind::Cpu);
        EXPECT_EQ(maskOf(y), mask) << where;
        EXPECT_LE(test::relError(y, ref[0].toTensor()), tol) << where;
        auto grads = fn.backward({go.to(d), Tensor::zeros({37, 29}, dt, d)});
        EXPECT_EQ(maskOf(grads[0].to(DeviceKind::Cpu)), mask) << where << ", the gradient";
        if (test::compilesKernels(f)) {
          EXPECT_GE(fn.stats().fusionGroups, 2) << where << ": " << fn.stats().str();
        }
      }
  }
}

}  // namespace
}  // namespace gj
