#pragma once
// LoopNest: a kernel's statement with its input and output buffers, and the schedule transforms.
// Each transform rebuilds the statement (nodes are immutable) and names loops by their variables.
//
// Before split("i", 4) on i < 10:          After (splitWithTail):
//   for (i = 0; i < 10; i++) S(i)            for (i_outer = 0; i_outer < 2; i_outer++)
//                                              for (i_inner = 0; i_inner < 4; i_inner++) S(i_outer * 4 + i_inner)
//                                            for (i_tail = 0; i_tail < 2; i_tail++) S(8 + i_tail)
#include "fusers/te/ir.h"
#include "fusers/te/simplify.h"

#include <array>
#include <string>
#include <vector>

namespace gj::te {

class LoopNest {
 public:
  LoopNest(Stmt root, std::vector<Buf> inputs, std::vector<Buf> outputs, size_t scratch = 0);
  const Stmt& root() const { return root_; }
  const std::vector<Buf>& inputs() const { return inputs_; }
  /// The group's outputs, then scratch() buffers of the kernel's own: values one top-level nest stores
  /// and a later one reads (a product the pointwise nest after it reads). A launch allocates them with
  /// the outputs and hands back only the outputs.
  const std::vector<Buf>& outputs() const { return outputs_; }
  size_t scratch() const { return scratch_; }
  /// After scheduleGpu: how many of the last outputs are a split reduction's partial results (one per
  /// row and block: written before a grid barrier, read after it), which a launch allocates with the
  /// outputs and drops. Not counted in scratch().
  size_t partials() const { return partials_; }
  /// Every loop variable's name, outermost first (pre-order).
  std::vector<std::string> loopNames() const;

  // ---- transforms; each throws gj::Error naming the loop when it does not apply ----
  /// Splits loop `var` (constant bounds) into var_outer x var_inner (`factor` iterations) and a
  /// var_tail loop for the remainder (none when factor divides the trip count).
  void splitWithTail(const std::string& var, int64_t factor);
  /// Splits loop `var` into var_outer (rounded up) x var_inner, guarding the body with an if.
  void splitWithMask(const std::string& var, int64_t factor);
  /// Swaps two perfectly nested loops (`outer` directly contains only `inner`).
  void reorder(const std::string& outer, const std::string& inner);
  /// Replaces perfectly nested loops vars[0] (outermost) ... vars[n-1] by one loop named vars[0]_flat.
  void flatten(const std::vector<std::string>& vars);
  void vectorize(const std::string& var);
  void parallelize(const std::string& var);
  /// Replaces loop `var` (constant bounds) by copies of its body.
  void unroll(const std::string& var);
  /// Binds loop `var` to blockIdx (block) or threadIdx (!block) axis `axis` (0..2).
  void bindGpu(const std::string& var, bool block, int axis);
  /// Inlines an intermediate buffer: its loads become the expression stored into it, and its own loop
  /// nest, Allocate and Free go away. Pre: one Store into buf, indexed by its loops' variables.
  void inlineBuffer(const Buf& buf);
  /// Store(b, i, Reduce(op, body, vars)) -> Store(b, i, identity); for vars: b[i] = b[i] op body.
  void lowerReductions();
  /// CPU, before lowerReductions: a top-level nest that sums along outer dimensions of what it reads
  /// (a bias gradient: out[j] = sum over r of x[r, j]; a product: out[i, j] = sum over r of a[i, r] *
  /// b[r, j], a[i, r] the same for every j) becomes out[j] = 0 for all j, then for every r,
  /// for all j: out[j] += x[r, j]: the inner loop reads contiguously and vectorizes, and every element
  /// is summed in the same order as before; consecutive such sums over the same ranges share the two
  /// nests. When the innermost output loop halves into whole vectors (16 floats) and the sum reads at
  /// least 2^18 elements (a batch-1 step's product at hidden 256 and up), both nests go under
  /// one loop over the halves (j_half: 2 trips, j = j_half * half + j_in), whose iterations write disjoint
  /// outputs: scheduleCpu may run them on two threads. Not for the GPU, whose threads split the outer loops.
  void interchangeStridedReductions();
  /// Folds constants and simple identities (see simplify()).
  void simplify();

  // ---- default schedules ----
  /// CPU: innermost loops vectorized (not those whose iterations depend on each other through a buffer
  /// they store and read), the outermost loop of a large nest parallel when its iterations are
  /// independent. Run lowerReductions first.
  void scheduleCpu(int64_t parallelGrain = 1 << 15);
  /// GPU, on a nest as lowered (its reductions not yet lowered). A nest that folds rows of contiguous
  /// elements into temporaries (softmax, layer norm, a row sum: `stat[0] = sum(x[i, r])` among the
  /// statements of its row loops) runs a warp a row (rows up to kGpuWarpRowMost elements; 8 rows a
  /// block) or a block of kGpuRowThreads threads a row: the row loops are flattened and bound to
  /// blockIdx.x, every thread folds every 32nd (kGpuRowThreads-th) element of each reduction into a
  /// register, a ThreadReduce (warp shuffles, then for a block shared memory) gives every thread the
  /// row's value, the row's loops are strided across the threads the same way, and a store into an output
  /// at the row's level is the first thread's. A nest that folds along outer dimensions (a bias gradient
  /// summed over the batch) runs 32 outputs a block, a lane each, the block's warps splitting each
  /// output's elements, then a ThreadReduce over the lane's threads. Every other nest has its reductions
  /// lowered and fastrnns' knobs: loopLevel 2: flatten, split by blockSize, bind (blocks, threads);
  /// loopLevel 3: flatten, split by blockCount * blockSize, then by blockSize, bind the inner two and keep
  /// the outermost as a loop. With a row or column nest in the kernel, blockSize is kGpuRowThreads (one
  /// launch: every thread reaches the barriers).
  static constexpr int64_t kGpuBlockSize = 512, kGpuBlockCount = 1280, kGpuRowThreads = 256;
  /// Rows up to this many elements (16 a lane) go a warp a row, 8 rows a block; longer ones a block a row.
  static constexpr int64_t kGpuWarpRowMost = 512;
  /// Rows up to this many elements keep each input that the statistics and the normalization both read
  /// in registers (4 a thread a block a row, 16 a lane a warp a row), read from memory once.
  static constexpr int64_t kGpuPersistentRowMost = 1024;
  static constexpr int kGpuLoopLevel = 2;
  /// A split reduction: a kernel whose one nest folds at most kGpuSplitRowsMost rows of at least
  /// kGpuSplitRowLeast elements spreads each row over several blocks, up to splitBlocks blocks in all
  /// (as many as the device holds at once: the launch is cooperative), at least kGpuSplitElementsLeast
  /// elements a block. Each reduction is folded per block, the blocks' results go to a partials buffer
  /// (an output of the kernel's own, partials()), a grid barrier (GridSync), and every block of the row
  /// folds the row's partials in one order: bitwise the same value in each, run after run. The row's
  /// loops are split across the row's blocks the same way.
  static constexpr int64_t kGpuSplitRowsMost = 32, kGpuSplitRowLeast = 16384, kGpuSplitElementsLeast = 4096;
  /// The blocks a split reduction may use when the device is not known (an H100's 132 multiprocessors
  /// hold 2 blocks of 256 threads each at any register count the schedules reach).
  static constexpr int64_t kGpuSplitBlocks = 256;
  /// A split column reduction: a kernel whose one folding nest sums columns (a bias gradient: out[j] =
  /// sum(x[r, j])) of at least kGpuSplitColumnLeast elements, over too few 32-output groups to fill the
  /// device, spreads each group over up to splitBlocks / groups blocks, at least
  /// kGpuSplitColumnElementsLeast of a column's elements a block; partials, a grid barrier and one fold
  /// order as for rows. The kernel's other (pointwise) nests run at loop level 3 in that grid.
  static constexpr int64_t kGpuSplitColumnLeast = 1024, kGpuSplitColumnElementsLeast = 32;
  void scheduleGpu(int64_t blockSize = kGpuBlockSize, int64_t blockCount = kGpuBlockCount,
                   int loopLevel = kGpuLoopLevel, int64_t splitBlocks = kGpuSplitBlocks);
  /// The launch a GPU-scheduled nest needs: per axis, the largest trip count of the loops bound to
  /// blockIdx (blocks) and threadIdx (threads), 1 where none is. Every nest of the kernel runs in that one
  /// launch, each guarding its own range. Throws gj::Error for a bound loop whose bounds are not constant.
  struct GpuLaunch {
    std::array<int64_t, 3> blocks{1, 1, 1};
    std::array<int64_t, 3> threads{1, 1, 1};
    bool cooperative = false;  ///< the nest holds a GridSync: all blocks must be resident at once
  };
  GpuLaunch gpuLaunch() const;

 private:
  // A folding nest's body (foldingLoops) at element `at` of its loops flattened into one.
  Stmt flatBody(const Stmt& nest, const std::vector<const For*>& loops, const Expr& at) const;
  // scheduleGpu's split reduction (kGpuSplitRowsMost): the row nest `nest` with its row `loops`, each row
  // over `split` blocks; its partials buffers appended to the outputs.
  Stmt splitRows(const Stmt& nest, const std::vector<const For*>& loops, int64_t rowCount, int64_t split);
  // scheduleGpu's split column reduction (kGpuSplitColumnLeast): the column nest `nest` of `outputs`
  // outputs, each group of 32 over `split` blocks; its partials buffers appended to the outputs.
  Stmt splitColumns(const Stmt& nest, const std::vector<const For*>& loops, int64_t outputs, int64_t split);
  // The split schedules' meeting of blocks: the block's value `result` (buf[0] = ThreadReduce(...)) goes
  // to a partials buffer of `bases` x `split` (an output of the kernel's own), at base x split + slice, by
  // the threads `writer` holds for; a grid barrier; then every block folds its base's split partials in
  // one order, so that each has the same value, bitwise.
  std::vector<Stmt> acrossBlocks(const Stmt& result, const Expr& base, int64_t bases, const Expr& slice, int64_t split,
                                 const Expr& writer);
  // A split schedule's launch: blocks b of `blocks`, kGpuRowThreads threads t each, around `body`.
  Stmt blockGrid(const Expr& b, const Expr& t, int64_t blocks, const Stmt& body) const;
  Stmt root_;
  std::vector<Buf> inputs_, outputs_;
  size_t scratch_ = 0;
  size_t partials_ = 0;
};


/// The floating-point operations `s` does (a lowered nest's: loops times their bodies, a reduction's extents
/// times its body and one fold): each distinct arithmetic node, comparison or math call of a store's value
/// counts one (a subexpression the value reaches twice is computed once, as the backends do).
int64_t floatingOps(const Stmt& s);

}  // namespace gj::te
