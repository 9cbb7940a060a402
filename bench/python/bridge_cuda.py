"""The PyTorch bridge on CUDA tensors, measured side by side in one run.

1. Submission cost per call: a convolution too small to take time (1x1, 8 channels, 8x8, batch 1) issued N
   times without synchronising, host time / N, interleaved round by round: convlab's Plan.run on torch tensors
   (cuda.implicit_gemm, PyTorch's current stream), a patched nn.Conv2d forward (no_grad, and recording
   autograd), and PyTorch's own nn.Conv2d (cuDNN) for scale.
2. Per layer (ResNet-18's distinct convolutions, batch 32, forward): the device time per call (CUDA events
   around N calls back to back) of PyTorch's convolution with cuDNN in fp32 and with TF32 allowed (PyTorch's
   default), and of a patched layer on convlab's find choice and on fixed cuDNN / hand-written algorithms.

usage: PYTHONPATH=build/python python3 bench/python/bridge_cuda.py [--rounds 5] [--calls 2000] [--json FILE]
"""

import argparse
import json
import os
import statistics
import sys
import time

import torch
from torch import nn

import convlab
import convlab.torch as ct

# (name, in, out, kernel, stride, padding, image): ResNet-18's distinct convolutions.
RESNET18 = [("conv1", 3, 64, 7, 2, 3, 224), ("layer1.3x3", 64, 64, 3, 1, 1, 56),
            ("layer2.0.conv1", 64, 128, 3, 2, 1, 56), ("layer2.0.downsample", 64, 128, 1, 2, 0, 56),
            ("layer2.3x3", 128, 128, 3, 1, 1, 28), ("layer3.3x3", 256, 256, 3, 1, 1, 14),
            ("layer4.3x3", 512, 512, 3, 1, 1, 7)]
PATCHED = ("find", "fixed:cudnn.implicit_precomp_gemm", "fixed:cuda.implicit_gemm")


def host_per_call(fn, calls):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    dt = time.perf_counter() - t0
    torch.cuda.synchronize()
    return dt / calls


def device_per_call(fn, calls):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(calls):
        fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / 1e3 / calls


def interleaved(ways, rounds, measure):
    for fn in ways.values():
        fn()  # warm-up: plans made, cuDNN's choices cached
    seen = {k: [] for k in ways}
    for r in range(rounds):
        for k in (list(ways) if r % 2 == 0 else list(reversed(ways))):
            seen[k].append(measure(ways[k]))
    return {k: statistics.median(v) for k, v in seen.items()}


def submission(rounds, calls):
    p = convlab.Problem.parse("mb1ic8ih8oc8kh1")
    x = torch.rand(p.src_shape, device="cuda")
    w = torch.rand(p.wei_shape, device="cuda")
    y = torch.empty(p.dst_shape, device="cuda")
    plan = convlab.plan("cuda.implicit_gemm", p, "fwd", device="cuda")
    layer = nn.Conv2d(8, 8, 1, bias=False).cuda()
    ct.patch(layer, policy="fixed:cuda.implicit_gemm")
    ref = nn.Conv2d(8, 8, 1, bias=False).cuda()
    xg = x.clone().requires_grad_()
    ways = {"Plan.run (convlab.run on torch tensors)": lambda: convlab.run(plan, src=x, wei=w, dst=y),
            "patched nn.Conv2d forward (no_grad)": lambda: _no_grad(layer, x),
            "patched nn.Conv2d forward (recording autograd)": lambda: layer(xg),
            "PyTorch's nn.Conv2d forward (recording autograd), for scale": lambda: ref(xg)}
    med = interleaved(ways, rounds, lambda fn: host_per_call(fn, calls))
    assert layer.convlab_fallback == "", layer.convlab_fallback
    return [{"way": k, "host_us_per_call": v * 1e6} for k, v in med.items()]


def _no_grad(module, x):
    with torch.no_grad():
        return module(x)


def per_layer(rounds, calls, batch):
    rows = []
    for name, c, k, r, s, pad, hw in RESNET18:
        torch.manual_seed(0)
        ref = nn.Conv2d(c, k, r, stride=s, padding=pad, bias=False).cuda()
        x = torch.rand(batch, c, hw, hw, device="cuda")
        patched = {}
        for policy in PATCHED:
            m = nn.Conv2d(c, k, r, stride=s, padding=pad, bias=False).cuda()
            m.load_state_dict(ref.state_dict())
            ct.patch(m, policy=policy)
            patched[policy] = m

        def pytorch(tf32):
            def fn():
                torch.backends.cudnn.allow_tf32 = tf32
                return ref(x)
            return fn
        ways = {"pytorch fp32": pytorch(False), "pytorch tf32": pytorch(True)}
        ways.update({p: (lambda m=m: m(x)) for p, m in patched.items()})
        with torch.no_grad():
            med = interleaved(ways, rounds, lambda fn: device_per_call(fn, calls))
        row = {"layer": name, "problem": f"{c}->{k} {r}x{r} s{s} @{hw}", "ms": {w: v * 1e3 for w, v in med.items()},
               "algos": {}}
        for policy, m in patched.items():
            row["algos"][policy] = m.convlab_fallback or m.convlab_shapes()[0].choices["fwd"].algo
        rows.append(row)
    torch.backends.cudnn.allow_tf32 = True
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--calls", type=int, default=2000, help="calls per measurement of the submission cost")
    ap.add_argument("--layer-calls", type=int, default=20, help="calls per measurement of a layer")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--json", help="write the tables here too")
    a = ap.parse_args()
    if min(a.rounds, a.calls, a.layer_calls, a.batch) < 1:
        sys.exit("error: --rounds, --calls, --layer-calls and --batch must be >= 1")
    if not torch.cuda.is_available():
        sys.exit("error: PyTorch sees no CUDA device here")
    print(f"# convlab bridge on CUDA, {torch.cuda.get_device_name()}, torch {torch.__version__}")
    sub = submission(a.rounds, a.calls)
    print("\n| way | host time per call, no synchronisation (µs) |\n|---|---:|")
    for r in sub:
        print(f"| {r['way']} | {r['host_us_per_call']:.2f} |")
    layers = per_layer(a.rounds, a.layer_calls, a.batch)
    print(f"\n| layer (batch {a.batch}, forward) | " + " | ".join(f"{w} (ms)" for w in layers[0]["ms"]) +
          " | find's choice |\n|---|" + "---:|" * len(layers[0]["ms"]) + "---|")
    for r in layers:
        print(f"| {r['layer']} {r['problem']} | " + " | ".join(f"{v:.3f}" for v in r["ms"].values()) +
              f" | {r['algos']['find']} |")
    if a.json:
        with open(a.json + ".tmp", "w") as f:
            json.dump({"submission": sub, "layers": layers}, f, indent=1)
        os.replace(a.json + ".tmp", a.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
