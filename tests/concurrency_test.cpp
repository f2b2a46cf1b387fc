// Functions in several threads at once: a context's kernel cache builds outside its lock (a build holds up
// only the requests for its own key), builds each key once, and stays within its bound; Functions with
// contexts of their own share nothing; each Function keeps its own pending backwards. The TSan run
// (scripts/test --tsan) runs these.
#include "executors/function.h"
#include "ir/parser.h"
#include "runtime/ops/ops.h"
#include "tests/support/build_config.h"
#include "tests/support/reference.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <thread>

namespace gj {
namespace {

// A pointwise chain over [rows, cols]; `op` varies the kernel (and so its cache key) between Functions.
std::unique_ptr<Graph> chain(int64_t rows, int64_t cols, const char* op) {
  return parseIR(fmt::format(R"IR(graph(%x : Float({0}, {1}), %y : Float({0}, {1})):
  %a : Tensor = aten::mul(%x, %y)
  %b : Tensor = {2}(%a)
  %c : Tensor = aten::tanh(%b)
  return (%c)
)IR", rows, cols, op));
}

Tensor reference(const Tensor& x, const Tensor& y, const char* op) {
  Tensor a = ops::mul(x, y);
  Tensor b = std::string(op) == "aten::sigmoid" ? ops::sigmoid(a) : ops::exp(a);
  return ops::tanh(b);
}

// A one-shot signal with a bounded wait (a deadlock shows as a false, not a hang).
class Signal {
 public:
  void raise() {
    std::lock_guard<std::mutex> lock(mu_);
    raised_ = true;
    cv_.notify_all();
  }
  bool wait(std::chrono::seconds timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return raised_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool raised_ = false;
};

TEST(Concurrency, TwoFunctionsCompilingDifferentKernelsDoNotWaitForEachOther) {
  if (!test::kHaveLlvm) GTEST_SKIP() << "no LLVM in this build: CPU kernels are not compiled";
  auto ga = chain(37, 43, "aten::sigmoid"), gb = chain(37, 43, "aten::exp");
  Tensor x = Tensor::rand({37, 43}, DType::Float32, 1), y = Tensor::rand({37, 43}, DType::Float32, 2);
  Signal aBuilding, bDone;
  std::atomic<bool> aWaitedForB{false};
  // A's build waits, inside the cache's compile step, until B has compiled and run: if a build held the
  // cache for all keys, B could not finish and A's wait would time out.
  Function a(*ga, {.fuser = FuserKind::Te,
                   .executor = ExecutorKind::Legacy,
                   .fuserOptions = {.beforeBuild = [&] {
                     aBuilding.raise();
                     aWaitedForB = bDone.wait(std::chrono::seconds(60));
                   }}});
  Function b(*gb, {.fuser = FuserKind::Te, .executor = ExecutorKind::Legacy});
  auto runA = std::async(std::launch::async, [&] { return a.forward({x, y})[0].toTensor(); });
  ASSERT_TRUE(aBuilding.wait(std::chrono::seconds(60))) << "A never started building";
  Tensor outB = b.forward({x, y})[0].toTensor();
  bDone.raise();
  Tensor outA = runA.get();
  EXPECT_TRUE(aWaitedForB) << "B's compile waited for A's build of another kernel";
  EXPECT_GE(b.stats().kernelsCompiled, 1);
  EXPECT_GE(b.stats().kernelRuns, 1);
  EXPECT_LE(test::relError(outA, reference(x, y, "aten::sigmoid")), 1e-6);
  EXPECT_LE(test::relError(outB, reference(x, y, "aten::exp")), 1e-6);
}

TEST(Concurrency, OneKeyAskedForByManyThreadsIsBuiltOnce) {
  if (!test::kHaveLlvm) GTEST_SKIP() << "no LLVM in this build: CPU kernels are not compiled";
  auto g = chain(29, 31, "aten::sigmoid");
  Tensor x = Tensor::rand({29, 31}, DType::Float32, 3), y = Tensor::rand({29, 31}, DType::Float32, 4);
  const Tensor want = reference(x, y, "aten::sigmoid");
  constexpr int kThreads = 6;
  std::vector<std::unique_ptr<Function>> fs;
  for (int t = 0; t < kThreads; ++t)
    fs.push_back(std::make_unique<Function>(
        *g, FunctionOptions{.fuser = FuserKind::Legacy, .executor = ExecutorKind::Legacy,
                            .fuserOptions = {.beforeBuild = [] {
                              std::this_thread::sleep_for(std::chrono::milliseconds(100));
                            }}}));
  std::vector<std::future<Tensor>> outs;
  for (int t = 0; t < kThreads; ++t)
    outs.push_back(std::async(std::launch::async, [&, t] { return fs[t]->forward({x, y})[0].toTensor(); }));
  for (auto& o : outs) EXPECT_LE(test::relError(o.get(), want), 1e-6);
  int64_t compiled = 0, hits = 0;
  for (const auto& f : fs) {
    compiled += f->stats().kernelsCompiled;
    hits += f->stats().kernelCacheHits;
    EXPECT_GE(f->stats().kernelRuns, 1);
  }
  EXPECT_EQ(compiled, 1) << "the key was built more than once";
  EXPECT_EQ(hits, kThreads - 1);
}

TEST(Concurrency, TheKernelCacheStaysWithinItsBoundAndHeldKernelsKeepRunning) {
  if (!test::kHaveLlvm) GTEST_SKIP() << "no LLVM in this build: CPU kernels are not compiled";
  auto context = std::make_shared<Context>();
  setKernelCacheCapacity(2, *context);
  std::vector<std::unique_ptr<Function>> held;
  std::vector<std::pair<Tensor, Tensor>> inputs;
  for (int64_t k = 0; k < 5; ++k) {
    auto g = chain(11, 13 + k, k % 2 ? "aten::exp" : "aten::sigmoid");
    held.push_back(std::make_unique<Function>(
        *g, FunctionOptions{.fuser = FuserKind::Te, .executor = ExecutorKind::Legacy, .fuserOptions = {.context = context}}));
    inputs.emplace_back(Tensor::rand({11, 13 + k}, DType::Float32, 10 + k), Tensor::rand({11, 13 + k}, DType::Float32, 20 + k));
    held.back()->forward({inputs.back().first, inputs.back().second});
    EXPECT_LE(kernelCacheSize(*context), 2u);
  }
  // Every Function still runs its own kernel (the cache dropped it, the plan holds it).
  for (size_t k = 0; k < held.size(); ++k) {
    auto [x, y] = inputs[k];
    Tensor out = held[k]->forward({x, y})[0].toTensor();
    EXPECT_LE(test::relError(out, reference(x, y, k % 2 ? "aten::exp" : "aten::sigmoid")), 1e-6) << k;
    EXPECT_GE(held[k]->stats().kernelRuns, 2) << k;
  }
  // The first key, dropped but still held by held[0], is built again under a name of its own.
  auto g0 = chain(11, 13, "aten::sigmoid");
  Function again(*g0, {.fuser = FuserKind::Te, .executor = ExecutorKind::Legacy, .fuserOptions = {.context = context}});
  Tensor out = again.forward({inputs[0].first, inputs[0].second})[0].toTensor();
  EXPECT_EQ(again.stats().kernelsCompiled, 1);
  EXPECT_TRUE(again.stats().warnings.empty()) << again.stats().str();
  EXPECT_GE(again.stats().kernelRuns, 1);
  EXPECT_LE(test::relError(out, reference(inputs[0].first, inputs[0].second, "aten::sigmoid")), 1e-6);
}

// Two Functions over one graph, each with a context of its own, compiled and run at once on two threads:
// each compiles the kernel itself (no hit in the other's cache), under the same symbol, which two kernels
// could not have in one LLVM session; both give the reference's values forward and backward; and the
// default context's cache gains nothing.
TEST(Concurrency, TwoContextsShareNothingAndRunAtOnce) {
  if (!test::kHaveLlvm) GTEST_SKIP() << "no LLVM in this build: CPU kernels are not compiled";
  const size_t sharedBefore = kernelCacheSize(*Context::shared());
  auto g = chain(23, 29, "aten::sigmoid");
  const Tensor x = Tensor::rand({23, 29}, DType::Float32, 71), y = Tensor::rand({23, 29}, DType::Float32, 72);
  const Tensor want = reference(x, y, "aten::sigmoid");
  // The gradient of sum(c) with respect to x, unfused: the reference for both contexts' backwards.
  Function unfused(*g, {.fuser = FuserKind::None, .executor = ExecutorKind::Legacy});
  unfused.forward({x, y}, {true, false});
  const Tensor ones = Tensor::full({23, 29}, DType::Float32, 1.0);
  const Tensor wantGrad = unfused.backward({ones})[0];
  std::shared_ptr<Context> contexts[2] = {std::make_shared<Context>(), std::make_shared<Context>()};
  FunctionStats stats[2];
  double forwardError[2] = {1, 1}, gradError[2] = {1, 1};
  Signal go;
  std::vector<std::thread> threads;
  for (int k = 0; k < 2; ++k) {
    threads.emplace_back([&, k] {
      go.wait(std::chrono::seconds(60));
      Function f(*g, {.fuser = FuserKind::Te, .executor = ExecutorKind::Profiling, .fuserOptions = {.context = contexts[k]}});
      for (int run = 0; run < 6; ++run) {
        Tensor out = f.forward({x, y}, {true, false})[0].toTensor();
        Tensor grad = f.backward({ones})[0];
        forwardError[k] = test::relError(out, want);
        gradError[k] = test::relError(grad, wantGrad);
      }
      stats[k] = f.stats();
    });
  }
  go.raise();
  for (std::thread& t : threads) t.join();
  for (int k = 0; k < 2; ++k) {
    SCOPED_TRACE(fmt::format("context {}", k));
    EXPECT_LE(forwardError[k], 1e-6);
    EXPECT_LE(gradError[k], 1e-5);
    EXPECT_TRUE(stats[k].warnings.empty()) << stats[k].str();
    EXPECT_GE(stats[k].kernelsCompiled, 1);
    EXPECT_GE(stats[k].kernelRuns, 1);
    EXPECT_GE(kernelCacheSize(*contexts[k]), 1u);
  }
  // Each context compiled the same kernels: none found the other's.
  EXPECT_EQ(stats[0].kernelsCompiled, stats[1].kernelsCompiled);
  EXPECT_EQ(kernelCacheSize(*contexts[0]), kernelCacheSize(*contexts[1]));
  EXPECT_EQ(kernelCacheSize(*Context::shared()), sharedBefore);
}

// Context::state makes one T per context, on first use, and the thread's current context is the
// innermost scope's.
TEST(Concurrency, ContextStateIsPerContextAndScopesNest) {
  struct Counter {
    std::atomic<int> n{0};
  };
  Context a, b;
  Counter& ca = a.state<Counter>();
  ++ca.n;
  EXPECT_EQ(&a.state<Counter>(), &ca);
  EXPECT_EQ(b.state<Counter>().n, 0);
  EXPECT_EQ(&Context::current(), Context::shared().get());
  {
    const ContextScope outer(a);
    EXPECT_EQ(&Context::current(), &a);
    {
      const ContextScope inner(b);
      EXPECT_EQ(&Context::current(), &b);
      // Another thread is in the default context whatever this one's scope.
      std::thread([] { EXPECT_EQ(&Context::current(), Context::shared().get()); }).join();
    }
    EXPECT_EQ(&Context::current(), &a);
  }
  EXPECT_EQ(&Context::current(), Context::shared().get());
}

// Each Function keeps its own pending backwards: two Functions over one graph, called from two threads
// with their forwards and backwards interleaved, each get their own gradients.
TEST(Concurrency, EachFunctionKeepsItsOwnPendingBackwards) {
  auto g = chain(5, 7, "aten::sigmoid");
  Function f1(*g, {.fuser = FuserKind::Legacy}), f2(*g, {.fuser = FuserKind::Legacy});
  auto run = [&](Function& first, Function& second, uint64_t seed) {
    Tensor x1 = Tensor::rand({5, 7}, DType::Float32, seed), y = Tensor::rand({5, 7}, DType::Float32, seed + 1);
    Tensor x2 = Tensor::rand({5, 7}, DType::Float32, seed + 2);
    for (int i = 0; i < 20; ++i) {
      first.forward({x1, y}, {true, false});
      second.forward({x2, y}, {true, false});
      Tensor ones = Tensor::full({5, 7}, DType::Float32, 1.0);
      Tensor g2 = second.backward({ones})[0], g1 = first.backward({ones})[0];
      // d tanh(sigmoid(x y)) / dx differs for x1 and x2: each backward must use its own forward.
      auto grad = [&](const Tensor& x) {
        Tensor a = ops::mul(x, y), s = ops::sigmoid(a), t = ops::tanh(s);
        Tensor one = Tensor::full({5, 7}, DType::Float32, 1.0);
        return ops::mul(ops::mul(ops::sub(one, ops::mul(t, t)), ops::mul(s, ops::sub(one, s))), y);
      };
      EXPECT_LE(test::relError(g1, grad(x1)), 1e-5);
      EXPECT_LE(test::relError(g2, grad(x2)), 1e-5);
    }
  };
  std::thread t([&] { run(f1, f2, 100); });
  run(f2, f1, 200);
  t.join();
}

}  // namespace
}  // namespace gj
