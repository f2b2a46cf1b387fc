#pragma once
// fastrnns' variable-length LSTM: a zero-padded batch of sequences of different lengths.
//
// Inputs: input [T, B, I] (sequence b's steps are input[0:lengths[b], b]; what lies past them is never
// read), lengths [B] int64 in [1, T], any order; hx, cx [L, B, H]; then nn.LSTM's weights per layer
// (lstm.h). Outputs: output [T, B, H], zero past each sequence's length; hy, cy [L, B, H], each sequence's
// state after its own last step. The results of nn.LSTM on pack_padded_sequence(input, lengths,
// enforce_sorted=False), padded back to T steps.
//
// Two graphs compute them:
//   packed (default)  PyTorch's packed sequences inside the graph: the batch sorted by length
//                     (aten::sort, aten::index_select) and packed (aten::_pack_padded_sequence); one loop
//                     over the steps whose batch shrinks as sequences end: step t runs the cell on the
//                     first batch_sizes[t] rows of the state (aten::slice with an end read at run time).
//                     No step computes a padded row, and no size of the graph depends on the lengths, so
//                     one compiled plan serves every set of lengths.
//   perSequence       fastrnns' vl_jit / vl_py: a loop over the sequences, and in it a loop of
//                     lengths[b] steps of the cell at batch 1.
#include "models/model.h"

namespace gj {

Model buildVlLstm(const ModelConfig& config);

/// The per-sequence loop on an eager tape (fastrnns' vl_py): `in` as the graph's inputs.
std::vector<eager::Var> eagerVlLstm(eager::Tape& tape, const std::vector<eager::Var>& in, int64_t numLayers);

}  // namespace gj
