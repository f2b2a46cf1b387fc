"""Writes tests/data/audit/table.json and table.md: the edge-case audit, PyTorch 1.13's answers for the
cases where a compiler most easily answers wrongly without a word:

- every reduction on a 0-d tensor, along dim -1 and 0, with and without keepdim;
- every comparison, and every op that takes a scalar, beside an integer or bool tensor (PyTorch computes
  in the promoted type: int64 [1, 2] < 1.5 compares in float32);
- every gradient formula's masks at NaN, +-inf, +-0 and exactly at a clamp or threshold bound.

Each case is a scripted function as PyTorch prints it (the graph graphjit parses), its inputs, PyTorch's
outputs (exact dtypes) and the gradients of sum(output * grad_output) for every float input. tests/audit_test.cpp
runs every case under every fuser x executor, on the CPU and on the emulated CUDA driver. Floats are written
as Python's repr ('nan', '-inf', '-0.0' survive). Run with Debian's /usr/bin/python3:

    /usr/bin/python3 tests/data/gen/audit.py
"""
import json
import math
import os
from typing import List, Optional

import torch
from torch import Tensor

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "audit")
NAN, INF = float("nan"), float("inf")
# A mask's edge values: NaN, the infinities, both zeros and the bounds +-0.5 the cases clamp at.
EDGES = [NAN, -INF, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, INF]


def relative(text):
    return text.replace(HERE + "/", "gen/").replace(os.path.dirname(torch.__file__) + "/", "torch/")


# Reductions of a 0-d tensor: PyTorch takes dim -1 and 0 (and keepdim keeps it 0-d).
def sum_rank0(x):
    return (x.sum(-1), x.sum(0), x.sum([-1], keepdim=True), x.sum(0, keepdim=True), x.sum(), x.sum([]),
            x.mean(-1), x.mean([0], keepdim=True))


def extrema_rank0(x):
    a, i = torch.max(x, -1)
    b, j = torch.min(x, 0, keepdim=True)
    return x.amax(-1), x.amin([0], True), a, i, b, j, torch.max(x), torch.min(x)


def normalize_rank0(x):
    return (torch.softmax(x, -1), torch.log_softmax(x, 0), x.var(-1, unbiased=False), x.var([0], True, True),
            x.std(0, unbiased=False))


def unbiased_rank0(x):
    return x.var(-1), x.std([0], True, True)


# The same reductions where dims -1 and 0 are distinct, with ties, NaN and infinities in the rows.
def extrema_edges(x):
    a, i = torch.max(x, -1)
    b, j = torch.min(x, 0, keepdim=True)
    return x.amax(-1), x.amin([0], True), a, i, b, j, x.sum(-1, True), x.mean(0)


def softmax_edges(x):
    return torch.softmax(x, -1), torch.log_softmax(x, 0)


def moments_edges(x, c):
    """c: constant rows, whose std's gradient PyTorch makes 0 (not g / 0)."""
    return x.var(-1), x.std(0, keepdim=True), x.var(-1, unbiased=False), c.std(-1), c.std(-1, unbiased=False)


def layer_norm_edges(x, w, b):
    return torch.layer_norm(x, [4], w, b, 1e-5)


# Comparisons of integer and bool tensors with scalars they cannot hold.
def compare_int(x, s: float):
    return (x < 1.5, x <= -2.5, x > 1.5, x >= 16777216.5, x == 2.0, x != 2.5, x < 2, x == -3, x > s,
            torch.lt(x, 16777216.5), torch.gt(x, 16777216.5))


def compare_bool(b, s: float):
    return b >= -1, b < 0.5, b == 1, b != 2.5, b > 0, b <= s, b != 0, b > -0.5


def compare_float(x, n: int):
    return x < 1, x >= n, x == 0, x != 1, x > -1


# Arithmetic with a scalar beside an integer or bool tensor (PyTorch promotes: int64 + 1.5 is float32).
def arith_int_scalar(x):
    return x + 1.5, x * 2, x - 0.5, x / 2, x * 0.5


def arith_bool_scalar(b):
    return b + 1, b * 1.5


def compare_mixed(x, x0, t, f):
    """Integer tensors against float tensors of other ranks: the float's category wins, 0-d or not."""
    return x < t, x == f, x0 < 0.5, x0 >= t, x.gt(f.double()), (x > 1) == (f > 1.5)


def select_int_scalar(x, m):
    return (torch.where(m, x, 1.5), x.masked_fill(m, 2.7), torch.where(m, 2, x), torch.where(m, m, 0.5),
            m.masked_fill(m, 0), torch.full_like(x, 2.5), torch.ones_like(m), torch.zeros_like(x))


def float_of_int(x, b):
    """PyTorch's float-valued functions of integer and bool tensors compute in float32."""
    return (torch.cos(x), torch.exp(x), torch.sigmoid(x), torch.tanh(x), torch.sqrt(x), torch.log(x),
            torch.rsqrt(x), torch.reciprocal(x), torch.erf(x), torch.sin(b), x / b, b / 2)


def clamp_int_scalar(x):
    return torch.clamp(x, 0.5, 1.5), torch.clamp(x, min=0), 1.5 - x, x ** 2


# Gradient masks: each op of the element at a mask's edge (a: EDGES; b: ones, so that a * b == a exactly and
# the product keeps a fusion partner on both passes).
def clamp_nan(a, b):
    y = a + b
    return torch.clamp(y, -0.5, 0.5), torch.clamp(y, min=-0.5), torch.clamp(y, max=0.5)


def clamp_forms(a, b):
    y = a * b
    return (torch.clamp(y, -0.5, 0.5), torch.clamp(y, min=-0.5), torch.clamp(y, max=0.5),
            torch.clamp_min(y, -0.5), torch.clamp_max(y, 0.5))


def clamp_infinite_bounds(a, b):
    y = a * b
    inf = float("inf")
    return torch.clamp(y, -inf, inf), torch.clamp(y, min=-inf), torch.clamp(y, max=inf), torch.clamp(y, 0.5, -0.5)


def relu_edges(a, b):
    return torch.relu(a * b)


def hardtanh_edges(a, b):
    return torch.nn.functional.hardtanh(a * b, -0.5, 0.5)


def leaky_relu_edges(a, b):
    return torch.nn.functional.leaky_relu(a * b, 0.1)


def abs_sign_edges(a, b):
    y = a * b
    return torch.abs(y), torch.sign(y) * b


def maximum_edges(a, b, c):
    y = a * b
    return torch.maximum(y, c), torch.minimum(y, c)


def powers_edges(a, b):
    y = a * b
    return y.pow(2.0), y.pow(0.5), y.pow(0.0), y.pow(-1.0), y.pow(3)


def roots_edges(a, b):
    y = a * b
    return torch.sqrt(y), torch.rsqrt(y), torch.log(y), torch.reciprocal(y), y / b.neg().add(1.0)


def smooth_edges(a, b):
    y = a * b
    return torch.exp(y), torch.sigmoid(y), torch.tanh(y), torch.erf(y), torch.sin(y), torch.cos(y)


def activations_edges(a, b):
    y = a * b
    return torch.nn.functional.gelu(y), torch.nn.functional.silu(y)


def select_edges(a, b, m):
    y = a * b
    return torch.where(m, y, b), y.masked_fill(m, 0.25), torch.where(y > 0, y, 0.0)


def pool_edges(x):
    """max_pool2d over windows with ties, NaN and -inf: the gradient goes to the window's first maximum, or
    its NaN."""
    return torch.nn.functional.max_pool2d(x, 2, 1)


def loss_edges(logits, target):
    """cross_entropy where a logit is -inf (its probability 0) and where the target's logit is the only
    finite one."""
    # the aten op itself: F.cross_entropy's reduction checks print aten::warn (the fuser-tests issue)
    return torch._C._nn.cross_entropy_loss(logits, target, None, 1, -100, 0.0), torch.log_softmax(logits, 1)


def batch_norm_edges(x, w, b):
    """A channel whose values are all equal: its normalized values 0, its gradient through the variance 0.
    eps 0.25 makes that channel's 1 / sqrt(var + eps) exact, so that PyTorch's float32 multiply-add form
    (x * a + (b - mean * a)) rounds no differently from a two-pass one."""
    # the aten op itself: F.batch_norm's size check is int arithmetic on sizes (the fuser-tests issue)
    return torch.batch_norm(x, w, b, None, None, True, 0.1, 0.25, False)


def rounding_edges(a, b):
    y = a * b
    return torch.floor(y), torch.ceil(y), torch.trunc(y), torch.round(y), torch.frac(y)


def lowered_edges(a, b):
    """The ops lower-overloads writes as graphjit's rows, and hardswish, at their bounds (relu6's 0 and 6,
    hardsigmoid's and hardswish's -3 and 3, threshold's and hardshrink's 0.5), NaN and infinities."""
    y = a * b
    nn = torch.nn.functional
    return (nn.relu6(y), nn.hardsigmoid(y), nn.threshold(y, 0.5, -1.0), torch.isnan(y), torch.log2(y),
            torch.log10(y), nn.hardswish(y), nn.hardshrink(y, 0.5))


def tensor(values, dtype=torch.float32):
    return torch.tensor(values, dtype=dtype)


def rank0(v):
    return torch.tensor(v, dtype=torch.float32)


ROUNDING = [-2.5, -1.5, -0.5, -0.0, 0.0, 0.5, 1.5, 2.5, 3.0, -3.0, 6.0, 0.25, -0.75, NAN, INF, -INF]


def grid():
    """Rows with ties, NaN and infinities: [5, 4]."""
    return tensor([[1.0, 3.0, 3.0, -2.0], [NAN, 2.0, 1.0, 0.5], [-INF, -INF, -INF, -INF], [INF, 0.0, INF, -1.0],
                   [0.25, -0.0, 0.0, 0.75]])


CASES = [
    # name, what, function, inputs
    ("sum_rank0", "sum and mean of a 0-d tensor over dims -1, 0, [] and none, keepdim or not", sum_rank0,
     [rank0(0.7)]),
    ("extrema_rank0", "amax, amin, max.dim and min.dim (values and indices), max and min of a 0-d tensor",
     extrema_rank0, [rank0(-1.25)]),
    ("normalize_rank0", "softmax, log_softmax, biased var and std and an unbiased var of a 0-d tensor",
     normalize_rank0,
     [rank0(0.3)]),
    ("unbiased_rank0", "unbiased var and std of a 0-d tensor: NaN, and PyTorch's gradients of it",
     unbiased_rank0, [rank0(0.3)]),
    ("extrema_edges", "amax, amin, max.dim, min.dim, sum and mean over dims -1 and 0 with ties, NaN and "
     "infinities", extrema_edges, [grid()]),
    ("softmax_edges", "softmax and log_softmax with -inf, inf and NaN in rows", softmax_edges, [grid()]),
    ("moments_edges", "var and std of rows holding NaN and infinities, and std of constant rows", moments_edges,
     [grid(), tensor([[0.5, 0.5, 0.5], [-2.0, -2.0, -2.0]])]),
    ("layer_norm_edges", "layer_norm of a constant row, a row with NaN and one with inf", layer_norm_edges,
     [grid(), tensor([0.5, -1.0, 2.0, 1.5]), tensor([0.1, 0.0, -0.2, 0.3])]),
    ("compare_int", "int64 tensor against float and int scalars, a constant and an input", compare_int,
     [torch.tensor([1, 2, -3, 16777217, 0]), 0.5]),
    ("compare_bool", "bool tensor against int, float and bool scalars", compare_bool,
     [torch.tensor([True, False, True]), 0.5]),
    ("compare_float", "float tensor against int and bool scalars", compare_float,
     [tensor([NAN, -1.0, 0.0, 1.0, 2.0, INF]), 2]),
    ("arith_int_scalar", "int64 tensor + - * / a float or int scalar", arith_int_scalar,
     [torch.tensor([1, 2, -3, 7])]),
    ("arith_bool_scalar", "bool tensor + an int, * a float", arith_bool_scalar, [torch.tensor([True, False])]),
    ("compare_mixed", "int64 tensors against float32 and float64 tensors, 0-d and not", compare_mixed,
     [torch.tensor([1, 2, -3, 16777217]), torch.tensor(1), rank0(1.5),
      tensor([1.0, 2.5, -3.0, 16777216.0])]),
    ("select_int_scalar", "where and masked_fill of an int64 tensor with float and int scalars",
     select_int_scalar, [torch.tensor([1, 2, -3, 0]), torch.tensor([True, False, False, True])]),
    ("float_of_int", "cos, exp, sigmoid, tanh, sqrt, log, rsqrt, reciprocal, erf of int64 and sin, true division of bool",
     float_of_int, [torch.tensor([1, 2, -3, 0, 7]), torch.tensor([True, False, True, True, False])]),
    ("clamp_int_scalar", "clamp, rsub and pow of an int64 tensor with scalars", clamp_int_scalar,
     [torch.tensor([1, 2, -3, 0])]),
    ("pool_edges", "max_pool2d (2 x 2, stride 1) over windows with ties, NaN and -inf", pool_edges,
     [tensor([[[[1.0, 1.0, 0.5], [1.0, NAN, -INF], [-INF, -INF, 2.0]]]])]),
    ("loss_edges", "cross_entropy and log_softmax with -inf logits", loss_edges,
     [tensor([[0.5, -INF, 1.0], [-INF, 2.0, -INF], [0.25, 0.25, 0.25]]), torch.tensor([0, 1, 2])]),
    ("batch_norm_edges", "batch_norm in training with a constant channel", batch_norm_edges,
     [tensor([[[0.5, 0.5], [1.0, -1.0]], [[0.5, 0.5], [2.0, 0.0]]]), tensor([1.5, -0.5]), tensor([0.1, 0.2])]),
    ("clamp_nan", "clamp(a + b), b NaN at every other element, in the three clamp forms: the issue's case", clamp_nan,
     [tensor(EDGES), tensor([0.0, NAN, 0.0, NAN, 0.0, NAN, 0.0, NAN, 0.0])]),
    ("clamp_forms", "clamp, clamp(min=), clamp(max=), clamp_min, clamp_max at the mask's edges", clamp_forms,
     [tensor(EDGES), tensor([1.0] * 9)]),
    ("clamp_infinite_bounds", "clamp with infinite bounds, and with min > max", clamp_infinite_bounds,
     [tensor(EDGES), tensor([1.0] * 9)]),
    ("relu_edges", "relu at the mask's edges", relu_edges, [tensor(EDGES), tensor([1.0] * 9)]),
    ("hardtanh_edges", "hardtanh(-0.5, 0.5) at the mask's edges and its bounds", hardtanh_edges,
     [tensor(EDGES), tensor([1.0] * 9)]),
    ("leaky_relu_edges", "leaky_relu(0.1) at the mask's edges", leaky_relu_edges,
     [tensor(EDGES), tensor([1.0] * 9)]),
    ("abs_sign_edges", "abs and sign at the mask's edges", abs_sign_edges, [tensor(EDGES), tensor([1.0] * 9)]),
    ("maximum_edges", "maximum and minimum against ties, NaN on either side and infinities", maximum_edges,
     [tensor(EDGES), tensor([1.0] * 9), tensor([0.0, NAN, -1.0, 0.5, 0.0, -0.0, 0.5, INF, INF])]),
    ("powers_edges", "pow by 2, 0.5, 0, -1 and 3 at the mask's edges", powers_edges,
     [tensor(EDGES), tensor([1.0] * 9)]),
    ("roots_edges", "sqrt, rsqrt, log, reciprocal and division by zero at the mask's edges", roots_edges,
     [tensor(EDGES), tensor([1.0] * 9)]),
    ("smooth_edges", "exp, sigmoid, tanh, erf, sin and cos at the mask's edges", smooth_edges,
     [tensor(EDGES), tensor([1.0] * 9)]),
    ("activations_edges", "gelu and silu at the mask's edges", activations_edges,
     [tensor(EDGES), tensor([1.0] * 9)]),
    ("rounding_edges", "floor, ceil, trunc, round (halves to even) and frac at halves, integers, -0, NaN and "
     "infinities", rounding_edges, [tensor(ROUNDING), tensor([1.0] * len(ROUNDING))]),
    ("lowered_edges", "relu6, hardsigmoid, threshold, isnan, log2, log10, hardswish and hardshrink at their "
     "bounds, NaN and infinities",
     lowered_edges, [tensor(ROUNDING), tensor([1.0] * len(ROUNDING))]),
    ("select_edges", "where and masked_fill's gradients with NaN and infinities on the unselected side",
     select_edges, [tensor(EDGES), tensor([1.0] * 9),
                    torch.tensor([True, False, True, False, True, False, True, False, True])]),
]


def encode(v):
    """A tensor or scalar as JSON: dtype, shape and values (floats as repr strings)."""
    if isinstance(v, bool):
        return {"scalar": "bool", "value": v}
    if isinstance(v, int):
        return {"scalar": "int", "value": v}
    if isinstance(v, float):
        return {"scalar": "float", "value": repr(v)}
    dtype = str(v.dtype).replace("torch.", "")
    flat = v.detach().reshape(-1).tolist()
    values = [repr(float(e)) for e in flat] if v.is_floating_point() else flat
    return {"dtype": dtype, "shape": list(v.shape), "values": values}


def flatten(value):
    return [e for v in value for e in flatten(v)] if isinstance(value, tuple) else [value]


def run_case(name, what, fn, inputs):
    scripted = torch.jit.script(fn)
    graph = relative(str(scripted.inlined_graph))  # F.hardtanh and friends' bodies in place
    encoded_inputs = [encode(v) for v in inputs]  # before the run, which may update one in place (add_)
    names = [v.debugName().split(".")[0] for v in scripted.graph.inputs()]
    leaves = [t.clone().requires_grad_(True)
              if isinstance(t, Tensor) and t.dtype in (torch.float32, torch.float64) else t for t in inputs]
    outputs = flatten(scripted(*leaves))
    gen = torch.Generator().manual_seed(len(name))
    grad_outputs = [torch.rand(o.shape, generator=gen, dtype=o.dtype) + 0.5
                    if isinstance(o, Tensor) and o.is_floating_point() and o.requires_grad else None for o in outputs]
    wanted = [t for t in leaves if isinstance(t, Tensor) and t.requires_grad]
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if g is not None]
    grads = [None] * len(leaves)
    if pairs and wanted:
        got = torch.autograd.grad([o for o, _ in pairs], wanted, [g for _, g in pairs], allow_unused=True)
        it = iter(got)
        grads = [next(it) if isinstance(t, Tensor) and t.requires_grad else None for t in leaves]
    return {
        "name": name,
        "what": what,
        "graph": graph,
        "inputs": [dict(e, name=n) for n, e in zip(names, encoded_inputs)],
        "outputs": [encode(o) for o in outputs],
        "grad_outputs": [encode(g) if g is not None else None for g in grad_outputs],
        "grads": [encode(g) if g is not None else None for g in grads],
    }


def cell(v):
    if v is None:
        return ""
    if "scalar" in v:
        return f"{v['scalar']} {v['value']}"
    vals = ", ".join(str(e).lower() if isinstance(e, bool) else str(e) for e in v["values"])
    shape = "x".join(str(d) for d in v["shape"]) or "0-d"
    return f"{v['dtype']} {shape} [{vals}]"


def markdown(cases):
    lines = ["# The edge-case audit: PyTorch's answers", "",
             f"Written by `gen/audit.py` with PyTorch {torch.__version__}; `table.json` holds the same values "
             "with each case's graph. tests/audit_test.cpp runs every case under every fuser x executor on the "
             "CPU and the emulated CUDA driver. Output k of a case is its function's k-th return value "
             "(tuples flattened); a gradient is that of sum(output * grad_output) over the outputs.", ""]
    for c in cases:
        lines += [f"## {c['name']}", "", c["what"] + ".", "", "| value | PyTorch |", "| --- | --- |"]
        lines += [f"| input {i['name']} | {cell(i)} |" for i in c["inputs"]]
        lines += [f"| output {k} | {cell(o)} |" for k, o in enumerate(c["outputs"])]
        lines += [f"| grad_output {k} | {cell(g)} |" for k, g in enumerate(c["grad_outputs"]) if g]
        lines += [f"| gradient of {i['name']} | {cell(g)} |" for i, g in zip(c["inputs"], c["grads"]) if g]
        lines.append("")
    return "\n".join(lines)


def main():
    os.makedirs(OUT, exist_ok=True)
    cases = [run_case(*c) for c in CASES]
    with open(os.path.join(OUT, "table.json"), "w") as f:
        json.dump({"torch": torch.__version__, "cases": cases}, f, indent=1)
        f.write("\n")
    with open(os.path.join(OUT, "table.md"), "w") as f:
        f.write(markdown(cases))
    print(f"wrote {len(cases)} cases to {os.path.relpath(OUT)}/table.json and table.md")


# Cases added after the table above (here, so that the functions above keep their source lines, which the
# graphs' comments quote).
def inverse_and_hyperbolic_edges(a, b):
    y = a * b
    return (torch.expm1(y), torch.log1p(y), torch.atan(y), torch.asin(y), torch.acos(y), torch.sinh(y),
            torch.cosh(y), torch.erfc(y))


def more_float_of_int(x):
    """More float-valued functions of an integer tensor: computed in float32."""
    return (torch.expm1(x), torch.log1p(x), torch.atan(x), torch.asin(x), torch.acos(x), torch.sinh(x),
            torch.cosh(x), torch.erfc(x))


def softplus_elu_mish_edges(a, b):
    y = a * b
    return (torch.nn.functional.softplus(y), torch.nn.functional.softplus(y, 2.0, 1.0), torch.nn.functional.elu(y),
            torch.nn.functional.elu(y, 0.5), torch.nn.functional.mish(y))


def atan2_fmod_remainder_edges(a, b, c):
    y = a * b
    return torch.atan2(y, c), torch.fmod(y, c), torch.remainder(y, c), torch.fmod(y, -0.75), torch.remainder(y, -0.75)


def more_float_of_int2(x, y):
    """atan2 of int64 tensors is float32; fmod and remainder by a float number too."""
    return torch.atan2(x, y), torch.fmod(x, 1.5), torch.remainder(x, -1.5)


def detach_stops_gradient(a, b):
    y = a * b
    return y.detach() * a, torch.sin(y).detach() + b


def div_rounding_modes(a, b):
    return (torch.div(a, b, rounding_mode="floor"), torch.div(a, b, rounding_mode="trunc"),
            torch.div(a, 0.1, rounding_mode="floor"), torch.div(a, -0.3, rounding_mode="trunc"))


def narrow_integers(a, b, u, s, i):
    return (a + b, a * 3, a < 300, u - 1, u + a, -u, i * i, s // b, a / b, torch.sum(a), torch.abs(a),
            torch.clamp(a, -5, 5), torch.where(a > b, a, b), torch.cat([a, b]), torch.max(a), a.to(torch.int32),
            u >= -1, s.float(), torch.remainder(s, b))


def half_precision(h, b, x):
    return (h + 0.1, h * h, h < 0.1, torch.exp(b), b * 3.3, h + b, torch.sum(h), h.float(), x.half(),
            x.to(torch.bfloat16), torch.relu(b), torch.sigmoid(b), h / 3, x.to(torch.int8), torch.tanh(b), h + x,
            torch.mean(b), torch.max(h), torch.abs(h), torch.where(h > 0.5, h, -h), torch.cat([h, h]))


def bitwise_ops(a, b, c, m, n, s):
    return (a & b, a | b, a ^ b, ~a, a << c, a >> c, m & n, m | n, m ^ n, ~m, a & 6, m ^ 1, n | 2,
            torch.bitwise_and(a, b), torch.bitwise_xor(m, n), s << 3, s >> 2, s & a, ~s, s ^ 300)

def tensor_bounds_and_bases(x, lo, hi, m, v, e):
    return (torch.clamp(x, lo, hi), torch.clamp(x, min=lo), torch.clamp(x, max=hi), torch.clamp_min(x, lo),
            torch.clamp_max(x, hi), x.masked_fill(m, v), 2.0 ** x, torch.pow(3, e), torch.pow(2.5, e))

def stack_permute(a, b):
    return torch.stack([a * 2.0, b, a + b]).permute(1, 0, 2), torch.sum(a.view([3, 2]), [1])

def other_forms(x, c, flag: bool):
    y = x * 2.0 if flag == True else x
    return (torch.nn.functional.adaptive_avg_pool2d(c, [2, 2]), y.to(device=x.device) + 1.0,
            x.to(x.device, torch.float64), y.to(dtype=torch.float64, device=x.device))

def integer_products(a, b, c, s, t):
    return (torch.mm(a, b), torch.matmul(c, b), torch.matmul(a[0], b[:, 1]), torch.matmul(s, t), a @ b.t().t())

def scalar_bases_and_logical(x, i, b):
    return (3 % x.detach(), 3 % i, 2.5 % i, 2 ** x, torch.square(b), torch.square(i), torch.square(x),
            torch.logical_and(x, i), torch.logical_or(b, x), torch.logical_xor(x, b), torch.logical_not(x), torch.logical_not(i))

def gamma_edges(x, i):
    return torch.lgamma(x), torch.digamma(x.detach()), torch.lgamma(i), torch.digamma(i)

def sized_factories(x, n, k: int):
    n.add_(1)
    with torch.jit.strict_fusion():
        y = x + torch.ones(3) * n
    grown = torch.empty(0)
    for j in range(k):
        grown = torch.cat([grown, x[j:j + 1] * 2.0])
    return (y, torch.zeros([k, 2], dtype=torch.float64), torch.full([2], 7), torch.full([2], 1.5),
            torch.full([1], 2, dtype=torch.bool), torch.ones(2, dtype=torch.int32) + k, grown, torch.empty_like(x) * 0.0 + 1.0)

def autocast_casts(x):
    z = torch.sigmoid(x)._autocast_to_reduced_precision(True, True, torch.bfloat16, torch.bfloat16)
    h = z._autocast_to_full_precision(True, True)
    return (z, h, h * 2.0, x._autocast_to_full_precision(True, True),
            x._autocast_to_reduced_precision(False, False, torch.half, torch.half))


def empty_broadcasts(a, b, c):
    """Products and sums of tensors with no elements, broadcast (their gradients sum over the broadcast dim)."""
    return a * b, (a * b).sum(-1), torch.relu(c) + 1.0


def scalars_in_self_dtype(x, f):
    """Numbers PyTorch casts to the tensors' dtype instead of promoting them: addcmul's value, hardtanh's bounds
    and threshold's threshold (3.14 beside int64 is 3, -0.5 is 0, -1.5 is -1); beside floats they stay."""
    return (torch.addcmul(x, x, x, value=3.14), torch.addcmul(x, x, x, value=-0.5),
            torch.nn.functional.hardtanh(x, -2.5, 2.5), torch.threshold(x, -1.5, 7), torch.threshold(x, 2.0, -9),
            torch.addcmul(f, f, f, value=0.5), torch.threshold(f, -1.5, 7.0), torch.addcmul(x, f, f, value=0.5))


def xlogy_forms(a, b, e, y, n):
    """xlogy: x log y, 0 where x is 0 but NaN where y is NaN, of tensors, numbers and int64 (in float32);
    the edges (e, y) without gradients, which PyTorch takes as x / y even where x is 0."""
    return (torch.xlogy(a, b), torch.xlogy(a, 2.5), torch.xlogy(e.detach(), y.detach()), torch.xlogy(n, n),
            torch.xlogy(e.detach(), float("nan")), torch.xlogy(n, 0.5))


def as_views(x, other):
    """expand_as, reshape_as and view_as: to another tensor's sizes."""
    return x.view_as(other) * 2.0, x.reshape_as(other) + 1.0, x[0:1].expand_as(x) - x

def more_activations(x, h, n):
    """log_sigmoid (past softplus's threshold too), celu, selu, sgn, exp2 (of float16 rounded once), deg2rad,
    rad2deg and logit with and without eps, and the float ones of int64."""
    return (torch.nn.functional.logsigmoid(x), torch.nn.functional.celu(x, 0.5), torch.nn.functional.selu(x),
            torch.sgn(x), torch.exp2(x), torch.exp2(h), torch.deg2rad(x), torch.rad2deg(x),
            torch.logit(torch.sigmoid(x)), torch.logit(torch.sigmoid(x), 0.25), torch.exp2(n), torch.deg2rad(n),
            torch.logit(n))

def variance_forms(x):
    """var and std of everything by unbiased alone, with dim None, and with PyTorch 2's correction 0 and 1."""
    return (x.var(False), x.std(True), torch.var(x, None, True, False), torch.std(x, [0], correction=0),
            torch.var(x, [1], correction=1, keepdim=True))

CASES += [
    ("autocast_casts", "autocast's casts as a trace of torch.autocast code prints them: float32 to bfloat16 "
     "(the reduced dtype of either device: the audit's answers hold on both) and back, float32 left alone by the "
     "full-precision cast and by a reduced one with the flags off; the gradient cast back through bfloat16",
     autocast_casts,
     [tensor([0.3, -1.7, 2.0, NAN, 0.0, -INF, 1e-3, 40.0])]),
    ("scalar_bases_and_logical", "a number modulo a tensor (3 % x: PyTorch's remainder, the divisor's sign; 1.13 "
     "has no gradient for it) and to a tensor's power in the promoted dtype, square (of a bool: int64), and "
     "logical_and, or, xor and not of floats (NaN is true), int64 and bools", scalar_bases_and_logical,
     [tensor([0.5, -1.5, 2.0, NAN, 0.0, -0.0, 4.0, -7.0]), torch.tensor([2, -2, 4, 5, 1, -3, 7, 6]),
      torch.tensor([True, False, True, False, True, True, False, False])]),
    ("gamma_edges", "lgamma and its gradient (digamma) at the poles (0, -1, -0, -inf), at inf, NaN and between, "
     "digamma itself (no gradient), and both of int64 (in float32)", gamma_edges,
     [tensor(EDGES + [2.5, -2.5, 1e-3, 30.0, -7.25, 1.4616321]),
      torch.tensor([0, 1, 2, -3, 10, 171, -9223372036854775807, 9223372036854775807, 5, 6, 7, 8, 9, 11, 12])]),
    ("sized_factories", "ones, zeros, empty, full (its dtype from the fill value or given) by sizes, empty_like, a buffer's "
     "in-place add_ read after it, and a torch.jit.strict_fusion block", sized_factories,
     [tensor([0.5, -1.5, 2.0]), torch.tensor([4]), 2]),
    ("integer_products", "matrix products of int64 (wrapping past int64's ends), batched and of vectors, and of int8 "
     "(wrapping in int8), as PyTorch's exact integer products", integer_products,
     [torch.tensor([[1, -2, 3], [4611686018427387904, 5, -6]]), torch.tensor([[7, 8], [-9, 10], [11, -12]]),
      torch.tensor([[[1, 2, 3]], [[-4, 5, 6]]]),
      torch.tensor([[100, -50], [3, 127]], dtype=torch.int8), torch.tensor([[2, 1], [-1, 3]], dtype=torch.int8)]),
    ("other_forms", "adaptive_avg_pool2d of a 3-d input, to(device=..., dtype=...) in its two printed forms, and "
     "a bool compared with True", other_forms,
     [tensor([0.5, -1.5, 2.0, NAN]), tensor([float(v) / 7 for v in range(24)]).view(2, 3, 4), True]),
    ("stack_permute", "permute's dims and view's sizes as lists of constants (not folded) with gradients, under "
     "the profiling executor as under the legacy one", stack_permute,
     [tensor([0.5, -1.5, 2.0, 3.0, -0.25, 1.0]).view(2, 3), tensor([1.5, 0.25, -2.0, 1.0, 4.0, -3.0]).view(2, 3)]),
    ("tensor_bounds_and_bases", "clamp, clamp_min and clamp_max by tensors (NaN in each operand, ties with each "
     "bound, bounds equal and crossed), masked_fill by a 0-d tensor, and a number "
     "to the power of a tensor", tensor_bounds_and_bases,
     [tensor([0.5, -2.0, 3.0, NAN, 1.0, 0.0, 2.0, 5.0, 0.0, 1.0, 2.0, 1.0, 0.0, 1.5]),
      tensor([0.0, -1.0, 1.0, 0.0, NAN, 0.0, 1.0, 3.0, 1.0, 1.0, 1.0, 1.0, 3.0, 3.0]),
      tensor([1.0, 0.0, 2.0, 1.0, 2.0, NAN, 2.0, 1.0, 1.0, 1.0, 1.0, 2.0, 1.0, 1.0]),
      torch.tensor([True, False, True, False, True, False, True, False, True, False, True, False, True, False]),
      torch.tensor(7.0), torch.tensor([1, 2, 0, -1, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12])]),
    ("bitwise_ops", "&, |, ^, ~, << and >> of int64 (negative values, counts 0 to 63), of bools (logical) and of "
     "int8 (wrapping: 300 beside int8 is 44), with tensors and numbers, and the named forms",
     bitwise_ops,
     [torch.tensor([5, -5, 12, -1, 0, 9223372036854775807]), torch.tensor([3, 6, -8, 255, -1, -2]),
      torch.tensor([0, 1, 3, 63, 62, 7]), torch.tensor([True, False, True, False, True, True]),
      torch.tensor([True, True, False, False, False, True]),
      torch.tensor([1, -128, 127, 50, -3, 0], dtype=torch.int8)]),
    ("narrow_integers", "uint8, int8, int16 and int32 in arithmetic (wrapping in their own width), comparisons "
     "with numbers they cannot hold (300 beside int8 is 44, -1 beside uint8 255), promotion (uint8 with int8 "
     "meets in int16), floor and true division, sums in int64, abs of -128, clamp, where, cat, max and casts",
     narrow_integers,
     [torch.tensor([1, 50, -7, 127, -128, 100], dtype=torch.int8),
      torch.tensor([3, -4, 2, 1, -1, 100], dtype=torch.int8),
      torch.tensor([0, 200, 255, 1, 128, 7], dtype=torch.uint8),
      torch.tensor([-300, 7, 32767, -32768, 9, -9], dtype=torch.int16),
      torch.tensor([65536, -46341, 3, 2147483647, -2, 46341], dtype=torch.int32)]),
    ("half_precision", "float16 and bfloat16 computed in float32 and rounded once: numbers rounded to the "
     "tensor's dtype first (0.1 beside float16), exp, tanh, sigmoid and relu of bfloat16 (PyTorch 1.13 has no "
     "CPU float16 kernels for them), float16 with bfloat16 in float32, sums, means and max, casts "
     "from float32 (overflow to inf, underflow to 0 and to subnormals, NaN, ties) and to int8 (300.7 is 44)",
     half_precision,
     [torch.tensor([0.1, 1.0, -2.5, 65504.0, 6.1e-5, -0.0, NAN, INF], dtype=torch.float16),
      torch.tensor([1.5, 2.5, -3.0e38, 1.0e-38, 0.1, -0.0, NAN, -INF], dtype=torch.bfloat16),
      torch.tensor([300.7, 65520.0, 65519.0, 1.0e-8, 3.0e-8, 2049.0, NAN, -1.0e5])]),
    ("div_rounding_modes", "div with rounding_mode 'floor' (PyTorch's from fmod: 1 // 0.1 is 9) and 'trunc', by "
     "tensors of both signs, zero and infinities and by numbers; gradients 0", div_rounding_modes,
     [tensor([1.0, -1.0, 7.5, -7.5, 0.5, -0.0, NAN, INF, 3.0, 1.0, -2.0, 0.3]),
      tensor([0.1, 0.1, 2.0, 2.0, -0.25, 1.0, 1.0, 2.0, 0.0, -INF, INF, 0.1])]),
    ("detach_stops_gradient", "detach: its values, and no gradient through it (a's gradient is b * a, not 2 a b)",
     detach_stops_gradient, [tensor([0.5, -1.5, 2.0, NAN]), tensor([1.5, 0.25, -2.0, 1.0])]),
    ("atan2_fmod_remainder_edges", "atan2, fmod and remainder (by a tensor and by a negative number) at the mask's "
     "edges against divisors of both signs, zeros and infinities", atan2_fmod_remainder_edges,
     [tensor(EDGES + [7.5, -7.5, 2.0]), tensor([1.0] * 12),
      tensor([2.0, 2.0, -0.75, 0.3, 1.0, -1.0, -0.3, INF, -INF, 2.0, 2.0, 0.0])]),
    ("more_float_of_int2", "atan2 of int64 tensors, fmod and remainder of int64 by float numbers", more_float_of_int2,
     [torch.tensor([1, -2, 3, 0, 7]), torch.tensor([2, 3, -4, 0, -1])]),
    ("softplus_elu_mish_edges", "softplus (default, and beta 2 with threshold 1), elu (alpha 1 and 0.5) and mish at "
     "the mask's edges and past softplus's threshold", softplus_elu_mish_edges,
     [tensor(EDGES + [30.0, -30.0, 100.0]), tensor([1.0] * 12)]),
    ("inverse_and_hyperbolic_edges", "expm1, log1p, atan, asin, acos, sinh, cosh and erfc at the mask's edges "
     "(log1p's pole at -1, asin's and acos's at +-1)", inverse_and_hyperbolic_edges,
     [tensor(EDGES), tensor([1.0] * 9)]),
    ("more_float_of_int", "expm1, log1p, atan, asin, acos, sinh, cosh and erfc of int64 (NaN outside their domains)",
     more_float_of_int, [torch.tensor([1, 2, -3, 0, 7, -1])]),
    ("empty_broadcasts", "a product of [0, 1, 3] and [0, 10, 3] tensors with its gradients (a sum over the "
     "broadcast dim of nothing), its sum, and a [2, 0] tensor's relu", empty_broadcasts,
     [torch.zeros(0, 1, 3), torch.zeros(0, 10, 3), torch.zeros(2, 0)]),
    ("scalars_in_self_dtype", "addcmul's value, hardtanh's bounds and threshold's threshold cast to an int64 "
     "tensor's dtype (truncated), kept beside float32, and addcmul of int64 by float32 tensors (float32, the "
     "value kept)", scalars_in_self_dtype,
     [torch.tensor([5, -5, 1, 0, -1, 2, -2, 3]), tensor([0.5, -1.5, 2.0, -1.0, 3.25, -0.75, 1.0, 0.0])]),
    ("xlogy_forms", "xlogy of tensors, by a number, at x = 0 against y = 0, NaN, inf and -1, of int64 and by NaN",
     xlogy_forms,
     [tensor([0.5, 1.5, 2.0, 3.0, 0.25, 4.0]), tensor([0.5, 2.0, 1.5, 0.1, 3.0, 7.0]),
      tensor([0.0, 0.0, 0.0, 0.0, 2.0, -0.0]), tensor([0.0, NAN, INF, -1.0, NAN, 0.0]),
      torch.tensor([0, 1, 2, 3, 7, 1])]),
    ("as_views", "view_as, reshape_as and expand_as with gradients", as_views,
     [tensor([0.5, -1.5, 2.0, 3.0, -0.25, 1.0]).view(2, 3), tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).view(3, 2)]),
    ("more_activations", "log_sigmoid, celu, selu, sgn, exp2, deg2rad, rad2deg and logit at the mask's edges, of "
     "float16 (exp2) and of int64", more_activations,
     [tensor(EDGES + [30.0, -30.0, 3.5]), torch.tensor([0.1, 3.3, -2.7, 10.5, 0.0, -14.2], dtype=torch.float16),
      torch.tensor([0, 1, -3, 7, 2, -1])]),
    ("variance_forms", "var and std over everything (unbiased given alone), with dim None, and with a correction "
     "of 0 or 1 (PyTorch 2's form, printed by 1.13 too), with gradients", variance_forms,
     [tensor([0.5, -1.5, 2.0, 3.0, -0.25, 1.0, 4.0, -2.0, 0.75, 1.5, -3.0, 2.5]).view(3, 4)]),
]


def dtype_checks_and_number_bitwise(x, i: int, j: int, p: bool, q: bool):
    """A dtype compared with PyTorch's ScalarType codes (an assert that must pass, a test on it), and &, |, ^,
    << and >> of ints and bools (two bools give a bool)."""
    k = (x > 0.5) & (x < 2.5)
    assert k.dtype == torch.bool
    y = x * 2.0 if x.dtype == torch.float32 else x
    z = y + 1.0 if k.dtype != torch.int64 else y
    return (k, z, i & j, i | j, i ^ j, p & q, p | q, p ^ q, i << 3, i >> 2, j >> 70, j << 61,
            x.dtype == torch.float64)


def pow_by_input(m, e: float, z: float):
    """pow by a float input of the graph, with gradients (at a 0 exponent too: a gradient of 0, not 0 * inf)."""
    return torch.pow(m, e), torch.pow(m, z) * m


CASES += [
    ("pow_by_input", "pow of a tensor by float inputs of the graph (2.5, and 0 with a 0 in the base), with "
     "gradients", pow_by_input,
     [tensor([0.5, 1.0, 1.5, 2.0, 0.0, 0.75]).view(2, 3), 2.5, 0.0]),
    ("dtype_checks_and_number_bitwise", "a dtype compared with ScalarType codes (assert k.dtype == torch.bool, "
     "an if on x.dtype) and bitwise ops of numbers: &, |, ^ of ints, of bools (a bool), shifts past 63 "
     "and of a negative int", dtype_checks_and_number_bitwise,
     [tensor([0.5, 1.5, 3.0, 2.0]), 12, -7, True, False]),
]

if __name__ == "__main__":
    main()
