// The TE fuser: compilation of each group (grouping.cpp makes them) through lowering, a default schedule
// and the LLVM backend (CPU) or the CUDA printer (emitted for NVRTC), with a kernel cache.
#include "fusers/te/te_fuser.h"
#include "support/environment.h"

#include "fusers/fuser.h"
#include "fusers/te/llvm_codegen.h"
#include "fusers/te/lowering.h"
#include "fusers/te/printer.h"
#include "runtime/cuda/device.h"
#include "support/error.h"

#include <fmt/format.h>
#include <omp.h>

#include <cstdlib>
#include <fstream>

namespace gj::te {

namespace {

std::vector<TensorSignature> signatures(const std::vector<Buf>& bufs) {
  std::vector<TensorSignature> sigs;
  for (const Buf& b : bufs) sigs.push_back({bufDType(*b), b->dims});
  return sigs;
}

constexpr int64_t kParallelGrain = 1 << 15;

class TeCpuKernel final : public CompiledKernel {
 public:
  TeCpuKernel(LoopNest nest, std::vector<CompiledNest> fns)
      : nest_(std::move(nest)), sig_(signatures(nest_.inputs()), signatures(nest_.outputs()), nest_.scratch()),
        fns_(std::move(fns)) {}

  std::vector<Tensor> run(std::span<const Tensor* const> inputs) const override {
    KernelArgs a = kernelArgs("TE kernel", DeviceKind::Cpu, inputs, sig_);
    void** args = a.pointers.data();
    for (const CompiledNest& n : fns_) {
      if (!n.parallel || n.trips < 2) {
        n.fn(args, 0, n.trips);
        continue;
      }
#pragma omp parallel
      {
        int64_t nt = omp_get_num_threads(), t = omp_get_thread_num();
        int64_t begin = n.trips * t / nt, end = n.trips * (t + 1) / nt;
        if (begin < end) n.fn(args, begin, end);
      }
    }
    return std::move(a.outputs);
  }

 private:
  LoopNest nest_;
  KernelSignature sig_;
  std::vector<CompiledNest> fns_;
};

// A group's GPU nest compiled by NVRTC: every nest of the kernel in one launch, on the current stream.
class TeCudaKernel final : public CompiledKernel {
 public:
  TeCudaKernel(LoopNest nest, cuda::Kernel kernel)
      : nest_(std::move(nest)), sig_(signatures(nest_.inputs()), signatures(nest_.outputs())),
        kernel_(std::move(kernel)), launch_(nest_.gpuLaunch()) {
    for (int64_t extent : launch_.blocks) USER_CHECK(extent <= INT32_MAX, "TE kernel: {} blocks is too many", extent);
    const int64_t threads = launch_.threads[0] * launch_.threads[1] * launch_.threads[2];
    USER_CHECK(threads <= kernel_.maxThreadsPerBlock(), "TE kernel: {} threads per block, more than the device "
               "allows ({})", threads, kernel_.maxThreadsPerBlock());
    if (launch_.cooperative) {  // a grid barrier: every block resident at once
      const int64_t blocks = launch_.blocks[0] * launch_.blocks[1] * launch_.blocks[2];
      const int64_t resident = int64_t{kernel_.blocksPerMultiprocessor(static_cast<int>(threads), 0)} *
                               cuda::requireDevice().multiprocessors;
      USER_CHECK(blocks <= resident, "TE kernel: a split reduction's {} blocks, but the device holds {} of them at "
                 "once", blocks, resident);
    }
  }

  std::vector<Tensor> run(std::span<const Tensor* const> inputs) const override {
    KernelArgs a = kernelArgs("TE CUDA kernel", DeviceKind::Cuda, inputs, sig_);
    const auto& [blocks, threads, cooperative] = launch_;
    // A split reduction's partials (the last outputs) live for the launch only.
    auto result = [&] {
      a.outputs.resize(a.outputs.size() - nest_.partials());
      return std::move(a.outputs);
    };
    if (blocks[0] * blocks[1] * blocks[2] * threads[0] * threads[1] * threads[2] == 0) return result();
    std::vector<void*> params = a.launchParameters();
    auto u = [](int64_t v) { return static_cast<unsigned>(v); };
    kernel_.launch({.grid = {u(blocks[0]), u(blocks[1]), u(blocks[2])},
                    .block = {u(threads[0]), u(threads[1]), u(threads[2])},
                    .cooperative = cooperative},
                   params.data());
    return result();
  }

 private:
  LoopNest nest_;
  KernelSignature sig_;
  cuda::Kernel kernel_;
  LoopNest::GpuLaunch launch_;
};

}  // namespace

// Where no device is known, a split reduction's LoopNest::kGpuSplitBlocks are taken as 2 a multiprocessor.
constexpr int64_t kUnknownDeviceMultiprocessors = LoopNest::kGpuSplitBlocks / 2;

// The CUDA source of `gpu`; a cooperative kernel bounded to as many blocks a multiprocessor as its grid
// needs on `multiprocessors`.
static std::string cudaSource(const LoopNest& gpu, const std::string& name, int64_t multiprocessors) {
  const LoopNest::GpuLaunch l = gpu.gpuLaunch();
  const int64_t blocks = l.blocks[0] * l.blocks[1] * l.blocks[2];
  const int64_t resident = l.cooperative && multiprocessors > 0 ? (blocks + multiprocessors - 1) / multiprocessors : 0;
  return CudaPrinter().kernel(name, gpu.inputs(), gpu.outputs(), gpu.root(), resident);
}

std::shared_ptr<const CompiledKernel> compileGpuNest(LoopNest gpu, const std::string& name, Context& context) {
  // A scratch buffer is written by one nest and read by the next, which one launch cannot order.
  USER_CHECK(gpu.scratch() == 0, "TE kernel {}: a group with a product runs on the CPU only", name);
  auto kernel = cuda::compileKernel(cudaSource(gpu, name, cuda::requireDevice().multiprocessors), name, context);
  if (!kernel) throw kernel.error();
  return std::make_shared<TeCudaKernel>(std::move(gpu), kernel.value());
}

namespace {

// The blocks a split reduction may spread over on this process's device: 2 a multiprocessor, or
// $GJ_TE_SPLIT_BLOCKS_PER_SM (1 to 8: blocks of 256 threads; the kernel's __launch_bounds__ then keeps its
// registers low enough for them, cudaSource).
int64_t deviceSplitBlocks() {
  static const int64_t perMultiprocessor = [] {
    const std::optional<std::string> v = environment().teSplitBlocksPerSm;
    if (!v) return int64_t{2};
    const int64_t n = std::atoll(v->c_str());
    USER_CHECK(n >= 1 && n <= 8,
               "GJ_TE_SPLIT_BLOCKS_PER_SM must be 1 to 8 (blocks of 256 threads a multiprocessor), got '{}'", *v);
    return n;
  }();
  return perMultiprocessor * int64_t{cuda::requireDevice().multiprocessors};
}

std::string signature(const LoopNest& nest) {
  std::string s;
  for (const std::vector<Buf>* list : {&nest.inputs(), &nest.outputs()})
    for (const Buf& b : *list) s += fmt::format("{}:{}{};", b->name, dtypeName(bufDType(*b)), shapeStr(b->dims));
  return s + "\n" + toString(nest.root());
}

class TeFuser final : public Fuser {
 public:
  explicit TeFuser(FuserOptions opts) : opts_(std::move(opts)) {}
  FuserKind kind() const override { return FuserKind::Te; }
  OpKind groupOp() const override { return OpKind::TensorExprGroup; }
  // The loop nest as lowered, then the kernel: the nest scheduled for the GPU printed as CUDA C, or the
  // CPU's scheduled nest and its LLVM IR.
  std::string emit(const Node* group, const std::string& name) const override {
    if (opts_.device == DeviceKind::Cuda) {
      LoopNest nest = lowerGroup(*group->subgraph());
      std::string loops = "/* loop nest:\n" + toString(nest.root()) + "*/\n";
      scheduleGpu(nest, opts_.cudaLaunch);
      return loops + cudaSource(nest, name, kUnknownDeviceMultiprocessors);
    }
    LoopNest nest = cpuLoopNest(*group->subgraph(), kParallelGrain);
    Result<std::string> ir = emitLlvmIR(nest, name);
    if (!ir) throw ir.error();
    return "/* loop nest: as scheduled for the CPU\n" + toString(nest.root()) + "*/\n" + ir.value();
  }
  // The lowered nest's operations and buffers; the GPU nest's launch.
  std::string emitElementFunction(const Node* group, const std::string& name) const override {
    LoopNest nest = lowerGroup(*group->subgraph());
    USER_CHECK(nest.scratch() == 0, "TE group: a product has no element function");
    nest.flatten(nest.loopNames());  // one perfect nest over the group's shape, else gj::Error
    const For* loop = nest.root().as<For>();
    if (!loop)
      if (const Block* b = nest.root().as<Block>(); b && b->stmts.size() == 1) loop = b->stmts[0].as<For>();
    USER_CHECK(loop, "TE group: several nests (a reduction) have no element function");
    const BufferUse use = bufferUse(loop->body);
    USER_CHECK(!use.hasLoop && use.allocated.empty() && use.storedAndLoaded().empty(),
               "TE group: elements that read one another (a row op) have no element function");
    return CudaPrinter().elementFunction(name, nest.inputs(), nest.outputs(), loop->var.as<Var>()->name, loop->body);
  }
  KernelCost cost(const Node* group, int) const override {
    const LoopNest nest = lowerGroup(*group->subgraph());
    KernelCost c;
    c.flops = floatingOps(nest.root());
    auto bytes = [](const Buf& b) {
      int64_t n = static_cast<int64_t>(dtypeSize(bufDType(*b)));
      for (int64_t d : b->dims) n *= d;
      return n;
    };
    for (const Buf& b : nest.inputs()) c.bytesRead += bytes(b);
    for (size_t i = 0; i + nest.scratch() < nest.outputs().size(); ++i) c.bytesWritten += bytes(nest.outputs()[i]);
    const LoopNest::GpuLaunch launch = gpuLoopNest(*group->subgraph(), opts_.cudaLaunch).gpuLaunch();
    c.threadsPerBlock = launch.threads[0] * launch.threads[1] * launch.threads[2];
    c.blocks = launch.blocks[0] * launch.blocks[1] * launch.blocks[2];
    return c;
  }
  int64_t fuse(Graph& g) override { return fuseTensorExprGroups(g, opts_.device); }
  std::string whyNotFused(const Node* n) const override { return fusionBlocker(n, opts_.device == DeviceKind::Cpu); }

  void compile(const Graph& g, KernelTable& kernels, FusionReport& report) override {
    compileGroups(g, OpKind::TensorExprGroup, opts_, "TE group", "gj_te", kernels, report,
                  [&](const Graph& sub) { return prepare(sub); });
  }

 private:
  PreparedGroup prepare(const Graph& sub) const {
    LoopNest nest = lowerGroup(sub);
    std::string key = signature(nest);
    // `build` runs only on a cache miss, inside compileGroups, while `sub` is alive.
    return {std::move(key), [this, nest = std::move(nest), &sub](const std::string& name) -> std::shared_ptr<const CompiledKernel> {
      if (!opts_.dumpDir.empty()) {
        std::ofstream(opts_.dumpDir + "/" + name + ".te.txt") << toString(nest.root());
        if (nest.scratch() == 0) {  // a group with a product has no CUDA form (compileGpuNest)
          LoopNest gpu = gpuLoopNest(sub, opts_.cudaLaunch,
                                     opts_.device == DeviceKind::Cuda ? deviceSplitBlocks() : LoopNest::kGpuSplitBlocks);
          std::ofstream(opts_.dumpDir + "/" + name + ".cu")
              << cudaSource(gpu, name, opts_.device == DeviceKind::Cuda ? cuda::requireDevice().multiprocessors
                                                                        : kUnknownDeviceMultiprocessors);
        }
      }
      switch (opts_.device) {
        case DeviceKind::Cpu: {
          LoopNest cpu = cpuLoopNest(sub, kParallelGrain);
          auto fns = compileLlvm(cpu, name, {opts_.dumpDir, name, &opts_.contextOrCurrent()});
          if (!fns) throw fns.error();
          return std::make_shared<TeCpuKernel>(cpu, std::move(fns).value());
        }
        case DeviceKind::Cuda:
          return compileGpuNest(gpuLoopNest(sub, opts_.cudaLaunch, deviceSplitBlocks()), name, opts_.contextOrCurrent());
      }
      throw Error("unknown device");
    }};
  }

  FuserOptions opts_;
};

}  // namespace

}  // namespace gj::te

namespace gj {
std::unique_ptr<Fuser> makeTeFuser(const FuserOptions& opts) { return std::make_unique<te::TeFuser>(opts); }
}  // namespace gj
