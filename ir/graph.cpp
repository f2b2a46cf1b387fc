#include "ir/graph.h"

#include "support/hash.h"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <unordered_map>

namespace gj {

// Note [Order keys]: the gap an appended node leaves after its predecessor, and the return node's key.
constexpr int64_t kOrderStep = int64_t{1} << 20;
constexpr int64_t kOrderEnd = int64_t{1} << 62;
constexpr int64_t kMinOrderGap = int64_t{1} << 10;

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

bool opHasSubgraph(OpKind k) { return opInfo(k).hasSubgraph(); }

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

void Node::badIndex(const char* what, size_t i, size_t size) const {
  IR_CHECK(false) << what << " " << i << " of " << describe() << " which has " << size;
  std::abort();  // not reached: a failed IR_CHECK does not return
}

void Node::notSameBlock(const Node* other) const {
  IR_CHECK(false) << "isBefore across blocks: " << describe() << " and " << other->describe();
  std::abort();
}

void Node::addInput(Value* v) {
  usePositions_.push_back(v->uses_.size());
  v->uses_.push_back({this, inputs_.size()});
  inputs_.push_back(v);
}

// Note [Use lists]: input i's use sits at usePositions_[i] in its value's list; removing it moves the
// list's last use into its place, so a use goes in O(1) however many uses its value has (a constant
// every add of a 20-layer LSTM reads). A use list is therefore in no particular order.
void Node::dropUse(size_t i) {
  auto& uses = inputs_[i]->uses_;
  const size_t at = usePositions_[i];
  IR_CHECK(at < uses.size() && uses[at] == (Use{this, i}))
      << "use list of %" << inputs_[i]->name() << " lacks input " << i << " of " << describe();
  const Use last = uses.back();
  uses[at] = last;
  last.user->usePositions_[last.index] = at;
  uses.pop_back();
}

void Node::reserve(size_t inputs, size_t outputs) {
  inputs_.reserve(inputs);
  usePositions_.reserve(inputs);
  outputs_.reserve(outputs);
}

bool Node::inputUseListed(size_t i) const {
  const auto& uses = inputs_[i]->uses_;
  return usePositions_[i] < uses.size() && uses[usePositions_[i]] == Use{const_cast<Node*>(this), i};
}

void Node::replaceInput(size_t i, Value* v) {
  dropUse(i);
  inputs_[i] = v;
  usePositions_[i] = v->uses_.size();
  v->uses_.push_back({this, i});
}

void Node::replaceInputWith(Value* from, Value* to) {
  for (size_t i = 0; i < inputs_.size(); ++i)
    if (inputs_[i] == from) replaceInput(i, to);
}

void Node::removeInput(size_t i) {
  dropUse(i);
  // Later inputs shift down by one: so do the indices their uses record.
  for (size_t j = i + 1; j < inputs_.size(); ++j) --inputs_[j]->uses_[usePositions_[j]].index;
  inputs_.erase(inputs_.begin() + i);
  usePositions_.erase(usePositions_.begin() + i);
}

void Node::removeAllInputs() {
  for (size_t i = 0; i < inputs_.size(); ++i) dropUse(i);
  inputs_.clear();
  usePositions_.clear();
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
  ++owningBlock_->size_;
  // Note [Order keys]: after the predecessor by a step when that leaves room, else halfway, else the
  // keys around are spread out.
  const int64_t lo = prev_->order_, hi = n->order_;
  if (hi - lo > kOrderStep)
    order_ = lo + kOrderStep;
  else if (hi - lo > 1)
    order_ = lo + (hi - lo) / 2;
  else
    owningBlock_->spreadKeys(this);
}

void Node::insertAfter(Node* n) {
  IR_CHECK(n->next_) << "insertAfter: target is not in a block or is a return node";
  insertBefore(n->next_);
}

void Node::unlink() {
  if (owningBlock_) --owningBlock_->size_;
  if (prev_) prev_->next_ = next_;
  if (next_) next_->prev_ = prev_;
  prev_ = next_ = nullptr;
  owningBlock_ = nullptr;
}

void Node::moveBefore(Node* n) {
  unlink();
  insertBefore(n);
}

// ---- Block ----

Block::Block(Graph* g, Node* owner) : graph_(g), owningNode_(owner) {
  param_ = g->nodes_.make(g, OpKind::Param);
  return_ = g->nodes_.make(g, OpKind::Return);
  param_->owningBlock_ = return_->owningBlock_ = this;
  param_->next_ = return_;
  return_->prev_ = param_;
  param_->order_ = 0;
  return_->order_ = kOrderEnd;
}

std::vector<Node*> Block::nodesList() const {
  std::vector<Node*> out;
  out.reserve(size_);
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

// Note [Order keys]: no key fits between `at`'s neighbours. The window of nodes around it doubles until
// the keys just outside it leave kMinOrderGap per node inside, and the window's keys are spread evenly
// over that range: a node inserted again at the same place finds room for a while, and the cost is the
// window, not the block (the block's ends are 0 and kOrderEnd, so a window reaching them always fits).
void Block::spreadKeys(Node* at) {
  Node* first = at;
  Node* last = at;
  int64_t count = 1;
  for (int64_t want = 16;; want *= 2) {
    while (count < want && (first->prev_ != param_ || last->next_ != return_)) {
      if (first->prev_ != param_) {
        first = first->prev_;
        ++count;
      }
      if (count < want && last->next_ != return_) {
        last = last->next_;
        ++count;
      }
    }
    const int64_t lo = first->prev_->order_, hi = last->next_->order_;
    const int64_t gap = (hi - lo) / (count + 1);
    if (gap >= kMinOrderGap || (first->prev_ == param_ && last->next_ == return_)) {
      IR_CHECK(gap > 0) << "a block of over 2^62 nodes";
      int64_t key = lo;
      for (Node* n = first;; n = n->next_) {
        n->order_ = key += gap;
        if (n == last) break;
      }
      return;
    }
  }
}

Node* Block::append(Node* n) {
  n->insertBefore(return_);
  return n;
}

// ---- Graph ----

Graph::Graph() { top_ = newBlock(nullptr); }
Graph::~Graph() = default;

Value* Graph::newValue(Node* n, size_t offset, Type t) {
  return values_.make(n, offset, values_.size(), std::move(t));
}

Block* Graph::newBlock(Node* owner) {
  blocks_.push_back(std::unique_ptr<Block>(new Block(this, owner)));
  return blocks_.back().get();
}

Node* Graph::create(OpKind kind, std::span<Value* const> inputs, size_t numOutputs) {
  Node* n = nodes_.make(this, kind);
  n->reserve(inputs.size(), numOutputs);
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
  for (const Use& u : from->uses_) {
    u.user->inputs_[u.index] = to;
    u.user->usePositions_[u.index] = to->uses_.size();
    to->uses_.push_back(u);
  }
  from->uses_.clear();
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

// Note [Dense value maps]
// Copies of whole graphs (Graph::clone, the forward graph of differentiate, the guarded graph's fast path,
// a region as large as its block) map every value once and look each up once per use. Through a hash
// table each value costs a node allocation, a hash and a share of the rehashes; a map made for its source
// graph indexes an array by Value::id() instead (ids are dense within a graph). Keys of other graphs (an
// outer value a copied block reads) still hash, and a map for a few values of a large graph (a small
// fusion region) is made without a source, so it does not allocate an entry per value of the whole graph.
Value* ValueMap::at(const Value* k) const {
  Value* v = find(k);
  IR_CHECK(v) << "ValueMap: value %" << k->name() << " is not mapped";
  return v;
}

Node* cloneNode(const Node* n, Graph& g, ValueMap& env) {
  Node* c = g.create(n->kind(), {}, 0);
  c->reserve(n->inputs().size(), n->outputs().size());
  for (Value* v : n->inputs()) c->addInput(env.mapOr(v));
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
    for (Value* out : b->outputs()) nb->registerOutput(env.mapOr(out));
  }
  return c;
}

void cloneNodesBefore(const Block* src, Node* before, ValueMap& env) {
  for (const Node* n : *src) cloneNode(n, *before->graph(), env)->insertBefore(before);
}

std::unique_ptr<Graph> Graph::clone() const {
  auto g = std::make_unique<Graph>();
  ValueMap env(*this);
  g->names_.reserve(names_.size());
  for (Value* in : inputs()) env[in] = g->addInput(in->type(), in->name());
  for (const Node* n : *top_) g->top_->append(cloneNode(n, *g, env));
  for (Value* out : outputs()) g->registerOutput(env.at(out));
  return g;
}

bool sameConstant(const ConstantValue& a, const ConstantValue& b) {
  auto bits = [](double d) { return std::bit_cast<uint64_t>(d); };
  if (a.index() != b.index()) return false;
  if (const auto* x = std::get_if<double>(&a)) return bits(*x) == bits(std::get<double>(b));
  if (const auto* xs = std::get_if<std::vector<double>>(&a)) {
    const auto& ys = std::get<std::vector<double>>(b);
    return std::ranges::equal(*xs, ys, [&](double x, double y) { return bits(x) == bits(y); });
  }
  return a == b;
}

size_t constantHash(const ConstantValue& c) {
  size_t h = c.index();
  std::visit([&](const auto& v) {
    using T = std::decay_t<decltype(v)>;
    if constexpr (std::is_same_v<T, std::vector<int64_t>> || std::is_same_v<T, std::vector<double>>) {
      for (auto x : v) hashMix(h, std::hash<typename T::value_type>{}(x));
    } else if constexpr (!std::is_same_v<T, std::monostate>) {
      hashMix(h, std::hash<T>{}(v));
    }
  }, c);
  return h;
}

void hashType(size_t& h, const Type& t) {
  hashMix(h, static_cast<size_t>(t.kind));
  hashMix(h, t.dtype ? static_cast<size_t>(*t.dtype) + 1 : 0);
  if (t.sizes)
    for (int64_t d : *t.sizes) hashMix(h, static_cast<size_t>(d));
}

// ---- structural equality (Note [Structural equality]) ----

namespace {

// Pairs each value of graph a with its counterpart in graph b as the walk defines them; a value read
// before the walk defined it (impossible in a verified graph) pairs with nothing and fails the match.
class StructureMatch {
 public:
  explicit StructureMatch(const Graph& a) : pair_(a.numValueIds(), nullptr) {}

  bool block(const Block* a, const Block* b) {
    if (!define(a->inputs(), b->inputs())) return false;
    const Node* m = b->paramNode()->next();
    for (const Node* n : *a) {
      if (m == b->returnNode() || !node(n, m)) return false;
      m = m->next();
    }
    return m == b->returnNode() && read(a->outputs(), b->outputs());
  }

 private:
  bool node(const Node* a, const Node* b) {
    if (a->kind() != b->kind() || a->blocks().size() != b->blocks().size() ||
        !sameConstant(a->constant(), b->constant()) || !read(a->inputs(), b->inputs()) ||
        !define(a->outputs(), b->outputs()))
      return false;
    if (static_cast<bool>(a->subgraph()) != static_cast<bool>(b->subgraph()) ||
        (a->subgraph() && !structurallyEqual(*a->subgraph(), *b->subgraph())))
      return false;
    for (size_t i = 0; i < a->blocks().size(); ++i)
      if (!block(a->blocks()[i], b->blocks()[i])) return false;
    return true;
  }
  bool define(std::span<Value* const> a, std::span<Value* const> b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i]->type() != b[i]->type()) return false;
      pair_[a[i]->id()] = b[i];
    }
    return true;
  }
  bool read(std::span<Value* const> a, std::span<Value* const> b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (pair_[a[i]->id()] != b[i]) return false;
    return true;
  }

  std::vector<const Value*> pair_;  // by a's value id
};

// Kinds, arities, types and the positions each node reads (numbered as the walk defines values).
void hashBlock(size_t& h, const Block* b, std::vector<size_t>& position, size_t& next) {
  for (const Value* v : b->inputs()) {
    hashType(h, v->type());
    position[v->id()] = next++;
  }
  for (const Node* n : *b) {
    hashMix(h, static_cast<size_t>(n->kind()));
    hashMix(h, constantHash(n->constant()));
    for (const Value* v : n->inputs()) hashMix(h, position[v->id()]);
    for (const Value* v : n->outputs()) {
      hashType(h, v->type());
      position[v->id()] = next++;
    }
    if (n->subgraph()) hashMix(h, structuralHash(*n->subgraph()));
    for (const Block* inner : n->blocks()) hashBlock(h, inner, position, next);
  }
  for (const Value* v : b->outputs()) hashMix(h, position[v->id()]);
}

}  // namespace

bool structurallyEqual(const Graph& a, const Graph& b) { return StructureMatch(a).block(a.block(), b.block()); }

size_t structuralHash(const Graph& g) {
  std::vector<size_t> position(g.numValueIds(), 0);
  size_t h = 0, next = 1;
  hashBlock(h, g.block(), position, next);
  return h;
}

}  // namespace gj
