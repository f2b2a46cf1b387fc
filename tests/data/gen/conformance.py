"""graphjit's conformance suite: every pointwise op of PyTorch's fuser tests over every dtype and operand kind.

Run with /usr/bin/python3 (PyTorch 1.13) from tests/data/gen; writes ../conformance/table.json, a case a line,
in the audit table's format, which tests/audit_test.cpp runs under every fuser x executor on the CPU and the
emulated CUDA driver.

For each of the ten dtypes a case holds every unary op PyTorch computes for it; for each dtype and each kind of
right operand (a tensor of the same dtype, a 0-d float64 tensor, a broadcast row of another dtype, an int, a
float and a bool number) a case holds every binary op PyTorch computes for that pair. An op PyTorch refuses
for a pair (exp of float16 on 1.13's CPU, a shift of floats) is left out of that case and named in the
table's `refused_by_pytorch`, since graphjit may compute it. The values hold NaN, the infinities, +-0,
integer ends and non-contiguous (transposed) layouts. Outputs only: gradients are the audit's.
"""
import json
import math
import os

import torch

from audit import encode  # the audit table's encoding of a tensor or a number

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "conformance")
NAN, INF = math.nan, math.inf

DTYPES = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16,
          torch.bfloat16, torch.float32, torch.float64]

# name -> an expression of `a` (unary) or of `a` and `b` (binary), as TorchScript source
UNARY = {
    "neg": "torch.neg(a)", "abs": "torch.abs(a)", "sign": "torch.sign(a)", "exp": "torch.exp(a)",
    "log": "torch.log(a)", "sqrt": "torch.sqrt(a)", "rsqrt": "torch.rsqrt(a)", "sin": "torch.sin(a)",
    "cos": "torch.cos(a)", "tan": "torch.tan(a)", "tanh": "torch.tanh(a)", "sigmoid": "torch.sigmoid(a)",
    "relu": "torch.relu(a)", "floor": "torch.floor(a)", "ceil": "torch.ceil(a)", "round": "torch.round(a)",
    "trunc": "torch.trunc(a)", "frac": "torch.frac(a)", "expm1": "torch.expm1(a)", "log1p": "torch.log1p(a)",
    "log2": "torch.log2(a)", "log10": "torch.log10(a)", "erf": "torch.erf(a)", "erfc": "torch.erfc(a)",
    "lgamma": "torch.lgamma(a)", "digamma": "torch.digamma(a)",
    "reciprocal": "torch.reciprocal(a)", "atan": "torch.atan(a)", "asin": "torch.asin(a)",
    "acos": "torch.acos(a)", "sinh": "torch.sinh(a)", "cosh": "torch.cosh(a)", "isnan": "torch.isnan(a)",
    "bitwise_not": "torch.bitwise_not(a)", "square": "a * a", "clamp": "torch.clamp(a, 0, 5)",
    "clamp_min": "torch.clamp_min(a, 1)", "hardtanh": "torch.nn.functional.hardtanh(a)",
    "relu6": "torch.nn.functional.relu6(a)", "hardsigmoid": "torch.nn.functional.hardsigmoid(a)",
    "hardswish": "torch.nn.functional.hardswish(a)", "silu": "torch.nn.functional.silu(a)",
    "gelu": "torch.nn.functional.gelu(a)", "softplus": "torch.nn.functional.softplus(a)",
    "elu": "torch.nn.functional.elu(a)", "leaky_relu": "torch.nn.functional.leaky_relu(a, 0.1)",
    "threshold": "torch.nn.functional.threshold(a, 1.0, 2.0)", "hardshrink": "torch.nn.functional.hardshrink(a)",
    "mish": "torch.nn.functional.mish(a)", "sum": "torch.sum(a)", "to_float": "a.float()",
    "to_int32": "a.to(torch.int32)", "to_half": "a.half()",
}
BINARY = {
    "add": "torch.add(a, b)", "add_alpha": "torch.add(a, b, alpha=2)", "sub": "torch.sub(a, b)",
    "rsub": "torch.rsub(a, b)", "mul": "torch.mul(a, b)", "div": "torch.div(a, b)",
    "div_floor": "torch.div(a, b, rounding_mode='floor')", "div_trunc": "torch.div(a, b, rounding_mode='trunc')",
    "floor_divide": "torch.floor_divide(a, b)", "remainder": "torch.remainder(a, b)", "fmod": "torch.fmod(a, b)",
    "pow": "torch.pow(a, b)", "atan2": "torch.atan2(a, b)", "maximum": "torch.maximum(a, b)",
    "minimum": "torch.minimum(a, b)", "eq": "torch.eq(a, b)", "ne": "torch.ne(a, b)", "lt": "torch.lt(a, b)",
    "le": "torch.le(a, b)", "gt": "torch.gt(a, b)", "ge": "torch.ge(a, b)", "and": "a & b", "or": "a | b",
    "xor": "a ^ b", "lshift": "a << b", "rshift": "a >> b", "where": "torch.where(a > 1, a, b)",
    "lerp_like": "a + (b - a) * 0.25",
}

FLOATS = [0.5, -1.5, 2.0, -0.0, 0.0, INF, -INF, NAN, 3.0, -2.5, 1e-3, 7.0]
FLOATS_B = [1.5, 2.0, -0.5, 3.0, -4.0, 2.0, 0.5, 1.0, INF, -0.0, 0.25, -7.0]


def values(dtype, b=False):
    """Twelve values a dtype holds: its ends and signs for integers, the edges for floats."""
    if dtype == torch.bool:
        v = [True, False, True, True, False, False, True, False, True, True, False, True]
        return torch.tensor(v[::-1] if b else v)
    if dtype.is_floating_point:
        return torch.tensor(FLOATS_B if b else FLOATS, dtype=torch.float64).to(dtype)
    info = torch.iinfo(dtype)
    low = max(info.min, -100)
    v = [1, 2, 3, 5, 7, 100, 4, 6, 9, 11, 13, 2] if b else [0, 1, -1, 5, -7, info.max, low, 3, 12, -12, 2, 6]
    if info.min == 0:
        v = [abs(x) for x in v]
    if b:  # shift counts and divisors: positive and within every width
        v = [x % 7 + 1 for x in v]
    return torch.tensor(v, dtype=torch.int64).to(dtype)


def operand_kinds(dtype):
    """The right operands beside a tensor of `dtype`: (name, TorchScript type, value)."""
    tensor = values(dtype, b=True)
    kinds = [("tensor", "Tensor", tensor),
             ("transposed", "Tensor", tensor.view(3, 4).t().contiguous().t().reshape(3, 4)),
             ("zero_dim_float64", "Tensor", torch.tensor(2.5, dtype=torch.float64)),
             ("int_row", "Tensor", torch.tensor([3, 1, 2, 5], dtype=torch.int32)),
             ("int", "int", 3), ("float", "float", 0.75), ("bool", "bool", True)]
    return kinds


def accepted(params, expr, inputs):
    """Whether PyTorch compiles expr as TorchScript and computes it on these inputs."""
    try:
        script(params, [expr])(*inputs)
        return True
    except Exception:  # TorchScript's compile errors, PyTorch's run-time refusals
        return False


def script(params, exprs):
    src = f"def f({params}):\n    return ({', '.join(exprs)},)\n"
    return torch.jit.CompilationUnit(src).f


def case(name, what, params, names, exprs, inputs):
    fn = script(params, exprs)
    outputs = fn(*inputs)
    return {
        "name": name,
        "what": what + ": " + ", ".join(names),
        "graph": str(fn.inlined_graph),
        "inputs": [dict(encode(v), name=p.split(":")[0].strip()) for p, v in zip(params.split(","), inputs)],
        "outputs": [encode(o) for o in outputs],
        "grad_outputs": [None] * len(outputs),
        "grads": [None] * len(inputs),
    }


def main():
    cases, refused = [], []
    for dtype in DTYPES:
        d = str(dtype).replace("torch.", "")
        a = values(dtype).view(3, 4)
        names = [n for n, e in UNARY.items() if accepted("a", e, [a])]
        refused += [f"{n}({d})" for n in UNARY if n not in names]
        if names:
            cases.append(case(f"unary_{d}", f"unary ops of {d}", "a", names, [UNARY[n] for n in names], [a]))
        for kind, ts_type, b in operand_kinds(dtype):
            if kind == "int_row":
                b_in = b  # [4] broadcasts over a's rows
            elif kind in ("tensor", "transposed"):
                b_in = b.view(3, 4) if kind == "tensor" else b
            else:
                b_in = b
            params = "a" + (f", b: {ts_type}" if ts_type != "Tensor" else ", b")
            names = [n for n, e in BINARY.items() if accepted(params, e, [a, b_in])]
            refused += [f"{n}({d}, {kind})" for n in BINARY if n not in names]
            if names:
                cases.append(case(f"binary_{d}_{kind}", f"binary ops of {d} and a {kind}", params, names,
                                  [BINARY[n] for n in names], [a, b_in]))
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "table.json"), "w") as f:
        f.write("{\n" + f' "torch": {json.dumps(torch.__version__)},\n "refused_by_pytorch": {json.dumps(refused)},\n')
        f.write(' "cases": [\n  ' + ",\n  ".join(json.dumps(c) for c in cases) + "\n ]\n}\n")
    runs = sum(len(c["outputs"]) for c in cases)
    print(f"wrote {len(cases)} cases ({runs} op x dtype x operand outputs; {len(refused)} refused by PyTorch) "
          f"to {os.path.relpath(OUT)}/table.json")


if __name__ == "__main__":
    main()
