#include "passes/unroll_loops.h"

#include "passes/constant_propagation.h"
#include "passes/shape_propagation.h"
#include "passes/util.h"
#include "support/error.h"

#include <fmt/format.h>

#include <charconv>

namespace gj {

namespace {

// True when the body always asks for another iteration (a for-loop).
bool alwaysContinues(const Node* loop) { return constantBool(loop->block(0)->outputs()[0]).value_or(false); }

// Clones the body in front of `before` for iteration `index` with `carried` values; returns the next ones.
std::vector<Value*> emitIteration(const Block* body, Node* before, Value* index, const std::vector<Value*>& carried) {
  ValueMap env;
  env[body->inputs()[0]] = index;
  for (size_t k = 0; k < carried.size(); ++k) env[body->inputs()[k + 1]] = carried[k];
  cloneNodesBefore(body, before, env);
  std::vector<Value*> next;
  for (size_t k = 0; k < carried.size(); ++k) {
    next.push_back(env.mapOr(body->outputs()[k + 1]));
  }
  return next;
}

void fullUnroll(Node* loop, int64_t trips) {
  Graph* g = loop->graph();
  std::vector<Value*> carried(loop->inputs().begin() + 2, loop->inputs().end());
  for (int64_t i = 0; i < trips; ++i) carried = emitIteration(loop->block(0), loop, constantBefore(loop, i), carried);
  for (size_t k = 0; k < carried.size(); ++k) g->replaceAllUsesWith(loop->output(k), carried[k]);
  g->erase(loop);
}

// A new loop in front of `before`: `trips` iterations of `copies` body copies, the index carried as a
// counter from `start`. Returns the carried values after it (the counter last).
std::vector<Value*> emitLoop(const Block* body, Node* before, Value* trips, int64_t copies, Value* start,
                             const std::vector<Value*>& init) {
  Graph* g = before->graph();
  Node* t = g->createConstant(true);
  t->insertBefore(before);
  std::vector<Value*> ins = {trips, t->output()};
  ins.insert(ins.end(), init.begin(), init.end());
  ins.push_back(start);
  Node* loop = g->create(OpKind::Loop, ins, 0);
  loop->insertBefore(before);
  Block* nb = loop->addBlock();
  nb->addInput(Type::of(TypeKind::Int));
  std::vector<Value*> carried;
  for (Value* v : init) carried.push_back(nb->addInput(v->type()));
  Value* counter = nb->addInput(Type::of(TypeKind::Int));
  // The constant 1 of the counter doubles as the anchor the copies are inserted before.
  Node* anchor = g->createConstant(int64_t{1});
  nb->append(anchor);
  Value* one = anchor->output();
  for (int64_t c = 0; c < copies; ++c) {
    carried = emitIteration(body, anchor, counter, carried);
    Node* inc = g->create(OpKind::IntAdd, {counter, one});
    inc->output()->setType(Type::of(TypeKind::Int));
    inc->insertBefore(anchor);
    counter = inc->output();
  }
  anchor->moveBefore(nb->paramNode()->next());
  nb->registerOutput(t->output());
  for (Value* v : carried) nb->registerOutput(v);
  nb->registerOutput(counter);
  std::vector<Value*> outs;
  for (Value* v : carried) outs.push_back(loop->addOutput(v->type()));
  outs.push_back(loop->addOutput(Type::of(TypeKind::Int)));
  return outs;
}

// Trip counts from aten::size / aten::len are never negative, so floordiv / remainder split them exactly.
bool nonNegative(const Value* trips) {
  OpKind k = trips->node()->kind();
  if (k == OpKind::Size || k == OpKind::Len) return true;
  auto c = constantInt(trips);
  return c && *c >= 0;
}

void partialUnroll(Node* loop, int64_t factor) {
  Graph* g = loop->graph();
  auto intOp = [&](OpKind k, Value* a, Value* b) {
    Node* n = g->create(k, {a, b});
    n->output()->setType(Type::of(TypeKind::Int));
    n->insertBefore(loop);
    return n->output();
  };
  Value* k = constantBefore(loop, factor);
  Value* mainTrips = intOp(OpKind::FloorDiv, loop->input(0), k);
  Value* restTrips = intOp(OpKind::Remainder, loop->input(0), k);
  std::vector<Value*> init(loop->inputs().begin() + 2, loop->inputs().end());
  auto afterMain = emitLoop(loop->block(0), loop, mainTrips, factor, constantBefore(loop, 0), init);
  Value* counter = afterMain.back();
  afterMain.pop_back();
  auto afterRest = emitLoop(loop->block(0), loop, restTrips, 1, counter, afterMain);
  for (size_t i = 0; i < loop->outputs().size(); ++i) g->replaceAllUsesWith(loop->output(i), afterRest[i]);
  g->erase(loop);
}

bool unrollBlock(Block* b, const UnrollOptions& opts) {
  bool changed = false;
  // The first node whose types may be stale: what full unrolling made and what follows it. Before a loop
  // whose trip count is not a constant, the types up to it are propagated, so a chain of loops (each over
  // the results of the one before) unrolls in one walk rather than one round of passes per loop.
  Node* stale = nullptr;
  for (Node* n : b->nodesList()) {
    for (Block* inner : n->blocks()) changed |= unrollBlock(inner, opts);
    if (optimizesInto(n)) changed |= unrollLoops(*n->subgraph(), opts);
    if (n->kind() != OpKind::Loop || !alwaysContinues(n)) continue;
    // A loop made by partial unrolling carries its counter last; do not unroll it again.
    if (n->block(0)->outputs().back()->node()->kind() == OpKind::IntAdd) continue;
    if (stale && !constantInt(n->input(0))) {
      if (stale != n) propagateShapes(stale, n->prev());
      stale = nullptr;
    }
    // The trip count as the types give it, before constant propagation has folded it (a stacked LSTM's
    // upper layer loops over the unbound output of the layer below).
    auto trips = knownInt(n->input(0));
    if (trips && *trips <= opts.maxFullUnroll) {
      Node* before = n->prev();
      fullUnroll(n, std::max<int64_t>(*trips, 0));
      if (!stale) stale = before->next();
      changed = true;
    } else if (opts.factor > 1 && nonNegative(n->input(0))) {
      partialUnroll(n, opts.factor);
      changed = true;
    }
  }
  return changed;
}

}  // namespace

bool unrollLoops(Graph& g, const UnrollOptions& opts) { return unrollBlock(g.block(), opts); }
bool unrollLoops(Graph& g) { return unrollLoops(g, UnrollOptions{}); }

std::string UnrollOptions::str() const { return fmt::format("full={};by={}", maxFullUnroll, factor); }

UnrollOptions UnrollOptions::parse(std::string_view params) {
  UnrollOptions o;
  while (!params.empty()) {
    const size_t semi = params.find(';');
    const std::string_view item = params.substr(0, semi);
    params = semi == std::string_view::npos ? std::string_view() : params.substr(semi + 1);
    const size_t eq = item.find('=');
    const std::string_view key = item.substr(0, eq);
    int64_t value = -1;
    if (eq != std::string_view::npos) std::from_chars(item.data() + eq + 1, item.data() + item.size(), value);
    USER_CHECK((key == "full" || key == "by") && value >= (key == "by" ? 1 : 0),
               "unroll-loops: '{}' is not a parameter; it takes full=N (N >= 0) and by=K (K >= 1), as "
               "unroll-loops<full=512;by=1>", item);
    (key == "full" ? o.maxFullUnroll : o.factor) = value;
  }
  return o;
}

}  // namespace gj
