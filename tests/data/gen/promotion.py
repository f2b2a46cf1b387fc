"""PyTorch's type promotion over its ten common dtypes, for tests/runtime_test.cpp (TypePromotion.*).

Run with /usr/bin/python3 (PyTorch 1.13) from tests/data/gen; writes ../promotion/table.json:
  promote_types: [a, b, result] for every pair of dtypes;
  with_number:   [a, kind, result]: a tensor with dimensions of dtype a beside a Python bool, int or float;
  with_zero_dim: [a, b, result]: a tensor with dimensions of dtype a beside a 0-dim tensor of dtype b.
"""
import json
import os

import torch

DTYPES = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16,
          torch.bfloat16, torch.float32, torch.float64]
NUMBERS = {"bool": True, "int": 3, "float": 2.5}
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "promotion")


def name(d):
    return str(d).replace("torch.", "")


def main():
    table = {"torch": torch.__version__, "promote_types": [], "with_number": [], "with_zero_dim": []}
    for a in DTYPES:
        dimensioned = torch.ones(2, dtype=a)
        for b in DTYPES:
            table["promote_types"].append([name(a), name(b), name(torch.promote_types(a, b))])
            zero_dim = torch.ones((), dtype=b)
            table["with_zero_dim"].append([name(a), name(b), name(torch.result_type(dimensioned, zero_dim))])
        for kind, value in NUMBERS.items():
            table["with_number"].append([name(a), kind, name(torch.result_type(dimensioned, value))])
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "table.json"), "w") as f:  # a row a line
        f.write("{\n" + f' "torch": {json.dumps(table["torch"])}')
        for key in ("promote_types", "with_number", "with_zero_dim"):
            f.write(f',\n "{key}": [\n  ' + ",\n  ".join(json.dumps(r) for r in table[key]) + "\n ]")
        f.write("\n}\n")
    print(f"wrote {len(table['promote_types'])} pairs to {os.path.relpath(OUT)}/table.json")


if __name__ == "__main__":
    main()
