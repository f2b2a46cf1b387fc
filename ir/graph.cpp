#include "ir/graph.h"

#include <algorithm>
#include <unordered_map>

namespace gj {

// Note [Order keys]: the gap an appended node leaves after its predecessor, and the return node's key.
constexpr int64_t kOrderStep = int64_t{1} << 20;
constexpr int64_t kOrderEnd = int64_t{1} << 62;

Type constantType(const ConstantValue& v) {
  switch (v.index()) {
    case 0: return Type::of(TypeKind::None);
    case 1: return Type::of(TypeKind::Int);
    case 2: return Type::of(TypeKind::Float);
    case 3: return Type::of(TypeKind::Bool);
    case 4: return Type::of(TypeKind::IntList);
    case 5: return Type::of(TypeKind::Str);
    default: return Type::of(TypeKind::FloatList);
  }
}

bool opHasSubgraph(OpKind k) {
  return k == OpKind::DifferentiableGraph || k == OpKind::FallbackGraph || k == OpKind::FusionGroup ||
         k == OpKind::TensorExprGroup;
}

// ---- Value ----

Graph* Value::graph() const { return node_->graph(); }

// A name's base (the text before a numeric ".N" suffix) and N (0 without one).
static std::pair<std::string, size_t> splitSuffix(const std::string& name) {
  size_t dot = name.rfind('.');
  if (dot == std::string::npos || dot + 1 == name.size() || name.size() - dot > 18 ||
      !std::all_of(name.begin() + dot + 1, name.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return {name, 0};
  return {name.substr(0, dot), std::stoull(name.substr(dot + 1))};
}

Value* Value::setName(std::string name) {
  Graph* g = graph();
  if (!name_.empty()) {
    g->names_.erase(name_);
    // Keep Graph::suffixHint_ a lower bound of the free suffixes.
    auto [base, k] = splitSuffix(name_);
    if (auto it = g->suffixHint_.find(base); k > 0 && it != g->suffixHint_.end() && k < it->second) it->second = k;
  }
  if (name.empty()) {
    name_.clear();
    return this;
  }
  if (g->names_.count(name)) {
    // Keep the base and take the smallest free suffix, searching from the hint: every suffix below it is
    // taken, so copying a value N times costs N lookups, not N^2 / 2.
    std::string base = splitSuffix(name).first;
    size_t& hint = g->suffixHint_.try_emplace(base, 1).first->second;
    for (size_t k = hint;; ++k) {
      std::string candidate = base + "." + std::to_string(k);
      if (!g->names_.count(candidate)) {
        name = candidate;
        hint = k + 1;
        break;
      }
    }
  }
  name_ = name;
  g->names_[name_] = this;
  return this;
}

// ---- Node ----

Value* Node::input(size_t i) const {
  IR_CHECK(i < inputs_.size()) << "input " << i << " of " << describe() << " which has " << inputs_.size();
  return inputs_[i];
}

Value* Node::output(size_t i) const {
  IR_CHECK(i < outputs_.size()) << "output " << i << " of " << describe() << " which has " << outputs_.size();
  return outputs_[i];
}

Block* Node::block(size_t i) const {
  IR_CHECK(i < blocks_.size()) << "block " << i << " of " << describe();
  return blocks_[i];
}

void Node::addInput(Value* v) {
  v->uses_.push_back({this, inputs_.size()});
  inputs_.push_back(v);
}

void Node::dropUse(size_t i) {
  auto& uses = inputs_[i]->uses_;
  auto it = std::find(uses.begin(), uses.end(), Use{this, i});
  IR_CHECK(it != uses.end()) << "use list of %" << inputs_[i]->name() << " lacks input " << i << " of " << describe();
  uses.erase(it);
}

void Node::replaceInput(size_t i, Value* v) {
  dropUse(i);
  inputs_[i] = v;
  v->uses_.push_back({this, i});
}

void Node::replaceInputWith(Value* from, Value* to) {
  for (size_t i = 0; i < inputs_.size(); ++i)
    if (inputs_[i] == from) replaceInput(i, to);
}

void Node::removeInput(size_t i) {
  dropUse(i);
  // Later inputs shift down by one: fix their use indices.
  for (size_t j = i + 1; j < inputs_.size(); ++j)
    for (Use& u : inputs_[j]->uses_)
      if (u.user == this && u.index == j) {
        --u.index;
        break;
      }
  inputs_.erase(inputs_.begin() + i);
}

void Node::removeAllInputs() {
  for (size_t i = 0; i < inputs_.size(); ++i) dropUse(i);
  inputs_.clear();
}

Value* Node::addOutput(Type t) {
  Value* v = graph_->newValue(this, outputs_.size(), std::move(t));
  outputs_.push_back(v);
  return v;
}

Value* Node::insertOutput(size_t i, Type t) {
  IR_CHECK(i <= outputs_.size()) << "inserting output " << i << " of " << describe();
  Value* v = graph_->newValue(this, i, std::move(t));
  outputs_.insert(outputs_.begin() + i, v);
  for (size_t j = i + 1; j < outputs_.size(); ++j) outputs_[j]->offset_ = j;
  return v;
}
void Node::eraseOutput(size_t i) {
  Value* v = output(i);
  IR_CHECK(!v->hasUses()) << "erasing output " << i << " of " << describe() << " which still has uses";
  v->setName("");
  outputs_.erase(outputs_.begin() + i);
  for (size_t j = i; j < outputs_.size(); ++j) outputs_[j]->offset_ = j;
}

Block* Node::addBlock() {
  Block* b = graph_->newBlock(this);
  blocks_.push_back(b);
  return b;
}

std::string Node::describe() const {
  const std::string py = pySource_.pythonNote();
  if (loc_.known()) return fmt::format("node {} at {}{}", info().name, loc_.str(), py);
  std::string outs;
  for (Value* v : outputs_) outs += (outs.empty() ? "%" : ", %") + (v->name().empty() ? std::to_string(v->id()) : v->name());
  return fmt::format("node {}{}{}", info().name, outs.empty() ? "" : " (defining " + outs + ")", py);
}

void Node::insertBefore(Node* n) {
  IR_CHECK(!inserted()) << describe() << " is already in a block";
  IR_CHECK(n->owningBlock_ && n->prev_) << "insertBefore: target is not in a block or is a param node";
  owningBlock_ = n->owningBlock_;
  prev_ = n->prev_;
  next_ = n;
  prev_->next_ = this;
  n->prev_ = this;
  // Note [Order keys]: after the predecessor by a step when that leaves room, else halfway.
  const int64_t lo = prev_->order_, hi = n->order_;
  if (hi - lo > kOrderStep)
    order_ = lo + kOrderStep;
  else if (hi - lo > 1)
    order_ = lo + (hi - lo) / 2;
  else
    owningBlock_->orderStale_ = true;
}

void Node::insertAfter(Node* n) {
  IR_CHECK(n->next_) << "insertAfter: target is not in a block or is a return node";
  insertBefore(n->next_);
}

void Node::unlink() {
  if (prev_) prev_->next_ = next_;
  if (next_) next_->prev_ = prev_;
  prev_ = next_ = nullptr;
  owningBlock_ = nullptr;
}

void Node::moveBefore(Node* n) {
  unlink();
  insertBefore(n);
}

bool Node::isBefore(const Node* other) const {
  IR_CHECK(owningBlock_ == other->owningBlock_) << "isBefore across blocks";
  if (owningBlock_->orderStale_) owningBlock_->renumber();
  return order_ < other->order_;
}

// ---- Block ----

Block::Block(Graph* g, Node* owner) : graph_(g), owningNode_(owner) {
  auto p = std::unique_ptr<Node>(new Node(g, OpKind::Param));
  auto r = std::unique_ptr<Node>(new Node(g, OpKind::Return));
  param_ = p.get();
  return_ = r.get();
  param_->owningBlock_ = return_->owningBlock_ = this;
  param_->next_ = return_;
  return_->prev_ = param_;
  param_->order_ = 0;
  return_->order_ = kOrderEnd;
  g->nodes_.push_back(std::move(p));
  g->nodes_.push_back(std::move(r));
}

std::vector<Node*> Block::nodesList() const {
  std::vector<Node*> out;
  for (Node* n : *this) out.push_back(n);
  return out;
}

Value* Block::addInput(Type t, std::string name) {
  Value* v = param_->addOutput(std::move(t));
  if (!name.empty()) v->setName(std::move(name));
  return v;
}

Value* Block::insertInput(size_t i, Type t, std::string name) {
  Value* v = param_->insertOutput(i, std::move(t));
  if (!name.empty()) v->setName(std::move(name));
  return v;
}
void Block::eraseInput(size_t i) { param_->eraseOutput(i); }
void Block::registerOutput(Value* v) { return_->addInput(v); }
void Block::eraseOutput(size_t i) { return_->removeInput(i); }

void Block::renumber() const {
  int64_t key = 0;
  for (Node* n = param_; n != return_; n = n->next_) {
    n->order_ = key;
    key += kOrderStep;
  }
  IR_CHECK(key < kOrderEnd) << "a block of over 2^42 nodes";
  orderStale_ = false;
}

Node* Block::append(Node* n) {
  n->insertBefore(return_);
  return n;
}

// ---- Graph ----

Graph::Graph() { top_ = newBlock(nullptr); }
Graph::~Graph() = default;

Value* Graph::newValue(Node* n, size_t offset, Type t) {
  values_.push_back(std::unique_ptr<Value>(new Value(n, offset, values_.size(), std::move(t))));
  return values_.back().get();
}

Block* Graph::newBlock(Node* owner) {
  blocks_.push_back(std::unique_ptr<Block>(new Block(this, owner)));
  return blocks_.back().get();
}

Node* Graph::create(OpKind kind, std::span<Value* const> inputs, size_t numOutputs) {
  nodes_.push_back(std::unique_ptr<Node>(new Node(this, kind)));
  Node* n = nodes_.back().get();
  for (Value* v : inputs) n->addInput(v);
  for (size_t i = 0; i < numOutputs; ++i) n->addOutput();
  return n;
}

Node* Graph::createConstant(ConstantValue v) {
  Node* n = create(OpKind::Constant);
  n->output()->setType(constantType(v));
  n->setConstant(std::move(v));
  return n;
}

void Graph::erase(Node* n) {
  for (Value* v : n->outputs())
    IR_CHECK(!v->hasUses()) << "erasing " << n->describe() << " whose output is still used";
  for (Block* b : n->blocks()) {
    b->return_->removeAllInputs();
    std::vector<Node*> inner = b->nodesList();  // users before producers
    for (auto it = inner.rbegin(); it != inner.rend(); ++it) erase(*it);
  }
  n->removeAllInputs();
  for (Value* v : n->outputs()) v->setName("");
  n->unlink();
}

void Graph::replaceAllUsesWith(Value* from, Value* to) {
  IR_CHECK(from != to) << "replaceAllUsesWith a value with itself";
  std::vector<Use> uses = from->uses();
  for (const Use& u : uses) u.user->replaceInput(u.index, to);
}

void Graph::replaceValue(Value* from, Value* to) {
  if (to->name().empty() && !from->name().empty()) {
    std::string name = from->name();
    from->setName("");
    to->setName(std::move(name));
  }
  replaceAllUsesWith(from, to);
}

Value* Graph::findValue(const std::string& name) const {
  auto it = names_.find(name);
  return it == names_.end() ? nullptr : it->second;
}

static Value* mapped(const ValueMap& env, Value* v) {
  auto it = env.find(v);
  return it == env.end() ? v : it->second;
}

Node* cloneNode(const Node* n, Graph& g, ValueMap& env) {
  std::vector<Value*> ins;
  for (Value* v : n->inputs()) ins.push_back(mapped(env, v));
  Node* c = g.create(n->kind(), ins, 0);
  c->setConstant(n->constant());
  c->setPositionsOf(n);
  if (n->subgraph()) c->setSubgraph(n->subgraph()->clone());
  for (Value* o : n->outputs()) {
    Value* co = c->addOutput(o->type());
    if (!o->name().empty()) co->setName(o->name());
    env[o] = co;
  }
  for (const Block* b : n->blocks()) {
    Block* nb = c->addBlock();
    for (Value* in : b->inputs()) env[in] = nb->addInput(in->type(), in->name());
    for (const Node* inner : *b) nb->append(cloneNode(inner, g, env));
    for (Value* out : b->outputs()) nb->registerOutput(mapped(env, out));
  }
  return c;
}

void cloneNodesBefore(const Block* src, Node* before, ValueMap& env) {
  for (const Node* n : *src) cloneNode(n, *before->graph(), env)->insertBefore(before);
}

std::unique_ptr<Graph> Graph::clone() const {
  auto g = std::make_unique<Graph>();
  ValueMap env;
  for (Value* in : inputs()) env[in] = g->addInput(in->type(), in->name());
  for (const Node* n : *top_) g->top_->append(cloneNode(n, *g, env));
  for (Value* out : outputs()) g->registerOutput(env.at(out));
  return g;
}

}  // namespace gj
