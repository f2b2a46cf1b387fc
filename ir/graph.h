#pragma once
// The graph IR: SSA values with use lists, nodes in blocks, one owner (Graph). Edit only through the
// methods here; they keep use lists and block order consistent (STYLE.md, rule 2).
//
// Each Block has a param node (its outputs are the block's inputs) and a return node (its inputs are
// the block's outputs); the nodes between them are in execution order.
#include "ir/op.h"
#include "ir/type.h"
#include "support/arena.h"
#include "support/error.h"

#include <algorithm>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

namespace gj {

class Block;
class Graph;
class Node;

/// The `value` attribute of prim::Constant. monostate: a NoneType constant. The last two come from
/// TorchScript text only: a str (also the `name` attribute of prim::GetAttr, prim::CallMethod and a
/// Function constant, and a Device constant's "cpu") and a float list.
using ConstantValue =
    std::variant<std::monostate, int64_t, double, bool, std::vector<int64_t>, std::string, std::vector<double>>;

struct Use {
  Node* user;
  size_t index;  ///< which input of `user`
  bool operator==(const Use&) const = default;
};

class Value {
 public:
  Node* node() const { return node_; }
  size_t offset() const { return offset_; }
  /// Dense id, unique within the graph: index for per-value tables (interpreter slots).
  size_t id() const { return id_; }
  const Type& type() const { return type_; }
  void setType(Type t) { type_ = std::move(t); }
  /// Every (user, input index) reading this value, in no particular order (Note [Use lists]).
  const std::vector<Use>& uses() const { return uses_; }
  bool hasUses() const { return !uses_.empty(); }
  /// The name given by the builder or the IR text, or "" (the printer then numbers it).
  const std::string& name() const { return name_; }
  /// Sets the name; when another value of the graph has it, a ".N" suffix makes it unique. Returns this.
  Value* setName(std::string name);
  Graph* graph() const;

 private:
  friend class Graph;
  friend class Node;
  template <typename>
  friend class Arena;
  Value(Node* node, size_t offset, size_t id, Type t) : node_(node), offset_(offset), id_(id), type_(std::move(t)) {}
  Node* node_;
  size_t offset_;
  size_t id_;
  Type type_;
  std::string name_;
  std::vector<Use> uses_;
};

class Node {
 public:
  OpKind kind() const { return kind_; }
  const OpInfo& info() const { return opInfo(kind_); }
  std::span<Value* const> inputs() const { return inputs_; }
  std::span<Value* const> outputs() const { return outputs_; }
  std::span<Block* const> blocks() const { return blocks_; }
  Value* input(size_t i) const {
    if (i >= inputs_.size()) [[unlikely]]
      badIndex("input", i, inputs_.size());
    return inputs_[i];
  }
  Value* output(size_t i = 0) const {
    if (i >= outputs_.size()) [[unlikely]]
      badIndex("output", i, outputs_.size());
    return outputs_[i];
  }
  Block* block(size_t i) const {
    if (i >= blocks_.size()) [[unlikely]]
      badIndex("block", i, blocks_.size());
    return blocks_[i];
  }
  Block* owningBlock() const { return owningBlock_; }
  Graph* graph() const { return graph_; }
  Node* next() const { return next_; }
  Node* prev() const { return prev_; }
  /// True when this node is linked into a block (not erased, not yet inserted).
  bool inserted() const { return owningBlock_ != nullptr && next_ != nullptr; }

  void addInput(Value* v);
  void replaceInput(size_t i, Value* v);
  /// Replaces every input equal to `from` with `to`.
  void replaceInputWith(Value* from, Value* to);
  void removeInput(size_t i);
  void removeAllInputs();
  /// Room for `inputs` inputs and `outputs` outputs without growing (create and cloneNode know both).
  void reserve(size_t inputs, size_t outputs);
  /// True when input i's value lists this node's use of it (the verifier's check, O(1)).
  bool inputUseListed(size_t i) const;
  Value* addOutput(Type t = Type::tensor());
  /// A new output at position i (those from i on move one place up).
  Value* insertOutput(size_t i, Type t = Type::tensor());
  /// Removes output i. Pre: it has no uses.
  void eraseOutput(size_t i);
  Block* addBlock();

  /// prim::Constant's value; the `name` attribute (a str) of prim::GetAttr and prim::CallMethod.
  const ConstantValue& constant() const { return constant_; }
  void setConstant(ConstantValue v) { constant_ = std::move(v); }

  /// The body of a subgraph node (prim::DifferentiableGraph, fusion groups): its inputs and outputs
  /// correspond one to one with the node's. nullptr for other nodes.
  const std::shared_ptr<Graph>& subgraph() const { return subgraph_; }
  void setSubgraph(std::shared_ptr<Graph> g) { subgraph_ = std::move(g); }

  /// Where the node came from in IR text (unknown for built nodes).
  const SourceLoc& loc() const { return loc_; }
  void setLoc(SourceLoc loc) { loc_ = std::move(loc); }
  /// The Python source TorchScript's text names in a `# file.py:12:4` comment (unknown otherwise).
  const SourceLoc& pySource() const { return pySource_; }
  void setPySource(SourceLoc loc) { pySource_ = std::move(loc); }
  /// Where `n` stands, in the text and in its Python source: a node that replaces n reports there.
  void setPositionsOf(const Node* n) {
    loc_ = n->loc_;
    pySource_ = n->pySource_;
  }

  /// "node aten::mm at in.ir:3:5" or "node aten::mm (%x = ...)" for error messages.
  std::string describe() const;
  /// An error's where: "in.ir:3:5 (Python source model.py:12:4)", the Python part when known.
  std::string where() const { return loc_.str() + pySource_.pythonNote(); }

  void insertBefore(Node* n);
  void insertAfter(Node* n);
  void moveBefore(Node* n);
  /// True when this node comes earlier than `other` in the same block. Amortized O(1): nodes carry order
  /// keys (below).
  bool isBefore(const Node* other) const {
    if (owningBlock_ != other->owningBlock_) [[unlikely]]
      notSameBlock(other);
    return order_ < other->order_;
  }

 private:
  friend class Graph;
  friend class Block;
  template <typename>
  friend class Arena;
  Node(Graph* g, OpKind k) : graph_(g), kind_(k) {}
  void unlink();
  void dropUse(size_t i);
  [[noreturn]] void badIndex(const char* what, size_t i, size_t size) const;  // the checks above, failed
  [[noreturn]] void notSameBlock(const Node* other) const;

  Graph* graph_;
  OpKind kind_;
  std::vector<Value*> inputs_;
  std::vector<size_t> usePositions_;  // Note [Use lists]
  std::vector<Value*> outputs_;
  std::vector<Block*> blocks_;
  Block* owningBlock_ = nullptr;
  Node* prev_ = nullptr;
  Node* next_ = nullptr;
  // Note [Order keys]: keys increase along a block, so isBefore compares two numbers. An inserted node
  // takes a key between its neighbours' (kOrderStep after its predecessor when appended); where no key
  // fits, the keys of a window around it are spread out (Block::spreadKeys), at once.
  mutable int64_t order_ = 0;
  ConstantValue constant_;
  std::shared_ptr<Graph> subgraph_;
  SourceLoc loc_;
  SourceLoc pySource_;
};

class Block {
 public:
  /// Nodes between the param and return nodes, in order. Safe to erase the current node while iterating
  /// with nodesList() (a snapshot).
  class Iterator {
   public:
    explicit Iterator(Node* n) : n_(n) {}
    Node* operator*() const { return n_; }
    Iterator& operator++() {
      n_ = n_->next();
      return *this;
    }
    bool operator!=(const Iterator& o) const { return n_ != o.n_; }

   private:
    Node* n_;
  };
  Iterator begin() const { return Iterator(param_->next()); }
  Iterator end() const { return Iterator(return_); }
  /// A snapshot of the node list, for loops that erase or move nodes.
  std::vector<Node*> nodesList() const;

  std::span<Value* const> inputs() const { return param_->outputs(); }
  std::span<Value* const> outputs() const { return return_->inputs(); }
  Value* addInput(Type t = Type::tensor(), std::string name = {});
  /// A new input at position i (those from i on move one place up).
  Value* insertInput(size_t i, Type t = Type::tensor(), std::string name = {});
  void eraseInput(size_t i);
  void registerOutput(Value* v);
  void eraseOutput(size_t i);
  Node* paramNode() const { return param_; }
  Node* returnNode() const { return return_; }
  Node* owningNode() const { return owningNode_; }
  Graph* graph() const { return graph_; }
  /// Appends `n` (not yet inserted) at the end of the block. Returns n.
  Node* append(Node* n);

 private:
  friend class Graph;
  friend class Node;
  Block(Graph* g, Node* owner);
  void spreadKeys(Node* at);  // Note [Order keys]
  Graph* graph_;
  Node* owningNode_;
  size_t size_ = 0;  // nodes between the param and return nodes
  Node* param_;
  Node* return_;
};

class Graph {
 public:
  Graph();
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  Block* block() const { return top_; }
  std::span<Value* const> inputs() const { return top_->inputs(); }
  std::span<Value* const> outputs() const { return top_->outputs(); }
  Value* addInput(Type t, std::string name = {}) { return top_->addInput(std::move(t), std::move(name)); }
  void registerOutput(Value* v) { top_->registerOutput(v); }

  /// A new node with `numOutputs` outputs of unknown tensor type, not yet inserted anywhere.
  Node* create(OpKind kind, std::span<Value* const> inputs = {}, size_t numOutputs = 1);
  Node* create(OpKind kind, std::initializer_list<Value*> inputs, size_t numOutputs = 1) {
    return create(kind, std::span<Value* const>(inputs.begin(), inputs.size()), numOutputs);
  }
  /// A prim::Constant node (not inserted) with its output typed from the value.
  Node* createConstant(ConstantValue v);

  /// Removes `n` from its block and drops its uses. Pre: its outputs have no uses.
  void erase(Node* n);

  /// Replaces every use of `from` with `to`.
  /// Given:  %3 = add(%1, %2) ; %4 = tanh(%3)
  /// Call:   g.replaceAllUsesWith(%3, %5)
  /// Result: %3 = add(%1, %2) ; %4 = tanh(%5)     (%3 now unused)
  void replaceAllUsesWith(Value* from, Value* to);
  /// replaceAllUsesWith, and `to` takes from's name when it has none, so the printed graph keeps the
  /// names the user wrote (inlining, CSE, a rewrite that replaces a node).
  void replaceValue(Value* from, Value* to);

  /// One past the largest Value::id() handed out.
  size_t numValueIds() const { return values_.size(); }
  /// The value named `name`, or nullptr.
  Value* findValue(const std::string& name) const;

  /// A deep copy (names, types, constants and locations kept).
  std::unique_ptr<Graph> clone() const;

 private:
  friend class Node;
  friend class Block;
  friend class Value;
  Value* newValue(Node* n, size_t offset, Type t);
  Block* newBlock(Node* owner);

  // Note [Node and value storage]: in arenas, in the order they are made (support/arena.h).
  Arena<Node> nodes_;
  Arena<Value> values_;
  std::vector<std::unique_ptr<Block>> blocks_;
  std::unordered_map<std::string, Value*> names_;
  std::unordered_map<std::string, size_t> suffixHint_;  ///< base name -> every ".N" below it is taken
  Block* top_;
};

/// Values mapped to values: what a copy of nodes keeps, from each value it copied to the copy (cloneNode).
/// Made for a source graph, it holds that graph's values in a table indexed by Value::id() (a copy of a
/// whole graph looks each value up in an array, not a hash table: Note [Dense value maps]); other keys,
/// and every key of a map made without one, are hashed.
class ValueMap {
 public:
  ValueMap() = default;
  explicit ValueMap(const Graph& source) : source_(&source), byId_(source.numValueIds(), nullptr) {}
  /// The value k maps to, or nullptr.
  Value* find(const Value* k) const {
    if (dense(k)) return k->id() < byId_.size() ? byId_[k->id()] : nullptr;
    auto it = hashed_.find(k);
    return it == hashed_.end() ? nullptr : it->second;
  }
  bool contains(const Value* k) const { return find(k) != nullptr; }
  /// The value k maps to, or k itself.
  Value* mapOr(Value* k) const {
    Value* v = find(k);
    return v ? v : k;
  }
  /// The entry of k, nullptr until set.
  Value*& operator[](const Value* k) {
    if (!dense(k)) return hashed_[k];
    if (k->id() >= byId_.size()) byId_.resize(std::max(k->id() + 1, source_->numValueIds()), nullptr);
    return byId_[k->id()];
  }
  /// The value k maps to. Pre: k is mapped.
  Value* at(const Value* k) const;
  void reserve(size_t n) { hashed_.reserve(n); }

 private:
  bool dense(const Value* k) const { return source_ && k->node()->graph() == source_; }
  const Graph* source_ = nullptr;
  std::vector<Value*> byId_;
  std::unordered_map<const Value*, Value*> hashed_;
};

/// A copy of `n` in graph `g` (not inserted), nested blocks and subgraph included. `env` maps the
/// values n uses to their replacements (a value not in env stands for itself); it gains n's outputs
/// and block values. Names and locations are kept (duplicates get ".N" suffixes).
Node* cloneNode(const Node* n, Graph& g, ValueMap& env);
/// Clones the nodes of `src` in front of `before`, mapping through env (which must map src's inputs).
void cloneNodesBefore(const Block* src, Node* before, ValueMap& env);

/// Note [Structural equality]: two graphs are structurally equal when their nodes, in block order, have
/// the same kinds, constants and output types, read the same positions (graph and block inputs, earlier
/// outputs) and return the same ones, their input types agree, and nested blocks and subgraphs are
/// equal in turn. Names and source locations do not count: equal graphs compute the same thing, so
/// anything compiled for one serves the other (the fusers compile an unrolled loop's identical groups
/// once). structuralHash is equal for structurally equal graphs.
bool structurallyEqual(const Graph& a, const Graph& b);
size_t structuralHash(const Graph& g);
/// Whether two constants are the same value: floats compare by their bits, so 0.0 and -0.0 differ (1 / x
/// tells them apart) and a NaN is the same as itself. Every pass that merges or matches constants asks this,
/// never operator==.
bool sameConstant(const ConstantValue& a, const ConstantValue& b);
/// A hash of a constant (equal for constants sameConstant calls the same).
size_t constantHash(const ConstantValue& c);
/// Mixes a type's kind, dtype and sizes into h (as structuralHash does for every value).
void hashType(size_t& h, const Type& t);

/// Type of a constant's output: int, float, bool, int[] or NoneType.
Type constantType(const ConstantValue& v);

/// True for ops whose nodes carry a subgraph (ops.def's Subgraph flag), printed as `name_N(...)` plus a
/// `with name_N = graph` section.
bool opHasSubgraph(OpKind k);

}  // namespace gj
