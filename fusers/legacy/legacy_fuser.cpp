// The legacy fuser: pointwise groups (graph_fuser), compiled per group for the CPU through LLVM
// ORC or for CUDA through NVRTC, cached by the group's canonical text and target.
#include "fusers/fuser.h"
#include "fusers/legacy/codegen.h"
#include "fusers/legacy/graph_fuser.h"
#include "passes/util.h"
#include "runtime/cuda/device.h"
#include "runtime/nvrtc.h"
#include "support/error.h"

#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <fstream>
#include <functional>

namespace gj::legacy {

namespace {

// The launch of a kernel over n elements (CudaLaunchOptions) on a device of `multiprocessors`. By default
// 256 threads a block, and blocks enough to fill the device a few times over, no more (the grid-stride
// loop covers what is left).
cuda::LaunchShape cudaLaunchShape(int64_t n, const CudaLaunchOptions& o, int multiprocessors) {
  const int64_t threads = o.blockSize ? o.blockSize : 256;
  const int64_t needed = (n + threads - 1) / threads;
  int64_t blocks;
  if (o.loopLevel == 2)
    blocks = needed;
  else if (o.loopLevel == 3 && o.blockCount)
    blocks = o.blockCount;
  else
    blocks = std::clamp<int64_t>(needed, 1, int64_t{multiprocessors} * 8);
  USER_CHECK(blocks <= INT32_MAX, "fused CUDA kernel: {} blocks of {} threads exceed the grid's limit", blocks,
             threads);
  return {.grid = {static_cast<unsigned>(blocks), 1, 1}, .block = {static_cast<unsigned>(threads), 1, 1}};
}

std::vector<TensorSignature> argSignatures(const KernelSpec& spec) {
  std::vector<TensorSignature> sigs;
  for (size_t i = 0; i < spec.argSizes.size(); ++i) sigs.push_back({spec.argDtypes[i], spec.argSizes[i]});
  return sigs;
}

std::vector<TensorSignature> outputSignatures(const KernelSpec& spec) {
  std::vector<TensorSignature> sigs;
  for (DType t : spec.outDtypes) sigs.push_back({t, spec.shape});
  return sigs;
}

// Work below this many elements runs on one thread.
constexpr int64_t kParallelGrain = 1 << 15;

class CpuKernel final : public CompiledKernel {
 public:
  CpuKernel(KernelSpec spec, CpuKernelCode code)
      : spec_(std::move(spec)), sig_(argSignatures(spec_), outputSignatures(spec_)), fn_(code.fn),
        module_(std::move(code.module)) {}

  std::vector<Tensor> run(std::span<const Tensor* const> inputs) const override {
    KernelArgs a = kernelArgs("fused kernel", DeviceKind::Cpu, inputs, sig_);
    void** args = a.pointers.data();
    const int64_t numel = spec_.numel(a.rows);
    if (numel == 0) return std::move(a.outputs);
    const int64_t rowLength = spec_.shape.empty() ? 1 : spec_.shape.back();
    const int64_t rows = numel / rowLength;
    if (numel < kParallelGrain || rows < 2) {
      fn_(args, 0, rows);
      return std::move(a.outputs);
    }
#pragma omp parallel
    {
      int64_t nt = omp_get_num_threads(), t = omp_get_thread_num();
      int64_t begin = rows * t / nt, end = rows * (t + 1) / nt;
      if (begin < end) fn_(args, begin, end);
    }
    return std::move(a.outputs);
  }

 private:
  KernelSpec spec_;
  KernelSignature sig_;
  CpuKernelFn fn_;
  std::shared_ptr<const JitModule> module_;  // holds fn_'s code
};

// A group compiled by NVRTC: one thread per output element in a grid-stride loop, on the current stream.
class CudaFusedKernel final : public CompiledKernel {
 public:
  CudaFusedKernel(KernelSpec spec, cuda::Kernel kernel, CudaLaunchOptions launch)
      : spec_(std::move(spec)), sig_(argSignatures(spec_), outputSignatures(spec_)),
        kernel_(std::move(kernel)), launch_(launch) {}

  std::vector<Tensor> run(std::span<const Tensor* const> inputs) const override {
    KernelArgs a = kernelArgs("fused CUDA kernel", DeviceKind::Cuda, inputs, sig_);
    long long n = spec_.numel(a.rows);
    if (n == 0) return std::move(a.outputs);
    std::vector<void*> params = a.launchParameters();
    params.push_back(&n);
    kernel_.launch(cudaLaunchShape(n, launch_, cuda::requireDevice().multiprocessors), params.data());
    return std::move(a.outputs);
  }

 private:
  KernelSpec spec_;
  KernelSignature sig_;
  cuda::Kernel kernel_;
  CudaLaunchOptions launch_;
};

// Kernels compiled in this process, shared by every Function: the same group on the same target
// compiles once.
class LegacyFuser final : public Fuser {
 public:
  explicit LegacyFuser(FuserOptions opts) : opts_(std::move(opts)) {}
  FuserKind kind() const override { return FuserKind::Legacy; }
  OpKind groupOp() const override { return OpKind::FusionGroup; }
  std::string emit(const Node* group, const std::string& name) const override {
    KernelSpec spec = buildKernelSpec(*group->subgraph());
    if (opts_.device == DeviceKind::Cuda) return emitCudaKernel(spec, name);
    Result<std::string> ir = emitCpuKernelIR(spec, name);
    if (!ir) throw ir.error();
    return ir.value();
  }
  std::string emitElementFunction(const Node* group, const std::string& name) const override {
    return emitCudaElementFunction(buildKernelSpec(*group->subgraph()), name);
  }
  // Every element's expressions once; every input as the kernel reads it and every output once.
  KernelCost cost(const Node* group, int multiprocessors) const override {
    const KernelSpec spec = buildKernelSpec(*group->subgraph());
    KernelCost c;
    const int64_t n = spec.numel(1);  // a group of rows known only at run time: one row
    for (const KernelSpec::Expr& e : spec.exprs) c.flops += e.kind == KernelSpec::ExprKind::Op ? n : 0;
    for (size_t i = 0; i < spec.argSizes.size(); ++i) {
      int64_t elements = 1;
      for (int64_t d : spec.argSizes[i]) elements *= d == kUnknownDim ? 1 : d;
      c.bytesRead += elements * static_cast<int64_t>(dtypeSize(spec.argDtypes[i]));
    }
    for (DType t : spec.outDtypes) c.bytesWritten += n * static_cast<int64_t>(dtypeSize(t));
    const cuda::LaunchShape launch = cudaLaunchShape(n, opts_.cudaLaunch, multiprocessors);
    c.threadsPerBlock = launch.block[0];
    c.blocks = launch.grid[0];
    return c;
  }
  int64_t fuse(Graph& g) override { return fusePointwiseGroups(g); }
  std::string whyNotFused(const Node* n) const override {
    std::string why = fusionBlocker(n);
    return why.empty() ? "fusible, but no other fusible op of its shape is next to it (a group needs two)" : why;
  }

  void compile(const Graph& g, KernelTable& kernels, FusionReport& report) override {
    compileGroups(g, OpKind::FusionGroup, opts_, "fusion group", "gj_legacy", kernels, report,
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
          auto fn = compileCpuKernel(spec, name, {opts_.dumpDir, name, &opts_.contextOrCurrent()});
          if (!fn) throw fn.error();
          return std::make_shared<CpuKernel>(spec, fn.value());
        }
        case DeviceKind::Cuda: {
          auto kernel = cuda::compileKernel(emitCudaKernel(spec, name), name, opts_.contextOrCurrent());
          if (!kernel) throw kernel.error();
          return std::make_shared<CudaFusedKernel>(spec, kernel.value(), opts_.cudaLaunch);
        }
      }
      throw Error("unknown device");
    }};
  }

  FuserOptions opts_;
};

}  // namespace
}  // namespace gj::legacy

namespace gj {
std::unique_ptr<Fuser> makeLegacyFuser(const FuserOptions& opts) { return std::make_unique<legacy::LegacyFuser>(opts); }
}  // namespace gj
