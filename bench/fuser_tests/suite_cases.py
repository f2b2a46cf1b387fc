#!/usr/bin/env python3
"""Records what PyTorch's own fuser test files script and trace, as a case table graphjit runs.

PyTorch's fuser tests (test/test_jit_fuser_te.py and test/test_jit_fuser.py in PyTorch's source tree) script
or trace small functions and call them on inputs they choose. This script imports those files from a folder
you name, runs every test method with torch.jit.script, torch.jit.trace, torch.jit.CompilationUnit and
torch._C._te.TensorExprKernel wrapped, and writes each distinct call (the function's graph as PyTorch prints
it, the inputs, eager PyTorch's outputs, and the gradients of sum(output * grad_output) for every float input)
to a table in tests/data/audit's format, which audit_test's ExternalTable.* runs under every fuser x executor:

    /usr/bin/python3 bench/fuser_tests/suite_cases.py --tests PYTORCH/test --out /tmp/suite
    bench/fuser_tests/run.sh --suite PYTORCH/test /tmp/suite     # the same, then the run and the tally

The test files' graph assertions (assertAllFused, FileCheck, graph_for counts) are about PyTorch's fusers, so
they are disabled; their value assertions compare PyTorch with PyTorch and are disabled too. A test that fails
or skips here still contributes the calls it made before. test_jit's LSTM cells and input makers, which the
test files import, are written below from their semantics when test_jit.py cannot be imported. The files'
OpInfo classes (TestNNCOpInfo*) trace op_db's samples, which opinfo_cases.py covers, and are left out.

A call is not a case when an input is not a tensor, int, float or bool (a list of tensors), when it has
keyword arguments, or when its values exceed --max-elements (superslomo's 352 x 352 images): the script
counts each such call by reason.
"""
import argparse
import collections
import contextlib
import importlib.util
import inspect
import json
import os
import sys
import traceback
import types
import unittest
import warnings

from torch_env import encode, flatten  # noqa: E402 (first: it readies PyTorch's test helpers)

import torch
import torch.nn.functional as F
from torch import Tensor

FILES = ("test_jit_fuser_te.py", "test_jit_fuser.py")
ORIGINAL_SCRIPT, ORIGINAL_TRACE = torch.jit.script, torch.jit.trace
ORIGINAL_UNIT = torch.jit.CompilationUnit
RANDOM = ("aten::rand", "aten::dropout", "aten::bernoulli", "aten::normal", "aten::feature_dropout")
DTYPES = (torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16, torch.bfloat16,
          torch.float32, torch.float64)


class Table:
    def __init__(self, max_elements):
        self.cases, self.keys, self.skipped = [], set(), collections.Counter()
        self.max_elements, self.test = max_elements, "?"

    def skip(self, why):
        self.skipped[why] += 1

    def add(self, graph_ir, jit_fn, eager, args):
        """One call: its graph, the jit function (PyTorch's reference when there is no eager function)."""
        graph = str(graph_ir)
        if not all(isinstance(a, (Tensor, bool, int, float)) for a in args):
            return self.skip("an input that is not a tensor or a number (a list, None, a device)")
        if any(isinstance(a, Tensor) and a.dtype not in DTYPES for a in args):
            return self.skip("a complex or quantized tensor")
        if any(op in graph for op in RANDOM):
            return self.skip("random numbers (PyTorch's generator draws other numbers than graphjit's Philox)")
        key = (graph, tuple((str(a.dtype), tuple(a.shape)) if isinstance(a, Tensor) else (type(a), a)
                            for a in args))
        if key in self.keys:
            return
        self.keys.add(key)
        if sum(a.numel() for a in args if isinstance(a, Tensor)) > self.max_elements:
            return self.skip(f"inputs of more than {self.max_elements} values")
        encoded = [encode(a.detach() if isinstance(a, Tensor) else a) for a in args]
        leaves = [a.detach().clone().requires_grad_(True)
                  if isinstance(a, Tensor) and a.dtype in (torch.float32, torch.float64) else
                  a.detach().clone() if isinstance(a, Tensor) else a for a in args]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                outputs = flatten((eager or jit_fn)(*leaves))
        except Exception as e:  # noqa: BLE001 (eager PyTorch rejects it: not a case)
            return self.skip(f"PyTorch itself raises ({type(e).__name__})")
        if not outputs or not all(isinstance(o, (Tensor, bool, int, float)) for o in outputs):
            return self.skip("an output that is not a tensor or a number")
        if sum(o.numel() for o in outputs if isinstance(o, Tensor)) > self.max_elements:
            return self.skip(f"outputs of more than {self.max_elements} values")
        k = len(self.cases)
        gen = torch.Generator().manual_seed(k)
        grad_outputs = [torch.rand(o.shape, generator=gen, dtype=o.dtype) + 0.5
                        if isinstance(o, Tensor) and o.is_floating_point() and o.requires_grad else None
                        for o in outputs]
        grads = [None] * len(leaves)
        pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if g is not None]
        wanted = [t for t in leaves if isinstance(t, Tensor) and t.requires_grad]
        if pairs and wanted:
            try:
                got = torch.autograd.grad([o for o, _ in pairs], wanted, [g for _, g in pairs], allow_unused=True)
                it = iter(got)
                grads = [next(it) if isinstance(t, Tensor) and t.requires_grad else None for t in leaves]
            except RuntimeError:  # no gradient in PyTorch (an integer path): compare the values only
                grad_outputs = [None] * len(outputs)
        names = [v.debugName().split(".")[0] for v in graph_ir.inputs()]
        try:
            self.cases.append({
                "name": f"{self.test}.{k}",
                "what": f"a call in PyTorch's {self.test}",
                "graph": graph,
                "inputs": [dict(e, name=n) for n, e in zip(names, encoded)],
                "outputs": [encode(o.detach() if isinstance(o, Tensor) else o) for o in outputs],
                "grad_outputs": [encode(g) if g is not None else None for g in grad_outputs],
                "grads": [encode(g) if g is not None else None for g in grads],
            })
        except RuntimeError:  # a gradient PyTorch never filled
            self.skip("a gradient without storage")


TABLE = None


def printed(jit_fn):
    """The graph PyTorch prints for a scripted or traced function, its callees inlined."""
    return getattr(jit_fn, "inlined_graph", None) or jit_fn.graph


class Recorded:
    """A scripted or traced function whose every call is a case."""

    def __init__(self, jit_fn, eager):
        self.__dict__["_jit"], self.__dict__["_eager"] = jit_fn, eager

    def __call__(self, *args, **kwargs):
        if kwargs:
            TABLE.skip("a call with keyword arguments")
        else:
            try:
                TABLE.add(printed(self._jit), self._jit, self._eager, args)
            except Exception:  # noqa: BLE001 (never let the recorder fail a test)
                TABLE.skip("the recorder failed: " + traceback.format_exc().splitlines()[-1][:80])
        return self._jit(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._jit, name)

    def __setattr__(self, name, value):
        setattr(self._jit, name, value)


def unwrap(v):
    return v._jit if isinstance(v, Recorded) else v


def script(obj, *args, **kwargs):
    jit_fn = ORIGINAL_SCRIPT(unwrap(obj), *args, **kwargs)
    if inspect.isfunction(obj) or isinstance(obj, str):
        return Recorded(jit_fn, obj if inspect.isfunction(obj) else None)
    return jit_fn  # a module: its methods are called through the module and are not recorded


def trace(fn, example_inputs=None, *args, **kwargs):
    if isinstance(example_inputs, Tensor):
        example_inputs = (example_inputs,)
    kwargs.setdefault("check_trace", False)
    traced = ORIGINAL_TRACE(unwrap(fn), example_inputs, *args, **kwargs)
    if isinstance(fn, torch.nn.Module):
        return traced
    return Recorded(traced, fn if callable(fn) and not isinstance(fn, torch.jit.ScriptFunction) else None)


class Unit:
    """torch.jit.CompilationUnit whose functions record their calls (PyTorch's answer as the reference)."""

    def __init__(self, *args, **kwargs):
        self.__dict__["_unit"] = ORIGINAL_UNIT(*args, **kwargs)

    def __getattr__(self, name):
        value = getattr(self._unit, name)
        return Recorded(value, None) if isinstance(value, torch.jit.ScriptFunction) else value


class Kernel:
    """torch._C._te.TensorExprKernel: records the graph with each run; PyTorch's interpreter answers."""

    def __init__(self, graph, *args, **kwargs):
        self.graph = graph

    def run(self, inputs):
        graph = self.graph
        fn = lambda *a: torch._C._jit_interpret_graph(graph, tuple(a))  # noqa: E731
        TABLE.add(graph, fn, fn, tuple(inputs))
        return fn(*inputs)

    fallback = run


def check_script(self, fn, inputs, *args, **kwargs):
    if isinstance(fn, str):
        name = kwargs.get("name", args[0] if args else "func")
        jit_fn = getattr(Unit(fn), name)
    else:
        jit_fn = torch.jit.script(fn)
    jit_fn(*inputs)
    return jit_fn


def check_trace(self, fn, inputs, *args, **kwargs):
    traced = torch.jit.trace(fn, tuple(inputs), check_trace=False)
    traced(*inputs)
    return traced


def nothing(*args, **kwargs):
    return None


class NoCheck:
    """FileCheck: every check passes."""

    def __getattr__(self, name):
        return lambda *a, **k: self


# test_jit's LSTM cells and inputs, from their semantics (used when test_jit.py cannot be imported).
def lstm_cell(x, hidden, w_ih, w_hh, b_ih=None, b_hh=None):
    hx, cx = hidden
    gates = F.linear(x, w_ih, b_ih) + F.linear(hx, w_hh, b_hh)
    i, f, g, o = gates.chunk(4, 1)
    cy = torch.sigmoid(f) * cx + torch.sigmoid(i) * torch.tanh(g)
    return torch.sigmoid(o) * torch.tanh(cy), cy


def lstm_cell_f(x, hx, cx, *params):
    return lstm_cell(x, (hx, cx), *params)


def lstm_cell_c(*args, **kwargs):
    hy, cy = lstm_cell_f(*args, **kwargs)
    return torch.cat((hy, cy))


def lstm_cell_s(x, hx, cx, w_ih, w_hh, b_ih, b_hh):
    gates = x.mm(w_ih.t()) + hx.mm(w_hh.t()) + b_ih + b_hh
    i, f, g, o = gates.chunk(4, 1)
    i, f, g, o = torch.sigmoid(i), torch.sigmoid(f), torch.tanh(g), torch.sigmoid(o)
    cy = f * cx + i * g
    return o * torch.tanh(cy), cy


def milstm_cell(x, hx, cx, w_ih, w_hh, alpha, beta_i, beta_h, bias):
    wx, uz = x.mm(w_ih.t()), hx.mm(w_hh.t())
    gates = alpha * wx * uz + beta_i * wx + beta_h * uz + bias
    i, f, g, o = gates.chunk(4, 1)
    i, f, g, o = i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()
    cy = f * cx + i * g
    return o * cy.tanh(), cy


def lstm_inputs(device, training=False, seq_length=None):
    shape = (seq_length, 3, 10) if seq_length else (3, 10)
    x, hx, cx = torch.randn(*shape, device=device), torch.randn(3, 20, device=device), torch.randn(3, 20, device=device)
    cell = torch.nn.LSTMCell(10, 20).to(device, torch.float)
    params = tuple(cell.parameters()) if training else tuple(p.requires_grad_(False) for p in cell.parameters())
    return (x, hx, cx) + params


def milstm_inputs(device, training=False):
    x, hx, cx = torch.randn(3, 10, device=device), torch.randn(3, 20, device=device), torch.randn(3, 20, device=device)
    mats = [torch.randn(80, n, device=device, requires_grad=training) for n in (10, 20)]
    vecs = [torch.randn(80, device=device, requires_grad=training) for _ in range(4)]
    return (x, hx, cx, *mats, *vecs)


def test_jit_stand_in():
    m = types.ModuleType("test_jit")
    m.LSTMCellF, m.LSTMCellC, m.LSTMCellS, m.MiLSTMCell = lstm_cell_f, lstm_cell_c, lstm_cell_s, milstm_cell
    m.get_lstm_inputs, m.get_milstm_inputs = lstm_inputs, milstm_inputs
    m.backward_graph, m.all_backward_graphs = nothing, lambda *a, **k: []
    return m


def patch():
    # PyTorch's own fusers stay off: the references are eager PyTorch's, and NNC without LLVM (Debian's build)
    # interprets its loops, which takes minutes on superslomo's images. The tests' set-up switches them on.
    for name in ("_jit_set_texpr_fuser_enabled", "_jit_override_can_fuse_on_cpu", "_jit_override_can_fuse_on_gpu"):
        getattr(torch._C, name)(False)
        setattr(torch._C, name, lambda *a: None)
    torch.jit.script, torch.jit.trace, torch.jit.CompilationUnit = script, trace, Unit
    torch._C._te.TensorExprKernel = Kernel
    torch.testing.FileCheck = lambda: NoCheck()
    torch.testing.assert_close = nothing
    from torch.testing._internal import jit_utils
    jit_utils.JitTestCase.checkScript, jit_utils.JitTestCase.checkTrace = check_script, check_trace
    for name in ("assertEqual", "assertNotEqual", "assertTrue", "assertFalse", "assertIn", "assertNotIn",
                 "assertGraphContains", "assertGraphContainsExactly", "assertExpected", "assertExpectedGraph"):
        setattr(jit_utils.JitTestCase, name, nothing)


def load(path):
    try:
        import test_jit  # noqa: F401
    except Exception:  # noqa: BLE001 (its imports need PyTorch's whole test tree)
        sys.modules["test_jit"] = test_jit_stand_in()
    name = os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def classes(module):
    for value in list(vars(module).values()):
        if (isinstance(value, type) and issubclass(value, unittest.TestCase) and value.__module__ == module.__name__
                and "OpInfo" not in value.__name__ and "Randomization" not in value.__name__
                and getattr(value, "dynamic_shapes", False) is False):
            yield value


def run_tests(module, filename, log):
    for cls in classes(module):
        for name in sorted(n for n in dir(cls) if n.startswith("test")):
            TABLE.test = f"{filename[:-3]}.{name}"
            before = len(TABLE.cases)
            status = "ok"
            try:
                test = cls(name)
                with warnings.catch_warnings(), contextlib.redirect_stdout(sys.stderr):
                    warnings.simplefilter("ignore")
                    test.setUp()
                    try:
                        getattr(test, name)()
                    finally:
                        test.tearDown()
            except unittest.SkipTest as e:
                status = f"skipped: {e}"
            except Exception as e:  # noqa: BLE001
                if os.environ.get("SUITE_TRACEBACKS"):
                    traceback.print_exc()
                status = f"stopped: {type(e).__name__}: {str(e).splitlines()[0][:100] if str(e) else ''}"
            log.write(f"{TABLE.test}: {len(TABLE.cases) - before} cases; {status}\n")
            log.flush()


def main():
    global TABLE
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tests", required=True, help="folder with test_jit_fuser_te.py and test_jit_fuser.py")
    p.add_argument("--out", required=True, help="folder for table.json and tests.log")
    p.add_argument("--max-elements", type=int, default=1 << 20, help="most tensor values a call's inputs or "
                   "outputs may hold (default 1048576)")
    a = p.parse_args()
    TABLE = Table(a.max_elements)
    sys.path.insert(0, a.tests)
    torch.manual_seed(0)
    patch()
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "tests.log"), "w") as log:
        for filename in FILES:
            path = os.path.join(a.tests, filename)
            if not os.path.exists(path):
                sys.exit(f"suite_cases.py: {path} does not exist (--tests names PyTorch's test/ folder)")
            run_tests(load(path), filename, log)
    with open(os.path.join(a.out, "table.json"), "w") as f:
        json.dump({"torch": torch.__version__, "cases": TABLE.cases}, f)
    print(f"wrote {len(TABLE.cases)} cases to {a.out}/table.json (tests: {a.out}/tests.log)")
    for why, n in TABLE.skipped.most_common():
        print(f"  {n:5d} calls not cases: {why}")


if __name__ == "__main__":
    main()
