#pragma once
#include "ir/graph.h"

namespace gj {

/// Turns many matrix multiplies into fewer, larger ones (the idea of PyTorch's BatchMM):
///   side: independent mm(x_i, W) sharing W  -> mm(cat(x_i, 0), W), split by rows
///         (and sharing the left operand: mm(X, w_i) -> mm(X, cat(w_i, 1)), split by columns, where X
///         has at least kMinRowsToConcatenateRightOperands rows and the w_i together at most
///         kMaxConcatenatedRightElements elements);
///   tree: add(mm(a, b), mm(c, d))           -> mm(cat([a, c], 1), cat([b, d], 0));
///   sum:  x1 + x2 + ... + xn (n >= kMinStackedTerms, same sizes) -> sum(stack([x1, ..., xn]), [0]).
/// Needs static sizes on the operands (run shape propagation first). Returns true if g changed.
///
/// Batches are made in chunks of at most kBatchChunkElements elements per product or concatenated
/// operand, as few as that allows and evenly filled, each placed where its own operands exist: an LSTM's
/// input GEMM for 100 steps becomes 4 of 25 steps (each computed just before its first step, so at most
/// one chunk of the premultiplied gates is alive), its weight gradients 4 products (each made once its
/// steps' gate gradients exist, which are then freed). A GEMM of 1600 rows runs at the rate of one of
/// 6400 (bench/results/gemm-cpu.md); the memory of the whole batch does not have to exist at once.
bool batchMatmuls(Graph& g);

/// The fewest rows of a shared left operand for which mm(X, w_i) are merged into mm(X, cat(w_i, 1)): the
/// concatenation copies every w_i on each run, which fewer rows of products do not pay for.
inline constexpr int64_t kMinRowsToConcatenateRightOperands = 32;

/// The most elements (256 KiB of float32, within a core's L2) of the w_i that mm(X, w_i) concatenate: one
/// product instead of several gains only where the products are small, and copying large weights on
/// every run costs more than it gains: an LSTM cell's backward at batch 128 (dgates W_hh and dgates W_ih)
/// is faster without its two weights concatenated at hidden 256 and 512, and no slower at 128
/// (measured in bench/results/, the cell row of #54).
inline constexpr int64_t kMaxConcatenatedRightElements = int64_t{1} << 16;

/// The fewest terms of a sum that batching stacks (shorter sums are left to fusion).
inline constexpr size_t kMinStackedTerms = 16;

/// The most elements (16 MiB of float32) of one batched product or of one operand concatenated for it.
inline constexpr int64_t kBatchChunkElements = int64_t{1} << 22;

}  // namespace gj
