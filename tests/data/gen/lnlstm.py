"""Writes a layer-norm LSTM reference case (tests/data/README.md's layout) with PyTorch.

    /usr/bin/python3 tests/data/gen/lnlstm.py OUT_DIR --decompose --seqLength 5 --miniBatch 4 --inputSize 3 \
        --hiddenSize 6 --numLayers 3 --seed 7

custom_lstms' script_lnlstm (fastrnns' jit_layernorm / jit_layernorm_decom), written out here so that the
case needs only torch: per step igates = LN_i(x W_ih^T), hgates = LN_h(h W_hh^T), chunks [i, f, g, o] of
their sum, c' = LN_c(f c + i g), h' = o tanh(c'); nn.LayerNorm (eps 1e-5), or with --decompose
custom_lstms' own LayerNorm: (x - mean) / std(unbiased=False) * weight + bias, no eps. Inputs are drawn in
float32 and computed in float64; the layer norms' weights and biases are random, not ones and zeros, so
that their gradients are tested in full.
"""
import torch

from case_io import draw, parse, save


def param(*shape, bound=1.0):
    return draw(*shape, bound=bound).requires_grad_()


def layer_norm(x, w, b, decompose):
    if decompose:
        mu = x.mean(-1, keepdim=True)
        sigma = x.std(-1, keepdim=True, unbiased=False)
        return (x - mu) / sigma * w + b
    return torch.nn.functional.layer_norm(x, [x.size(-1)], w, b, 1e-5)


def main():
    a = parse(__doc__, "decompose", (("seqLength", 5), ("miniBatch", 4), ("inputSize", 3), ("hiddenSize", 6),
                                     ("numLayers", 3), ("seed", 7)))
    T, B, I, H, L = a.seqLength, a.miniBatch, a.inputSize, a.hiddenSize, a.numLayers

    inputs = {"input": param(T, B, I), "hx": param(L, B, H, bound=0.5), "cx": param(L, B, H, bound=0.5)}
    for l in range(L):
        cell = f"layers.{l}.cell."
        inputs[cell + "weight_ih"] = param(4 * H, I if l == 0 else H, bound=H ** -0.5)
        inputs[cell + "weight_hh"] = param(4 * H, H, bound=H ** -0.5)
        for ln, n in (("i", 4 * H), ("h", 4 * H), ("c", H)):
            inputs[f"{cell}layernorm_{ln}.weight"] = (1 + 0.5 * (torch.rand(n) * 2 - 1)).float().double().requires_grad_()
            inputs[f"{cell}layernorm_{ln}.bias"] = param(n, bound=0.3)

    layer_input = inputs["input"]
    hys, cys = [], []
    for l in range(L):
        cell = f"layers.{l}.cell."
        g = lambda k: inputs[cell + k]
        h, c = inputs["hx"][l], inputs["cx"][l]
        outs = []
        for t in range(T):
            igates = layer_norm(layer_input[t] @ g("weight_ih").t(), g("layernorm_i.weight"), g("layernorm_i.bias"),
                                a.decompose)
            hgates = layer_norm(h @ g("weight_hh").t(), g("layernorm_h.weight"), g("layernorm_h.bias"), a.decompose)
            i, f, gg, o = (igates + hgates).chunk(4, 1)
            c = layer_norm(torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(gg), g("layernorm_c.weight"),
                           g("layernorm_c.bias"), a.decompose)
            h = torch.sigmoid(o) * torch.tanh(c)
            outs.append(h)
        layer_input = torch.stack(outs)
        hys.append(h)
        cys.append(c)
    outputs = {"output": layer_input, "hy": torch.stack(hys), "cy": torch.stack(cys)}
    grad_outputs = {k: (torch.rand(v.shape, dtype=torch.float32) * 2 - 1) for k, v in outputs.items()}
    loss = sum((outputs[k] * grad_outputs[k].double()).sum() for k in outputs)
    grads = torch.autograd.grad(loss, list(inputs.values()))

    manifest = {"model": "lnlstm",
                "params": {"seqLength": T, "miniBatch": B, "inputSize": I, "hiddenSize": H, "numLayers": L,
                           "decompose": a.decompose, "seed": a.seed},
                "inputs": list(inputs), "outputs": list(outputs), "grad_outputs": list(outputs),
                "grads": list(inputs)}
    save(a.out, manifest, inputs, outputs, grad_outputs, grads)


if __name__ == "__main__":
    main()
