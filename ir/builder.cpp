#include "ir/builder.h"

namespace gj {

Node* GraphBuilder::node(OpKind kind, const std::vector<Value*>& inputs, size_t numOutputs, Type out) {
  Node* n = g_.create(kind, inputs, 0);
  for (size_t k = 0; k < numOutputs; ++k) n->addOutput(out);
  return block_->append(n);
}

Value* GraphBuilder::op(OpKind kind, const std::vector<Value*>& inputs, Type out) {
  return node(kind, inputs, 1, std::move(out))->output();
}

Value* GraphBuilder::op(OpKind kind, std::initializer_list<Value*> inputs, Type out) {
  return op(kind, std::vector<Value*>(inputs), std::move(out));
}

Value* GraphBuilder::constant(ConstantValue v) {
  for (const auto& [value, out] : pool_)
    if (sameConstant(value, v)) return out;
  Node* c = g_.createConstant(v);
  c->insertAfter(lastConstant_ ? lastConstant_ : g_.block()->paramNode());
  lastConstant_ = c;
  pool_.emplace_back(std::move(v), c->output());
  return c->output();
}

Value* GraphBuilder::list(const std::vector<Value*>& xs, TypeKind listKind) {
  return op(OpKind::ListConstruct, xs, Type::of(listKind));
}

std::vector<Value*> GraphBuilder::unpack(Value* list, size_t n) {
  Node* u = node(OpKind::ListUnpack, {list}, n);
  return {u->outputs().begin(), u->outputs().end()};
}

Value* GraphBuilder::getItem(Value* list, int64_t index, Type out) {
  return op(OpKind::GetItem, {list, i(index)}, std::move(out));
}

GraphBuilder::Loop GraphBuilder::beginLoop(Value* tripCount, const std::vector<Value*>& init) {
  std::vector<Value*> ins = {tripCount, b(true)};
  ins.insert(ins.end(), init.begin(), init.end());
  Node* n = node(OpKind::Loop, ins, 0);
  Block* body = n->addBlock();
  Loop l{n, body, body->addInput(Type::of(TypeKind::Int)), {}, block_};
  for (Value* v : init) l.carried.push_back(body->addInput(v->type()));
  block_ = body;
  return l;
}

std::vector<Value*> GraphBuilder::endLoop(Loop& loop, const std::vector<Value*>& next) {
  IR_CHECK(next.size() == loop.carried.size()) << "endLoop: " << next.size() << " values for "
                                               << loop.carried.size() << " carried";
  loop.body->registerOutput(b(true));
  for (Value* v : next) loop.body->registerOutput(v);
  block_ = loop.outer;
  std::vector<Value*> outs;
  for (Value* v : next) outs.push_back(loop.node->addOutput(v->type()));
  return outs;
}

}  // namespace gj
