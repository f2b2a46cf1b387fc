#!/usr/bin/env python3
"""Writes a PyTorch function or nn.Module, with example inputs, as a folder graphjit reads:

    FOLDER/graph.ir            the graph as PyTorch prints it (.inlined_graph: callees' bodies in place)
    FOLDER/inputs/NAME.npy     each input by its base name (%input.1 -> input.npy); a tuple input's elements
                               as NAME_0.npy, NAME_1.npy, ...; a module's parameters and buffers by their
                               state_dict key (fc1.weight.npy); an int, float or bool as a 0-d array
    FOLDER/outputs/N.npy       PyTorch's outputs, the return flattened (tuples depth-first)
    FOLDER/grad_outputs/N.npy  with backward: the gradient given to each floating-point output (random,
                               seeded); a bool or integer output has none
    FOLDER/grads/NAME.npy      with backward: PyTorch's gradient of each floating-point input and parameter

`graphir check FOLDER` runs the graph under a fuser and executor and compares; `graphir run FOLDER/graph.ir
--inputs FOLDER/inputs --out OUT` writes graphjit's own outputs. As a library:

    import torchscript_export
    torchscript_export.export(fn, (x, (h, c)), "out/cell")            # torch.jit.script
    torchscript_export.export(fn, (x,), "out/traced", trace=True)      # torch.jit.trace
    torchscript_export.export(module, (x,), "out/module")              # a scripted nn.Module's forward

From the command line, a function or module class in a Python file, called with random inputs of the
given shapes (a module class is constructed without arguments):

    python3 tools/torchscript_export.py model.py:MyCell --shape 3,4 --shape 3,5 --out out/cell
"""
import argparse
import importlib.util
import os
import sys

import numpy as np
import torch


def _flatten(value):
    """A return value's elements, tuples depth-first (as graphjit flattens a graph's return)."""
    if isinstance(value, tuple):
        out = []
        for v in value:
            out.extend(_flatten(v))
        return out
    return [value]


def _base(name):
    head, dot, tail = name.rpartition(".")
    return head if dot and head and tail.isdigit() else name


def _input_files(name, value):
    """(file name, value) for one graph input, a tuple's elements as NAME_0, NAME_1 (nested: NAME_0_1)."""
    if isinstance(value, tuple):
        return [f for i, v in enumerate(value) for f in _input_files(f"{name}_{i}", v)]
    return [(name, value)]


def _array(name, value):
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().numpy()
    if isinstance(value, bool):
        return np.array(value)
    if isinstance(value, int):
        return np.array(value, dtype=np.int64)
    if isinstance(value, float):
        return np.array(value, dtype=np.float64)
    raise TypeError(f"input {name}: graphjit reads tensors, tuples of them and int / float / bool scalars, "
                    f"not {type(value).__name__}")


def export(fn, inputs, folder, trace=False, backward=True, seed=0):
    """Scripts (or traces) fn, runs it on inputs, and writes the folder described above. Returns the
    compiled function or module."""
    inputs = tuple(inputs)
    module = fn if isinstance(fn, torch.nn.Module) else None
    compiled = torch.jit.trace(fn, inputs) if trace else torch.jit.script(fn)
    graph = compiled.inlined_graph if hasattr(compiled, "inlined_graph") else compiled.graph
    names = [v.debugName() for v in graph.inputs()]
    if module is not None:
        names = names[1:]  # self: its attributes are read by state_dict key
    if len(names) != len(inputs):
        raise ValueError(f"the graph takes {len(names)} inputs but {len(inputs)} were given")
    for sub in ("inputs", "outputs", "grad_outputs", "grads"):
        os.makedirs(os.path.join(folder, sub), exist_ok=True)
    with open(os.path.join(folder, "graph.ir"), "w") as f:
        f.write(str(graph))

    def save(sub, name, array):
        np.save(os.path.join(folder, sub, name + ".npy"), np.array(array, order="C"))  # 0-d stays 0-d

    leaves = {}  # file name -> the tensor whose gradient it holds
    for name, value in zip(names, inputs):
        for file, v in _input_files(_base(name), value):
            save("inputs", file, _array(file, v))
            leaves[file] = v
    params = dict(module.state_dict(keep_vars=True)) if module is not None else {}
    for key, t in params.items():
        save("inputs", key, t.detach().cpu().numpy())
        leaves[key] = t

    grads_wanted = {k: t for k, t in leaves.items() if isinstance(t, torch.Tensor) and t.is_floating_point()}
    for t in grads_wanted.values():
        t.requires_grad_(True)
        t.grad = None
    outputs = _flatten(compiled(*inputs))
    # A bool, int or float output (`n == m`, `x.size(0)`) is written as numpy holds it: a 0-d bool, int64
    # or float64 array; it takes no gradient.
    scalars = set()
    for i, out in enumerate(outputs):
        if isinstance(out, (bool, int, float)):
            dtype = torch.bool if isinstance(out, bool) else torch.int64 if isinstance(out, int) else torch.float64
            outputs[i] = torch.tensor(out, dtype=dtype)
            scalars.add(i)
        elif not isinstance(out, torch.Tensor):
            raise TypeError(f"output {i} is {type(out).__name__}: graphjit's outputs are tensors and scalars")
        save("outputs", str(i), outputs[i].detach().cpu().numpy())
    if not backward:
        os.rmdir(os.path.join(folder, "grad_outputs"))
        os.rmdir(os.path.join(folder, "grads"))
        return compiled
    gen = torch.Generator().manual_seed(seed)
    # A bool or integer output (a comparison's) takes no gradient, and gets no grad_outputs file.
    grad_outputs = [torch.rand(o.shape, generator=gen, dtype=o.dtype) + 0.5
                    if o.is_floating_point() and i not in scalars else None for i, o in enumerate(outputs)]
    for i, g in enumerate(grad_outputs):
        if g is not None:
            save("grad_outputs", str(i), g.numpy())
    differentiable = [(o, g) for o, g in zip(outputs, grad_outputs) if g is not None and o.requires_grad]
    torch.autograd.backward([o for o, _ in differentiable], [g for _, g in differentiable])
    for name, t in grads_wanted.items():
        if t.grad is not None:
            save("grads", name, t.grad.detach().cpu().numpy())
    for t in grads_wanted.values():
        t.requires_grad_(False)
    return compiled


def _load(spec):
    path, _, attr = spec.partition(":")
    if not attr:
        raise SystemExit(f"torchscript_export: give FILE.py:NAME, not {spec!r}")
    loaded = importlib.util.spec_from_file_location("exported_model", path)
    if loaded is None:
        raise SystemExit(f"torchscript_export: cannot read {path}")
    mod = importlib.util.module_from_spec(loaded)
    loaded.loader.exec_module(mod)
    if not hasattr(mod, attr):
        raise SystemExit(f"torchscript_export: {path} has no {attr}")
    obj = getattr(mod, attr)
    return obj() if isinstance(obj, type) and issubclass(obj, torch.nn.Module) else obj


def main(argv=None):
    p = argparse.ArgumentParser(description="write a PyTorch function or module as a folder graphjit reads")
    p.add_argument("target", help="FILE.py:NAME, a function or an nn.Module class")
    p.add_argument("--shape", action="append", default=[], help="an input's shape, as 3,4 (one per input)")
    p.add_argument("--out", required=True, help="the folder to write")
    p.add_argument("--trace", action="store_true", help="torch.jit.trace instead of torch.jit.script")
    p.add_argument("--forward-only", action="store_true", help="no grad_outputs/ and grads/")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    torch.manual_seed(args.seed)
    inputs = [torch.rand(*[int(d) for d in s.split(",")]) for s in args.shape]
    export(_load(args.target), inputs, args.out, trace=args.trace, backward=not args.forward_only, seed=args.seed)
    print(f"wrote {args.out}: graph.ir, inputs/, outputs/" + ("" if args.forward_only else ", grad_outputs/, grads/"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
