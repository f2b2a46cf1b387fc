#!/usr/bin/env python3
"""Tallies audit_test's ExternalTable outcomes (GJ_CASE_OUTCOMES, one JSON line a run): how many runs match
PyTorch, how many are refused or differ, and why, grouped by op and reason.

    python3 bench/fuser_tests/tally.py OUTCOMES.jsonl
"""
import collections
import json
import re
import sys


def reason(outcome):
    text = re.sub(r"\(Python source [^)]*\)", "", outcome.split("\n")[0])
    text = re.sub(r"\S+/\S+\.\d+:\d+:\d+", "", text)  # the case's file:line:col
    return re.sub(r"got \(PyTorch\).*", "", text).strip()[:160]


def main():
    rows = [json.loads(line) for line in open(sys.argv[1])]
    kinds = collections.Counter(r["outcome"].split(":")[0] for r in rows)
    cases = {r["case"] for r in rows}
    print(f"{len(rows)} runs of {len(cases)} cases: {kinds['match']} match PyTorch "
          f"({100.0 * kinds['match'] / max(len(rows), 1):.2f} %), {kinds['refused']} refused, {kinds['mismatch']} differ")
    groups = collections.defaultdict(collections.Counter)
    for r in rows:
        if r["outcome"] != "match":
            groups[reason(r["outcome"])][r["case"].rsplit(".", 2)[0]] += 1
    for why, ops in sorted(groups.items(), key=lambda g: -sum(g[1].values())):
        print(f"{sum(ops.values()):6d}  {why}  [{', '.join(f'{op} {n}' for op, n in ops.most_common(6))}]")
    # every case must have one outcome under every fuser x executor
    per_case = collections.defaultdict(set)
    for r in rows:
        per_case[r["case"]].add(r["outcome"].split(":")[0])
    split = [c for c, kinds in per_case.items() if len(kinds) > 1]
    print(f"{len(split)} cases whose outcome depends on the fuser or executor" + (f": {', '.join(split[:10])}" if split else ""))


if __name__ == "__main__":
    main()
