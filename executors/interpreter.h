#pragma once
// The reference interpreter: runs a verified graph node by node on CPU tensors with the runtime's
// unfused kernels. It is the oracle every fuser and executor is compared against.
#include "ir/graph.h"
#include "runtime/ivalue.h"

#include <vector>

namespace gj {

class Interpreter {
 public:
  /// Pre: verify(g) passes. The graph must outlive the interpreter.
  explicit Interpreter(const Graph& g) : g_(g) {}
  /// Runs the graph on `inputs` (one per graph input, in order). Inputs whose graph type is known are
  /// checked against it (dtype, rank, sizes); a mismatch or a failing kernel is a gj::Error naming the
  /// input or node.
  std::vector<IValue> run(std::vector<IValue> inputs) const;

 private:
  const Graph& g_;
};

/// Checks `v` against a graph input's declared type; throws gj::Error naming the input.
void checkInputType(const Value* input, const IValue& v);

}  // namespace gj
