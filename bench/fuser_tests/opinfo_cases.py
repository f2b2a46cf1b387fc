#!/usr/bin/env python3
"""Writes PyTorch's own samples of the ops its fuser tests exercise as a case table graphjit runs.

PyTorch's TensorExpr fuser tests trace every op of their list on the sample inputs of its OpInfo entry
(torch.testing._internal.common_methods_invocations.op_db) and compare the fused result with eager mode.
This script does the same with the installed PyTorch's op_db (Debian's /usr/bin/python3 has 1.13): for each
op of OPS below and each of its samples in every dtype of DTYPES the op supports, it traces the op with its
non-tensor arguments as constants, runs it, and writes the trace's graph, the inputs, PyTorch's outputs and
the gradients of sum(output * grad_output) for every float input, in tests/data/audit's format:

    /usr/bin/python3 bench/fuser_tests/opinfo_cases.py --out /tmp/opinfo   # writes /tmp/opinfo/table.json

`bench/fuser_tests/run.sh` writes the table, runs it under every fuser x executor on the CPU
(audit_test's ExternalTable.*, GJ_CASE_TABLE) and prints the tally. Nothing here is PyTorch's code: the op
list is ours (the pointwise, shape and reduction ops the fuser tests name), the samples are op_db's.
"""
import argparse
import json
import os
import sys
import warnings

from torch_env import encode, flatten  # noqa: E402 (first: it readies PyTorch's test helpers)

import torch
from torch.testing._internal.common_methods_invocations import op_db

# The ops: elementwise math, comparisons, casts, activations, views and reductions of the kinds the fuser
# tests trace (their op list names these op_db entries, by name and variant).
OPS = """
__radd__ __rmul__ __rsub__ __rdiv__ __rpow__ abs acos add addcmul asin atan atan2 ceil clamp clamp.scalar
contiguous cos cosh div.no_rounding_mode div.true_rounding div.floor_rounding div.trunc_rounding eq erf erfc
exp expand expand_as expm1 floor fmod fmod.autodiffed frac ge gt isnan le lerp lgamma log log10 log1p log2 lt
masked_fill max.binary maximum mean min.binary minimum mm mul ne neg nn.functional.elu nn.functional.gelu
nn.functional.hardshrink nn.functional.hardsigmoid nn.functional.hardswish nn.functional.hardtanh
nn.functional.leaky_relu nn.functional.mish nn.functional.relu nn.functional.relu6 nn.functional.silu
nn.functional.softplus nn.functional.softsign nn.functional.tanhshrink nn.functional.threshold permute pow
reciprocal remainder remainder.autodiffed reshape reshape_as round rsqrt rsub sigmoid sign sin sinh sqrt sub
sum t tan tanh transpose true_divide trunc unsqueeze view view_as where xlogy cat softmax log_softmax
bool byte char double float half int long short bfloat16 square nn.functional.logsigmoid sgn nn.functional.celu
nn.functional.selu exp2 deg2rad rad2deg logit
""".split()
DTYPES = {str(t).replace("torch.", ""): t for t in (torch.float32, torch.float64, torch.float16, torch.bfloat16,
                                                    torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8,
                                                    torch.bool)}


def op_name(op):
    return op.name + ("." + op.variant_test_name if op.variant_test_name else "")


def split(sample):
    """The sample's positional and keyword arguments with the input first; which of them are tensors."""
    args = [sample.input] + list(sample.args)
    return args, dict(sample.kwargs)


def is_tensor(v):
    return isinstance(v, torch.Tensor)


def leaves_of(args, kwargs):
    flat = []
    for v in list(args) + list(kwargs.values()):
        if is_tensor(v):
            flat.append(v)
        elif isinstance(v, (list, tuple)) and v and all(is_tensor(e) for e in v):
            return None  # a list of tensors (cat's): traced as one list input, which the table cannot hold
    return flat


def case(op, dtype_name, k, sample):
    args, kwargs = split(sample)
    tensors = leaves_of(args, kwargs)
    if tensors is None or not tensors:
        return None
    fn = op.get_op()

    def traced_fn(*ts):
        it = iter(ts)
        full = [next(it) if is_tensor(a) else a for a in args]
        kw = {key: next(it) if is_tensor(v) else v for key, v in kwargs.items()}
        return fn(*full, **kw)

    inputs = [t.detach().clone() for t in tensors]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            traced = torch.jit.trace(traced_fn, tuple(inputs), check_trace=False)
        except Exception:
            return None  # PyTorch cannot trace it: not a case
    graph = str(traced.graph)
    leaves = [t.clone().requires_grad_(True) if t.dtype in (torch.float32, torch.float64) else t.clone()
              for t in inputs]
    try:
        outs = flatten(traced(*leaves))
    except Exception:
        return None
    if not outs or not all(is_tensor(o) for o in outs):
        return None
    gen = torch.Generator().manual_seed(k)
    grad_outputs = [torch.rand(o.shape, generator=gen, dtype=o.dtype) + 0.5
                    if o.is_floating_point() and o.requires_grad else None for o in outs]
    grads = [None] * len(leaves)
    pairs = [(o, g) for o, g in zip(outs, grad_outputs) if g is not None]
    wanted = [t for t in leaves if t.requires_grad]
    if pairs and wanted:
        try:
            got = torch.autograd.grad([o for o, _ in pairs], wanted, [g for _, g in pairs], allow_unused=True)
        except Exception:
            got = None
        if got is None:
            grad_outputs = [None] * len(outs)
        else:
            it = iter(got)
            grads = [next(it) if t.requires_grad else None for t in leaves]
    names = [v.debugName().split(".")[0] for v in traced.graph.inputs()]
    try:
        return {
            "name": f"{op_name(op)}.{dtype_name}.{k}",
            "what": f"op_db's {op_name(op)}, sample {k} in {dtype_name}: {sample}",
            "graph": graph,
            "inputs": [dict(encode(t), name=n) for n, t in zip(names, inputs)],
            "outputs": [encode(o.detach()) for o in outs],
            "grad_outputs": [encode(g) if g is not None else None for g in grad_outputs],
            "grads": [encode(g) if g is not None else None for g in grads],
        }
    except RuntimeError:  # a value without storage of its own to read (a gradient PyTorch never filled)
        return None


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True, help="folder for table.json")
    p.add_argument("--ops", help="comma-separated op names (default: the list above)")
    a = p.parse_args()
    wanted = a.ops.split(",") if a.ops else OPS
    by_name = {op_name(op): op for op in op_db}
    missing = [n for n in wanted if n not in by_name]
    if missing:
        print(f"not in this PyTorch's op_db: {', '.join(missing)}", file=sys.stderr)
    cases = []
    torch.manual_seed(0)
    for name in wanted:
        op = by_name.get(name)
        if op is None:
            continue
        for dtype_name, dtype in DTYPES.items():
            if dtype not in op.supported_dtypes("cpu"):
                continue
            try:
                samples = list(op.sample_inputs("cpu", dtype, requires_grad=False))
            except Exception:
                continue
            for k, sample in enumerate(samples):
                c = case(op, dtype_name, k, sample)
                if c:
                    cases.append(c)
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "table.json"), "w") as f:
        json.dump({"torch": torch.__version__, "cases": cases}, f)
    print(f"wrote {len(cases)} cases of {len(wanted) - len(missing)} ops to {a.out}/table.json")


if __name__ == "__main__":
    main()
