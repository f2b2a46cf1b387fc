"""Writes a ResNet reference case (tests/data/README.md's layout) with PyTorch, in float64 on float32 draws.

torchvision's resnet18 / resnet50 structure and state_dict names, written out (torchvision is not needed):
conv1 7x7/2, bn1, relu, max pool 3/2, four layers of BasicBlocks ([2, 2, 2, 2]) or Bottlenecks ([3, 4, 6, 3],
expansion 4), adaptive average pool, fc. In training the outputs also hold each batch norm's updated
running_mean / running_var, which carry no gradient (their grad_outputs are ignored).

    /usr/bin/python3 tests/data/gen/resnet.py OUT [--resnet50] [--eval] [--width 4] [--classes 10]
        [--imageSize 32] [--miniBatch 2] [--seed 0]

--float32 compares PyTorch's own float32 run with the float64 reference instead of writing a case (the
relative errors that float32 arithmetic reaches on this case).
"""
import argparse
import math
import os

import numpy as np

import torch
import torch.nn as nn

import case_io


class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, inplanes, planes, stride, downsample):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU()
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = downsample

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        identity = x if self.downsample is None else self.downsample(x)
        return self.relu(out + identity)


class Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, inplanes, planes, stride, downsample):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, stride, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv3 = nn.Conv2d(planes, planes * 4, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(planes * 4)
        self.relu = nn.ReLU()
        self.downsample = downsample

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        identity = x if self.downsample is None else self.downsample(x)
        return self.relu(out + identity)


class ResNet(nn.Module):
    def __init__(self, block, layers, width, classes):
        super().__init__()
        self.inplanes = width
        self.conv1 = nn.Conv2d(3, width, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.relu = nn.ReLU()
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        self.layer1 = self._layer(block, width, layers[0], 1)
        self.layer2 = self._layer(block, width * 2, layers[1], 2)
        self.layer3 = self._layer(block, width * 4, layers[2], 2)
        self.layer4 = self._layer(block, width * 8, layers[3], 2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(width * 8 * block.expansion, classes)

    def _layer(self, block, planes, blocks, stride):
        downsample = None
        if stride != 1 or self.inplanes != planes * block.expansion:
            downsample = nn.Sequential(nn.Conv2d(self.inplanes, planes * block.expansion, 1, stride, bias=False),
                                       nn.BatchNorm2d(planes * block.expansion))
        layers = [block(self.inplanes, planes, stride, downsample)]
        self.inplanes = planes * block.expansion
        layers += [block(self.inplanes, planes, 1, None) for _ in range(1, blocks)]
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


def uniform(shape, low, high):
    return (torch.rand(*shape, dtype=torch.float32) * (high - low) + low).double()


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out")
    p.add_argument("--resnet50", action="store_true")
    p.add_argument("--eval", action="store_true")
    p.add_argument("--float32", action="store_true")
    for name, default in (("width", 4), ("classes", 10), ("imageSize", 32), ("miniBatch", 2), ("seed", 0)):
        p.add_argument("--" + name, type=int, default=default)
    a = p.parse_args()
    torch.manual_seed(a.seed)
    block, layers = (Bottleneck, [3, 4, 6, 3]) if a.resnet50 else (BasicBlock, [2, 2, 2, 2])
    model = ResNet(block, layers, a.width, a.classes).double()
    training = not a.eval
    model.train(training)

    # Parameters and statistics drawn as float32 (graphjit's randomInputs ranges), fed back in float64.
    params = {"input": uniform((a.miniBatch, 3, a.imageSize, a.imageSize), -1, 1)}
    state = {k: v for k, v in model.state_dict().items() if not k.endswith("num_batches_tracked")}
    for k, v in state.items():
        if k.endswith("running_var"):
            params[k] = uniform(v.shape, 0.5, 1.5)
        elif k.endswith("running_mean") or (k.endswith(".bias") and not k.startswith("fc")):
            params[k] = uniform(v.shape, -0.5, 0.5)
        elif v.dim() == 1 and not k.startswith("fc"):
            params[k] = uniform(v.shape, 0.5, 1.5)
        else:
            fan_in = model.fc.in_features if k.startswith("fc") else v[0].numel()
            bound = 1 / math.sqrt(fan_in)
            params[k] = uniform(v.shape, -bound, bound)
    stats = [k for k in state if k.endswith("running_mean") or k.endswith("running_var")]

    def run(dtype):
        m = ResNet(block, layers, a.width, a.classes).to(dtype)
        m.train(training)
        m.load_state_dict({k: params[k].to(dtype) for k in state}, strict=False)
        x = params["input"].to(dtype).requires_grad_()
        out = m(x)
        named = dict(m.named_parameters())
        outputs = {"output": out}
        if training:
            sd = m.state_dict()
            outputs.update({k: sd[k].clone() for k in stats})
        return m, x, named, outputs

    torch.manual_seed(a.seed + 1)
    grad_out = torch.rand(a.miniBatch, a.classes, dtype=torch.float32).double() * 2 - 1
    grad_outputs = {"output": grad_out}
    if training:
        grad_outputs.update({k: torch.zeros(params[k].shape, dtype=torch.float64) for k in stats})

    m, x, named, outputs = run(torch.float64)
    grad_names = ["input"] + [k for k in state if k in named]
    grads = torch.autograd.grad(outputs["output"], [x] + [named[k] for k in grad_names[1:]], grad_out)

    if a.float32:
        m32, x32, named32, outputs32 = run(torch.float32)
        grads32 = torch.autograd.grad(outputs32["output"], [x32] + [named32[k] for k in grad_names[1:]],
                                      grad_out.float())

        def rel(u, v):
            return ((u.double() - v).norm() / v.norm()).item()

        print("output", rel(outputs32["output"], outputs["output"]))
        for k, g32, g in zip(grad_names, grads32, grads):
            print(k, rel(g32, g))
        return

    manifest = {
        "model": "resnet50" if a.resnet50 else "resnet18",
        "params": {"width": a.width, "classes": a.classes, "imageSize": a.imageSize, "miniBatch": a.miniBatch,
                   "training": training},
        "inputs": list(params),
        "outputs": list(outputs),
        "grad_outputs": list(outputs),
        "grads": grad_names,
        "reference": f"PyTorch {torch.__version__}, float64 arithmetic on float32-rounded inputs",
        "source": "tests/data/gen/resnet.py: torchvision's ResNet structure and state_dict names, written out",
    }
    case_io.save(a.out, manifest, params, outputs, grad_outputs, [], ())
    for k, g in zip(grad_names, grads):
        np.save(os.path.join(a.out, "grads", k + ".npy"), g.numpy())


if __name__ == "__main__":
    main()
