#!/usr/bin/python3
"""The rows of graphbench, run on PyTorch at the same sizes, printed in the same table.

    /usr/bin/python3 bench/torch_compare.py --group rnns [--threads 2] [--nloops 20] [--peak-memory] [size options]

Takes graphbench's size options with the same per-group defaults (see docs/graphbench.md). Needs torch
(Debian: apt-get install python3-torch; a GPU machine: whatever torch is installed, --device=cuda, in
strict float32 unless --tf32).
Timing: warm-up runs excluded, forward and backward timed separately (CUDA: synchronized), median and
population standard deviation in milliseconds. Training rows (lm, classifier) time backward + SGD as bwd.
"""
import argparse
import os
import statistics
import sys
import time
from typing import List


def _size_blas_threads():
    """--threads N also sizes the BLAS's own thread pool (OPENBLAS_NUM_THREADS, unless set): Debian's torch
    does its GEMMs in OpenBLAS, whose pthreads torch.set_num_threads does not size. Must run before torch
    is imported."""
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--threads", type=int, default=None)
    known, _ = pre.parse_known_args()
    if known.threads:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", str(known.threads))


_size_blas_threads()


def _peak_memory_environment():
    """--peak-memory measures a step's peak by the resident set, which follows live tensors only when
    glibc returns every freed large block to the system: a fixed mmap threshold does that (glibc reads it
    at start-up, so the script re-executes itself with it set)."""
    if "--peak-memory" in sys.argv and os.environ.get("MALLOC_MMAP_THRESHOLD_") != "65536":
        os.environ["MALLOC_MMAP_THRESHOLD_"] = "65536"
        os.execv(sys.executable, [sys.executable] + sys.argv)


_peak_memory_environment()

try:
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
except ImportError:
    sys.exit("torch_compare.py: error: no torch module; on Debian: apt-get install python3-torch, "
             "then run with /usr/bin/python3")


def pick(v, default):
    return default if v is None else v


# ---- LSTM layers written as fastrnns writes them (eager, or compiled by torch.jit.script) ----

def lstm_cell(x, h, c, w_ih, w_hh, b_ih, b_hh):
    gates = torch.mm(x, w_ih.t()) + torch.mm(h, w_hh.t()) + b_ih + b_hh
    i, f, g, o = gates.chunk(4, 1)
    i, f, g, o = torch.sigmoid(i), torch.sigmoid(f), torch.tanh(g), torch.sigmoid(o)
    c = f * c + i * g
    return o * torch.tanh(c), c


def lstm_layer(x, h, c, w_ih, w_hh, b_ih, b_hh):
    outs = []
    for t in range(x.size(0)):
        h, c = lstm_cell(x[t], h, c, w_ih, w_hh, b_ih, b_hh)
        outs.append(h)
    return torch.stack(outs), h, c


def lstm_premul(x, h, c, w_ih, w_hh, b_ih, b_hh):
    pre = torch.matmul(x, w_ih.t())
    outs = []
    for t in range(x.size(0)):
        gates = pre[t] + torch.mm(h, w_hh.t()) + b_ih + b_hh
        i, f, g, o = gates.chunk(4, 1)
        i, f, g, o = torch.sigmoid(i), torch.sigmoid(f), torch.tanh(g), torch.sigmoid(o)
        c = f * c + i * g
        h = o * torch.tanh(c)
        outs.append(h)
    return torch.stack(outs), h, c


# ---- custom_lstms' layer-norm LSTM (script_lnlstm), one layer: nn.LayerNorm's functional form, or its
# decomposed LayerNorm ((x - mean) / std(unbiased=False) * w + b, no eps) ----

def lnlstm_layer(x, h, c, w_ih, w_hh, lni_w, lni_b, lnh_w, lnh_b, lnc_w, lnc_b):
    H = h.size(1)
    outs = []
    for t in range(x.size(0)):
        igates = torch.layer_norm(torch.mm(x[t], w_ih.t()), [4 * H], lni_w, lni_b, 1e-5)
        hgates = torch.layer_norm(torch.mm(h, w_hh.t()), [4 * H], lnh_w, lnh_b, 1e-5)
        i, f, g, o = (igates + hgates).chunk(4, 1)
        c = torch.layer_norm(torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g), [H], lnc_w, lnc_b, 1e-5)
        h = torch.sigmoid(o) * torch.tanh(c)
        outs.append(h)
    return torch.stack(outs), h, c


def ln_decom(x, w, b):
    mu = x.mean(-1, keepdim=True)
    sigma = x.std(-1, keepdim=True, unbiased=False)
    return (x - mu) / sigma * w + b


def lnlstm_decom_layer(x, h, c, w_ih, w_hh, lni_w, lni_b, lnh_w, lnh_b, lnc_w, lnc_b):
    outs = []
    for t in range(x.size(0)):
        igates = ln_decom(torch.mm(x[t], w_ih.t()), lni_w, lni_b)
        hgates = ln_decom(torch.mm(h, w_hh.t()), lnh_w, lnh_b)
        i, f, g, o = (igates + hgates).chunk(4, 1)
        c = ln_decom(torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g), lnc_w, lnc_b)
        h = torch.sigmoid(o) * torch.tanh(c)
        outs.append(h)
    return torch.stack(outs), h, c


class Bench:
    def __init__(self, args):
        self.a = args
        self.dev = torch.device(args.device)

    def sync(self):
        if self.dev.type == "cuda":
            torch.cuda.synchronize()

    def time_row(self, fwd, bwd, warmup, nloops):
        for _ in range(warmup):
            out = fwd()
            if bwd:
                bwd(out)
        f, b = [], []
        for _ in range(nloops):
            self.sync()
            t0 = time.perf_counter()
            out = fwd()
            self.sync()
            t1 = time.perf_counter()
            f.append((t1 - t0) * 1e3)
            if bwd:
                bwd(out)
                self.sync()
                b.append((time.perf_counter() - t1) * 1e3)
        return f, b

    @staticmethod
    def _status_kb(field):
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
        raise RuntimeError(f"no {field} in /proc/self/status")

    def peak_mb(self, fwd, bwd):
        """The memory one more step (forward and backward) takes above what was resident before it: the
        resident set's high-water mark (reset through /proc/self/clear_refs) less the resident set at
        the start. On CUDA, the caching allocator's peak above what was allocated before."""
        if self.dev.type == "cuda":
            torch.cuda.synchronize()
            before = torch.cuda.memory_allocated()
            torch.cuda.reset_peak_memory_stats()
            out = fwd()
            if bwd:
                bwd(out)
            del out
            torch.cuda.synchronize()
            return (torch.cuda.max_memory_allocated() - before) / 2**20
        before = self._status_kb("VmRSS")
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        out = fwd()
        if bwd:
            bwd(out)
        del out
        return max(0, self._status_kb("VmHWM") - before) / 1024

    def param(self, *shape, bound=0.1):
        return (torch.rand(*shape, device=self.dev) * 2 - 1).mul_(bound).requires_grad_()

    def lstm_weights(self, inp, hid):
        k = hid ** -0.5
        return [self.param(4 * hid, inp, bound=k), self.param(4 * hid, hid, bound=k),
                self.param(4 * hid, bound=k), self.param(4 * hid, bound=k)]

    # Each row: (name, fwd() -> loss-like output, bwd(out) or None, info)
    def rnn_rows(self, T, B, I, H, names, L=1):
        x = torch.rand(T, B, I, device=self.dev) * 2 - 1
        h0, c0 = torch.zeros(B, H, device=self.dev), torch.zeros(B, H, device=self.dev)
        w = self.lstm_weights(I, H)
        x.requires_grad_()
        scripted = torch.jit.script(lstm_layer)
        scripted_premul = torch.jit.script(lstm_premul)
        lib = nn.LSTM(I, H).to(self.dev)

        def backward(out):
            out.sum().backward()
        rows = []
        for name in names:
            if name == "cudnn":
                rows.append((name, lambda: lib(x)[0], backward, "nn.LSTM"))
            elif name == "aten":  # eager ops with autograd, as nn.LSTM with cuDNN off
                rows.append((name, lambda: lstm_layer(x, h0, c0, *w)[0], backward, "eager, autograd"))
            elif name == "py":
                rows.append((name, lambda: lstm_layer(x, h0, c0, *w)[0], backward, "eager"))
            elif name in ("jit", "jit_premul"):
                fn = scripted if name == "jit" else scripted_premul
                rows.append((name, lambda fn=fn: fn(x, h0, c0, *w)[0], backward, "torch.jit.script"))
            elif name in ("jit_layernorm", "jit_layernorm_decom"):
                ln = [self.param(4 * H, bound=1.0), self.param(4 * H), self.param(4 * H, bound=1.0),
                      self.param(4 * H), self.param(H, bound=1.0), self.param(H)]
                fn = torch.jit.script(lnlstm_layer if name == "jit_layernorm" else lnlstm_decom_layer)
                rows.append((name, lambda fn=fn, ln=ln: fn(x, h0, c0, w[0], w[1], *ln)[0], backward,
                             "torch.jit.script"))
            elif name == "cudnn_dropout":  # nn.LSTM(dropout=0.4) in training, L layers
                drop = nn.LSTM(I, H, L, dropout=0.4).to(self.dev).train()
                rows.append((name, lambda drop=drop: drop(x)[0], backward, f"nn.LSTM, {L} layers, dropout 0.4"))
            elif name == "jit_dropout":  # custom_lstms' stacked LSTM with dropout: the scripted layer, L times
                ws = [w] + [self.lstm_weights(H, H) for _ in range(L - 1)]

                def fwd(ws=ws):
                    out = x
                    for k, wk in enumerate(ws):
                        out = scripted(out, h0, c0, *wk)[0]
                        if k + 1 < len(ws):
                            out = F.dropout(out, 0.4, training=True)
                    return out
                rows.append((name, fwd, backward, f"torch.jit.script layers, {L} of them, dropout 0.4"))
            elif name == "cudnn_layernorm":  # fastrnns' lower bound: nn.LSTM plus 3 x T layer norms, forward only
                ln_i, ln_h, ln_c = nn.LayerNorm(4 * H).to(self.dev), nn.LayerNorm(4 * H).to(self.dev), \
                    nn.LayerNorm(H).to(self.dev)
                ln_input = torch.randn(B, 4 * H, device=self.dev)

                def fwd(ln_i=ln_i, ln_h=ln_h, ln_c=ln_c, ln_input=ln_input):
                    out, (hy, cy) = lib(x)
                    for _ in range(T):
                        ln_i(ln_input)
                        ln_h(ln_input)
                        cy = ln_c(cy)
                    return out
                rows.append((name, fwd, None, "nn.LSTM + 3 x seqLength nn.LayerNorm, forward only"))
        return rows

    def sgd(self, params, lr):
        with torch.no_grad():
            for p in params:
                if p.grad is not None:
                    p.sub_(p.grad, alpha=lr)
                    p.grad = None

    def lm_rows(self, V, E, L, H, T, B, lr):
        emb = nn.Embedding(V, E).to(self.dev)
        lstm = nn.LSTM(E, H, L).to(self.dev)
        dec = nn.Linear(H, V).to(self.dev)
        params = list(emb.parameters()) + list(lstm.parameters()) + list(dec.parameters())
        tokens = torch.randint(0, V, (T, B), device=self.dev)
        targets = torch.randint(0, V, (T, B), device=self.dev)

        def fwd():
            out, _ = lstm(emb(tokens))
            return F.cross_entropy(dec(out.view(T * B, H)), targets.view(-1))

        def bwd(loss):
            loss.backward()
            self.sgd(params, lr)

        def infer():
            with torch.no_grad():
                return fwd()
        return [("cudnn", fwd, bwd, "nn.LSTM"), ("cudnn.infer", infer, None, "nn.LSTM, no grad")]

    def classifier_rows(self, V, T, B, hidden, lr):
        rows = []
        for H in hidden:
            emb, lstm, fc = nn.Embedding(V, H).to(self.dev), nn.LSTM(H, H).to(self.dev), nn.Linear(H, 5).to(self.dev)
            params = list(emb.parameters()) + list(lstm.parameters()) + list(fc.parameters())
            tokens = torch.randint(0, V, (T, B), device=self.dev)
            labels = torch.randint(0, 5, (B,), device=self.dev)

            def fwd(emb=emb, lstm=lstm, fc=fc, tokens=tokens, labels=labels):
                out, _ = lstm(emb(tokens))
                return F.cross_entropy(fc(out[-1]), labels)

            def bwd(loss, params=params):
                loss.backward()
                self.sgd(params, lr)
            rows.append((f"h{H}", fwd, bwd, "nn.LSTM"))
        return rows

    def cell_rows(self, B, I, H):
        # The input and the state take gradients too, as in graphbench's cell rows (every float input of
        # the cell): without them the backward skips the dx and dh products, half its GEMMs.
        x, h, c = (torch.rand(B, n, device=self.dev).requires_grad_() for n in (I, H, H))
        w = self.lstm_weights(I, H)
        scripted = torch.jit.script(lstm_cell)
        lib = nn.LSTMCell(I, H).to(self.dev)

        def backward(out):
            (out[0].sum() + out[1].sum()).backward()
        return [("cell.cudnn", lambda: lib(x, (h, c)), backward, "nn.LSTMCell"),
                ("cell", lambda: scripted(x, h, c, *w), backward, "torch.jit.script")]

    def vl_rows(self, B, I, H):
        x, lengths = vl_inputs(B, I, self.dev)
        h0, c0 = torch.zeros(1, H, device=self.dev), torch.zeros(1, H, device=self.dev)
        w = self.lstm_weights(I, H)
        lib = nn.LSTM(I, H).to(self.dev)
        scripted = torch.jit.script(vl_loop)

        def packed():
            packed = nn.utils.rnn.pack_padded_sequence(x, lengths, enforce_sorted=False)
            return nn.utils.rnn.pad_packed_sequence(lib(packed)[0])[0]

        def backward(out):
            out.sum().backward()

        def backward_all(outs):
            sum(o.sum() for o in outs).backward()
        return [("vl_cudnn", packed, backward, "nn.LSTM on pack_padded_sequence"),
                ("vl_jit", lambda: scripted(vl_sequences(x, lengths), h0, c0, *w), backward_all,
                 "torch.jit.script, a loop over the sequences"),
                ("vl_py", lambda: vl_loop(vl_sequences(x, lengths), h0, c0, *w), backward_all,
                 "eager, a loop over the sequences")]

    def cnn_rows(self, B, S):
        resnet = resnet_module()
        x = torch.rand(B, 3, S, S, device=self.dev) * 2 - 1
        rows = []
        for name, block, layers in (("resnet18", resnet.BasicBlock, [2, 2, 2, 2]),
                                    ("resnet50", resnet.Bottleneck, [3, 4, 6, 3])):
            model = resnet.ResNet(block, layers, 64, 1000).to(self.dev).train()
            scripted = torch.jit.script(model)

            def backward(out):
                out.sum().backward()
            rows.append((name, lambda m=model: m(x), backward, "torchvision-structured ResNet, training"))
            rows.append((name + "_jit", lambda m=scripted: m(x), backward, "torch.jit.script of it"))
        return rows

    def op_rows(self, o):
        lin = nn.Linear(o["lin_in"], o["lin_out"]).to(self.dev)
        conv = nn.Conv2d(o["conv_in"], o["conv_out"], 3, padding=1).to(self.dev)
        mha = nn.MultiheadAttention(o["mha_e"], o["mha_h"]).to(self.dev)
        xl = torch.rand(o["lin_rows"], o["lin_in"], device=self.dev, requires_grad=True)
        xc = torch.rand(o["conv_b"], o["conv_in"], o["conv_hw"], o["conv_hw"], device=self.dev, requires_grad=True)
        xm = torch.rand(o["mha_t"], o["mha_b"], o["mha_e"], device=self.dev, requires_grad=True)
        xs = torch.rand(o["sm_rows"], o["sm_feat"], device=self.dev, requires_grad=True)

        def backward(out):
            out.sum().backward()
        return [("linear", lambda: lin(xl), backward, "nn.Linear"),
                ("conv2d", lambda: conv(xc), backward, "nn.Conv2d"),
                ("multihead_attention", lambda: mha(xm, xm, xm, need_weights=False)[0], backward,
                 "nn.MultiheadAttention"),
                ("softmax", lambda: torch.softmax(xs, -1), backward, "torch.softmax")]


def vl_inputs(B, I, dev, seed=0):
    """fastrnns' varlen_lstm_inputs: lengths in [30, 100) per sequence, the batch padded to 99 steps."""
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(30, 100, (B,), generator=g)
    x = torch.rand(99, B, I, generator=g).to(dev) * 2 - 1
    return x.requires_grad_(), lengths


def vl_sequences(x, lengths):
    return [x[:int(n), i:i + 1] for i, n in enumerate(lengths)]


def vl_loop(seqs: List[torch.Tensor], h0, c0, w_ih, w_hh, b_ih, b_hh) -> List[torch.Tensor]:
    """fastrnns' vl_jit / vl_py: each sequence through the LSTM on its own (batch 1)."""
    outs: List[torch.Tensor] = []
    for s in seqs:
        outs.append(lstm_layer(s, h0, c0, w_ih, w_hh, b_ih, b_hh)[0])
    return outs


def resnet_module():
    """tests/data/gen/resnet.py's torchvision-structured ResNets (torchvision need not be installed)."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "gen"))
    import resnet
    return resnet


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--group", default="rnns", help="comma-separated: rnns, vl_lstm, cnns, lm, classifier, cells, ops")
    p.add_argument("--rnns", default=None, help="rows of the rnns group (cudnn, aten, py, jit, jit_premul, "
                   "jit_layernorm, jit_layernorm_decom, cudnn_layernorm, cudnn_dropout, jit_dropout; the dropout rows "
                   "stack --numLayers layers)")
    for name in ("seqLength", "numLayers", "inputSize", "hiddenSize", "miniBatch", "vocab", "imageSize", "nloops",
                 "warmup"):
        p.add_argument("--" + name, type=int, default=None)
    p.add_argument("--threads", type=int, default=None,
                   help="torch.set_num_threads, and OPENBLAS_NUM_THREADS unless the environment sets it")
    p.add_argument("--device", default="cpu")
    p.add_argument("--tf32", action="store_true",
                   help="CUDA: let cuDNN and cuBLAS use TF32 tensor cores for float32 (PyTorch's cuDNN default); "
                        "off by default, since graphjit computes in strict float32 (cuDNN FMA math, cuBLAS "
                        "without TF32)")
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--sep", default=" ")
    p.add_argument("--peak-memory", action="store_true",
                   help="also measure each row's peak memory over one more step (CPU: resident set, the "
                        "script re-runs itself with MALLOC_MMAP_THRESHOLD_=65536, which slows PyTorch: take "
                        "times from a run without this flag)")
    a = p.parse_args()
    groups = a.group.split(",")
    for g in groups:
        if g not in ("rnns", "vl_lstm", "cnns", "lm", "classifier", "cells", "ops"):
            p.error(f"--group={g}: unknown group; groups: rnns, vl_lstm, cnns, lm, classifier, cells, ops")
    if a.threads:
        torch.set_num_threads(a.threads)
    if a.device.startswith("cuda"):
        torch.backends.cudnn.allow_tf32 = a.tf32
        torch.backends.cuda.matmul.allow_tf32 = a.tf32
    b = Bench(a)
    print(f"torch {torch.__version__}, device {a.device}, threads {torch.get_num_threads()}, "
          f"OPENBLAS_NUM_THREADS {os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}, "
          f"mkldnn {torch.backends.mkldnn.is_available()}, "
          f"tf32 {'on' if a.tf32 and a.device.startswith('cuda') else 'off'}, settings {vars(a)}")
    for g in groups:
        nloops = pick(a.nloops, 60 if g == "lm" else 10 if g in ("vl_lstm", "cnns") else 20)
        warmup = pick(a.warmup, 10 if g == "lm" else 3)
        if g == "vl_lstm":
            rows = b.vl_rows(pick(a.miniBatch, 64), pick(a.inputSize, 512), pick(a.hiddenSize, 512))
        elif g == "cnns":
            rows = b.cnn_rows(pick(a.miniBatch, 64), pick(a.imageSize, 224))
        elif g == "rnns":
            names = a.rnns.split(",") if a.rnns else ["cudnn", "aten", "py", "jit", "jit_premul"]
            rows = b.rnn_rows(pick(a.seqLength, 100), pick(a.miniBatch, 64), pick(a.inputSize, 512),
                              pick(a.hiddenSize, 512), names, pick(a.numLayers, 1))
        elif g == "lm":
            rows = b.lm_rows(pick(a.vocab, 10001), pick(a.inputSize, 128), pick(a.numLayers, 3),
                             pick(a.hiddenSize, 256), pick(a.seqLength, 50), pick(a.miniBatch, 128), a.lr)
        elif g == "classifier":
            hidden = [a.hiddenSize] if a.hiddenSize else [128, 256, 512, 1024, 2048]
            rows = b.classifier_rows(pick(a.vocab, 10000), pick(a.seqLength, 50), pick(a.miniBatch, 64), hidden, a.lr)
        elif g == "cells":
            rows = b.cell_rows(pick(a.miniBatch, 128), pick(a.inputSize, 512), pick(a.hiddenSize, 512))
        else:
            e = pick(a.inputSize, 512)
            rows = b.op_rows({"lin_rows": pick(a.miniBatch, 128), "lin_in": pick(a.inputSize, 1024),
                              "lin_out": pick(a.hiddenSize, 1024), "conv_b": pick(a.miniBatch, 8),
                              "conv_in": pick(a.inputSize, 64), "conv_out": pick(a.hiddenSize, 64),
                              "conv_hw": pick(a.seqLength, 56), "mha_t": pick(a.seqLength, 128),
                              "mha_b": pick(a.miniBatch, 16), "mha_e": e, "mha_h": 8 if e % 8 == 0 else 1,
                              "sm_rows": pick(a.miniBatch, 2048), "sm_feat": pick(a.inputSize, 1024)})
        print(f"Benchmarking {g} on PyTorch (milliseconds; median of {nloops} runs after {warmup} warm-up)...")
        table = [["name", "avg_fwd", "std_fwd", "info_fwd", "avg_bwd", "std_bwd", "info_bwd"]]
        for name, fwd, bwd, info in rows:
            f, bw = b.time_row(fwd, bwd, warmup, nloops)
            fmt = lambda xs: (f"{statistics.median(xs):.3f}", f"{statistics.pstdev(xs):.3f}") if xs else ("n/a", "n/a")
            info_bwd = info if bw else "forward only"
            if a.peak_memory:
                info_bwd += f", peak {b.peak_mb(fwd, bwd):.0f}MB"
            table.append([name, *fmt(f), info, *fmt(bw), info_bwd])
        width = [max(16, max(len(r[i]) for r in table)) for i in range(len(table[0]))]
        for r in table:
            print(a.sep.join(c.rjust(w) for c, w in zip(r, width)))


if __name__ == "__main__":
    main()
