#pragma once
// What graphjit keeps between one compile or run and the next, in one object its owner holds: the
// fusers' kernel cache, the LLVM JIT session, the CUDA modules compiled for the device, the runtime's own
// CUDA kernels, and the settings a caller may change at run time. Two Functions with different contexts
// share none of it and run side by side; a tool that needs nothing more uses Context::shared().
//
//   auto ctx = std::make_shared<gj::Context>();
//   gj::Function f(graph, {.fuserOptions = {.context = ctx}});
//
// What stays per process, and why, is listed in docs/ARCHITECTURE.md ("Threads, contexts and process-wide state"):
// the heaps (a tensor outlives the context that made it, and is freed on any thread), the CUDA driver and
// the libraries loaded into the process, and the settings read from the environment at start-up.
#include <atomic>
#include <memory>
#include <mutex>
#include <typeindex>
#include <unordered_map>
#include <utility>
#include <vector>

namespace gj {

class Context {
 public:
  /// A fresh context: nothing compiled, settings from the environment (support/environment.h).
  Context();
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  /// The process's default context, made on first use and never destroyed (kernels it holds may be
  /// released by static destructors that run after it would be).
  static const std::shared_ptr<Context>& shared();
  /// The context the calling thread works in: the innermost ContextScope's, else shared().
  static Context& current();

  /// The state of type T this context keeps, default-constructed on first use, alive while the context
  /// (or a holder of statePtr's pointer) is. Each part of graphjit keeps its caches as a T of its own,
  /// declared beside the code that uses it, so that the context needs to know none of their types.
  template <typename T>
  T& state() {
    return *statePtr<T>();
  }
  template <typename T>
  std::shared_ptr<T> statePtr() {
    return std::static_pointer_cast<T>(find(typeid(T), [] { return std::shared_ptr<void>(std::make_shared<T>()); }));
  }

  /// Whether conv2d on cuDNN, run in this context, takes only deterministic algorithms, which give the
  /// same output and gradients bit for bit on every run (as torch.backends.cudnn.deterministic), or the
  /// one cuDNN ranks fastest, whose weight gradient may sum with atomics in an order that changes between
  /// runs (PyTorch's default, and graphjit's, since the deterministic algorithms are slower; docs/cli.md).
  /// Off unless the environment sets GJ_CUDNN_DETERMINISTIC=1. The im2col + GEMM path is deterministic
  /// either way.
  std::atomic<bool> deterministicConvolutions{false};

 private:
  std::shared_ptr<void> find(std::type_index type, std::shared_ptr<void> (*make)());

  std::mutex mu_;
  std::unordered_map<std::type_index, std::shared_ptr<void>> states_;
  std::vector<std::type_index> order_;  ///< states_ in the order made; destroyed in reverse
};

/// While alive, Context::current() on this thread is `context` (scopes nest). Function::forward and
/// backward open one for their Function's context, so that what the runtime compiles and caches while
/// they run (the unfused path's CUDA kernels, the emulated driver's host builds) is kept there.
class ContextScope {
 public:
  explicit ContextScope(Context& context);
  ~ContextScope();
  ContextScope(const ContextScope&) = delete;
  ContextScope& operator=(const ContextScope&) = delete;

 private:
  Context* previous_;
};

}  // namespace gj
