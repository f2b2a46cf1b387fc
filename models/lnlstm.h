#pragma once
// fastrnns' layer-normalized LSTM (custom_lstms.py's script_lnlstm), stacked over numLayers.
//
// Per step: igates = LN_i(x W_ih^T), hgates = LN_h(h W_hh^T), gates = igates + hgates, chunked [i, f, g, o]
// as in Note [Gate order] (lstm.h); c' = LN_c(f * c + i * g), h' = o * tanh(c'). No gate biases: the
// layer norms' biases take their place.
//
// Inputs (its state_dict's names): input [T, B, I], hx [L, B, H], cx [L, B, H], then per layer l
// layers.{l}.cell.weight_ih [4H, I or H], .weight_hh [4H, H], .layernorm_{i,h}.{weight,bias} [4H] and
// .layernorm_c.{weight,bias} [H]. Outputs: output [T, B, H], hy [L, B, H], cy [L, B, H].
//
// decompose: custom_lstms' own LayerNorm, (x - mean) / std(unbiased=False) * weight + bias with no eps,
// instead of nn.LayerNorm (aten::layer_norm, eps 1e-5): fastrnns' jit_layernorm_decom.
#include "models/model.h"

namespace gj {

Model buildLnLstm(const ModelConfig& config);

}  // namespace gj
