#pragma once
#include "models/model.h"

namespace gj {

/// nn.Linear: input [rows, features], weight [outFeatures, features], bias [outFeatures] -> output.
Model buildLinear(const ModelConfig& c);
/// softmax over `dim` of input [rows, features] -> output.
Model buildSoftmax(const ModelConfig& c);
/// nn.Conv2d: input [B, channels, height, width], weight [outChannels, channels, k, k], bias -> output.
Model buildConv2d(const ModelConfig& c);
/// nn.MultiheadAttention self-attention, sequence first: query [T, B, E] (key = value = query),
/// in_proj_weight [3E, E], in_proj_bias [3E], out_proj.weight [E, E], out_proj.bias [E] -> output [T, B, E].
Model buildMultiheadAttention(const ModelConfig& c);

}  // namespace gj
