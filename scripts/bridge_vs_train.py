#!/usr/bin/env python3
"""The same network through the PyTorch bridge and through `convlab train`: per-layer convolution times.

usage: bridge_vs_train.py TRAIN.json [TRAIN.json ...] COMPARE_DIR [COMPARE_DIR ...] [--tolerance 0.10]
TRAIN.json is `convlab train NET --json` (AlexNet-OWT is torchvision's alexnet); COMPARE_DIR the results
folder of `python -m convlab.torch compare --model alexnet` (its layers.csv: the patched layers' own
timers, own_fwd_ms / own_bwd_data_ms / own_bwd_filter_ms, the time of convlab's call alone). Several runs
of each tool (best alternated: train, bridge, train, bridge, ..., since the machine's speed drifts over
minutes) are pooled per pair: each tool's time is the median of its runs' medians.
For every policy both ran and every convolution (matched in network order) and direction: the
algorithm each chose, both medians, bridge / train, and whether they agree within the tolerance.
Pairs whose algorithms differ are listed but not counted (the two runs tuned apart: a different choice
is not the same measurement). The first layer's backward-data is never run by either. train's forward and backward-filter times
include the layer's fused bias (+ ReLU) epilogue, which PyTorch runs as separate modules outside the
bridge's timer: the epilogue's own medians (train.json's epilogue_s) are taken off, so both sides are
the convolution call alone (train.json files without epilogue_s are compared as they are, and say so).
The last line is the summary: pairs compared, pairs within the tolerance, the largest deviation.
Exit 1 when a file is missing or holds no common policy.
"""
import csv
import json
import os
import statistics
import sys

DIRS = (("fwd", "fwd_s", "own_fwd_ms"), ("bwd-data", "bwd_data_s", "own_bwd_data_ms"),
        ("bwd-filter", "bwd_filter_s", "own_bwd_filter_ms"))


def fail(msg):
    print(f"error: {msg}", file=sys.stderr)
    sys.exit(1)


def train_layers(path):
    """({policy: [(name, {dir: (ms, algo)})]} of the convolution layers in network order, whether the file
    splits the epilogue off)."""
    try:
        doc = json.load(open(path))
    except (OSError, ValueError) as e:
        fail(f"{path}: {e}")
    out = {}
    for p in doc.get("policies", []):
        if not p.get("ran"):
            continue
        convs = []
        for layer in p.get("layers", []):
            if layer.get("kind") != "conv":
                continue
            algos = {d: a.get("algo", "") for d, a in (layer.get("algos") or {}).items()}
            epi = layer.get("epilogue_s") or {}
            minus = {"fwd": epi.get("fwd", 0.0), "bwd-data": 0.0, "bwd-filter": epi.get("bwd", 0.0)}
            convs.append((layer["name"], {d: ((layer.get(key, 0) - minus[d]) * 1e3, algos.get(d, ""))
                                          for d, key, _ in DIRS}))
        out[p["policy"]] = convs
    return out, any("epilogue_s" in layer for p in doc.get("policies", []) for layer in p.get("layers", []))


def bridge_layers(folder):
    path = os.path.join(folder, "layers.csv")
    try:
        rows = list(csv.DictReader(open(path)))
    except OSError as e:
        fail(f"{path}: {e}")
    out = {}
    algo_col = {"fwd": "fwd_algo", "bwd-data": "bwd_data_algo", "bwd-filter": "bwd_filter_algo"}
    for r in rows:
        if not r.get("own_fwd_ms"):
            continue  # a PyTorch baseline or a layer convlab did not run
        times = {}
        for d, _, col in DIRS:
            v = r.get(col, "")
            times[d] = (float(v) if v else 0.0, r.get(algo_col[d], ""))
        out.setdefault(r["policy"], []).append((r["layer"], times))
    return out


def pooled(runs):
    """Several runs' {policy: [(name, {dir: (ms, algo)})]} as one: per pair the median of the runs' times
    (the runs that have the policy); an algorithm that differs between runs of one tool reads "mixed"."""
    out = {}
    for pol in sorted({p for r in runs for p in r}, key=lambda p: min(list(r).index(p) for r in runs if p in r)):
        have = [r[pol] for r in runs if pol in r]
        if len({len(h) for h in have}) != 1:
            fail(f"policy {pol}: the runs have different numbers of convolutions")
        layers = []
        for i, (name, _) in enumerate(have[0]):
            times = {}
            for d, _, _ in DIRS:
                vals = [h[i][1][d] for h in have]
                algos = {a for _, a in vals}
                times[d] = (statistics.median(ms for ms, _ in vals), algos.pop() if len(algos) == 1 else "mixed")
            layers.append((name, times))
        out[pol] = layers
    return out


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    tol = 0.10
    if "--tolerance" in argv:
        tol = float(argv[argv.index("--tolerance") + 1])
        args.remove(argv[argv.index("--tolerance") + 1])
    files = [a for a in args if not os.path.isdir(a)]
    folders = [a for a in args if os.path.isdir(a)]
    if not files or (not folders and len(files) < 2):
        fail("usage: bridge_vs_train.py TRAIN.json [TRAIN.json ...] COMPARE_DIR [COMPARE_DIR ...] [--tolerance 0.10]")
    if not folders:  # a COMPARE_DIR that is not there: its layers.csv is reported missing
        folders = files[-1:]
        files = files[:-1]
    trains = [train_layers(f) for f in files]
    train, split = pooled([t for t, _ in trains]), all(s for _, s in trains)
    bridge = pooled([bridge_layers(d) for d in folders])
    if len(files) > 1 or len(folders) > 1:
        print(f"pooled: {len(files)} train run(s), {len(folders)} bridge run(s); per pair the median of each "
              f"tool's runs")
        print()
    common = [p for p in train if p in bridge]
    if not common:
        fail(f"no policy in both (train: {sorted(train)}, bridge: {sorted(bridge)})")
    print("| policy | layer | dir | train algo | bridge algo | train ms | bridge ms | bridge / train | within |")
    print("|---|---|---|---|---|---:|---:|---:|---|")
    compared = within = 0
    worst = (0.0, "")
    for pol in common:
        t, b = train[pol], bridge[pol]
        if len(t) != len(b):
            fail(f"policy {pol}: {len(t)} convolutions in train, {len(b)} in the bridge")
        for (tname, tt), (bname, bt) in zip(t, b):
            for d, _, _ in DIRS:
                (tms, talgo), (bms, balgo) = tt[d], bt[d]
                if tms <= 0 or bms <= 0:
                    continue  # not run (the first layer's backward-data)
                ratio = bms / tms
                same = talgo == balgo
                ok = abs(ratio - 1) <= tol + 1e-9  # 11 / 10 is 1.1000000000000001 in binary
                if same:
                    compared += 1
                    within += ok
                    if abs(ratio - 1) > abs(worst[0] - 1) or not worst[1]:
                        worst = (ratio, f"{pol} {tname} {d}")
                verdict = ("yes" if ok else "**no**") if same else "not compared (choices differ)"
                print(f"| {pol} | {tname} ({bname}) | {d} | {talgo} | {balgo} | {tms:.3f} | {bms:.3f} | "
                      f"{ratio:.3f} | {verdict} |")
    print()
    print("train's times: the convolution call alone (its fused bias + ReLU epilogue's medians taken off)" if split
          else "train's times: as written (this train.json has no epilogue_s: the fused bias + ReLU epilogue is "
               "inside its fwd and bwd-filter times)")
    print(f"summary: {within} of {compared} (layer, direction) pairs with the same algorithm agree within "
          f"{tol * 100:.0f} %; largest deviation {worst[0]:.3f}x ({worst[1]})")


if __name__ == "__main__":
    main(sys.argv)
