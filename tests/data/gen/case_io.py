"""What the reference-case generators share: their command line, float32 draws computed in float64, and the
case's files (tests/data/README.md's layout)."""
import argparse
import json
import os

import numpy as np
import torch


def parse(doc, flag, defaults):
    """OUT, a --FLAG switch and one integer option per (name, default); seeds torch with --seed."""
    p = argparse.ArgumentParser(description=doc.splitlines()[0])
    p.add_argument("out")
    p.add_argument("--" + flag, action="store_true")
    for name, default in defaults:
        p.add_argument("--" + name, type=int, default=default)
    a = p.parse_args()
    torch.manual_seed(a.seed)
    return a


def draw(*shape, bound=1.0):
    """Uniform float32 values in [-bound, bound), as float64."""
    return ((torch.rand(*shape, dtype=torch.float32) * 2 - 1) * bound).double()


def save(out, manifest, inputs, outputs, grad_outputs, grads, ints=()):
    """Writes the case: float inputs as float32, `ints` (name, array) as int64, outputs and grads as float64."""
    for sub in ("inputs", "outputs", "grad_outputs", "grads"):
        os.makedirs(os.path.join(out, sub), exist_ok=True)
    for k, v in inputs.items():
        np.save(os.path.join(out, "inputs", k + ".npy"), v.detach().float().numpy())
    for k, v in ints:
        np.save(os.path.join(out, "inputs", k + ".npy"), v.astype(np.int64))
    for k, v in outputs.items():
        np.save(os.path.join(out, "outputs", k + ".npy"), v.detach().numpy())
        np.save(os.path.join(out, "grad_outputs", k + ".npy"), grad_outputs[k].numpy())
    for k, gr in zip(inputs, grads):
        np.save(os.path.join(out, "grads", k + ".npy"), gr.numpy())
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
