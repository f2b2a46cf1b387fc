#pragma once
// A table of one entry per op (a shape rule, an interpreter kernel), assembled from the rows that the
// file of each ops.def group lists, and checked as it is made: every op has exactly one entry, and it
// comes from the file of its own group. A new row of ops.def without an entry fails the table's first
// use, and so every test: the check a `-Werror=switch` gave the switches these tables replaced.
#include "ir/op.h"
#include "support/error.h"

#include <array>
#include <span>

namespace gj {

inline constexpr size_t kOpCount = 0
#define OP(E, NAME, IN, OUT, GROUP, FLAGS, SCHEMA) +1
#include "ir/ops.def"
#undef OP
    ;

template <typename F>
class OpTable {
 public:
  struct Row {
    OpKind op;
    F entry;
  };

  /// `what` names an entry in messages ("shape rule"); `folder` is where the group files are.
  OpTable(const char* what, const char* folder) : what_(what), folder_(folder) {}

  /// Adds op's entry from `file`, which holds the entries of `group`.
  void add(OpKind op, F entry, OpGroupKind group, const char* file) {
    const OpInfo& info = opInfo(op);
    IR_CHECK(info.group == group) << info.name << "'s " << what_ << " is in " << folder_ << file
                                  << ", not in the file of its ops.def group";
    F& slot = entries_[static_cast<size_t>(op)];
    IR_CHECK(!slot) << info.name << " has two " << what_ << "s";
    slot = entry;
  }
  void add(std::span<const Row> rows, OpGroupKind group, const char* file) {
    for (const Row& r : rows) add(r.op, r.entry, group, file);
  }
  /// The table, once every op has its entry.
  const OpTable& complete() const {
    for (const OpInfo& info : allOps())
      IR_CHECK(entries_[static_cast<size_t>(info.kind)]) << info.name << " has no " << what_ << " (" << folder_ << ")";
    return *this;
  }
  F operator[](OpKind k) const { return entries_[static_cast<size_t>(k)]; }

 private:
  const char* what_;
  const char* folder_;
  std::array<F, kOpCount> entries_{};
};

}  // namespace gj
