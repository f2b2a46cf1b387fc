// The recording fuser: a fuser that exists to show the registry (fusers.def) is the only place a fuser
// is named. It fuses nothing and records the ops it is shown, so every plan it makes runs op by op and
// must agree with the unfused one; the differential and executor tests run it as they run every row.
#include "fusers/fuser.h"
#include "passes/util.h"
#include "support/error.h"

#include <fmt/format.h>

#include <map>
#include <mutex>

namespace gj {
namespace {

class RecordingFuser final : public Fuser {
 public:
  FuserKind kind() const override { return FuserKind::Recording; }
  OpKind groupOp() const override { return OpKind::FusionGroup; }

  // Counts the graph's ops by kind (nested blocks included) and leaves the graph as it is.
  int64_t fuse(Graph& g) override {
    std::lock_guard lock(mutex_);
    forEachNode(g.block(), [&](Node* n) { ++seen_[n->kind()]; });
    return 0;
  }
  void compile(const Graph&, KernelTable&, FusionReport&) override {}

  std::string whyNotFused(const Node* n) const override {
    std::lock_guard lock(mutex_);
    auto it = seen_.find(n->kind());
    if (it == seen_.end()) return "the recording fuser fuses nothing; it records the ops it is shown";
    return fmt::format("the recording fuser fuses nothing; it was shown {} {} node(s)", it->second, n->info().name);
  }
  std::string emit(const Node* group, const std::string&) const override { throw noGroups(group); }
  std::string emitElementFunction(const Node* group, const std::string&) const override { throw noGroups(group); }
  KernelCost cost(const Node* group, int) const override { throw noGroups(group); }

 private:
  static Error noGroups(const Node* group) {
    return Error(fmt::format("the recording fuser makes no groups, so it has no code for {}", group->describe()));
  }

  mutable std::mutex mutex_;
  std::map<OpKind, int64_t> seen_;
};

}  // namespace

std::unique_ptr<Fuser> makeRecordingFuser(const FuserOptions&) { return std::make_unique<RecordingFuser>(); }

}  // namespace gj
