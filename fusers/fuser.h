#pragma once
// The interface both fusers implement (STYLE.md, rule 14): find groups in a graph and replace them by
// fusion nodes; compile each fusion node for a device into a kernel the interpreter calls.
#include "ir/graph.h"
#include "runtime/context.h"
#include "runtime/kernel_time.h"
#include "runtime/tensor.h"

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace gj {

/// A compiled fusion group.
class CompiledKernel {
 public:
  virtual ~CompiledKernel();
  /// Runs on the fusion node's inputs (tensors, in order) and returns its outputs. Throws gj::Error
  /// when the inputs do not fit what the kernel was compiled for; the caller then runs the subgraph.
  /// The inputs are pointers so that the interpreter hands over its frame's tensors without copying.
  virtual std::vector<Tensor> run(std::span<const Tensor* const> inputs) const = 0;
  /// The same on a vector of tensors.
  std::vector<Tensor> run(const std::vector<Tensor>& inputs) const;
};

/// A kernel parameter's tensor: what a compiled kernel reads or writes, contiguous.
struct TensorSignature {
  DType dtype;
  Shape sizes;
};

/// What a compiled kernel takes and makes, laid out once when it is built (a launch must cost little next
/// to a batch-1 LSTM step's kernel): its inputs, its outputs' sizes and dtypes, and a CPU kernel's scratch
/// buffers (passed after the outputs; see kernelArgs). An unknown (kUnknownDim) size is the launch's rows.
struct KernelSignature {
  KernelSignature(std::vector<TensorSignature> inputs, std::span<const TensorSignature> outputs, size_t scratch = 0);
  std::vector<TensorSignature> inputs;
  std::vector<Shape> outputSizes;
  std::vector<DType> outputDtypes;
  std::vector<TensorSignature> scratch;
  bool dynamicOutputs = false;  ///< some output size is unknown
  int64_t outputBytes = 0;      ///< all outputs' bytes together, when none is dynamic
};

/// A launch's tensors: the inputs checked against what the kernel was compiled for (defined, on `device`,
/// of the signature's dtype and sizes, an unknown size matching any but the same in every input; else a
/// gj::Error naming `what` and the input, after which the caller runs the subgraph), contiguous copies of
/// those that were not, new outputs, and the data pointers of inputs (or their copies), outputs and
/// scratch buffers, in that order. The inputs themselves must outlive the launch.
struct KernelArgs {
  std::vector<Tensor> copies, outputs;
  std::vector<void*> pointers;
  /// The run-time size of the signatures' unknown (kUnknownDim) dims; kUnknownDim when they have none.
  int64_t rows = kUnknownDim;
  /// A CUDA launch's parameter array for the pointers (each entry the address of one pointer).
  std::vector<void*> launchParameters() {
    std::vector<void*> params;
    for (void*& p : pointers) params.push_back(&p);
    return params;
  }
};
/// A CPU kernel's scratch buffers are space of the calling thread's own, kept from launch to launch: a
/// launch's scratch is dead when it returns, so the next launch on the thread writes the same, still
/// cached, memory rather than a fresh block each step of an unrolled loop.
KernelArgs kernelArgs(std::string_view what, DeviceKind device, std::span<const Tensor* const> inputs,
                      const KernelSignature& signature);

/// The compiled kernel of each fusion node of a plan (nodes of nested blocks and subgraphs included).
using KernelTable = std::unordered_map<const Node*, std::shared_ptr<const CompiledKernel>>;

/// How the fusers launch their CUDA kernels: fastrnns' --cuda-pointwise-* knobs. A 0 keeps the fuser's
/// own choice (legacy: 256 threads a block, at most 8 blocks per multiprocessor, a grid-stride loop over
/// the rest; TE: loop level 2, 512 threads a block). loopLevel 2: one element per thread,
/// ceil(n / blockSize) blocks; 3: blockCount blocks of blockSize threads, each thread looping over the
/// elements that are left (LoopNest::scheduleGpu for the TE fuser).
struct CudaLaunchOptions {
  int64_t blockSize = 0, blockCount = 0;
  int loopLevel = 0;
  bool isDefault() const { return blockSize == 0 && blockCount == 0 && loopLevel == 0; }
  /// Throws gj::Error naming the knob that is out of range (block size 1-1024, loop level 2 or 3, a block
  /// count without loop level 3).
  void validate() const;
  std::string str() const;  ///< "block size 128, block count 4, loop level 3" (the knobs given)
};

struct FuserOptions {
  /// Whose kernel cache, LLVM session and CUDA modules the fuser uses (runtime/context.h); null: the
  /// calling thread's (Context::current(), which a Function sets to its own while it runs).
  std::shared_ptr<Context> context;
  Context& contextOrCurrent() const { return context ? *context : Context::current(); }
  DeviceKind device = DeviceKind::Cpu;
  std::string dumpDir;               ///< GJ_DUMP_KERNELS: write every generated kernel here
  bool injectCompileFailure = false;  ///< tests: every group fails to compile (cached kernels too)
  /// Tests: every kernel's first float output comes out 1% too large, a planted error that only a run
  /// of the fused kernels can show.
  bool injectKernelError = false;
  /// Tests: called before each kernel build (a cache miss), outside the cache's lock.
  std::function<void()> beforeBuild;
  CudaLaunchOptions cudaLaunch;      ///< device Cuda only
  /// Device Cuda: each fused kernel launch is timed by events and waited for (KernelRunCounts::times;
  /// graphbench --kernel-bandwidth). Slows every launch: not for timed runs.
  bool timeKernels = false;
  /// Device Cuda: an unrolled recurrence whose steps are a product by one weight and a fusion group runs
  /// as one persistent kernel (fusers/recurrence.h, prim::RecurrenceGroup).
  bool persistentRecurrences = false;
};

/// How often the kernels of one compile ran: launches that ran, and launches a kernel refused (its
/// inputs did not fit what it was compiled for; its group then ran unfused). Counted from any thread.
struct KernelRunCounts {
  std::atomic<int64_t> ran{0}, refused{0};
  std::mutex mutex;               ///< guards times
  std::vector<KernelTime> times;  ///< FuserOptions::timeKernels: one per group whose kernel ran on a device
};

struct FusionReport {
  int64_t groups = 0;
  int64_t kernelsCompiled = 0;  ///< new compilations (cache misses)
  int64_t cacheHits = 0;
  int64_t diskHits = 0;         ///< of kernelsCompiled, those whose code came from the persistent cache
  double compileMs = 0;
  std::vector<std::string> warnings;  ///< one per group that failed to compile (it runs unfused)
  /// FuserOptions::persistentRecurrences: one line per recurrence found, made persistent or refused and why.
  std::vector<std::string> recurrences;
  /// Shared by every kernel compileGroups put in the table, which count their launches into it.
  std::shared_ptr<KernelRunCounts> runs = std::make_shared<KernelRunCounts>();
};

/// What one launch of a group's CUDA kernel asks of a GPU, counted without one (graphir codegen --stats).
struct KernelCost {
  int64_t threadsPerBlock = 0, blocks = 0;
  int64_t bytesRead = 0, bytesWritten = 0;  ///< every input and output once: what DRAM must carry at least
  int64_t flops = 0;                        ///< floating-point operations; a math call (exp, tanh) counts one
};

enum class FuserKind : uint8_t;

class Fuser {
 public:
  virtual ~Fuser();
  /// Its row of fusers.def.
  virtual FuserKind kind() const = 0;
  /// Its command-line name (fusers.def).
  std::string_view name() const;
  /// The OpKind of the group nodes fuse() makes (fusers.def).
  virtual OpKind groupOp() const = 0;
  /// Replaces fusible groups of g, in every block, by fusion nodes. Returns how many it made.
  virtual int64_t fuse(Graph& g) = 0;
  /// Compiles every fusion node of g (nested blocks included) into `kernels`. A group that fails to
  /// compile gets no kernel and a warning in the report; the interpreter then runs its subgraph.
  virtual void compile(const Graph& g, KernelTable& kernels, FusionReport& report) = 0;
  /// Why `n`, left outside every group when this fuser fused its graph, is there: the rule of this
  /// fuser's that it fails, or that no fusible neighbour of its shape joined it (graphir explain).
  virtual std::string whyNotFused(const Node* n) const = 0;
  /// The code compile() generates for `group` (a node fuse() made), for the device these options name, as
  /// text to read (graphir codegen): its kernel under the symbol `name`, and whatever the kernel is made
  /// from (the TE fuser's loop nest). Throws gj::Error for a group it cannot compile.
  virtual std::string emit(const Node* group, const std::string& name) const = 0;
  /// The CUDA C of one element of `group`: `__device__ void NAME(long long i, const T* in0, ..., T* out0,
  /// ...)` over the group's inputs and outputs (contiguous, as its kernel takes them; plain pointers, not
  /// __restrict__: a persistent kernel hands it memory that it writes in other steps) computing element i
  /// of its iteration shape, after the helpers it calls. A persistent recurrence kernel runs it as the cell
  /// of each step (fusers/recurrence.h). Throws gj::Error for a group whose elements are not independent
  /// of one another (a reduction, a row op, a product) or whose shape is known only at run time.
  virtual std::string emitElementFunction(const Node* group, const std::string& name) const = 0;
  /// The cost of `group`'s CUDA kernel (emit's, for a multiprocessor count of `multiprocessors` where the
  /// launch depends on it). Throws gj::Error for a group it cannot compile.
  virtual KernelCost cost(const Node* group, int multiprocessors) const = 0;
};

/// One group's kernel, before compilation: `key` identifies it (same key, same kernel) and `build`
/// generates and compiles it under a fresh symbol name; compileGroups calls `build` (on a cache miss)
/// before it moves on to the next group, so it may refer to the group's subgraph. A fuser's prepare step
/// throws gj::Error for a group it cannot handle.
struct PreparedGroup {
  std::string key;
  std::function<std::shared_ptr<const CompiledKernel>(const std::string& name)> build;
};

/// How many compiled kernels a context's cache keeps by default; the least recently used go first.
constexpr size_t kDefaultKernelCacheCapacity = 4096;
/// Sets that bound for `context`'s cache (at least 1), dropping what is over it now. Kernels that plans
/// hold stay alive.
void setKernelCacheCapacity(size_t kernels, Context& context = Context::current());
/// The kernels `context`'s cache holds now.
size_t kernelCacheSize(Context& context = Context::current());

/// The compile step every fuser shares around its own code generator: for each `groupKind` node of g
/// (nested blocks included), prepares the group, looks its key up in the kernel cache of opts' context
/// (per device and `symbolPrefix`; bounded, least recently used out first), and builds and times what is missing,
/// outside the cache's lock: a build holds up only the requests for its own key. Each kernel goes into `kernels` counting its
/// launches into report.runs. Honours opts.injectCompileFailure and injectKernelError; a group whose
/// preparation or build throws runs unfused, with a warning that starts with `what`.
void compileGroups(const Graph& g, OpKind groupKind, const FuserOptions& opts, std::string_view what,
                   std::string_view symbolPrefix, KernelTable& kernels, FusionReport& report,
                   const std::function<PreparedGroup(const Graph& sub)>& prepare);

/// The fusers of fusers.def, and None (the graph's ops run one by one).
enum class FuserKind : uint8_t {
  None,
#define FUSER(E, NAME, GROUP, FACTORY, USE, HELP) E,
#include "fusers/fusers.def"
#undef FUSER
};

/// What a fuser of fusers.def is for (its `use` column).
enum class FuserUse : uint8_t {
  Product,  ///< compiles kernels; the conformance tests run it on every reference case
  Test,     ///< exists for the tests (of the registry itself)
};

/// Every FuserKind in the table's order, None first.
std::span<const FuserKind> allFusers();
/// The FuserKinds that compile kernels (use Product), in the table's order; None is not among them.
std::vector<FuserKind> kernelFusers();
/// Its command-line name (fusers.def; "none" for FuserKind::None).
std::string_view fuserName(FuserKind k);
/// What --help says of it.
std::string_view fuserHelp(FuserKind k);
/// Its use (None: Product, the unfused path every product runs).
FuserUse fuserUse(FuserKind k);
/// The fuser named `name` on the command line; a gj::Error lists the names.
FuserKind fuserFromName(std::string_view name);
/// The fuser of `kind` (nullptr for FuserKind::None).
std::unique_ptr<Fuser> makeFuser(FuserKind kind, const FuserOptions& opts);
/// Whether k is the group op of some fuser (prim::FusionGroup, prim::TensorExprGroup).
bool isFusionGroupOp(OpKind k);

}  // namespace gj
