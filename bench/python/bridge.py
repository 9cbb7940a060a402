"""The PyTorch bridge's own cost, measured side by side in one run.

1. Overhead per call: a convolution too small to take time (1x1, 8 channels, 8x8) run by the same
   plan four ways, interleaved round by round: the C++ loop around the kernel (Plan.time), Plan.run
   from Python, convlab.conv on NumPy arrays, and a patched nn.Conv2d's forward on torch tensors
   (the autograd Function included). Overhead = median(way) - median(C++ loop).
2. A patched layer against PyTorch's own convolution on real layers (ResNet-50's, batch 16), forward:
   fixed:onednn.auto (Debian's oneDNN, which convlab links) through the bridge, PyTorch's
   convolution (the oneDNN its wheel carries), and the same convlab plan timed in C++ -- so the
   bridge's share and the library difference are told apart.

usage: PYTHONPATH=build/python python3 bench/python/bridge.py [--rounds 7] [--json FILE]
"""

import argparse
import json
import statistics
import sys
import time

import numpy as np
import torch
from torch import nn

import convlab
import convlab.torch as ct


def per_call(fn, calls):
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t0) / calls


def overhead(rounds, calls):
    p = convlab.Problem.parse("mb1ic8ih8oc8kh1")
    threads = torch.get_num_threads()
    plan = convlab.plan("cpu.direct", p, "fwd", threads=threads)
    x = np.random.rand(*p.src_shape).astype(np.float32)
    w = np.random.rand(*p.wei_shape).astype(np.float32)
    y = np.empty(p.dst_shape, np.float32)
    layer = nn.Conv2d(8, 8, 1, bias=False)
    ct.patch(layer, policy="fixed:cpu.direct")
    tx = torch.from_numpy(x)
    txg = tx.clone().requires_grad_()
    with torch.no_grad():
        layer.weight.copy_(torch.from_numpy(w))
    ref = nn.Conv2d(8, 8, 1, bias=False)

    def training_forward(module):
        with torch.enable_grad():
            return per_call(lambda: module(txg), calls)

    ways = {
        "C++ loop (Plan.time)": lambda: statistics.median(plan.time(x, w, y, calls)),
        "Plan.run from Python": lambda: per_call(lambda: plan.run(x, w, y), calls),
        "convlab.conv (NumPy)": lambda: per_call(lambda: convlab.conv(x, w, algo="cpu.direct", out=y), calls),
        "patched nn.Conv2d forward (torch, no_grad)": lambda: per_call(lambda: layer(tx), calls),
        "patched nn.Conv2d forward (torch, recording autograd)": lambda: training_forward(layer),
        "PyTorch's nn.Conv2d forward (recording autograd), for scale": lambda: training_forward(ref),
    }
    with torch.no_grad():
        for fn in ways.values():
            fn()  # warm-up: plans made, pools started
        seen = {k: [] for k in ways}
        for r in range(rounds):
            order = list(ways) if r % 2 == 0 else list(reversed(ways))
            for k in order:
                seen[k].append(ways[k]())
    base = statistics.median(seen["C++ loop (Plan.time)"])
    assert layer.convlab_fallback == "", layer.convlab_fallback
    return [{"way": k, "median_us": statistics.median(v) * 1e6,
             "overhead_us": (statistics.median(v) - base) * 1e6} for k, v in seen.items()]


def same_primitive(rounds, batch, reps):
    rows = []
    layers = [(label, p) for label, p, _, _ in convlab.problems("resnet50", batch=batch)]
    picks = [lbl for lbl in ("resnet50.conv1", "resnet50.res2.1x1a_first", "resnet50.res2.3x3", "resnet50.res3.3x3_s2",
                             "resnet50.res4.1x1b", "resnet50.res5.3x3") if any(lbl == label for label, _ in layers)]
    if not picks:
        picks = [label for label, _ in layers[:6]]
    threads = torch.get_num_threads()
    for label in picks:
        p = dict(layers)[label]
        if p.pad != p.pad_end:
            continue
        ref = nn.Conv2d(p.c, p.k, (p.r, p.s), stride=p.stride, padding=p.pad, dilation=p.dilation, groups=p.groups,
                        bias=False)
        mine = nn.Conv2d(p.c, p.k, (p.r, p.s), stride=p.stride, padding=p.pad, dilation=p.dilation,
                         groups=p.groups, bias=False)
        mine.load_state_dict(ref.state_dict())
        ct.patch(mine, policy="fixed:onednn.auto")
        x = torch.rand(p.src_shape)
        plan = convlab.plan("onednn.auto", p, "fwd", threads=threads)
        y = torch.empty(p.dst_shape)
        w = ref.weight.detach().contiguous()
        ways = {"pytorch": lambda: per_call(lambda: ref(x), reps),
                "bridge": lambda: per_call(lambda: mine(x), reps),
                "cpp": lambda: statistics.median(plan.time(x, w, y, reps))}
        with torch.no_grad():
            for fn in ways.values():
                fn()
            seen = {k: [] for k in ways}
            for r in range(rounds):
                for k in (list(ways) if r % 2 == 0 else list(reversed(ways))):
                    seen[k].append(ways[k]())
        assert mine.convlab_fallback == "", mine.convlab_fallback
        med = {k: statistics.median(v) for k, v in seen.items()}
        rows.append({"layer": label, "problem": str(p), "pytorch_ms": med["pytorch"] * 1e3,
                     "bridge_ms": med["bridge"] * 1e3, "cpp_ms": med["cpp"] * 1e3,
                     "bridge_vs_pytorch": med["bridge"] / med["pytorch"], "bridge_vs_cpp": med["bridge"] / med["cpp"]})
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--json", help="write the tables here too")
    a = ap.parse_args()
    if a.rounds < 1 or a.calls < 1 or a.reps < 1 or a.batch < 1:
        sys.exit("error: --rounds, --calls, --reps and --batch must be >= 1")
    print(f"# convlab bridge, {convlab.cpu_isa()}, torch {torch.__version__}, {torch.get_num_threads()} threads")
    oh = overhead(a.rounds, a.calls)
    print("\n| way | median per call (µs) | overhead over the C++ loop (µs) |\n|---|---:|---:|")
    for r in oh:
        print(f"| {r['way']} | {r['median_us']:.2f} | {r['overhead_us']:.2f} |")
    sp = same_primitive(a.rounds, a.batch, a.reps)
    print(f"\n| layer (batch {a.batch}) | PyTorch (ms) | patched, onednn.auto (ms) | same plan in C++ (ms) "
          "| patched / PyTorch | patched / C++ |\n|---|---:|---:|---:|---:|---:|")
    for r in sp:
        print(f"| {r['layer']} | {r['pytorch_ms']:.3f} | {r['bridge_ms']:.3f} | {r['cpp_ms']:.3f} "
              f"| {r['bridge_vs_pytorch']:.3f} | {r['bridge_vs_cpp']:.3f} |")
    if a.json:
        with open(a.json + ".tmp", "w") as f:
            json.dump({"overhead": oh, "same_primitive": sp}, f, indent=1)
        import os

        os.replace(a.json + ".tmp", a.json)


if __name__ == "__main__":
    main()
