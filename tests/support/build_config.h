#pragma once
// What a build configuration leaves out (GJ_WITH_LLVM, GJ_WITH_ONEDNN), for tests that need it: they skip
// with the reason, so every configuration's suite passes (scripts/build --cuda-only has neither).
#include <gtest/gtest.h>

namespace gj::test {
#ifdef GJ_WITH_LLVM
constexpr bool kHaveLlvm = true;
#else
constexpr bool kHaveLlvm = false;
#endif
#ifdef GJ_WITH_ONEDNN
constexpr bool kHaveOnednn = true;
#else
constexpr bool kHaveOnednn = false;
#endif
}  // namespace gj::test

#define SKIP_WITHOUT_LLVM() \
  if (!::gj::test::kHaveLlvm) GTEST_SKIP() << "built without LLVM (GJ_WITH_LLVM=OFF)"
#define SKIP_WITHOUT_ONEDNN() \
  if (!::gj::test::kHaveOnednn) GTEST_SKIP() << "built without oneDNN (GJ_WITH_ONEDNN=OFF)"
