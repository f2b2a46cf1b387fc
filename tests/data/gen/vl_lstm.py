"""Writes a variable-length LSTM reference case (tests/data/README.md's layout) with PyTorch.

    /usr/bin/python3 tests/data/gen/vl_lstm.py OUT_DIR --per-sequence --seqLength 6 --miniBatch 4 --inputSize 3 \
        --hiddenSize 5 --numLayers 2 --seed 5

fastrnns' variable-length LSTM as the shared vl_lstm case lays it out: input [T, B, I] zero-padded, lengths [B]
int64 in [1, T] in no order (one of them T, two of them equal), nn.LSTM run on
pack_padded_sequence(input, lengths, enforce_sorted=False) and padded back to T steps (output zero past each
length; hy, cy after each sequence's own last step). Inputs are drawn in float32 and computed in float64.
--per-sequence only marks the manifest: graphir builds fastrnns' per-sequence loop for it instead of the
packed graph; the reference is the same.
"""
import torch

from case_io import draw, parse, save


def main():
    a = parse(__doc__, "per-sequence", (("seqLength", 6), ("miniBatch", 4), ("inputSize", 3), ("hiddenSize", 5),
                                        ("numLayers", 2), ("seed", 5)))
    T, B, I, H, L = a.seqLength, a.miniBatch, a.inputSize, a.hiddenSize, a.numLayers
    lengths = torch.randint(1, T + 1, (B,))
    lengths[torch.randint(0, B, ())] = T
    if B > 2:
        lengths[1] = lengths[2]

    x = draw(T, B, I)
    for b in range(B):
        x[lengths[b]:, b] = 0
    inputs = {"input": x.requires_grad_(), "hx": draw(L, B, H, bound=0.5).requires_grad_(),
              "cx": draw(L, B, H, bound=0.5).requires_grad_()}
    lstm = torch.nn.LSTM(I, H, L).double()
    for l in range(L):
        for k in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
            name = f"{k}_l{l}"
            getattr(lstm, name).data = draw(*getattr(lstm, name).shape, bound=H ** -0.5)
            inputs[name] = getattr(lstm, name)

    packed = torch.nn.utils.rnn.pack_padded_sequence(inputs["input"], lengths, enforce_sorted=False)
    out, (hy, cy) = lstm(packed, (inputs["hx"], inputs["cx"]))
    output, _ = torch.nn.utils.rnn.pad_packed_sequence(out, total_length=T)
    outputs = {"output": output, "hy": hy, "cy": cy}
    grad_outputs = {k: (torch.rand(v.shape, dtype=torch.float32) * 2 - 1) for k, v in outputs.items()}
    loss = sum((outputs[k] * grad_outputs[k].double()).sum() for k in outputs)
    grads = torch.autograd.grad(loss, list(inputs.values()))

    names = ["input", "lengths", "hx", "cx"] + [k for k in inputs if k not in ("input", "hx", "cx")]
    manifest = {"model": "vl_lstm",
                "params": {"seqLength": T, "miniBatch": B, "inputSize": I, "hiddenSize": H, "numLayers": L,
                           "per_sequence": a.per_sequence, "seed": a.seed},
                "inputs": names, "outputs": list(outputs), "grad_outputs": list(outputs),
                "grads": list(inputs)}
    save(a.out, manifest, inputs, outputs, grad_outputs, grads, ints=[("lengths", lengths.numpy())])


if __name__ == "__main__":
    main()
