#pragma once
#include "models/model.h"

namespace gj {

/// embedding -> numLayers-layer LSTM (config.variant) -> linear decoder over [T*B, H] -> cross-entropy
/// (mean over time steps and batch). Inputs: tokens, targets [T, B] int64, embedding.weight [V, E], hx, cx,
/// lstm.weight_ih_l{k} ..., decoder.weight [V, H], decoder.bias [V]. Output: loss (0-dim).
Model buildLstmLm(const ModelConfig& c);
/// embedding -> 1-layer LSTM -> last step -> linear -> cross-entropy (mean over the batch).
/// Inputs: tokens [T, B], labels [B] int64, embedding.weight [V, H], hx, cx, lstm.*_l0, fc.weight [C, H],
/// fc.bias [C]. Output: loss.
Model buildLstmClassifier(const ModelConfig& c);

}  // namespace gj
