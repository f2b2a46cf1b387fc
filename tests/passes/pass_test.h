#pragma once
// What the pass tests (tests/passes/, one file per pass) share: golden tests, one behaviour each, that
// parse IR, run one pass, FileCheck the printed result, and check that the interpreter computes the same
// before and after on random inputs.
#include "executors/interpreter.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "passes/batch_mm.h"
#include "passes/pass_manager.h"
#include "passes/canonicalize.h"
#include "passes/contiguous_operands.h"
#include "passes/create_autodiff_subgraphs.h"
#include "passes/requires_grad.h"
#include "passes/unroll_loops.h"
#include "models/lstm.h"
#include "tests/support/filecheck.h"
#include "tests/support/reference.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <sstream>

namespace gj::test {

// Random values for the graph's inputs: tensors from their (complete) types; ints from `ints` in order.
inline std::vector<IValue> randomFor(const Graph& g, uint64_t seed, std::vector<int64_t> ints = {}) {
  std::vector<IValue> in;
  size_t nextInt = 0;
  for (const Value* v : g.inputs()) {
    const Type& t = v->type();
    if (t.kind == TypeKind::Int) {
      in.push_back(ints.at(nextInt++));
    } else {
      in.push_back(Tensor::rand(*t.sizes, t.dtype.value_or(DType::Float64), seed++, 0.1, 1.0));
    }
  }
  return in;
}

// Runs `pass` on the IR, checks the printed result, and compares interpreter results before and after.
inline std::unique_ptr<Graph> checkPass(const std::string& ir, const std::string& pass, const std::string& checks,
                                 bool expectChange = true, std::vector<int64_t> ints = {}) {
  auto before = parseIR(ir);
  auto after = before->clone();
  PassOptions opts;
  opts.verifyEach = true;
  auto rec = runPasses(*after, std::vector<std::string>{pass}, opts);
  EXPECT_EQ(rec[0].changed, expectChange) << pass;
  std::string text = printIR(*after);
  EXPECT_FILECHECK(text, checks);
  auto in = randomFor(*before, 7, ints);
  auto a = Interpreter(*before).run(in);
  auto b = Interpreter(*after).run(in);
  EXPECT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size() && i < b.size(); ++i)
    if (a[i].isTensor()) {
      EXPECT_LE(relError(b[i].toTensor(), a[i].toTensor()), 1e-12) << "output " << i;
    }
  return after;
}

}  // namespace gj::test
