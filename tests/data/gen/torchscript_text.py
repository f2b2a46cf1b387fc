"""Writes tests/data/torchscript/*.ir: graphs as PyTorch prints them (scripted and traced functions and
modules), for the parser's tests. Run with Debian's /usr/bin/python3 (PyTorch 1.13):

    /usr/bin/python3 tests/data/gen/torchscript_text.py

The `# file.py:line:col` comments name this script by its path relative to tests/data."""
import os
from typing import Dict, List, Optional, Tuple

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "torchscript")


def lstm_cell(input, hidden: Tuple[torch.Tensor, torch.Tensor], w_ih, w_hh, b_ih, b_hh):
    hx, cx = hidden
    gates = torch.mm(input, w_ih.t()) + torch.mm(hx, w_hh.t()) + b_ih + b_hh
    ingate, forgetgate, cellgate, outgate = gates.chunk(4, 1)
    ingate = torch.sigmoid(ingate)
    forgetgate = torch.sigmoid(forgetgate)
    cellgate = torch.tanh(cellgate)
    outgate = torch.sigmoid(outgate)
    cy = (forgetgate * cx) + (ingate * cellgate)
    hy = outgate * torch.tanh(cy)
    return hy, cy


def dynamic_rnn(input, hidden: Tuple[torch.Tensor, torch.Tensor], wih, whh, bih, bhh):
    hx, cx = hidden
    outputs = []
    inputs = input.unbind(0)
    hy, cy = hx[0], cx[0]
    for seq_idx in range(len(inputs)):
        hy, cy = lstm_cell(inputs[seq_idx], (hy, cy), wih, whh, bih, bhh)
        outputs += [hy]
    return torch.stack(outputs), (hy.unsqueeze(0), cy.unsqueeze(0))


def checks(x, y: Optional[torch.Tensor], n: List[int], dev: torch.device):
    if y is None:
        raise RuntimeError("y must be \"given\"\n")
    if x.dim() != 2:
        raise ValueError("x must be a matrix")
    z = x + y
    if x.size(0) > 4:
        z = z * 0.5
    return z, x.dim(), x.device, n


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(3, 5)
        self.fc2 = torch.nn.Linear(5, 2)

    def forward(self, x):
        y = torch.relu(self.fc1(x))
        if y.size(0) > 1:
            y = y * 2.0
        return self.fc2(y), [1.5, 2.0], "hi", None


class Outer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()

    def forward(self, x):
        y, _, _, _ = self.block(x)
        return torch.tanh(y)


def traced(x):
    return x * 2 + x.size(0)


def relative(text):
    return text.replace(HERE + "/", "gen/").replace(os.path.dirname(torch.__file__) + "/", "torch/")


def write(name, graph):
    with open(os.path.join(OUT, name + ".ir"), "w") as f:
        f.write(relative(str(graph)))


def main():
    os.makedirs(OUT, exist_ok=True)
    x, h = torch.randn(2, 3), (torch.randn(2, 4), torch.randn(2, 4))
    w = [torch.randn(16, 3), torch.randn(16, 4), torch.randn(16), torch.randn(16)]
    write("lstm_cell_script", torch.jit.script(lstm_cell).graph)
    rnn = torch.jit.script(dynamic_rnn)
    write("dynamic_rnn_script", rnn.graph)
    write("dynamic_rnn_inlined", rnn.inlined_graph)
    write("lstm_cell_trace", torch.jit.trace(lstm_cell, (x, h, *w)).graph)
    write("checks_script", torch.jit.script(checks).graph)
    outer = torch.jit.script(Outer())
    write("module_script", outer.graph)
    write("module_inlined", outer.inlined_graph)
    write("scalar_trace", torch.jit.trace(traced, torch.randn(3)).graph)


if __name__ == "__main__":
    main()
