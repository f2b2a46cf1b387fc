#pragma once
// GraphBuilder: appends nodes at an insertion point, with typed helpers for constants, lists and loops.
//
//   Graph g;  GraphBuilder b(g);
//   Value* x = g.addInput(Type::tensor(DType::Float32, {3, 4}), "x");
//   Value* y = b.op(OpKind::Tanh, {x});
//   g.registerOutput(y);
#include "ir/graph.h"

#include <initializer_list>
#include <vector>

namespace gj {

class GraphBuilder {
 public:
  explicit GraphBuilder(Graph& g) : g_(g), block_(g.block()) {}
  Graph& graph() const { return g_; }
  Block* block() const { return block_; }
  void setInsertionBlock(Block* b) { block_ = b; }

  /// Appends `kind(inputs)` with one output of type `out`; returns the output.
  Value* op(OpKind kind, std::initializer_list<Value*> inputs, Type out = Type::tensor());
  Value* op(OpKind kind, const std::vector<Value*>& inputs, Type out = Type::tensor());
  /// Appends a node with `numOutputs` outputs of type `out`.
  Node* node(OpKind kind, const std::vector<Value*>& inputs, size_t numOutputs, Type out = Type::tensor());

  /// A prim::Constant, pooled: one node per distinct value, placed at the top of the graph.
  Value* constant(ConstantValue v);
  Value* i(int64_t v) { return constant(v); }
  Value* f(double v) { return constant(v); }
  Value* b(bool v) { return constant(v); }
  Value* ints(std::vector<int64_t> v) { return constant(std::move(v)); }
  Value* none() { return constant(std::monostate{}); }

  Value* list(const std::vector<Value*>& xs, TypeKind listKind = TypeKind::TensorList);
  std::vector<Value*> unpack(Value* list, size_t n);
  Value* getItem(Value* list, int64_t index, Type out = Type::tensor());

  /// A prim::Loop under construction: the builder inserts into `body` until endLoop().
  struct Loop {
    Node* node;
    Block* body;
    Value* index;                  ///< the iteration number, an int
    std::vector<Value*> carried;   ///< the body's parameters for the carried values
    Block* outer;
  };
  Loop beginLoop(Value* tripCount, const std::vector<Value*>& init);
  /// Closes the loop: the body returns (true, next...); returns the loop's outputs.
  std::vector<Value*> endLoop(Loop& loop, const std::vector<Value*>& next);

 private:
  Graph& g_;
  Block* block_;
  Node* lastConstant_ = nullptr;
  std::vector<std::pair<ConstantValue, Value*>> pool_;
};

}  // namespace gj
