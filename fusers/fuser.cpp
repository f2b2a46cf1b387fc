#include "fusers/fuser.h"

#include "passes/util.h"
#include "runtime/allocator.h"
#include "runtime/disk_cache.h"
#include "runtime/ops/ops.h"
#include "runtime/cuda/device.h"
#include "runtime/cuda/ops.h"
#include "support/error.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <future>
#include <list>
#include <mutex>
#include <optional>

namespace gj {
CompiledKernel::~CompiledKernel() = default;

std::vector<Tensor> CompiledKernel::run(const std::vector<Tensor>& inputs) const {
  std::vector<const Tensor*> pointers;
  pointers.reserve(inputs.size());
  for (const Tensor& t : inputs) pointers.push_back(&t);
  return run(std::span<const Tensor* const>(pointers));
}

KernelSignature::KernelSignature(std::vector<TensorSignature> ins, std::span<const TensorSignature> outs,
                                 size_t numScratch)
    : inputs(std::move(ins)) {
  IR_CHECK(numScratch <= outs.size()) << numScratch << " scratch buffers of " << outs.size() << " outputs";
  const auto firstScratch = outs.end() - static_cast<std::ptrdiff_t>(numScratch);
  scratch.assign(firstScratch, outs.end());
  for (const TensorSignature& o : std::span(outs.begin(), firstScratch)) {
    outputSizes.push_back(o.sizes);
    outputDtypes.push_back(o.dtype);
    dynamicOutputs |= std::find(o.sizes.begin(), o.sizes.end(), kUnknownDim) != o.sizes.end();
    outputBytes += numelOf(o.sizes) * static_cast<int64_t>(dtypeSize(o.dtype));
  }
  if (dynamicOutputs) outputBytes = 0;  // known at launch only
}

namespace {

// The bytes of a scratch buffer, an unknown size being the launch's `rows`, rounded up to the allocator's
// alignment.
int64_t alignedBytes(const TensorSignature& s, int64_t rows) {
  constexpr auto kAlign = static_cast<int64_t>(kCpuAlignment);
  int64_t n = static_cast<int64_t>(dtypeSize(s.dtype));
  for (int64_t d : s.sizes) {
    IR_CHECK(d != kUnknownDim || rows != kUnknownDim) << "a scratch buffer's rows given by no input";
    n *= d == kUnknownDim ? rows : d;
  }
  return (n + kAlign - 1) / kAlign * kAlign;
}

void appendScratch(KernelArgs& a, std::span<const TensorSignature> scratch) {
  if (scratch.empty()) return;
  int64_t bytes = 0;
  for (const TensorSignature& s : scratch) bytes += alignedBytes(s, a.rows);
  thread_local Tensor space;
  if (!space.defined() || space.numel() < bytes)
    space = Tensor::empty({std::max<int64_t>(bytes, 4096)}, DType::Bool, DeviceKind::Cpu);
  char* at = static_cast<char*>(space.rawData());
  for (const TensorSignature& s : scratch) {
    a.pointers.push_back(at);
    at += alignedBytes(s, a.rows);
  }
}

}  // namespace

// A CPU launch's outputs share one allocation (Tensor::emptyInOneBlock) up to this many bytes in all: a
// batch-1 LSTM step's kernel makes seven outputs of 512 bytes, and making them one by one was about half
// of its launch (two heap blocks each). Larger outputs are made one by one, so that a saved output does
// not keep the memory of the others alive.
constexpr int64_t kOneBlockOutputBytes = 64 << 10;

KernelArgs kernelArgs(std::string_view what, DeviceKind device, std::span<const Tensor* const> inputs,
                      const KernelSignature& sig) {
  const std::vector<TensorSignature>& expected = sig.inputs;
  USER_CHECK(inputs.size() == expected.size(), "{}: {} inputs for {}", what, inputs.size(), expected.size());
  KernelArgs a;
  a.pointers.reserve(inputs.size() + sig.outputSizes.size() + sig.scratch.size());
  // An unknown size (the leading one of a kernel compiled with dynamic rows) matches any, the same in every
  // input that has it.
  auto fits = [&](const Shape& have, const Shape& e) {
    if (have.size() != e.size()) return false;
    for (size_t d = 0; d < e.size(); ++d) {
      if (e[d] != kUnknownDim ? have[d] != e[d] : (a.rows != kUnknownDim && have[d] != a.rows)) return false;
      if (e[d] == kUnknownDim) a.rows = have[d];
    }
    return true;
  };
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = *inputs[i];
    const TensorSignature& e = expected[i];
    USER_CHECK(t.defined() && t.dtype() == e.dtype && t.device() == device && fits(t.sizes(), e.sizes),
               "{}: input {} is {} but the kernel was compiled for {} {} {}{}", what, i,
               t.defined() ? fmt::format("{} {} {}", deviceName(t.device()), dtypeName(t.dtype()), shapeStr(t.sizes()))
                           : "undefined",
               deviceName(device), dtypeName(e.dtype), shapeStr(e.sizes),
               a.rows != kUnknownDim ? fmt::format(" with {} rows", a.rows) : "");
    if (t.isContiguous()) {
      a.pointers.push_back(t.rawData());
    } else {
      a.copies.push_back(t.contiguous());
      a.pointers.push_back(a.copies.back().rawData());
    }
  }
  const size_t numOutputs = sig.outputSizes.size();
  std::vector<Shape> dynamicSizes;
  if (sig.dynamicOutputs) {
    USER_CHECK(a.rows != kUnknownDim, "{}: no input gives the rows of its outputs", what);
    dynamicSizes = sig.outputSizes;
    for (Shape& s : dynamicSizes)
      for (int64_t& d : s)
        if (d == kUnknownDim) d = a.rows;
  }
  std::span<const Shape> sizes = sig.dynamicOutputs ? std::span<const Shape>(dynamicSizes) : sig.outputSizes;
  int64_t bytes = sig.outputBytes;
  if (sig.dynamicOutputs)
    for (size_t i = 0; i < numOutputs; ++i)
      bytes += numelOf(sizes[i]) * static_cast<int64_t>(dtypeSize(sig.outputDtypes[i]));
  if (device == DeviceKind::Cpu && numOutputs > 1 && bytes <= kOneBlockOutputBytes) {
    a.outputs = Tensor::emptyInOneBlock(sizes, sig.outputDtypes, device);
  } else {
    a.outputs.reserve(numOutputs);
    for (size_t i = 0; i < numOutputs; ++i) a.outputs.push_back(Tensor::empty(sizes[i], sig.outputDtypes[i], device));
  }
  for (const Tensor& t : a.outputs) a.pointers.push_back(t.rawData());
  if (!sig.scratch.empty()) {
    USER_CHECK(device == DeviceKind::Cpu, "{}: scratch buffers are for CPU kernels", what);
    appendScratch(a, sig.scratch);
  }
  return a;
}

Fuser::~Fuser() = default;

void CudaLaunchOptions::validate() const {
  USER_CHECK(blockSize >= 0 && blockSize <= 1024, "CUDA block size {} is out of range: 1 to 1024 threads", blockSize);
  USER_CHECK(blockCount >= 0, "CUDA block count {} must be positive", blockCount);
  USER_CHECK(loopLevel == 0 || loopLevel == 2 || loopLevel == 3, "CUDA loop level {} must be 2 or 3", loopLevel);
  USER_CHECK(blockCount == 0 || loopLevel == 3, "a CUDA block count ({}) applies to loop level 3 only; set it too",
             blockCount);
}

std::string CudaLaunchOptions::str() const {
  std::vector<std::string> parts;
  if (blockSize) parts.push_back(fmt::format("block size {}", blockSize));
  if (blockCount) parts.push_back(fmt::format("block count {}", blockCount));
  if (loopLevel) parts.push_back(fmt::format("loop level {}", loopLevel));
  return fmt::format("{}", fmt::join(parts, ", "));
}

namespace {

// A context's compiled kernels (Context::state) by key, least recently used first out once there are more than
// `capacity` (a kernel a plan still holds stays alive there; the cache only stops offering it). A key is
// compiled once: the first request builds it outside the lock, and requests for the same key meanwhile
// wait for that build alone, not for other keys' builds.
struct KernelCache {
  using Kernel = std::shared_ptr<const CompiledKernel>;
  struct Entry {
    std::shared_future<Kernel> kernel;
    std::list<std::string>::iterator recent;  // its place in `order`
  };
  std::mutex mu;
  std::unordered_map<std::string, Entry> entries;
  std::list<std::string> order;  // most recently used first
  std::unordered_map<uint64_t, uint32_t> builds;  // by key hash: builds so far (a symbol's generation)
  size_t capacity = kDefaultKernelCacheCapacity;

  // Drops the least recently used entries beyond capacity (under mu).
  void trim() {
    while (entries.size() > capacity && !order.empty()) {
      entries.erase(order.back());
      order.pop_back();
    }
  }
};

// A kernel's symbol: the prefix and a hash (FNV-1a, 64 bits) of its cache key. Unique in the context's
// JIT session, since each key compiles once there, and the same in every process, so that a kernel's text is
// too (dumps compare across runs; the emulated driver's host builds are found on disk again).
uint64_t keyHash(const std::string& key) { return fnv1a64(key); }

// `generation` counts earlier builds of the key in the context: a key built again after the cache
// dropped it gets a name of its own, since a plan may still hold the first build's code under the first.
std::string symbolName(std::string_view prefix, const std::string& key, uint32_t generation) {
  if (generation == 0) return fmt::format("{}_{:016x}", prefix, keyHash(key));
  return fmt::format("{}_{:016x}_g{}", prefix, keyHash(key), generation);
}

std::shared_ptr<const CompiledKernel> compileOne(const Graph& sub, const FuserOptions& opts,
                                                 std::string_view symbolPrefix, FusionReport& report,
                                                 const std::function<PreparedGroup(const Graph&)>& prepare) {
  // Before the cache: a test's injected failure must not depend on what earlier tests compiled.
  USER_CHECK(!opts.injectCompileFailure, "compile failure injected (FuserOptions::injectCompileFailure)");
  PreparedGroup group = prepare(sub);
  std::string key = fmt::format("{}|{}|{}|{}", symbolPrefix, deviceName(opts.device),
                                opts.device == DeviceKind::Cuda ? opts.cudaLaunch.str() : "", group.key);
  KernelCache& c = opts.contextOrCurrent().state<KernelCache>();
  std::promise<KernelCache::Kernel> building;
  uint32_t generation = 0;
  {
    std::lock_guard<std::mutex> lock(c.mu);
    if (auto it = c.entries.find(key); it != c.entries.end()) {
      c.order.splice(c.order.begin(), c.order, it->second.recent);
      std::shared_future<KernelCache::Kernel> ready = it->second.kernel;
      ++report.cacheHits;
      return ready.get();  // this key's build, when another request started it (it rethrows its failure)
    }
    c.order.push_front(key);
    c.entries.emplace(key, KernelCache::Entry{building.get_future().share(), c.order.begin()});
    c.trim();
    generation = c.builds[keyHash(key)]++;
  }
  auto t0 = std::chrono::steady_clock::now();
  try {
    if (opts.beforeBuild) opts.beforeBuild();
    const int64_t diskHitsBefore = diskCacheHitsOnThisThread();
    std::shared_ptr<const CompiledKernel> k = group.build(symbolName(symbolPrefix, key, generation));
    report.diskHits += diskCacheHitsOnThisThread() > diskHitsBefore;
    report.compileMs += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    ++report.kernelsCompiled;
    building.set_value(k);
    return k;
  } catch (...) {
    // Waiting requests see the failure; later ones try again (the entry goes).
    building.set_exception(std::current_exception());
    std::lock_guard<std::mutex> lock(c.mu);
    if (auto it = c.entries.find(key); it != c.entries.end()) {
      c.order.erase(it->second.recent);
      c.entries.erase(it);
    }
    throw;
  }
}

// A plan's view of a (shared, cached) kernel: counts its launches, and plants opts.injectKernelError.
class CountedKernel final : public CompiledKernel {
 public:
  CountedKernel(std::shared_ptr<const CompiledKernel> k, std::shared_ptr<KernelRunCounts> runs, bool plantError,
                std::string timedAs)
      : k_(std::move(k)), runs_(std::move(runs)), plantError_(plantError), timedAs_(std::move(timedAs)) {}
  std::vector<Tensor> run(std::span<const Tensor* const> inputs) const override {
    std::vector<Tensor> outs;
    const bool timed = !timedAs_.empty() && !inputs.empty() && inputs[0]->device() == DeviceKind::Cuda;
    std::optional<cuda::Event> start, end;
    if (timed) {
      cuda::holdForTiming();
      start.emplace().record();
    }
    try {
      outs = k_->run(inputs);
    } catch (const Error&) {
      ++runs_->refused;
      throw;
    }
    ++runs_->ran;
    if (timed) {
      end.emplace().record();
      const double ms = end->elapsedMsSince(*start);
      int64_t bytes = 0;
      for (const Tensor* t : inputs) bytes += t->numel() * static_cast<int64_t>(dtypeSize(t->dtype()));
      for (const Tensor& t : outs) bytes += t.numel() * static_cast<int64_t>(dtypeSize(t.dtype()));
      std::lock_guard lock(runs_->mutex);
      addKernelTime(runs_->times, timedAs_, bytes, ms);
    }
    if (plantError_) {
      for (Tensor& t : outs) {
        if (!t.defined() || !isFloating(t.dtype())) continue;
        t = ops::mul(t, Tensor::scalar(1.01, t.dtype()));
        break;
      }
    }
    return outs;
  }

 private:
  std::shared_ptr<const CompiledKernel> k_;
  std::shared_ptr<KernelRunCounts> runs_;
  bool plantError_;
  std::string timedAs_;  ///< the group's name when its launches are timed, else empty
};

}  // namespace

void setKernelCacheCapacity(size_t kernels, Context& context) {
  KernelCache& c = context.state<KernelCache>();
  std::lock_guard<std::mutex> lock(c.mu);
  c.capacity = std::max<size_t>(kernels, 1);
  c.trim();
}

size_t kernelCacheSize(Context& context) {
  KernelCache& c = context.state<KernelCache>();
  std::lock_guard<std::mutex> lock(c.mu);
  return c.entries.size();
}

void compileGroups(const Graph& g, OpKind groupKind, const FuserOptions& opts, std::string_view what,
                   std::string_view symbolPrefix, KernelTable& kernels, FusionReport& report,
                   const std::function<PreparedGroup(const Graph& sub)>& prepare) {
  // One counting view per kernel, so that groups sharing a kernel (an unrolled loop's steps) share it here too.
  std::unordered_map<const CompiledKernel*, std::shared_ptr<const CompiledKernel>> counted;
  // The groups compiled so far by structural hash: a group structurally equal to one of them takes its
  // kernel without being lowered again (Note [Structural equality]; an unrolled loop's thousands of
  // identical groups are lowered once), counted as the kernel cache would count it.
  std::unordered_map<size_t, std::vector<std::pair<const Graph*, std::shared_ptr<const CompiledKernel>>>> seen;
  std::unordered_map<const Graph*, std::shared_ptr<const CompiledKernel>> byBody;
  forEachNode(g.block(), [&](Node* n) {
    if (n->kind() != groupKind) return;
    ++report.groups;
    try {
      const Graph& sub = *n->subgraph();
      std::shared_ptr<const CompiledKernel> k;
      std::vector<std::pair<const Graph*, std::shared_ptr<const CompiledKernel>>>* alike = nullptr;
      if (auto body = byBody.find(&sub); body != byBody.end()) {
        k = body->second;  // a body shared by alike groups (Note [Shared group bodies])
      } else {
        alike = &seen[structuralHash(sub)];
        for (const auto& [other, kernel] : *alike)
          if (structurallyEqual(*other, sub)) k = kernel;
      }
      if (k) {
        ++report.cacheHits;
      } else {
        k = compileOne(sub, opts, symbolPrefix, report, prepare);
        alike->emplace_back(&sub, k);
      }
      byBody.try_emplace(&sub, k);
      auto [it, added] = counted.try_emplace(k.get());
      if (added)
        it->second = std::make_shared<CountedKernel>(k, report.runs, opts.injectKernelError,
                                                     opts.timeKernels ? n->describe() : std::string());
      kernels[n] = it->second;
    } catch (const Error& e) {
      report.warnings.push_back(fmt::format("{} {} runs unfused: {}", what, n->describe(), e.message()));
    }
  });
}

// ---- the registry (fusers.def) ----

#define FUSER(E, NAME, GROUP, FACTORY, USE, HELP) std::unique_ptr<Fuser> FACTORY(const FuserOptions& opts);
#include "fusers/fusers.def"
#undef FUSER

namespace {

struct Registered {
  FuserKind kind;
  std::string_view name;
  OpKind groupOp;
  std::unique_ptr<Fuser> (*make)(const FuserOptions&);
  FuserUse use;
  std::string_view help;
};

constexpr Registered kNone{FuserKind::None, "none", OpKind::FusionGroup, nullptr, FuserUse::Product,
                           "no fusion: the graph's ops run one by one"};

constexpr Registered kFusers[] = {
    kNone,
#define FUSER(E, NAME, GROUP, FACTORY, USE, HELP) {FuserKind::E, NAME, OpKind::GROUP, &FACTORY, FuserUse::USE, HELP},
#include "fusers/fusers.def"
#undef FUSER
};

constexpr FuserKind kKinds[] = {
    FuserKind::None,
#define FUSER(E, NAME, GROUP, FACTORY, USE, HELP) FuserKind::E,
#include "fusers/fusers.def"
#undef FUSER
};

// The enum is generated from the same rows in the same order, so a kind indexes the table.
constexpr bool kindsIndexTheTable() {
  for (size_t i = 0; i < std::size(kFusers); ++i)
    if (static_cast<size_t>(kFusers[i].kind) != i || kKinds[i] != kFusers[i].kind) return false;
  return true;
}
static_assert(kindsIndexTheTable());

const Registered& registered(FuserKind k) { return kFusers[static_cast<size_t>(k)]; }

}  // namespace

std::span<const FuserKind> allFusers() { return kKinds; }

std::vector<FuserKind> kernelFusers() {
  std::vector<FuserKind> out;
  for (const Registered& r : kFusers)
    if (r.make && r.use == FuserUse::Product) out.push_back(r.kind);
  return out;
}

std::string_view fuserName(FuserKind k) { return registered(k).name; }
std::string_view Fuser::name() const { return fuserName(kind()); }
std::string_view fuserHelp(FuserKind k) { return registered(k).help; }
FuserUse fuserUse(FuserKind k) { return registered(k).use; }

FuserKind fuserFromName(std::string_view name) {
  std::vector<std::string> names;
  for (const Registered& r : kFusers) {
    if (r.name == name) return r.kind;
    names.emplace_back(r.name);
  }
  throw Error(fmt::format("unknown fuser '{}'", name), "", fmt::format("fusers: {}", fmt::join(names, ", ")));
}

std::unique_ptr<Fuser> makeFuser(FuserKind kind, const FuserOptions& opts) {
  const Registered& r = registered(kind);
  return r.make ? r.make(opts) : nullptr;
}

bool isFusionGroupOp(OpKind k) {
  for (const Registered& r : kFusers)
    if (r.make && r.groupOp == k) return true;
  return false;
}

}  // namespace gj
