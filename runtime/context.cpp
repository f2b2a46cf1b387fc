#include "runtime/context.h"

#include "support/environment.h"

namespace gj {

namespace {
// The innermost ContextScope's context on this thread; null outside any.
thread_local Context* tCurrent = nullptr;
}  // namespace

Context::Context() : deterministicConvolutions(environment().cudnnDeterministic == "1") {}

// States made later may hold pointers into those made earlier (a kernel cache's kernels into the LLVM
// session), so they go in the reverse order of their making.
Context::~Context() {
  for (auto it = order_.rbegin(); it != order_.rend(); ++it) states_.erase(*it);
}

const std::shared_ptr<Context>& Context::shared() {
  static const std::shared_ptr<Context>& c = *new std::shared_ptr<Context>(std::make_shared<Context>());
  return c;
}

Context& Context::current() { return tCurrent ? *tCurrent : *shared(); }

// Made outside the lock, so that a state's constructor may ask for another; should two threads make the
// same state at once, the first to finish is kept and the other's is dropped unused.
std::shared_ptr<void> Context::find(std::type_index type, std::shared_ptr<void> (*make)()) {
  {
    std::lock_guard lock(mu_);
    if (auto it = states_.find(type); it != states_.end()) return it->second;
  }
  std::shared_ptr<void> made = make();
  std::lock_guard lock(mu_);
  auto [it, inserted] = states_.emplace(type, std::move(made));
  if (inserted) order_.push_back(type);
  return it->second;
}

ContextScope::ContextScope(Context& context) : previous_(tCurrent) { tCurrent = &context; }
ContextScope::~ContextScope() { tCurrent = previous_; }

}  // namespace gj
