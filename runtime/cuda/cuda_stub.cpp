// runtime/cuda for builds without CUDA (GJ_WITH_CUDA=OFF): there is never a device, and every request
// says so.
#include "runtime/cuda/cudnn_lstm.h"
#include "runtime/cuda/device.h"
#include "runtime/cuda/ops.h"

#include "support/error.h"

namespace gj::cuda {
namespace {
constexpr const char* kNoCuda = "no CUDA device: this build has no CUDA support (configure with GJ_WITH_CUDA=ON)";
[[noreturn]] void fail() { throw Error(kNoCuda); }
}  // namespace

Result<const DeviceInfo*> device() { return Error(kNoCuda); }
const DeviceInfo& requireDevice() { fail(); }
bool available() { return false; }
std::string nvrtcArch() { fail(); }

Stream::Stream() { fail(); }
Stream::~Stream() = default;
void Stream::synchronize() const { fail(); }
StreamHandle currentStream() { return nullptr; }
void synchronize() { fail(); }
StreamGuard::StreamGuard(const Stream& stream) : previous_(stream.handle()) { fail(); }
StreamGuard::~StreamGuard() = default;
Event::Event() { fail(); }
Event::~Event() = default;
void Event::record() { fail(); }
float Event::elapsedMsSince(const Event&) const { fail(); }

void* deviceAllocate(size_t) { fail(); }
void deviceFree(void*) {}
void releaseDeviceCache() {}
DeviceMemoryStats deviceMemoryStats() { return {}; }
void resetDevicePeak() {}
void copyHostToDevice(void*, const void*, size_t) { fail(); }
void copyDeviceToHost(void*, const void*, size_t) { fail(); }
void copyDeviceToDevice(void*, const void*, size_t) { fail(); }
void fillBytes(void*, unsigned char, size_t) { fail(); }

std::shared_ptr<GraphMemory> Graph::newMemory() { fail(); }
Result<Graph> Graph::capture(const Stream&, const std::function<void()>&, std::shared_ptr<GraphMemory>) {
  return Error(kNoCuda);
}
Graph::Graph(Graph&&) noexcept = default;
Graph& Graph::operator=(Graph&&) noexcept = default;
Graph::~Graph() = default;
void Graph::replay() const { fail(); }
void Graph::verify() const { fail(); }
bool checkNowOrAfterReplay(const std::function<void()>& check) {
  check();
  return true;
}

void Kernel::launch(const LaunchShape&, void**) const { fail(); }
int Kernel::maxThreadsPerBlock() const { fail(); }
int Kernel::blocksPerMultiprocessor(int, size_t) const { fail(); }
Result<Kernel> loadKernel(const std::string&, const std::string&, const std::string&) { return Error(kNoCuda); }
Result<Kernel> compileKernel(const std::string&, const std::string&, Context&) { return Error(kNoCuda); }
KernelCacheStats kernelCacheStats(Context&) { return {}; }

Tensor map(PointwiseOp, const Tensor&, const Tensor&, double, const Tensor&) { fail(); }
Tensor sum(const Tensor&, std::span<const int64_t>, std::span<const int64_t>, double) { fail(); }
Tensor amax(const Tensor&, std::span<const int64_t>, std::span<const int64_t>) { fail(); }
std::pair<Tensor, Tensor> extremeRows(const Tensor&, int64_t, int64_t, bool) { fail(); }
Tensor softmax(const Tensor&, int64_t, bool) { fail(); }
Tensor softmaxBackward(const Tensor&, const Tensor&, int64_t, bool) { fail(); }
Tensor gather(const Tensor&, const Tensor&, int64_t, int64_t, int64_t, const char*) { fail(); }
void scatterAdd(const Tensor&, const Tensor&, int64_t, const Tensor&, int64_t, int64_t, int64_t, double, const char*) {
  fail();
}
void copy(const Tensor&, const Tensor&) { fail(); }
Tensor mapIntegral(PointwiseOp, const Tensor&, const Tensor&, int64_t, const Tensor&) { fail(); }
void fill(const Tensor&, double) { fail(); }
void holdForTiming() { fail(); }
double copyCeilingMs(int64_t) { fail(); }
std::vector<KernelTime>* setReductionTimes(std::vector<KernelTime>* times) { return times; }
Tensor dropout(const Tensor&, double, const Tensor&, int64_t) { fail(); }
Tensor uniform(const Tensor&, const Tensor&, int64_t) { fail(); }
void gemm(DType, bool, bool, int64_t, int64_t, int64_t, double, const void*, int64_t, const void*, int64_t, double,
          void*, int64_t, const GemmBatch&) {
  fail();
}
void im2col(DType, const void*, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
            const ops::Conv2dParams&, void*) {
  fail();
}
void col2im(DType, const void*, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
            const ops::Conv2dParams&, void*) {
  fail();
}
Tensor conv2d(const Tensor&, const Tensor&, const ops::Conv2dParams&, ConvPath) { fail(); }
std::pair<Tensor, Tensor> conv2dBackward(const Tensor&, const Tensor&, const Tensor&, const ops::Conv2dParams&,
                                         ConvPath) {
  fail();
}
std::pair<Tensor, Tensor> maxPool2d(const Tensor&, const ops::Pool2dParams&, int64_t, int64_t) { fail(); }
Tensor maxPool2dBackward(const Tensor&, std::span<const int64_t>, const Tensor&, const ops::Pool2dParams&) { fail(); }
Tensor adaptiveAvgPool2d(const Tensor&, int64_t, int64_t) { fail(); }
Tensor adaptiveAvgPool2dBackward(const Tensor&, std::span<const int64_t>) { fail(); }
const std::string& kernelSource() { fail(); }

struct CudnnLstm::Impl {};
CudnnLstm::CudnnLstm(int64_t, int64_t, int64_t, int64_t, int64_t) { fail(); }
CudnnLstm::~CudnnLstm() = default;
std::vector<Tensor> CudnnLstm::forward(const Tensor&, const Tensor&, const Tensor&, const std::vector<Tensor>&) {
  fail();
}
std::vector<Tensor> CudnnLstm::backward(const Tensor&, const Tensor&, const Tensor&) { fail(); }
std::string cudnnUnavailable() { return kNoCuda; }

}  // namespace gj::cuda
