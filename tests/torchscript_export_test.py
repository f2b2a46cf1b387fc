"""Every built-in model, exported by `graphir model NAME --torchscript`, read by PyTorch's torch._C.parse_ir
and run by torch._C._create_function_from_graph on the inputs `--inputs` wrote; PyTorch's outputs must
match the ones `graphir run` computes from the same text (which graphir reads back), within 1e-5 of each
output's largest magnitude. The dropout model's masks are drawn by each side (they differ); there the
shapes and the first layer's final states, which come before any dropout, are compared.

    torchscript_export_test.py GRAPHIR WORKDIR
"""
import os
import shutil
import subprocess
import sys

import numpy as np
import torch

SMALL_LSTM = ["--seqLength", "3", "--miniBatch", "2", "--inputSize", "4", "--hiddenSize", "5"]
CASES = [
    ("lstm_cell", SMALL_LSTM),
    *[(f"lstm/{v}", SMALL_LSTM + ["--variant", v, "--numLayers", "2"])
      for v in ["jit", "jit_premul", "jit_premul_bias", "jit_simple", "jit_multilayer"]],
    ("lnlstm", SMALL_LSTM),
    ("lnlstm/decompose", SMALL_LSTM + ["--decompose"]),
    ("vl_lstm", SMALL_LSTM + ["--numLayers", "2"]),
    ("lstm_lm", SMALL_LSTM + ["--vocab", "11", "--embedding", "6"]),
    ("lstm_classifier", SMALL_LSTM + ["--vocab", "11", "--embedding", "6"]),
    ("linear", []),
    ("softmax", []),
    ("conv2d", []),
    ("multihead_attention", []),
    ("resnet18", ["--imageSize", "64", "--miniBatch", "4"]),
    ("resnet50/eval", ["--imageSize", "32", "--miniBatch", "2", "--eval"]),
]
DROPOUT = ("lstm/dropout", SMALL_LSTM + ["--numLayers", "2", "--dropout", "0.5"])


def graphir(*args):
    done = subprocess.run([GRAPHIR, *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise AssertionError(f"graphir {' '.join(args)} failed:\n{done.stderr}")


def relative_difference(theirs, ours):
    """The largest difference between the two, over the largest magnitude of PyTorch's."""
    scale = max(float(np.abs(theirs).max()), np.finfo(np.float32).tiny)
    return float(np.abs(theirs.astype(np.float64) - ours).max()) / scale


def export_and_run(name, options):
    """(PyTorch's outputs, graphjit's outputs) of the model's export, each the return flattened."""
    model = name.split("/")[0]
    folder = os.path.join(WORK, name.replace("/", "_"))
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    graph_file = os.path.join(folder, "graph.ir")
    inputs = os.path.join(folder, "inputs")
    graphir("model", model, *options, "--torchscript", "-o", graph_file, "--inputs", inputs)
    graphir("run", graph_file, "--inputs", inputs, "--out", os.path.join(folder, "ours"))

    graph = torch._C.parse_ir(open(graph_file).read())
    function = torch._C._create_function_from_graph(model, graph)
    args = [torch.from_numpy(np.load(os.path.join(inputs, v.debugName() + ".npy"))) for v in graph.inputs()]
    theirs = function(*args)
    theirs = list(theirs) if isinstance(theirs, tuple) else [theirs]
    ours = [np.load(os.path.join(folder, "ours", "outputs", f"{i}.npy")) for i in range(len(theirs))]
    return [t.detach().numpy() for t in theirs], ours


def main():
    failures = []
    for name, options in CASES:
        try:
            theirs, ours = export_and_run(name, options)
            worst = 0.0
            for i, (t, o) in enumerate(zip(theirs, ours)):
                assert t.shape == o.shape, f"output {i}: PyTorch {t.shape}, graphjit {o.shape}"
                assert t.dtype == o.dtype, f"output {i}: PyTorch {t.dtype}, graphjit {o.dtype}"
                worst = max(worst, relative_difference(t, o))
            assert worst <= 1e-5, f"outputs differ by {worst:.3g} of their magnitude"
            print(f"{name}: {len(theirs)} outputs, worst relative difference {worst:.2g}")
        except Exception as e:  # report every model, then fail
            failures.append(name)
            print(f"{name}: FAILED: {e}")
    name, options = DROPOUT
    try:
        theirs, ours = export_and_run(name, options)
        for t, o in zip(theirs, ours):
            assert t.shape == o.shape, f"PyTorch {t.shape}, graphjit {o.shape}"
        for state in (1, 2):  # hy and cy [layers, batch, hidden]: layer 0 is before the dropout
            worst = relative_difference(theirs[state][0], ours[state][0])
            assert worst <= 1e-5, f"the first layer's states differ by {worst:.3g} of their magnitude"
        print(f"{name}: runs in PyTorch (its own masks); the first layer's states agree")
    except Exception as e:
        failures.append(name)
        print(f"{name}: FAILED: {e}")
    if failures:
        print(f"{len(failures)} of {len(CASES) + 1} exports failed: {', '.join(failures)}")
        return 1
    print(f"all {len(CASES) + 1} exports run in PyTorch {torch.__version__}")
    return 0


if __name__ == "__main__":
    GRAPHIR, WORK = sys.argv[1], sys.argv[2]
    sys.exit(main())
