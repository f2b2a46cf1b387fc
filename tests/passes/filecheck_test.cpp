// Tests of the FileCheck helper the pass tests check their output with.
#include "tests/passes/pass_test.h"

namespace gj {
namespace {

using test::checkPass;
using test::randomFor;

TEST(FileCheck, MatchesInOrderAndRejectsWhatIsAbsent) {
  std::string text = "%a = tanh(%x)\n%b = sigmoid(%a)\nreturn (%b)\n";
  EXPECT_TRUE(test::fileCheck(text, "CHECK: %[[A:.*]] = tanh\nCHECK-NEXT: sigmoid(%[[A]])\nCHECK-NOT: relu"));
  EXPECT_FALSE(test::fileCheck(text, "CHECK: sigmoid\nCHECK: tanh"));        // order matters
  EXPECT_FALSE(test::fileCheck(text, "CHECK: tanh\nCHECK-NEXT: return"));    // not the next line
  EXPECT_FALSE(test::fileCheck(text, "CHECK: tanh\nCHECK-NOT: sigmoid\nCHECK: return"));
  EXPECT_FALSE(test::fileCheck(text, "CHECK: %[[A:.*]] = tanh\nCHECK: relu(%[[A]])"));
  EXPECT_TRUE(test::fileCheck(text, "CHECK: %b = {{[a-z]+}}(%a)"));
  EXPECT_THROW(test::fileCheck(text, "CHECK-COUNT: tanh"), std::runtime_error);
}

}  // namespace
}  // namespace gj
