#include "tests/random_graph.h"

#include "ir/builder.h"
#include "ir/verifier.h"
#include "runtime/ops/ops.h"

#include <cmath>
#include <random>
#include <utility>
#include <vector>

namespace gj::test {

namespace {

class Generator {
 public:
  explicit Generator(uint64_t seed) : rng_(seed), g_(std::make_unique<Graph>()), b_(*g_) {}

  std::unique_ptr<Graph> run() {
    rows_ = pick(1, 4);
    cols_ = 2 * pick(1, 5);  // even, so chunk(2) applies
    int inputs = pick(2, 4);
    for (int i = 0; i < inputs; ++i) {
      std::vector<int64_t> shape = full();
      switch (i == 0 ? 3 : pick(0, 3)) {  // input 0 has the full shape
        case 0: shape = {cols_}; break;       // broadcasts over rows
        case 1: shape = {rows_, 1}; break;    // broadcasts over columns
        default: break;
      }
      pool_.push_back({g_->addInput(Type::tensor(DType::Float64, shape), "x" + std::to_string(i)), shape});
    }
    weight_ = g_->addInput(Type::tensor(DType::Float64, {cols_, cols_}), "w");
    int ops = pick(3, 12);
    for (int i = 0; i < ops; ++i) step();
    // The last value, and sometimes another one.
    g_->registerOutput(pool_.back().v);
    if (pick(0, 1)) g_->registerOutput(pool_[pick(0, static_cast<int>(pool_.size()) - 2)].v);
    verifyOrThrow(*g_, "randomGraph");
    return std::move(g_);
  }

 private:
  struct Val {
    Value* v;
    std::vector<int64_t> shape;
  };
  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  std::vector<int64_t> full() const { return {rows_, cols_}; }
  Val any() { return pool_[pick(0, static_cast<int>(pool_.size()) - 1)]; }
  Val anyFull() {
    for (int tries = 0; tries < 8; ++tries) {
      Val v = any();
      if (v.shape == full()) return v;
    }
    // Broadcast something to the full shape (input 0 has it).
    Val v = any();
    return {b_.op(OpKind::Add, {v.v, b_.op(OpKind::Mul, {pool_[0].v, b_.f(0.0)}), b_.i(1)}), full()};
  }
  void push(Value* v, std::vector<int64_t> shape) { pool_.push_back({v, std::move(shape)}); }
  static std::vector<int64_t> broadcast(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
    std::vector<int64_t> out(std::max(a.size(), b.size()));
    for (size_t i = 0; i < out.size(); ++i) {
      int64_t da = i < out.size() - a.size() ? 1 : a[i - (out.size() - a.size())];
      int64_t db = i < out.size() - b.size() ? 1 : b[i - (out.size() - b.size())];
      out[i] = std::max(da, db);
    }
    return out;
  }

  void step() {
    Val a = any(), c = any();
    switch (pick(0, 13)) {
      case 0: {  // a unary pointwise op, any of ops.def's with a gradient: a new one is tested here with no change
                 // to this file
        // Each with the first of three domains where it is finite (the CPU reference asked once): any value
        // (tanh), sigmoid(a) + 1.5 in [1.5, 2.5] (log, sqrt), sigmoid(a) - 0.5 in (-0.5, 0.5) (asin, acos),
        // each well conditioned there.
        static const std::vector<std::pair<OpKind, int>> unary = [] {
          std::vector<std::pair<OpKind, int>> ks;
          const std::vector<double> probes[] = {{-2.0, -0.5, 0.5, 2.0}, {1.5, 2.5}, {-0.5, 0.5}};
          for (const OpInfo& op : allOps()) {
            if (op.pointwise < 0 || op.numInputs != 1 || !op.differentiable()) continue;
            for (int domain = 0; domain < 3; ++domain) {
              const std::vector<double>& p = probes[domain];
              Tensor y = ops::pointwise(*op.pointwiseOp(), Tensor::fromVector({static_cast<int64_t>(p.size())}, p, DType::Float64));
              bool finite = true;
              for (int64_t j = 0; j < y.numel(); ++j) finite = finite && std::isfinite(y.item(j));
              if (!finite) continue;
              ks.emplace_back(op.kind, domain);
              break;
            }
          }
          return ks;
        }();
        auto [k, domain] = unary[pick(0, static_cast<int>(unary.size()) - 1)];
        Value* x = a.v;
        if (domain > 0) x = b_.op(OpKind::Add, {b_.op(OpKind::Sigmoid, {a.v}), b_.f(domain == 1 ? 1.5 : -0.5), b_.i(1)});
        push(b_.op(k, {x}), a.shape);
        return;
      }
      case 1:  // exp of a damped value
        push(b_.op(OpKind::Exp, {b_.op(OpKind::Mul, {a.v, b_.f(0.25)})}), a.shape);
        return;
      case 2:
      case 3: {  // add / sub with alpha, broadcasting
        OpKind k = pick(0, 1) ? OpKind::Add : OpKind::Sub;
        Value* alpha = pick(0, 1) ? b_.i(1) : b_.f(0.5);
        push(b_.op(k, {a.v, c.v, alpha}), broadcast(a.shape, c.shape));
        return;
      }
      case 4:  // mul, broadcasting
        push(b_.op(OpKind::Mul, {a.v, c.v}), broadcast(a.shape, c.shape));
        return;
      case 5: {  // a safe division: a / (1 + c * c)
        Value* den = b_.op(OpKind::Add, {b_.op(OpKind::Mul, {c.v, c.v}), b_.f(1.0), b_.i(1)});
        push(b_.op(OpKind::Div, {a.v, den}), broadcast(a.shape, c.shape));
        return;
      }
      case 6: {  // chunk along the columns, one piece, re-concatenated with the other
        Val f = anyFull();
        auto parts = b_.unpack(b_.op(OpKind::Chunk, {f.v, b_.i(2), b_.i(1)}, Type::of(TypeKind::TensorList)), 2);
        Value* x = b_.op(OpKind::Tanh, {parts[0]});
        push(b_.op(OpKind::Cat, {b_.list({parts[1], x}), b_.i(1)}), full());
        return;
      }
      case 7: {  // a reduction over rows, kept, then broadcast back
        Val f = anyFull();
        Value* s = b_.op(OpKind::SumDim, {f.v, b_.ints({0}), b_.b(true)});
        push(b_.op(OpKind::Mul, {f.v, b_.op(OpKind::Sigmoid, {s})}), full());
        return;
      }
      case 8: {  // a GEMM with the weight
        Val f = anyFull();
        push(b_.op(OpKind::Mm, {f.v, b_.op(OpKind::T, {weight_})}), full());
        return;
      }
      case 9: {  // a loop carrying a value
        Val f = anyFull();
        auto loop = b_.beginLoop(b_.i(pick(1, 3)), {f.v});
        Value* next = b_.op(OpKind::Tanh, {b_.op(OpKind::Mm, {loop.carried[0], weight_})});
        auto outs = b_.endLoop(loop, {b_.op(OpKind::Add, {next, loop.carried[0], b_.f(0.5)})});
        push(outs[0], full());
        return;
      }
      case 10: {  // softmax or log_softmax along the rows or the columns
        Val f = anyFull();
        OpKind k = pick(0, 1) ? OpKind::Softmax : OpKind::LogSoftmax;
        push(b_.op(k, {b_.op(OpKind::Mul, {f.v, b_.f(2.0)}), b_.i(pick(0, 1) ? -1 : 0)}), full());
        return;
      }
      case 11: {  // a mean over the columns, kept, then broadcast back
        Val f = anyFull();
        Value* m = b_.op(OpKind::MeanDim, {f.v, b_.ints({1}), b_.b(true)});
        push(b_.op(OpKind::Sub, {f.v, b_.op(OpKind::Tanh, {m}), b_.i(1)}), full());
        return;
      }
      case 12: {  // a layer norm over the columns, or the mean and the variance of each row, kept (not std:
                  // a constant row, which log_softmax over one row makes, has an infinite std gradient)
        Val f = anyFull();
        const int which = pick(0, 2);
        if (which == 0) {
          push(b_.op(OpKind::LayerNorm, {f.v, b_.ints({cols_}), b_.none(), b_.none(), b_.f(1e-5), b_.b(true)}), full());
          return;
        }
        Value* mu = b_.op(OpKind::MeanDim, {f.v, b_.ints({-1}), b_.b(true)});
        const bool unbiased = which == 2 && cols_ > 1;
        Value* spread = b_.op(OpKind::Var, {f.v, b_.ints({-1}), b_.b(unbiased), b_.b(true)});
        push(b_.op(OpKind::Mul, {b_.op(OpKind::Sub, {f.v, mu, b_.i(1)}), b_.op(OpKind::Sigmoid, {spread})}), full());
        return;
      }
      default: {  // scalar arithmetic
        push(b_.op(OpKind::Mul, {a.v, b_.f(1.5)}), a.shape);
        return;
      }
    }
  }

  std::mt19937_64 rng_;
  std::unique_ptr<Graph> g_;
  GraphBuilder b_;
  int64_t rows_ = 1, cols_ = 2;
  Value* weight_ = nullptr;
  std::vector<Val> pool_;
};

}  // namespace

std::unique_ptr<Graph> randomGraph(uint64_t seed) { return Generator(seed).run(); }

}  // namespace gj::test
