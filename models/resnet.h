#pragma once
// torchvision's ResNets, as fastrnns' cnns group runs them: resnet18 (BasicBlock, [2, 2, 2, 2]) and resnet50
// (Bottleneck, [3, 4, 6, 3], expansion 4), with torchvision's structure and state_dict names.
//
// conv1 (7x7, stride 2, padding 3) -> bn1 -> relu -> max_pool2d (3, stride 2, padding 1) -> layer1..layer4
// (planes width, 2 width, 4 width, 8 width; the first block of layers 2-4 has stride 2, and a downsample,
// conv 1x1 + batch norm, wherever the identity's sizes differ) -> adaptive_avg_pool2d (1, 1) -> flatten ->
// fc. Convolutions have no bias; batch norms have momentum 0.1 and eps 1e-5.
//
// Inputs (state_dict order, without num_batches_tracked): input [N, 3, S, S] (S = imageSize), conv1.weight,
// bn1.{weight, bias, running_mean, running_var}, layer{l}.{b}.conv1.weight, .bn1.*, ... .downsample.0.weight,
// .downsample.1.*, fc.weight [classes, 8 width * expansion], fc.bias. Outputs: output [N, classes]; in
// training, then each batch norm's updated running_mean and running_var in the same order (they carry no
// gradient). Not training, the running statistics normalize and are the only statistics read.
//
// width is torchvision's 64 by default (ModelConfig::baseWidth); the reference case uses 4.
#include "models/model.h"

namespace gj {

/// name: resnet18 or resnet50.
Model buildResnet(const std::string& name, const ModelConfig& config);

}  // namespace gj
