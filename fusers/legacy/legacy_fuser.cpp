// The legacy ("old") fuser: pointwise groups (graph_fuser), compiled per group for the CPU through LLVM
// ORC or for CUDA through NVRTC, cached by the group's canonical text and target.
#include "fusers/fuser.h"
#include "fusers/legacy/codegen.h"
#include "fusers/legacy/graph_fuser.h"
#include "passes/util.h"
#include "runtime/nvrtc.h"
#include "support/error.h"

#include <fmt/format.h>
#include <omp.h>

#include <fstream>
#include <functional>

namespace gj::legacy {

namespace {

// Work below this many elements runs on one thread.
constexpr int64_t kParallelGrain = 1 << 15;

class CpuKernel final : public CompiledKernel {
 public:
  CpuKernel(KernelSpec spec, CpuKernelFn fn) : spec_(std::move(spec)), fn_(fn) {}

  std::vector<Tensor> run(const std::vector<Tensor>& inputs) const override {
    USER_CHECK(inputs.size() == spec_.argSizes.size(), "fused kernel: {} inputs for {}", inputs.size(),
               spec_.argSizes.size());
    std::vector<Tensor> keep;
    std::vector<void*> args;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Tensor& t = inputs[i];
      USER_CHECK(t.defined() && t.dtype() == spec_.dtype && t.sizes() == spec_.argSizes[i],
                 "fused kernel: input {} is {} but the kernel was compiled for {} {}", i,
                 t.defined() ? shapeStr(t.sizes()) : "undefined", dtypeName(spec_.dtype), shapeStr(spec_.argSizes[i]));
      keep.push_back(t.contiguous());
      args.push_back(keep.back().rawData());
    }
    std::vector<Tensor> outs;
    for (size_t o = 0; o < spec_.outputs.size(); ++o) {
      outs.push_back(Tensor::empty(spec_.shape, spec_.dtype));
      args.push_back(outs.back().rawData());
    }
    const int64_t numel = spec_.numel();
    if (numel == 0) return outs;
    const int64_t rowLength = spec_.shape.empty() ? 1 : spec_.shape.back();
    const int64_t rows = numel / rowLength;
    if (numel < kParallelGrain || rows < 2) {
      fn_(args.data(), 0, rows);
      return outs;
    }
#pragma omp parallel
    {
      int64_t nt = omp_get_num_threads(), t = omp_get_thread_num();
      int64_t begin = rows * t / nt, end = rows * (t + 1) / nt;
      if (begin < end) fn_(args.data(), begin, end);
    }
    return outs;
  }

 private:
  KernelSpec spec_;
  CpuKernelFn fn_;
};

// Kernels compiled in this process, shared by every Function: the same group on the same target
// compiles once.
class LegacyFuser final : public Fuser {
 public:
  explicit LegacyFuser(FuserOptions opts) : opts_(std::move(opts)) {}
  std::string_view name() const override { return "old"; }
  int64_t fuse(Graph& g) override { return fusePointwiseGroups(g); }

  void compile(const Graph& g, KernelTable& kernels, FusionReport& report) override {
    compileGroups(g, OpKind::FusionGroup, opts_, "fusion group", "gj_fused", kernels, report,
                  [&](const Graph& sub) { return prepare(sub); });
  }

 private:
  PreparedGroup prepare(const Graph& sub) const {
    KernelSpec spec = buildKernelSpec(sub);
    std::string key = spec.key();
    return {std::move(key), [this, spec = std::move(spec)](const std::string& name) -> std::shared_ptr<const CompiledKernel> {
      if (!opts_.dumpDir.empty()) std::ofstream(opts_.dumpDir + "/" + name + ".cu") << emitCudaKernel(spec, name);
      switch (opts_.device) {
        case DeviceKind::Cpu: {
          auto fn = compileCpuKernel(spec, name, {opts_.dumpDir, name});
          if (!fn) throw fn.error();
          return std::make_shared<CpuKernel>(spec, fn.value());
        }
        case DeviceKind::Cuda:
          break;
      }
      throw Error("no CUDA device: CUDA kernels cannot run in this build");
    }};
  }

  FuserOptions opts_;
};

}  // namespace
}  // namespace gj::legacy

namespace gj {
std::unique_ptr<Fuser> makeLegacyFuser(const FuserOptions& opts) { return std::make_unique<legacy::LegacyFuser>(opts); }
}  // namespace gj
