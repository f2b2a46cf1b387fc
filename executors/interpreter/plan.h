#pragma once
// Note [Run plans]: what a run derives from a graph's structure alone, made once per graph and kept in
// the executor's RunPlanCache. A batch-1 LSTM step is a few microseconds of work, and an interpreter that
// finds its way through the IR on every run spends more than that on cache misses: a node's operand list,
// each operand's Value for its id, a frame slot per id ever handed out (passes leave thousands of dead
// ids; each frame built and destroyed all of them). So each value the graph holds gets a dense slot, and
// each block becomes a flat array of instructions, one per node, holding the slots of the node's operands
// and results and of the values whose last use it is (Frame::runBlock drops those once the node has run,
// so a long unrolled graph holds only what is still to be read rather than every value until the frame
// ends; a block's outputs are kept, its caller reads them), and the kernel that runs it.
#include "executors/interpreter.h"

#include <limits>
#include <mutex>
#include <unordered_map>

namespace gj::interp {

class Frame;
class Operands;

/// Runs the frame's running node on its operands (executors/interpreter/kernels.h).
using Kernel = void (*)(Frame& f, const Node* n, const Operands& in);

inline constexpr uint32_t kNoSlot = std::numeric_limits<uint32_t>::max();

struct Instr {
  const Node* node;
  OpKind kind;     // node's (dispatch without a miss on the node)
  Kernel kernel;   // kernelFor(kind)
  // aten::mm: many products share its right operand, so it is packed once per run (sharesRightOperand);
  // aten::contiguous: only such products read its result (see Frame::handsOverUncopied).
  bool shared = false;
  const uint32_t* ins;    // slots of node's operands
  const uint32_t* outs;   // of its results
  const uint32_t* drops;  // of the values to drop after it
  uint32_t numIns, numOuts, numDrops;
};

/// A running node's operands, read in place from the frame's slots (nothing copied: the node writes only
/// its own results' slots, and the frame's slots do not move while it runs), with accessors that name the
/// op in their messages when an operand is not of the kind the op takes.
class Operands {
 public:
  Operands(const IValue* env, const Instr& ins)
      : env_(env), slots_(ins.ins), size_(ins.numIns), op_(opInfo(ins.kind).name.data()) {}
  const IValue& operator[](size_t i) const { return env_[slots_[i]]; }
  size_t size() const { return size_; }
  /// The op's name, for messages.
  const char* op() const { return op_; }
  /// These operands from `from` on.
  Operands from(size_t first) const { return Operands(env_, slots_ + first, size_ - first, op_); }
  std::vector<IValue> copy() const {
    std::vector<IValue> xs;
    xs.reserve(size_);
    for (size_t i = 0; i < size_; ++i) xs.push_back((*this)[i]);
    return xs;
  }

  const Tensor& tensor(size_t i) const { return (*this)[i].toTensor(op_); }
  /// A Tensor? operand: None is an undefined tensor.
  Tensor optionalTensor(size_t i) const { return (*this)[i].isNone() ? Tensor() : tensor(i); }
  int64_t integer(size_t i) const { return (*this)[i].toInt(op_); }
  const std::vector<int64_t>& ints(size_t i) const { return (*this)[i].toIntList(op_); }

  class Iterator {
   public:
    Iterator(const IValue* env, const uint32_t* slot) : env_(env), slot_(slot) {}
    const IValue& operator*() const { return env_[*slot_]; }
    Iterator& operator++() {
      ++slot_;
      return *this;
    }
    bool operator!=(const Iterator& o) const { return slot_ != o.slot_; }

   private:
    const IValue* env_;
    const uint32_t* slot_;
  };
  Iterator begin() const { return {env_, slots_}; }
  Iterator end() const { return {env_, slots_ + size_}; }

 private:
  Operands(const IValue* env, const uint32_t* slots, size_t size, const char* op)
      : env_(env), slots_(slots), size_(size), op_(op) {}
  const IValue* env_;
  const uint32_t* slots_;
  size_t size_;
  const char* op_;
};

struct BlockPlan {
  std::vector<Instr> instrs;
  std::vector<uint32_t> slots;  // what the instructions point into
};

struct GraphPlan {
  std::vector<uint32_t> slotOf;  // by Value::id(); kNoSlot for ids the graph no longer holds
  uint32_t numSlots = 0;
  std::unordered_map<const Block*, BlockPlan> blocks;
  // The graph's inputs (slot and declared type: a backward graph takes hundreds, each Value a cache miss
  // away) and its outputs' slots.
  std::vector<uint32_t> inputSlots, outputSlots;
  std::vector<Type> inputTypes;
  std::vector<bool> outputMoves;  // the last output reading its slot takes the value (a frame ends there)
  // The outputs hold slots 0 to n - 1, in order, to the end of the run: the frame's slot vector cut to
  // them is the result, where moving each out cost as much again as storing it (a forward graph that
  // saves values for its backward returns hundreds). When they are distinct values of the top block (an
  // input among them).
  bool outputsFirst = false;
};

GraphPlan makeGraphPlan(const Graph& g);

}  // namespace gj::interp

namespace gj {

struct RunPlanCache::Impl {
  const interp::GraphPlan& plan(const Graph& g);
  std::mutex mu;
  std::unordered_map<const Graph*, std::unique_ptr<const interp::GraphPlan>> plans;  // stable addresses
};

}  // namespace gj
