// CUDA graphs: stream capture of a callable's work, instantiation and replay.
#include "runtime/cuda/device.h"

#include "runtime/cuda/driver_api.h"
#include "support/error.h"

#include <fmt/format.h>

#include <optional>
#include <utility>

namespace gj::cuda {

using detail::check;
using detail::driver;

namespace {

// The checks deferred by the work this thread is capturing; null when it captures nothing.
thread_local std::vector<std::function<void()>>* tDeferredChecks = nullptr;

// Relaxed capture mode: the caching allocator may call cuMemAlloc for a block during the capture (the
// block is then the graph's, never freed while it lives), which the stricter modes refuse. Whatever waits
// for the capturing stream (a synchronize, a copy to the host) still fails, and so does the capture.
Result<CUgraph> captureInto(const Stream& stream, const std::function<void()>& work, GraphMemory& memory,
                            std::vector<std::function<void()>>& checks) {
  const auto& api = driver();
  StreamGuard guard(stream);
  check(api.cuStreamBeginCapture(stream.handle(), CU_STREAM_CAPTURE_MODE_RELAXED), "cuStreamBeginCapture");
  std::optional<std::string> failed;
  detail::setCaptureMemory(&memory);
  tDeferredChecks = &checks;
  try {
    work();
  } catch (const std::exception& e) {
    failed = e.what();
  }
  tDeferredChecks = nullptr;
  detail::setCaptureMemory(nullptr);
  CUgraph g = nullptr;
  CUresult r = api.cuStreamEndCapture(stream.handle(), &g);
  if (failed || r != CUDA_SUCCESS) {
    if (g) api.cuGraphDestroy(g);
    return Error(fmt::format("CUDA graph capture failed: {}; work that waits for the host (a synchronize, a copy "
                             "to the host or from pageable host memory) cannot be captured: keep its inputs on "
                             "the device and run it uncaptured once before capturing it",
                             failed ? *failed : "cuStreamEndCapture: " + detail::errorText(r)));
  }
  return g;
}

}  // namespace

bool checkNowOrAfterReplay(const std::function<void()>& check) {
  if (tDeferredChecks) {
    tDeferredChecks->push_back(check);
    return false;
  }
  check();
  return true;
}

std::shared_ptr<GraphMemory> Graph::newMemory() { return std::make_shared<GraphMemory>(); }

Result<Graph> Graph::capture(const Stream& stream, const std::function<void()>& work,
                             std::shared_ptr<GraphMemory> memory) {
  try {
    const auto& api = driver();
    if (!memory) memory = newMemory();
    if (memory->stream && memory->stream != stream.handle())
      return Error("CUDA graph capture: the graphs of one GraphMemory must be captured on one stream");
    memory->stream = stream.handle();
    std::vector<std::function<void()>> checks;
    Result<CUgraph> g = captureInto(stream, work, *memory, checks);
    if (!g) return g.error();
    Graph out;
    out.checks_ = std::move(checks);
    out.stream_ = stream.handle();
    out.memory_ = std::move(memory);
    CUresult r = api.cuGraphGetNodes(g.value(), nullptr, &out.nodes_);
    CUgraphExec exec = nullptr;
    if (r == CUDA_SUCCESS) r = api.cuGraphInstantiateWithFlags(&exec, g.value(), 0);
    api.cuGraphDestroy(g.value());  // the executable graph does not need it
    if (r != CUDA_SUCCESS) return Error(fmt::format("CUDA graph instantiation failed: {}", detail::errorText(r)));
    out.exec_ = exec;
    return out;
  } catch (const Error& e) {
    return e;
  }
}

Graph::Graph(Graph&& other) noexcept
    : exec_(std::exchange(other.exec_, nullptr)), stream_(other.stream_), nodes_(other.nodes_),
      checks_(std::move(other.checks_)), memory_(std::move(other.memory_)) {}

Graph& Graph::operator=(Graph&& other) noexcept {
  std::swap(exec_, other.exec_);
  std::swap(stream_, other.stream_);
  std::swap(nodes_, other.nodes_);
  std::swap(checks_, other.checks_);
  std::swap(memory_, other.memory_);
  return *this;
}

Graph::~Graph() {
  if (exec_) driver().cuGraphExecDestroy(static_cast<CUgraphExec>(exec_));
}

void Graph::replay() const {
  IR_CHECK(exec_) << "replay of a moved-from CUDA graph";
  check(driver().cuGraphLaunch(static_cast<CUgraphExec>(exec_), stream_), "cuGraphLaunch");
}

}  // namespace gj::cuda

namespace gj::cuda {
void Graph::verify() const {
  for (const auto& check : checks_) check();
}
}  // namespace gj::cuda
