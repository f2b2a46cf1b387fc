// Persistent recurrences (fusers/recurrence.h) on a CUDA device: the emulated driver in ctest (its block
// semantics and race checker on every launch), a GPU in bench/gpu_run.sh. Each case trains a model for one
// step with the persistent kernel and with the per-step kernels of the same fuser and executor, and holds
// the two to the forward and gradient tolerances.
#include "executors/function.h"
#include "ir/parser.h"
#include "models/model.h"
#include "runtime/cuda/device.h"
#include "tests/support/reference.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

namespace gj {
namespace {

#define SKIP_WITHOUT_DEVICE()                                       \
  if (auto d = cuda::device(); !d) GTEST_SKIP() << d.error().what()

Tensor host(const Tensor& t) { return t.to(DeviceKind::Cpu); }

struct Trained {
  std::vector<Tensor> outputs, grads;  // on the host
  FunctionStats stats;
};

// Two calls (the profiling executor's profiled run, then its plan) of forward and backward; the second's results.
Trained train(const Model& m, const std::vector<Tensor>& inputs, const std::vector<Tensor>& gradOutputs,
              const FunctionOptions& options) {
  Function f(*m.graph, options);
  std::vector<bool> requiresGrad;
  for (const Tensor& t : inputs) requiresGrad.push_back(isFloating(t.dtype()));
  Trained r;
  for (int call = 0; call < 2; ++call) {
    auto outs = f.forward(std::vector<IValue>(inputs.begin(), inputs.end()), requiresGrad);
    std::vector<Tensor> grads = f.backward(gradOutputs);
    r.outputs.clear();
    r.grads.clear();
    for (const IValue& o : outs) r.outputs.push_back(host(o.toTensor()));
    for (const Tensor& g : grads) r.grads.push_back(g.defined() ? host(g) : g);
  }
  r.stats = f.stats();
  return r;
}

std::vector<Tensor> randomGradOutputs(const Model& m, const std::vector<Tensor>& inputs, uint64_t seed) {
  Function f(*m.graph, {});
  std::vector<Tensor> grads;
  for (const IValue& o : f.forward(std::vector<IValue>(inputs.begin(), inputs.end()))) {
    const Tensor& t = o.toTensor();
    grads.push_back(Tensor::rand(t.sizes(), t.dtype(), seed++));
  }
  return grads;
}

void expectSame(const Model& m, const Trained& got, const Trained& want) {
  ASSERT_EQ(got.outputs.size(), want.outputs.size());
  for (size_t i = 0; i < got.outputs.size(); ++i)
    EXPECT_LE(test::relError(got.outputs[i], want.outputs[i]), 1e-5) << "output " << m.outputs[i];
  ASSERT_EQ(got.grads.size(), want.grads.size());
  for (size_t i = 0; i < got.grads.size(); ++i) {
    if (!want.grads[i].defined()) continue;
    ASSERT_TRUE(got.grads[i].defined()) << m.inputs[i].name;
    EXPECT_LE(test::relError(got.grads[i], want.grads[i]), 1e-4) << "gradient of " << m.inputs[i].name;
  }
}

std::string lines(const std::vector<std::string>& v) { return fmt::format("{}", fmt::join(v, "\n")); }

// The recurrences the pipeline made persistent (FunctionStats::recurrences' lines that say so).
int64_t formed(const FunctionStats& s) {
  return std::count_if(s.recurrences.begin(), s.recurrences.end(),
                       [](const std::string& line) { return line.starts_with("persistent recurrence:"); });
}

ModelConfig lstmConfig(const std::string& variant, int64_t steps, int64_t batch, int64_t input, int64_t hidden,
                       int64_t layers = 1) {
  return {.variant = variant, .seqLength = steps, .miniBatch = batch, .inputSize = input, .hiddenSize = hidden,
          .numLayers = layers};
}

// One training step on the device with `options` (persistent recurrences on), held to the CPU's unfused one.
Trained againstTheCpu(const Model& m, uint64_t seed, FunctionOptions options) {
  std::vector<Tensor> inputs = randomInputs(m, seed);
  std::vector<Tensor> gradOutputs = randomGradOutputs(m, inputs, seed + 1);
  Trained cpu = train(m, inputs, gradOutputs, {.fuser = FuserKind::None});
  options.device = DeviceKind::Cuda;
  options.fuserOptions.persistentRecurrences = true;
  Trained gpu = train(m, inputs, gradOutputs, options);
  expectSame(m, gpu, cpu);
  return gpu;
}

struct Case {
  std::string variant;
  int64_t batch, hidden, steps, layers;
  FuserKind fuser;
  ExecutorKind executor;
};

std::string str(const Case& c) {
  return fmt::format("{}_b{}_h{}_s{}_l{}_{}_{}", c.variant, c.batch, c.hidden, c.steps, c.layers, fuserName(c.fuser),
                     executorName(c.executor));
}
std::string caseName(const testing::TestParamInfo<Case>& info) { return str(info.param); }
void PrintTo(const Case& c, std::ostream* os) { *os << str(c); }

// Trains m with persistent recurrences and with the per-step kernels of the same fuser and executor, holds
// the two to the tolerances, and checks that `kernels` recurrences ran as one kernel each, all compiled (no
// warning: no fallback to the steps) and none refusing its inputs.
void expectPersistentMatches(const Model& m, FuserKind fuser, ExecutorKind executor, uint64_t seed, int64_t kernels) {
  std::vector<Tensor> inputs = randomInputs(m, seed);
  std::vector<Tensor> gradOutputs = randomGradOutputs(m, inputs, seed + 1);
  FunctionOptions o{.fuser = fuser, .executor = executor, .device = DeviceKind::Cuda, .verifyEach = true};
  Trained perStep = train(m, inputs, gradOutputs, o);
  o.fuserOptions.persistentRecurrences = true;
  Trained persistent = train(m, inputs, gradOutputs, o);
  expectSame(m, persistent, perStep);
  EXPECT_TRUE(persistent.stats.warnings.empty()) << persistent.stats.str();
  EXPECT_EQ(persistent.stats.kernelRefusals, 0) << persistent.stats.str();
  EXPECT_LT(persistent.stats.kernelRuns, perStep.stats.kernelRuns) << persistent.stats.str();
  EXPECT_EQ(formed(persistent.stats), kernels) << lines(persistent.stats.recurrences);
  EXPECT_TRUE(perStep.stats.recurrences.empty());
}

class PersistentRecurrence : public testing::TestWithParam<Case> {};

TEST_P(PersistentRecurrence, MatchesThePerStepKernels) {
  SKIP_WITHOUT_DEVICE();
  const Case& c = GetParam();
  Model m = buildModel("lstm", lstmConfig(c.variant, c.steps, c.batch, c.hidden, c.hidden, c.layers));
  // Every layer's forward, and its backward's steps after the first (whose group reads no product).
  expectPersistentMatches(m, c.fuser, c.executor, 7, c.layers + (c.steps - 1 >= 2 ? c.layers : 0));
}

std::vector<Case> cases() {
  const auto L = ExecutorKind::Legacy, P = ExecutorKind::Profiling;
  const auto old = FuserKind::Legacy, te = FuserKind::Te;
  std::vector<Case> cs;
  // Odd sizes under both fusers and both executors: blocks own slices that do not divide the hidden size.
  for (FuserKind f : {old, te})
    for (ExecutorKind e : {L, P}) cs.push_back({"jit_premul", 3, 130, 4, 1, f, e});
  // The issue's batches and hidden sizes, a fuser and an executor each.
  cs.push_back({"jit_premul", 1, 128, 3, 1, te, P});
  cs.push_back({"jit_premul", 4, 256, 3, 1, old, L});
  cs.push_back({"jit_premul", 16, 512, 2, 1, te, L});
  cs.push_back({"jit_premul", 64, 128, 3, 1, old, P});
  cs.push_back({"jit_premul", 128, 256, 2, 1, te, P});
  cs.push_back({"jit_premul", 1, 1024, 2, 1, old, P});
  // Hidden 160 on the emulated driver's 2 multiprocessors: 16 blocks of 10 units, 25.6 KB of weight columns
  // each, 8 blocks filling a multiprocessor's shared memory. (A GPU's hidden 1024 takes 64 KB a block, past
  // the 48 KB a kernel must opt in for: EmulatedBlocks.MoreThan48KBOfDynamicSharedMemoryNeedsTheKernelToOptIn.)
  cs.push_back({"jit_premul", 2, 160, 3, 1, te, L});
  // The input projection per step (batch-mm gathers it into one product), and stacked layers.
  cs.push_back({"jit", 5, 64, 3, 1, old, P});
  cs.push_back({"jit_multilayer", 2, 96, 3, 2, te, L});
  cs.push_back({"jit_multilayer", 3, 40, 4, 3, old, P});
  return cs;
}

INSTANTIATE_TEST_SUITE_P(Cuda, PersistentRecurrence, testing::ValuesIn(cases()), caseName);

// A GRU layer (nn.GRU's equations), a cell no library fuses with the loop: the input projection ahead of the
// loop, then per step r = sigmoid(x_r + h W_r + b_r), z likewise, n = tanh(x_n + r (h W_n + b_n)),
// h' = n + z (h - n).
std::string gruIR(int64_t steps, int64_t batch, int64_t input, int64_t hidden) {
  return fmt::format(R"(graph(%input : Float({T}, {B}, {I}),
      %h0 : Float({B}, {H}),
      %w_ih : Float({G}, {I}),
      %w_hh : Float({G}, {H}),
      %b_ih : Float({G}),
      %b_hh : Float({G})):
  %0 : int = prim::Constant[value=0]()
  %1 : bool = prim::Constant[value=1]()
  %2 : int = prim::Constant[value=1]()
  %3 : int = prim::Constant[value=3]()
  %wi : Tensor = aten::t(%w_ih)
  %xw : Tensor = aten::matmul(%input, %wi)
  %xb : Tensor = aten::add(%xw, %b_ih, %2)
  %xs : Tensor[] = aten::unbind(%xb, %0)
  %n : int = aten::len(%xs)
  %outs0 : Tensor[] = prim::ListConstruct()
  %hT : Tensor, %outs : Tensor[] = prim::Loop(%n, %1, %h0, %outs0)
    block0(%i : int, %h : Tensor, %acc : Tensor[]):
      %x : Tensor = aten::__getitem__(%xs, %i)
      %wh : Tensor = aten::t(%w_hh)
      %hw : Tensor = aten::mm(%h, %wh)
      %hb : Tensor = aten::add(%hw, %b_hh, %2)
      %xc : Tensor[] = aten::chunk(%x, %3, %2)
      %xr : Tensor, %xz : Tensor, %xn : Tensor = prim::ListUnpack(%xc)
      %hc : Tensor[] = aten::chunk(%hb, %3, %2)
      %hr : Tensor, %hz : Tensor, %hn : Tensor = prim::ListUnpack(%hc)
      %ra : Tensor = aten::add(%xr, %hr, %2)
      %r : Tensor = aten::sigmoid(%ra)
      %za : Tensor = aten::add(%xz, %hz, %2)
      %z : Tensor = aten::sigmoid(%za)
      %rn : Tensor = aten::mul(%r, %hn)
      %na : Tensor = aten::add(%xn, %rn, %2)
      %nt : Tensor = aten::tanh(%na)
      %d : Tensor = aten::sub(%h, %nt, %2)
      %e : Tensor = aten::mul(%z, %d)
      %h1 : Tensor = aten::add(%nt, %e, %2)
      %acc1 : Tensor[] = prim::ListAppend(%acc, %h1)
      -> (%1, %h1, %acc1)
  %out : Tensor = aten::stack(%outs, %0)
  return (%out, %hT)
)", fmt::arg("T", steps), fmt::arg("B", batch), fmt::arg("I", input), fmt::arg("H", hidden),
                     fmt::arg("G", 3 * hidden));
}

class PersistentGru : public testing::TestWithParam<std::tuple<FuserKind, ExecutorKind>> {};

// The user's own cell inside the persistent frame: a GRU, forward and backward, against the per-step kernels.
TEST_P(PersistentGru, MatchesThePerStepKernels) {
  SKIP_WITHOUT_DEVICE();
  const auto [fuser, executor] = GetParam();
  Model m;
  m.graph = parseIR(gruIR(5, 3, 7, 33));
  m.inputs = {{"input", DType::Float32, {5, 3, 7}}, {"h0", DType::Float32, {3, 33}}, {"w_ih", DType::Float32, {99, 7}},
              {"w_hh", DType::Float32, {99, 33}}, {"b_ih", DType::Float32, {99}}, {"b_hh", DType::Float32, {99}}};
  m.outputs = {"output", "hy"};
  expectPersistentMatches(m, fuser, executor, 23, 2);  // the forward, and the backward's steps but its first
}

INSTANTIATE_TEST_SUITE_P(Cuda, PersistentGru,
                         testing::Combine(testing::Values(FuserKind::Legacy, FuserKind::Te),
                                          testing::Values(ExecutorKind::Legacy, ExecutorKind::Profiling)),
                         [](const auto& info) {
                           return fmt::format("{}_{}", fuserName(std::get<0>(info.param)),
                                              executorName(std::get<1>(info.param)));
                         });

// Where the persistent kernel cannot run, the steps run as before, and the stats say why.
TEST(PersistentRecurrenceFallback, AWeightLargerThanTheDeviceHoldsRunsTheSteps) {
  SKIP_WITHOUT_DEVICE();
  // W_hh: 64 MiB of float32, over the emulated driver's 32 MiB (an H100's L2 is 50 MB)
  Model m = buildModel("lstm", lstmConfig("jit_premul", 2, 1, 8, 2048));
  Trained gpu = againstTheCpu(m, 3, {.fuser = FuserKind::Legacy});
  EXPECT_THAT(lines(gpu.stats.recurrences), testing::HasSubstr("does not fit the device"));
  EXPECT_EQ(formed(gpu.stats), 0) << lines(gpu.stats.recurrences);
}

TEST(PersistentRecurrenceFallback, ACellThatNormalizesAcrossTheHiddenSizeRunsTheSteps) {
  SKIP_WITHOUT_DEVICE();
  Model m = buildModel("lnlstm", lstmConfig("jit", 3, 2, 16, 16));
  Trained gpu = againstTheCpu(m, 11, {.fuser = FuserKind::Te});
  EXPECT_EQ(formed(gpu.stats), 0) << lines(gpu.stats.recurrences);
  // In inference the steps' products feed the cells alone (training saves them for the layer norms'
  // backward, which breaks the chain first): the chain is found, and refused for its layer norms.
  std::vector<Tensor> inputs = randomInputs(m, 17);
  Function f(*m.graph, {.fuser = FuserKind::Te, .executor = ExecutorKind::Legacy, .device = DeviceKind::Cuda,
                        .fuserOptions = {.persistentRecurrences = true}});
  auto outs = f.forward(std::vector<IValue>(inputs.begin(), inputs.end()));
  EXPECT_EQ(formed(f.stats()), 0) << lines(f.stats().recurrences);
  EXPECT_THAT(lines(f.stats().recurrences), testing::HasSubstr("its cell is not elementwise (aten::layer_norm)"));
  Function reference(*m.graph, {});
  auto want = reference.forward(std::vector<IValue>(inputs.begin(), inputs.end()));
  for (size_t i = 0; i < outs.size(); ++i)
    EXPECT_LE(test::relError(host(outs[i].toTensor()), want[i].toTensor()), 1e-5) << m.outputs[i];
  // Nothing formed, the plan is the one without the option: fusion's dead nodes dropped as ever.
  Function perStep(*m.graph, {.fuser = FuserKind::Te, .executor = ExecutorKind::Legacy, .device = DeviceKind::Cuda});
  perStep.forward(std::vector<IValue>(inputs.begin(), inputs.end()));
  EXPECT_EQ(f.optimizedGraph(), perStep.optimizedGraph());
}

TEST(PersistentRecurrenceFallback, OnTheCpuTheOptionIsAnError) {
  Model m = buildModel("lstm", lstmConfig("jit_premul", 2, 1, 4, 4));
  try {
    Function f(*m.graph, {.fuser = FuserKind::Te, .fuserOptions = {.persistentRecurrences = true}});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), testing::HasSubstr("persistent recurrences run on device cuda only"));
  }
}

}  // namespace
}  // namespace gj
