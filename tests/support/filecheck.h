#pragma once
// A small FileCheck for golden IR tests (STYLE.md, rule 11), so CPU-only builds need no LLVM tools.
//
// Directives, one per line of `checks`:
//   CHECK: pat        pat matches on a line at or after the previous match
//   CHECK-NEXT: pat   pat matches on the line right after the previous match
//   CHECK-SAME: pat   pat matches later on the same line as the previous match
//   CHECK-NOT: pat    pat matches no line between the previous match and the next one (or the end)
//   CHECK-LABEL: pat  like CHECK
// In a pattern, text matches literally (runs of spaces match any run of spaces), {{re}} is a regex,
// [[NAME:re]] captures what re matches, and [[NAME]] matches what NAME captured.
#include <gtest/gtest.h>

#include <string>

namespace gj::test {

testing::AssertionResult fileCheck(const std::string& input, const std::string& checks);

}  // namespace gj::test

#define EXPECT_FILECHECK(input, checks) EXPECT_TRUE(::gj::test::fileCheck((input), (checks)))
