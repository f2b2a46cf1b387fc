// Differential testing: seeded random graphs under every fuser x executor (on the CPU, and on CUDA where
// there is a device or with --device=cuda) against the interpreter,
// forward and backward, in float64.
//
//   build/bin/difftest --seed 1 --count 500
//
// A mismatch prints the graph's IR, the seed and the configuration, and the exit status is 1.
#include "executors/autograd.h"
#include "executors/function.h"
#include "executors/interpreter.h"
#include "ir/printer.h"
#include "runtime/ops/ops.h"
#include "runtime/cuda/device.h"
#include "tests/random_graph.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <tuple>
#include <utility>

namespace gj::test {
namespace {

// ‖a − b‖ / ‖b‖. An undefined tensor (an input no gradient reaches) counts as zeros. A reference whose
// norm is under kNoiseFloor is rounding noise around zero (the gradient of a sum of a softmax along its
// own dim, say, cancels exactly in real numbers), so the difference is measured against the floor:
// 1e-16 of noise on either side passes, a wrong value of any size that matters does not.
constexpr double kNoiseFloor = 1e-6;

double relErr(const Tensor& a, const Tensor& b) {
  if (!a.defined() && !b.defined()) return 0;
  const Tensor& shape = a.defined() ? a : b;
  if (a.defined() && b.defined() && a.sizes() != b.sizes()) return INFINITY;
  double num = 0, den = 0;
  for (int64_t i = 0; i < shape.numel(); ++i) {
    double av = a.defined() ? a.item(i) : 0, bv = b.defined() ? b.item(i) : 0;
    double d = av - bv;
    double bi = bv;
    num += d * d;
    den += bi * bi;
  }
  return std::sqrt(num) / std::max(std::sqrt(den), kNoiseFloor);
}

// Fusion groups made per fuser (indexed by FuserKind) over the run, so the summary shows the fusers were
// exercised.
std::vector<int64_t> gGroups(allFusers().size(), 0);
// The devices each graph runs on (main: the CPU, and CUDA where there is a device), and the runs on CUDA.
std::vector<DeviceKind> gDevices = {DeviceKind::Cpu};
int64_t gCudaRuns = 0;

struct Reference {
  std::vector<Tensor> outputs, grads;
};

// The oracle: the graph interpreted as written, differentiated by the tape.
Reference reference(const Graph& g, const std::vector<IValue>& in, const std::vector<Tensor>& gradOutputs) {
  std::vector<bool> rg(in.size(), true);
  AutodiffGraph ag = prepareAutodiff(std::shared_ptr<Graph>(g.clone()), rg);
  Tape tape(in.size());
  auto outs = Interpreter(*ag.graph, &ag.gradients).runWithTape(in, rg, tape);
  Reference r;
  for (const IValue& o : outs) r.outputs.push_back(o.toTensor());
  r.grads = tape.backward(outs, gradOutputs);
  return r;
}

bool checkGraph(uint64_t seed, bool verbose);

bool checkGraphSafely(uint64_t seed, bool verbose) {
  try {
    return checkGraph(seed, verbose);
  } catch (const Error& e) {
    std::cout << fmt::format("ERROR seed {} (the reference itself failed): {}\n{}", seed, e.what(),
                             printIR(*randomGraph(seed)));
    return false;
  }
}

bool checkGraph(uint64_t seed, bool verbose) {
  auto g = randomGraph(seed);
  std::vector<IValue> in;
  uint64_t s = seed * 1000;
  for (const Value* v : g->inputs()) in.push_back(Tensor::rand(*v->type().sizes, DType::Float64, s++, -1, 1));
  auto plain = Interpreter(*g).run(in);
  std::vector<Tensor> gradOutputs;
  for (const IValue& o : plain) gradOutputs.push_back(Tensor::rand(o.toTensor().sizes(), DType::Float64, s++, -1, 1));
  Reference ref = reference(*g, in, gradOutputs);
  std::vector<bool> rg(in.size(), true);
  bool ok = true;
  for (DeviceKind d : gDevices) {
    for (FuserKind f : allFusers())
      for (ExecutorKind e : allExecutors()) {
        std::string config = fmt::format("{}, fuser {} executor {}", deviceName(d), fuserName(f), executorName(e));
        try {
          Function fn(*g, {.fuser = f, .executor = e, .device = d, .verifyEach = true});
          for (int call = 0; call < 2; ++call) {  // profiling: the second call runs the optimized plan
            auto outs = fn.forward(in, rg);
            auto grads = fn.backward(gradOutputs);
            double worst = 0;
            std::string where;
            auto compare = [&](const Tensor& got, const Tensor& want, std::string what) {
              double e = relErr(got, want);
              if (e > worst || !std::isfinite(e)) std::tie(worst, where) = std::pair(e, std::move(what));
            };
            auto host = [](const Tensor& t) { return t.defined() ? t.to(DeviceKind::Cpu) : t; };
            for (size_t k = 0; k < outs.size(); ++k)
              compare(host(outs[k].toTensor()), ref.outputs[k], fmt::format("output {}", k));
            for (size_t k = 0; k < grads.size(); ++k)
              compare(host(grads[k]), ref.grads[k], fmt::format("gradient of %{}", g->inputs()[k]->name()));
            if (worst > 1e-9 || !std::isfinite(worst)) {
              std::cout << fmt::format("MISMATCH seed {} ({}, call {}): relative error {:.3e} in the {}\n{}", seed,
                                       config, call, worst, where, printIR(*g));
              ok = false;
            }
            if (call == 1) gGroups[static_cast<int>(f)] += fn.stats().fusionGroups;
            if (call == 1 && d == DeviceKind::Cuda) ++gCudaRuns;
            // A group that fell back to the unfused path (its kernel did not compile or load) is a failure.
            if (!fn.stats().warnings.empty()) {
              std::cout << fmt::format("WARNING seed {} ({}): {}\n{}", seed, config, fn.stats().warnings[0],
                                       printIR(*g));
              ok = false;
            }
          }
        } catch (const Error& err) {
          std::cout << fmt::format("ERROR seed {} ({}): {}\n{}", seed, config, err.what(), printIR(*g));
          ok = false;
        }
      }
  }
  if (verbose) std::cout << fmt::format("seed {}: {}\n", seed, ok ? "ok" : "FAILED");
  return ok;
}

}  // namespace
}  // namespace gj::test

int main(int argc, char** argv) {
  uint64_t seed = 1;
  int count = 500;
  bool verbose = false;
  CLI::App app{"difftest: random graphs under every fuser x executor against the interpreter"};
  app.add_option("--seed", seed, "first seed");
  app.add_option("--count", count, "number of graphs")->check(CLI::PositiveNumber);
  app.add_flag("-v,--verbose", verbose, "a line per graph");
  bool print = false;
  app.add_flag("--print", print, "print the graphs of the seeds and run nothing (to reproduce a failure)");
  std::string device = "auto";
  app.add_option("--device", device, "cpu, cuda, or auto: the CPU, and CUDA too where a device exists")
      ->check(CLI::IsMember({"cpu", "cuda", "auto"}));
  CLI11_PARSE(app, argc, argv);
  if (device == "cuda" || (device == "auto" && gj::cuda::available())) {
    if (auto d = gj::cuda::device(); !d) {
      std::cerr << "difftest: --device=cuda: " << d.error().what() << "\n";
      return 2;
    }
    if (device == "cuda") gj::test::gDevices.clear();
    gj::test::gDevices.push_back(gj::DeviceKind::Cuda);
  }
  if (print) {
    for (int i = 0; i < count; ++i)
      std::cout << fmt::format("# seed {}\n{}", seed + i, gj::printIR(*gj::test::randomGraph(seed + i)));
    return 0;
  }
  int failed = 0;
  for (int i = 0; i < count; ++i) failed += !gj::test::checkGraphSafely(seed + i, verbose);
  std::vector<std::string> made;
  bool fused = true;  // every fuser that compiles kernels made groups
  for (gj::FuserKind f : gj::allFusers()) {
    const int64_t groups = gj::test::gGroups[static_cast<size_t>(f)];
    if (f != gj::FuserKind::None) made.push_back(fmt::format("{} {}", gj::fuserName(f), groups));
    if (gj::fuserUse(f) == gj::FuserUse::Product && f != gj::FuserKind::None && groups == 0) fused = false;
  }
  std::cout << fmt::format("fusion groups made: {}\n", fmt::join(made, ", "));
  if (gj::test::gDevices.back() == gj::DeviceKind::Cuda)
    std::cout << fmt::format("on CUDA ({}): {} runs\n", gj::cuda::requireDevice().name, gj::test::gCudaRuns);
  if (!fused) std::cout << "no fusion group was made: the generator does not exercise the fusers\n";
  std::cout << fmt::format("difftest: {} graphs from seed {}: {} passed, {} failed\n", count, seed, count - failed,
                           failed);
  return failed || !fused ? 1 : 0;
}
