"""Writes tests/data/torchscript/cases/*: functions and modules as PyTorch 1.13 prints and runs them, each
folder as tools/torchscript_export.py writes it (graph.ir, inputs/, outputs/, grad_outputs/, grads/).
`graphir check` compares graphjit with PyTorch on each (tests/CMakeLists.txt). Run with Debian's
/usr/bin/python3:

    /usr/bin/python3 tests/data/gen/torchscript_cases.py

The `# file.py:line:col` comments name this script by its path relative to tests/data."""
import os
import shutil
import sys
from typing import List, Optional, Tuple

import torch
from torch import Tensor, nn

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "torchscript", "cases")
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "tools"))
import torchscript_export  # noqa: E402
# The parser fixtures' functions and module, run here as well
from torchscript_text import Block, dynamic_rnn, lstm_cell, relative  # noqa: E402


def tanh_rnn(xs, h, w, u):
    outputs: List[Tensor] = []
    for x in xs.unbind(0):
        h = torch.tanh(torch.mm(x, w) + torch.mm(h, u))
        if h.size(1) > 2:
            outputs.append(h * 0.5)
        else:
            outputs.append(h)
    return torch.stack(outputs, 0).sum()


def checks(x, y: Optional[Tensor], scale: float):
    if y is None:
        raise RuntimeError("y must be given")
    if x.dim() != 2:
        raise ValueError("x must be a matrix")
    z = torch.relu(x + y) * scale
    if x.size(0) > 4:
        z = z * 0.5
    return z, torch.tanh(x)


def traced(x, w):
    return torch.mm(x * 2 + x.size(0), w)


class LSTMCell(torch.nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.weight_ih = torch.nn.Parameter(torch.randn(4 * hidden_size, input_size) * 0.3)
        self.weight_hh = torch.nn.Parameter(torch.randn(4 * hidden_size, hidden_size) * 0.3)
        self.bias_ih = torch.nn.Parameter(torch.randn(4 * hidden_size) * 0.1)
        self.bias_hh = torch.nn.Parameter(torch.randn(4 * hidden_size) * 0.1)

    def forward(self, input: Tensor, state: Tuple[Tensor, Tensor]) -> Tuple[Tensor, Tuple[Tensor, Tensor]]:
        hx, cx = state
        gates = (torch.mm(input, self.weight_ih.t()) + self.bias_ih +
                 torch.mm(hx, self.weight_hh.t()) + self.bias_hh)
        ingate, forgetgate, cellgate, outgate = gates.chunk(4, 1)
        cy = (torch.sigmoid(forgetgate) * cx) + (torch.sigmoid(ingate) * torch.tanh(cellgate))
        hy = torch.sigmoid(outgate) * torch.tanh(cy)
        return hy, (hy, cy)


class LSTMLayer(torch.nn.Module):
    def __init__(self, input_size, hidden_size):
        super().__init__()
        self.cell = LSTMCell(input_size, hidden_size)

    def forward(self, input: Tensor, state: Tuple[Tensor, Tensor]) -> Tuple[Tensor, Tuple[Tensor, Tensor]]:
        inputs = input.unbind(0)
        outputs = torch.jit.annotate(List[Tensor], [])
        for i in range(len(inputs)):
            out, state = self.cell(inputs[i], state)
            outputs += [out]
        return torch.stack(outputs), state


class Outer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block()
        self.head = torch.nn.Linear(2, 4)

    def forward(self, x):
        y, _, _, _ = self.block(x)
        return self.head(torch.tanh(y))


def activations(x, y):
    """The pointwise ops people write beside the cells; y is positive (pow, reciprocal)."""
    a = 1 - x
    b = x.pow(2) + torch.pow(y, 0.5) + x ** 3 + torch.abs(x) + torch.reciprocal(y) + torch.sign(x)
    c = torch.clamp(x, -0.5, 0.5) + torch.clamp(x, min=0.1) + torch.clamp(x, max=0.2)
    d = x.clamp_min(-0.1) * x.clamp_max(0.3) + torch.maximum(x, y - 1) - torch.minimum(x, 0.5 - y)
    nn = torch.nn.functional
    e = nn.gelu(x) + nn.gelu(x, approximate="tanh") + nn.silu(x) + nn.leaky_relu(x, 0.2) + nn.hardtanh(x * 2)
    f = torch.erf(x) + torch.sin(x) * torch.cos(y)
    g = torch.ones_like(x) + torch.zeros_like(x) + torch.full_like(x, 2.5)
    return a * b + c * d + e * f + g, nn.relu(x) + torch.rsqrt(y) * torch.sqrt(y)


def more_pointwise(x, y, w):
    """Ops of PyTorch's fuser tests that graphjit lowers to its own rows; y is positive (log2, log10)."""
    nn = torch.nn.functional
    a = torch.log2(y) + torch.log10(y) + torch.tan(x)
    b = nn.relu6(x * 8) + nn.hardsigmoid(x * 4) + nn.threshold(x, 0.1, -2.0)
    c = torch.addcmul(x, y, w, value=0.5) + torch.lerp(x, y, 0.3) + torch.lerp(x, y, w)
    d = x.expand_as(w) * w.reshape_as(x) + y.view_as(x)
    e = torch.floor(x * 3) + torch.ceil(x * 3) * torch.trunc(y * 2) + torch.round(x * 3) + torch.frac(y * 2)
    return a * b + c * d + e, torch.isnan(torch.log(x))


def scalar_outputs(x, y):
    """A function that returns scalars beside a tensor: a bool, an int and a float."""
    n = x.size(0)
    return x * y, n == y.size(1), n - x.size(1), 0.25


# fastrnns' cells.py: the GRU cell and the two RNN cells
def rnn_cells(input, hidden, w_ih, w_hh, b_ih, b_hh, r_ih, r_hh, rb_ih, rb_hh):
    gi = torch.mm(input, w_ih.t()) + b_ih
    gh = torch.mm(hidden, w_hh.t()) + b_hh
    i_r, i_i, i_n = gi.chunk(3, 1)
    h_r, h_i, h_n = gh.chunk(3, 1)
    resetgate = torch.sigmoid(i_r + h_r)
    inputgate = torch.sigmoid(i_i + h_i)
    newgate = torch.tanh(i_n + resetgate * h_n)
    gru = newgate + inputgate * (hidden - newgate)
    pre = torch.mm(input, r_ih.t()) + rb_ih + torch.mm(hidden, r_hh.t()) + rb_hh
    return gru, torch.tanh(pre), torch.relu(pre)


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.GELU(), torch.nn.Linear(8, 8),
                                          torch.nn.SiLU(), torch.nn.Linear(8, 5), torch.nn.LeakyReLU(0.1))
        self.out = torch.nn.Linear(5, 3)

    def forward(self, x):
        return torch.log_softmax(self.out(torch.nn.functional.hardtanh(self.layers(x))), dim=-1)


def attention(q, k, v, scale: float):
    """Scaled dot-product attention as PyTorch 1.13's users write it (F.scaled_dot_product_attention is 2.0's):
    batched matmuls on [batch, heads, length, dim]."""
    scores = torch.matmul(q, k.transpose(-2, -1)) * scale
    return torch.matmul(torch.softmax(scores, dim=-1), v)


class SelfAttention(torch.nn.Module):
    """Multi-head self-attention from Linear projections, the heads split by view and transpose (the head
    size and scale kept as attributes: a trace records `d // heads` of sizes as tensor arithmetic)."""
    def __init__(self, dim=8, heads=2):
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.scale = self.head_dim ** -0.5
        self.qkv = torch.nn.Linear(dim, 3 * dim)
        self.proj = torch.nn.Linear(dim, dim)

    def forward(self, x):
        b, n, d = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        split = lambda t: t.view(b, n, self.heads, self.head_dim).transpose(1, 2)
        q, k, v = split(q), split(k), split(v)
        a = torch.softmax(torch.matmul(q, k.transpose(-2, -1)) * self.scale, dim=-1)
        return self.proj(torch.matmul(a, v).transpose(1, 2).reshape(b, n, d))


def extrema(x, y):
    """amax / amin over dims, as a max-pool over time or a log-sum-exp's shift writes them."""
    pooled = x.amax(dim=1) * torch.amin(y, dim=(0, 2), keepdim=True).sum()
    shift = x.amax(-1, keepdim=True)
    return pooled, torch.log(torch.exp(x - shift).sum(-1)) + shift.squeeze(-1)


def masking(scores, x, mask):
    """Comparisons giving bool tensors, where and masked_fill, as attention masks and piecewise
    activations write them."""
    p = torch.softmax(scores.masked_fill(mask, -1e9), dim=-1)
    leaky = torch.where(x > 0, x, 0.1 * x)
    capped = torch.where(x.le(0.5), leaky, torch.ones_like(x) * 0.5)
    floor = torch.where(x < -0.5, -0.5, capped)
    flat = torch.eq(x, x.clamp(-0.3, 0.3))
    mixed = torch.where(flat, x * x, p)
    return floor * p.sum(-1, keepdim=True), mixed.masked_fill(x.ne(x.clamp(max=0.7)), 2.0), x >= 0.25


def maxima(x, y):
    """max / min over a dim with their indices, over everything, and of two tensors."""
    values, where = torch.max(x, dim=1)
    low, _ = y.min(-1, keepdim=True)
    return values * torch.max(y), low + torch.min(x, y).sum(), where


class Gate(nn.Module):
    def __init__(self, n: int):
        super().__init__()
        self.lin = nn.Linear(n, 2 * n)
        self.norm = nn.LayerNorm(n)

    def forward(self, x: torch.Tensor, h: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
        a, b = self.lin(x).chunk(2, -1)
        z = torch.sigmoid(a)
        cand = torch.tanh(self.norm(b))
        h = (1 - z) * h + z * cand
        return h, torch.where(h > 0.1, h, torch.zeros_like(h))


class Encoder(nn.Module):
    """A gated recurrent encoder over the pointwise and reduction ops of the TorchScript issue, with a
    padding mask, max over a dim with its indices and a bool output."""
    def __init__(self):
        super().__init__()
        self.gate = Gate(6)
        self.head = nn.Linear(6, 3)

    def forward(self, xs: torch.Tensor, h: torch.Tensor, pad: torch.Tensor):
        outs: List[torch.Tensor] = []
        for t in range(xs.size(0)):
            h, o = self.gate(xs[t], h)
            outs += [o]
        y = torch.stack(outs)
        score = self.head(y).masked_fill(pad, -1e4)
        best, arg = score.max(dim=-1)
        spread = y.std(dim=0, unbiased=True) + y.var(-1, keepdim=True).mean()
        flat = torch.flatten(y, 1)
        m = torch.clamp(flat, min=-0.5).abs().sqrt() + torch.rsqrt(flat.pow(2) + 1.0)
        act = nn.functional
        q = act.gelu(m) * act.silu(flat) + act.leaky_relu(flat, 0.2) + act.hardtanh(flat, -0.3, 0.3)
        r = torch.maximum(torch.sin(flat), torch.cos(flat)) - torch.erf(flat).reciprocal().clamp(-3.0, 3.0)
        ok = (flat >= -0.2) == (flat <= 0.2)
        kept = nn.functional.dropout(h, 0.3, False) + torch.full_like(h, 0.5)
        return best * torch.amax(y, dim=(0, 1)).sum(), spread, q + r.masked_fill(ok, 0.0), arg, ok, kept


def rand(*shape):
    return torch.rand(*shape) * 2 - 1


def write(name, fn, inputs, trace=False):
    folder = os.path.join(OUT, name)
    shutil.rmtree(folder, ignore_errors=True)
    torchscript_export.export(fn, inputs, folder, trace=trace, seed=1)
    path = os.path.join(folder, "graph.ir")
    with open(path) as f:
        text = relative(f.read())
    with open(path, "w") as f:
        f.write(text)
    print("wrote", folder)


def main():
    torch.manual_seed(0)
    cell_args = lambda: (rand(3, 4), (rand(3, 5), rand(3, 5)), rand(20, 4), rand(20, 5), rand(20), rand(20))
    write("lstm_cell_script", lstm_cell, cell_args())
    write("lstm_cell_trace", lstm_cell, cell_args(), trace=True)
    write("dynamic_rnn", dynamic_rnn,
          (rand(4, 3, 4), (rand(1, 3, 5), rand(1, 3, 5)), rand(20, 4), rand(20, 5), rand(20), rand(20)))
    write("tanh_rnn", tanh_rnn, (rand(5, 2, 3), rand(2, 4), rand(3, 4), rand(4, 4)))
    write("checks", checks, (rand(6, 3), rand(6, 3), 1.5))
    write("scalar_trace", traced, (rand(3, 4), rand(4, 2)), trace=True)
    write("lstm_layer_module", LSTMLayer(4, 5), (rand(4, 3, 4), (rand(3, 5), rand(3, 5))))
    write("nested_module", Outer(), (rand(3, 3),))
    positive = lambda *shape: torch.rand(*shape) + 0.5
    write("activations_script", activations, (rand(4, 5), positive(4, 5)))
    write("activations_trace", activations, (rand(4, 5), positive(4, 5)), trace=True)
    write("rnn_cells", rnn_cells, (rand(3, 4), rand(3, 5), rand(15, 4), rand(15, 5), rand(15), rand(15),
                                   rand(5, 4), rand(5, 5), rand(5), rand(5)))
    write("mlp_module", MLP(), (rand(4, 6),))
    write("attention_script", attention, (rand(2, 3, 4, 5), rand(2, 3, 6, 5), rand(2, 3, 6, 4), 0.4472))
    write("attention_module_trace", SelfAttention(), (rand(2, 5, 8),), trace=True)
    write("extrema_script", extrema, (rand(3, 4, 5), rand(3, 4, 5)))
    mask = torch.rand(4, 6) > 0.6
    write("masking_script", masking, (rand(2, 4, 6), rand(2, 4, 6), mask))
    write("masking_trace", masking, (rand(2, 4, 6), rand(2, 4, 6), mask), trace=True)
    write("maxima_script", maxima, (rand(3, 4, 5), rand(3, 4, 5)))
    write("encoder_module", Encoder(), (rand(5, 2, 6), rand(2, 6), torch.rand(5, 2, 3) > 0.7))
    write_more_pointwise()


def write_more_pointwise():
    """The cases after the first ones, each with its own seed, so that adding one leaves the others as
    they were."""
    torch.manual_seed(50)
    positive = lambda *shape: torch.rand(*shape) + 0.5
    args = (rand(4, 5), positive(4, 5), rand(4, 5))
    write("more_pointwise_script", more_pointwise, args)
    write("more_pointwise_trace", more_pointwise, args, trace=True)
    write("scalar_outputs", scalar_outputs, (rand(3, 4), rand(3, 4)))
    write("size_arithmetic", size_arithmetic, (rand(5, 4), rand(6, 4)))


def size_arithmetic(q, k):
    """Arithmetic on sizes as attention writes it: pow(int, float), int * int, min and max of numbers,
    true division of ints, a float beside an int."""
    d = q.size(-1)
    scale = d ** 0.5
    n = q.size(0) * q.size(1)
    m = min(q.size(0), 3)
    h = d / 2
    return torch.matmul(q, k.transpose(0, 1)) / scale, n, m, h, max(scale, 1.5), h * 2 + 1, n - 0.5


if __name__ == "__main__":
    main()
