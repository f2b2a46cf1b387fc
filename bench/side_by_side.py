#!/usr/bin/env python3
"""One side-by-side table: graphbench's groups and bench/torch_compare.py's twins, in one session.

For each group, graphbench runs once (--json) and PyTorch's rows run at 1 and at 2 threads; each PyTorch
row keeps its faster setting, forward and backward separately (PyTorch at its best here). Every graphbench
row whose name (before "/fuser/executor") has a PyTorch twin gets the ratio ours / PyTorch, and each group
the geometric mean of its ratios. Below 1 is faster than PyTorch. The output is markdown, with the machine
described: commit it, dated, to bench/results/.

  bench/side_by_side.py [--groups rnns,cells,...] [--graphbench build/bin/graphbench]
                        [--torch-python /usr/bin/python3] [--fuser te] [--executor profiling]
                        [-- extra graphbench and torch_compare options, e.g. --nloops 10]

Needs only the standard library; PyTorch runs under --torch-python (Debian's python3-torch). Timings on
these shared VMs vary 20-40 % between runs: compare figures from one output only.
"""
import argparse
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
from datetime import date

GROUPS = ["rnns", "vl_lstm", "cnns", "lm", "classifier", "cells", "ops"]
HERE = os.path.dirname(os.path.abspath(__file__))


def run(cmd, env=None):
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        sys.exit(f"side_by_side: {' '.join(cmd)} failed (exit {r.returncode}):\n{r.stdout}\n{r.stderr}")
    return r.stdout


def graphbench_rows(exe, group, fuser, executor, extra):
    """{row name: (fwd ms, bwd ms or None)} from one graphbench run of `group`."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "out.json")
        run([exe, "--group", group, "--fuser", fuser, "--executor", executor, "--interleave", "--json", path] + extra)
        with open(path) as f:
            doc = json.load(f)
    rows = {}
    for r in doc["rows"]:
        fwd = r.get("fwd", {}).get("median_ms")
        bwd = r.get("bwd", {}).get("median_ms")
        rows[r["name"]] = (fwd, bwd)
    return rows


def torch_rows(python, group, threads, extra):
    """{row name: (fwd ms, bwd ms or None)} from torch_compare.py at `threads` threads."""
    env = dict(os.environ)
    env.setdefault("OPENBLAS_CORETYPE", "SkylakeX")  # OpenBLAS picks slow kernels on these VMs otherwise
    out = run([python, os.path.join(HERE, "torch_compare.py"), "--group", group, "--threads", str(threads),
               "--sep", "|"] + extra, env)
    rows, header = {}, None
    for line in out.splitlines():
        cells = [c.strip() for c in line.split("|")]
        if len(cells) < 5:
            continue
        if cells[0] == "name":
            header = cells
            continue
        if header is None:
            continue
        at = {k: i for i, k in enumerate(header)}

        def num(key):
            try:
                return float(cells[at[key]])
            except (KeyError, ValueError, IndexError):
                return None
        rows[cells[0]] = (num("avg_fwd"), num("avg_bwd"))
    return rows


def best(a, b):
    vals = [v for v in (a, b) if v is not None]
    return min(vals) if vals else None


def geomean(xs):
    xs = [x for x in xs if x]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def fmt(x, digits=3):
    return "n/a" if x is None else f"{x:.{digits}f}"


def describe_machine():
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{os.cpu_count()} CPUs ({cpu}), {platform.system()} {platform.release()}"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--groups", default=",".join(GROUPS), help="comma-separated graphbench groups")
    p.add_argument("--graphbench", default=os.path.join(HERE, "..", "build", "bin", "graphbench"))
    p.add_argument("--torch-python", default="/usr/bin/python3", help="an interpreter with torch")
    p.add_argument("--fuser", default="te", help="graphbench's fuser for the compiled rows (graphbench --help lists them)")
    p.add_argument("--executor", default="profiling", help="graphbench's executor (legacy, profiling)")
    args, extra = p.parse_known_args()
    extra = [a for a in extra if a != "--"]
    groups = [g for g in args.groups.split(",") if g]
    for g in groups:
        if g not in GROUPS:
            p.error(f"--groups: unknown group '{g}'; groups: {', '.join(GROUPS)}")
    if not os.access(args.graphbench, os.X_OK):
        p.error(f"no graphbench at {args.graphbench}; run scripts/build first")

    print(f"# graphjit against PyTorch, side by side ({date.today().isoformat()})\n")
    print(f"Machine: {describe_machine()}. graphjit: {args.fuser} fuser, {args.executor} executor, rows "
          f"interleaved. PyTorch: {run([args.torch_python, '-c', 'import torch; print(torch.__version__)']).strip()}"
          f", each row at its faster of 1 and 2 threads (OPENBLAS_CORETYPE=SkylakeX). Medians in ms; ratio = "
          f"graphjit / PyTorch (below 1: graphjit faster). Extra options: {' '.join(extra) or 'none'}.\n")
    summary = []
    for g in groups:
        ours = graphbench_rows(args.graphbench, g, args.fuser, args.executor, extra)
        t1, t2 = torch_rows(args.torch_python, g, 1, extra), torch_rows(args.torch_python, g, 2, extra)
        print(f"## {g}\n")
        print("| row | graphjit fwd | PyTorch fwd | ratio fwd | graphjit bwd | PyTorch bwd | ratio bwd |")
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
        fwd_ratios, bwd_ratios = [], []
        for name, (f, b) in ours.items():
            twin = name.split("/")[0]
            if twin not in t1 and twin not in t2:
                continue
            tf = best(t1.get(twin, (None, None))[0], t2.get(twin, (None, None))[0])
            tb = best(t1.get(twin, (None, None))[1], t2.get(twin, (None, None))[1])
            rf = f / tf if f and tf else None
            rb = b / tb if b and tb else None
            fwd_ratios.append(rf)
            bwd_ratios.append(rb)
            print(f"| {name} | {fmt(f)} | {fmt(tf)} | {fmt(rf, 2)} | {fmt(b)} | {fmt(tb)} | {fmt(rb, 2)} |")
        gf, gb = geomean(fwd_ratios), geomean(bwd_ratios)
        summary.append((g, gf, gb, sum(r is not None for r in fwd_ratios)))
        print(f"\nGeometric mean of the ratios: forward {fmt(gf, 2)}, backward {fmt(gb, 2)}.\n")
    print("## Summary\n")
    print("| group | rows | geomean ratio fwd | geomean ratio bwd |")
    print("| --- | ---: | ---: | ---: |")
    for g, gf, gb, n in summary:
        print(f"| {g} | {n} | {fmt(gf, 2)} | {fmt(gb, 2)} |")


if __name__ == "__main__":
    main()
