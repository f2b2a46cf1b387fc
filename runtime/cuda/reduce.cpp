// The unfused path's reductions on CUDA (sums, extremes, softmax) and the timing of runtime kernels
// (graphbench --kernel-bandwidth): launches of kernels.cuh's reduction kernels, shaped from tensors.
#include "runtime/cuda/ops.h"

#include "runtime/context.h"
#include "runtime/cuda/launch.h"
#include "support/environment.h"
#include "support/error.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

namespace gj::cuda {

using namespace detail;

namespace {

thread_local std::vector<KernelTime>* tReductionTimes = nullptr;

// A runtime reduction timed while setReductionTimes has a vector installed: from construction (after
// holding the stream) to destruction, under `name`, moving `bytes`.
class TimedReduction {
 public:
  TimedReduction(std::string name, int64_t bytes) : times_(tReductionTimes), name_(std::move(name)), bytes_(bytes) {
    if (!times_) return;
    holdForTiming();
    start_.emplace().record();
  }
  ~TimedReduction() {
    if (!times_) return;
    Event end;
    end.record();
    addKernelTime(*times_, name_, bytes_, end.elapsedMsSince(*start_));
  }
  TimedReduction(const TimedReduction&) = delete;
  TimedReduction& operator=(const TimedReduction&) = delete;

 private:
  std::vector<KernelTime>* times_;
  std::string name_;
  int64_t bytes_;
  std::optional<Event> start_;
};

int64_t bytesOf(const Tensor& t) { return t.defined() ? t.numel() * static_cast<int64_t>(dtypeSize(t.dtype())) : 0; }

// Dimensions of sizes x strides, merged where one steps over the next as one run, and those of size 1
// dropped: the same elements in the same row-major order, with fewer index divisions in the kernels.
void mergeDims(Shape& sizes, Shape& strides) {
  Shape s, st;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 1) continue;
    if (!s.empty() && st.back() == strides[d] * sizes[d]) {
      s.back() *= sizes[d];
      st.back() = strides[d];
    } else {
      s.push_back(sizes[d]);
      st.push_back(strides[d]);
    }
  }
  sizes = std::move(s);
  strides = std::move(st);
}

int64_t smallestStride(const Shape& strides) {
  int64_t least = std::numeric_limits<int64_t>::max();
  for (int64_t s : strides) least = std::min(least, std::abs(s));
  return least;
}

// A launch of one of kernels.cuh's reductions: blocks of GJ_REDUCE_THREADS enough for `units` units under
// `schedule`, up to a few blocks per multiprocessor (each block's rounds take the rest).
template <typename Args>
void launchReduction(const char* entry, int schedule, int64_t units, Args& args) {
  if (units <= 0) return;
  const int64_t perBlock = schedule == GJ_WARPS ? GJ_REDUCE_WARPS : schedule == GJ_BLOCKS ? 1 : 32;
  const int64_t most = int64_t{requireDevice().multiprocessors} * 16;
  const int64_t blocks = std::clamp<int64_t>((units + perBlock - 1) / perBlock, 1, std::max<int64_t>(most, 1));
  void* params[] = {&args};
  kernel(entry).launch({.grid = {static_cast<unsigned>(blocks), 1, 1}, .block = {GJ_REDUCE_THREADS, 1, 1}}, params);
}

// A warp a unit up to this many elements, else a block.
constexpr int64_t kWarpUnitMost = 1024;

int rowSchedule(int64_t n) { return n <= kWarpUnitMost ? GJ_WARPS : GJ_BLOCKS; }

// sum(), sumInDouble() and amax(): gj_reduce (kernels.cuh), adding or taking the maximum; with y, the
// products x * y are summed. Outputs whose elements are contiguous get a warp or a block each; outputs that
// are themselves contiguous (a bias gradient over the batch) go 32 to a block. A long reduction into too
// few units to fill the device is split into runs folded apart, then folded again in a second launch.
Tensor reduce(const Tensor& x0, const Tensor& y0, std::span<const int64_t> keptSizes,
              std::span<const int64_t> outSizes, double scale, bool max, DType outType) {
  const char* what = max ? "CUDA amax" : "CUDA sum";
  Tensor x = onDevice(x0, what), y;
  if (y0.defined()) {  // gj_reduce reads both at one offset: both row-major
    y = onDevice(y0, what).contiguous();
    USER_CHECK(y.sizes() == x.sizes() && y.dtype() == x.dtype(),
               "{}: the factors of a sum of products must match, got {} {} and {} {}", what, dtypeName(x.dtype()),
               shapeStr(x.sizes()), dtypeName(y.dtype()), shapeStr(y.sizes()));
    x = x.contiguous();
  }
  USER_CHECK(static_cast<int64_t>(keptSizes.size()) == x.dim(), "{}: kept sizes {} for a tensor {}", what,
             shapeStr(keptSizes), shapeStr(x.sizes()));
  // Split x's dimensions into the kept ones (walked per output) and the reduced ones (summed).
  Shape kept, reduced, keptStrides, reducedStrides;
  for (int64_t d = 0; d < x.dim(); ++d) {
    const bool folds = keptSizes[d] == 1 && x.size(d) != 1;
    (folds ? reduced : kept).push_back(x.size(d));
    (folds ? reducedStrides : keptStrides).push_back(x.stride(d));
  }
  mergeDims(kept, keptStrides);
  mergeDims(reduced, reducedStrides);
  Tensor out = Tensor::empty(Shape(outSizes.begin(), outSizes.end()), outType, DeviceKind::Cuda);
  const TimedReduction timed(fmt::format("{} {} -> {}", what, shapeStr(x.sizes()), shapeStr(outSizes)),
                             bytesOf(x) + bytesOf(y) + bytesOf(out));
  GjSumArgs p{};
  p.kept = shapeOf(kept);
  p.reduced = shapeOf(reduced);
  std::copy(keptStrides.begin(), keptStrides.end(), p.skept.strides);
  std::copy(reducedStrides.begin(), reducedStrides.end(), p.sreduced.strides);
  const int64_t outputs = p.kept.numel, n = p.reduced.numel;
  if (outputs == 0) return out;
  p.type = static_cast<int>(x.dtype());
  p.outType = static_cast<int>(outType);
  p.max = max;
  p.schedule = smallestStride(keptStrides) < smallestStride(reducedStrides) ? GJ_COLUMNS : rowSchedule(n);
  p.in = x.rawData();
  p.in2 = y.defined() ? y.rawData() : nullptr;
  p.scale = scale;
  // Splits: enough units for 4 blocks a multiprocessor, each run 4096 elements at least.
  constexpr int64_t kRunLeast = 4096;
  const int64_t perBlock = p.schedule == GJ_WARPS ? GJ_REDUCE_WARPS : p.schedule == GJ_BLOCKS ? 1 : 32;
  const int64_t blocks = (outputs + perBlock - 1) / perBlock, wanted = int64_t{requireDevice().multiprocessors} * 4;
  p.splits = blocks >= wanted ? 1 : std::clamp<int64_t>(std::min((wanted + blocks - 1) / blocks, n / kRunLeast), 1, 1024);
  p.chunk = std::max<int64_t>((n + p.splits - 1) / p.splits, 1);
  if (p.splits == 1) {
    p.out = out.rawData();
    launchReduction("gj_reduce", p.schedule, outputs, p);
    return out;
  }
  p.splits = (n + p.chunk - 1) / p.chunk;
  Tensor partial = Tensor::empty({outputs * p.splits}, DType::Float64, DeviceKind::Cuda);
  p.out = partial.rawData();
  launchReduction("gj_reduce", p.schedule, outputs * p.splits, p);
  // The runs' folds: output-major, or run-major under GJ_COLUMNS.
  const bool columns = p.schedule == GJ_COLUMNS;
  p.in = partial.rawData();
  p.in2 = nullptr;
  p.type = GJ_F64;
  p.reduced = shapeOf(Shape{p.splits});
  p.sreduced.strides[0] = columns ? outputs : 1;
  p.kept = shapeOf(Shape{outputs});
  p.skept.strides[0] = columns ? 1 : p.splits;
  p.schedule = columns ? GJ_COLUMNS : rowSchedule(p.splits);
  p.chunk = p.splits;
  p.splits = 1;
  p.out = out.rawData();
  launchReduction("gj_reduce", p.schedule, outputs, p);
  return out;
}

}  // namespace

Tensor sum(const Tensor& x, std::span<const int64_t> keptSizes, std::span<const int64_t> outSizes, double scale) {
  return reduce(x, {}, keptSizes, outSizes, scale, false, x.dtype());
}

Tensor sumInDouble(const Tensor& x, const Tensor& y, std::span<const int64_t> keptSizes,
                   std::span<const int64_t> outSizes, double scale) {
  return reduce(x, y, keptSizes, outSizes, scale, false, DType::Float64);
}

Tensor amax(const Tensor& x, std::span<const int64_t> keptSizes, std::span<const int64_t> outSizes) {
  return reduce(x, {}, keptSizes, outSizes, 1.0, true, x.dtype());
}

std::pair<Tensor, Tensor> extremeRows(const Tensor& x0, int64_t rows, int64_t n, bool min) {
  Tensor x = onDevice(x0, "aten::max").contiguous();
  USER_CHECK(isFloating(x.dtype()) && x.numel() == rows * n, "extremeRows: {} rows of {} float elements expected, got {} {}",
             rows, n, dtypeName(x.dtype()), shapeStr(x.sizes()));
  Tensor values = Tensor::empty({rows}, x.dtype(), DeviceKind::Cuda);
  Tensor indices = Tensor::empty({rows}, DType::Int64, DeviceKind::Cuda);
  const TimedReduction timed(fmt::format("CUDA {} of {} rows of {}", min ? "min" : "max", rows, n),
                             bytesOf(x) + bytesOf(values) + bytesOf(indices));
  GjRowsArgs a{};
  a.rows = rows;
  a.n = n;
  a.type = static_cast<int>(x.dtype());
  a.min = min;
  a.schedule = rowSchedule(n);
  a.in = x.rawData();
  a.values = values.rawData();
  a.indices = static_cast<gj_i64*>(indices.rawData());
  launchReduction("gj_extreme_rows", a.schedule, rows, a);
  return {values, indices};
}

// softmax() and softmaxBackward(): gj_softmax over x viewed [outer, n, inner], a warp or a block a row when
// the rows are contiguous (inner 1), else 32 neighbouring rows a block; a warp's row (up to 1024 elements)
// held in registers by gj_softmax_rows*.
static Tensor softmaxRows(const Tensor& in, const Tensor& y, int64_t dim, bool log, const char* what) {
  USER_CHECK(isFloating(in.dtype()), "{}: expected a float tensor, got {}", what, dtypeName(in.dtype()));
  const int64_t d = in.dim() == 0 ? 0 : wrapDim(dim, in.dim());
  const int64_t n = in.dim() == 0 ? 1 : in.size(d);
  int64_t outer = 1, inner = 1;
  for (int64_t k = 0; k < d; ++k) outer *= in.size(k);
  for (int64_t k = d + 1; k < in.dim(); ++k) inner *= in.size(k);
  Tensor out = Tensor::empty(in.sizes(), in.dtype(), DeviceKind::Cuda);
  const TimedReduction timed(fmt::format("{} {} dim {}", what, shapeStr(in.sizes()), d),
                             bytesOf(in) + bytesOf(y) + bytesOf(out));
  GjSoftmaxArgs a{};
  a.outer = outer;
  a.n = n;
  a.inner = inner;
  a.type = static_cast<int>(in.dtype());
  a.log = log;
  a.backward = y.defined();
  a.schedule = inner > 1 ? GJ_COLUMNS : rowSchedule(n);
  a.in = in.rawData();
  a.y = y.defined() ? y.rawData() : nullptr;
  a.out = out.rawData();
  // Rows a warp holds in registers: kernels of their own (kernels.cuh), by the elements a lane holds.
  const char* entry = "gj_softmax";
  if (a.schedule == GJ_WARPS && inner == 1 && n <= 32 * GJ_SOFTMAX_LANE_MOST) {
    const bool f32 = in.dtype() == DType::Float32;
    entry = n <= 32 * GJ_SOFTMAX_LANE_FEW ? (f32 ? "gj_softmax_rows4_f32" : "gj_softmax_rows4_f64")
                                           : (f32 ? "gj_softmax_rows32_f32" : "gj_softmax_rows32_f64");
  }
  if (n > 0) launchReduction(entry, a.schedule, outer * inner, a);
  return out;
}

Tensor softmax(const Tensor& x, int64_t dim, bool log) {
  const char* what = log ? "CUDA log_softmax" : "CUDA softmax";
  return softmaxRows(onDevice(x, what).contiguous(), Tensor(), dim, log, what);
}

Tensor softmaxBackward(const Tensor& g, const Tensor& y, int64_t dim, bool log) {
  const char* what = log ? "CUDA log_softmax_backward" : "CUDA softmax_backward";
  Tensor gc = onDevice(g, what).contiguous(), yc = onDevice(y, what).contiguous();
  USER_CHECK(gc.sizes() == yc.sizes() && gc.dtype() == yc.dtype(), "{}: a gradient {} {} for an output {} {}", what,
             dtypeName(gc.dtype()), shapeStr(gc.sizes()), dtypeName(yc.dtype()), shapeStr(yc.sizes()));
  return softmaxRows(gc, yc, dim, log, what);
}


std::vector<KernelTime>* setReductionTimes(std::vector<KernelTime>* times) {
  return std::exchange(tReductionTimes, times);
}

namespace {
// What timing keeps in a context (Context::state): holdForTiming's buffer, written to push the operands
// out of L2, and copyCeilingMs's copies timed so far, by bytes.
struct TimingState {
  std::mutex evictMutex, knownMutex;
  Tensor evict;
  std::map<int64_t, double> known;
};
}  // namespace

// holdForTiming's spin when $GJ_KERNEL_TIMING_HOLD_US does not say: far longer than a launch's host work.
constexpr double kTimingHoldMicroseconds = 200;

void holdForTiming() {
  static const double microseconds = [] {
    const std::optional<std::string> v = environment().kernelTimingHoldUs;
    return v ? std::atof(v->c_str()) : kTimingHoldMicroseconds;
  }();
  const DeviceInfo& d = requireDevice();
  if (d.emulated || microseconds <= 0) return;
  // One buffer a context, twice the L2 (64 MiB where the driver does not say), its contents never read.
  TimingState& state = Context::current().state<TimingState>();
  Tensor evict;
  {
    const std::lock_guard lock(state.evictMutex);
    if (!state.evict.defined())
      state.evict = Tensor::empty({static_cast<int64_t>(std::max<size_t>(2 * d.l2Bytes, size_t{64} << 20) / 4)},
                                  DType::Float32, DeviceKind::Cuda);
    evict = state.evict;
  }
  fill(evict, 1.0);
  const int64_t cycles = static_cast<int64_t>(microseconds * 1e-3 * (d.clockKHz > 0 ? d.clockKHz : 2'000'000));
  void* params[] = {const_cast<int64_t*>(&cycles)};
  kernel("gj_hold").launch({.grid = {1, 1, 1}, .block = {1, 1, 1}}, params);
}

double copyCeilingMs(int64_t bytes) {
  if (requireDevice().emulated || bytes <= 1) return 0;
  TimingState& state = Context::current().state<TimingState>();
  const std::lock_guard lock(state.knownMutex);
  std::map<int64_t, double>& known = state.known;
  if (auto it = known.find(bytes); it != known.end()) return it->second;
  const int64_t half = bytes / 2;
  Tensor from = Tensor::empty({half}, DType::Bool, DeviceKind::Cuda), to = Tensor::empty({half}, DType::Bool, DeviceKind::Cuda);
  fillBytes(from.rawData(), 1, static_cast<size_t>(half));
  std::vector<double> ms;
  for (int run = 0; run < 5; ++run) {
    holdForTiming();
    Event start, end;
    start.record();
    copyDeviceToDevice(to.rawData(), from.rawData(), static_cast<size_t>(half));
    end.record();
    ms.push_back(end.elapsedMsSince(start));
  }
  std::nth_element(ms.begin(), ms.begin() + 2, ms.end());
  return known[bytes] = ms[2];
}


}  // namespace gj::cuda
