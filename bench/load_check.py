#!/usr/bin/env python3
"""graphbench on a busy machine: the small rnns table idle, then with processes spinning on the cores.

    python3 bench/load_check.py [--graphbench build/bin/graphbench] [--repeats 3] > report.md

Each scenario runs graphbench --json and compares every row's forward and backward medians with the
idle run's. graphbench passes when each row stays within 2x of idle or is marked unreliable. Needs no
torch; spinners are `sh -c 'while :; do :; done'`, killed when a scenario ends.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

SMALL = ["--seqLength", "3", "--miniBatch", "2", "--inputSize", "8", "--hiddenSize", "8", "--nloops", "20",
         "--warmup", "3", "--group", "rnns"]


def run_graphbench(binary, extra, spinners):
    procs = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(spinners)]
    try:
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "out.json")
            r = subprocess.run([binary, *SMALL, *extra, "--json", path], capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit(f"graphbench failed: {r.stderr}")
            with open(path) as f:
                return json.load(f), r.stderr.strip()
    finally:
        for p in procs:
            p.kill()
            p.wait()


def medians(report):
    out = {}
    for row in report["rows"]:
        out[row["name"]] = (row["fwd"]["median_ms"], row.get("bwd", {}).get("median_ms"), row.get("unreliable"))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graphbench", default="build/bin/graphbench")
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    cores = os.cpu_count()
    scenarios = [("idle", [], 0), (f"{cores - 1} spinning, default threads", [], cores - 1),
                 (f"{cores - 1} spinning, --threads {cores}", ["--threads", str(cores)], cores - 1),
                 (f"{cores} spinning, default threads", [], cores),
                 (f"{cores} spinning, --threads {cores}", ["--threads", str(cores)], cores)]
    print(f"# graphbench on a busy machine ({cores} cores; the small rnns table, {a.repeats} runs per scenario)\n")
    idle = None
    for name, extra, spinners in scenarios:
        for rep in range(a.repeats):
            report, warning = run_graphbench(a.graphbench, extra, spinners)
            rows = medians(report)
            if idle is None:
                idle = rows
            threads = report["settings"]["threads"]
            worst, marked, bad, worst_marked = 0.0, 0, [], None
            for row, (fwd, bwd, unreliable) in rows.items():
                ratios = [fwd / idle[row][0]]
                if bwd is not None and idle[row][1]:
                    ratios.append(bwd / idle[row][1])
                r = max(ratios)
                if unreliable is None:
                    worst = max(worst, r)
                    if r > 2:
                        bad.append(f"{row} {r:.1f}x")
                else:
                    marked += 1
                    if worst_marked is None or r > worst_marked[1]:
                        worst_marked = (row, r, unreliable)
            verdict = "ok" if not bad else "FAIL: " + ", ".join(bad)
            marks = (f"; worst marked: {worst_marked[0]} {worst_marked[1]:.2f}x ({worst_marked[2]})"
                     if worst_marked else "")
            print(f"- {name}, run {rep + 1}: {threads} threads; worst unmarked row {worst:.2f}x idle; "
                  f"{marked} of {len(rows)} rows marked unreliable{marks}; {verdict}"
                  + (f"\n  - graphbench said: {warning}" if warning else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
