#!/usr/bin/env python3
"""A GPU cost model from the SIMT emulator's counts: each hand-written kernel launch's time on an
H100 or H200 predicted from what it does, without the GPU. Every number it prints is *modelled*.

usage: gpu_model.py SIMT_DIR --card h100|h200 [--measured LAYERS.csv --run 1 --network alexnet]
SIMT_DIR holds `simt_counts ALGO LAYER --dir D --csv` files named ALGO.LAYER.DIRECTION.csv (LAYER
as `conv3` for alexnet.conv3). Per launch, four floors from the card's published limits:
  fma    warp FMA instructions / (SMs x 4 per clock)            fp32 pipes
  sched  (memory + FMA + MMA warp instructions) / (SMs x 4 per clock) schedulers (other instructions unseen)
  smem   shared-memory wavefronts / (SMs x 1 per clock)         shared-memory banks
  l2     global sectors x 32 B / L2 bandwidth                   L1 <-> L2 traffic
and, for the tensor-core kernels, a fifth that is not fitted:
  tensor m16n8k8 TF32 MMAs x 1024 multiply-adds / (SMs x 1024 per clock)   Hopper's dense TF32 rate
and a launch costs LAUNCH_US + max(floor / its efficiency). The efficiencies are fitted (one per
floor, the same for every kernel) on the measured rows given with --measured, and the fit is
reported leave-one-algorithm-out as well as in sample, so a calibrated number is never passed
off as a prediction. Without --measured the published limits alone are used (efficiency 1).
"""
import collections
import csv
import glob
import itertools
import math
import os
import sys

CARDS = {  # published limits; clocks as nvidia-smi reports the maximum SM clock
    "h100": dict(sms=132, clock=1.98e9, l2_bytes_per_s=5.5e12),
    "h200": dict(sms=132, clock=1.98e9, l2_bytes_per_s=5.5e12),
}
LAUNCH_US = 3.0
FLOORS = ("fma", "sched", "smem", "l2")  # fitted
TENSOR_MACS_PER_SM_CLOCK = 1024  # dense TF32 (H100/H200: ~495 TFLOP/s at 1.83 GHz over 132 SMs)


def floors(row, card):
    c = CARDS[card]
    f = lambda k: float(row.get(k) or 0)
    per_clock = c["sms"] * c["clock"]
    return {
        "fma": f("fma_instructions") / (4 * per_clock),
        "sched": (f("warp_instructions") + f("fma_instructions") + f("mma_instructions")) / (4 * per_clock),
        "smem": (f("shared_ld_wavefronts") + f("shared_st_wavefronts")) / per_clock,
        "l2": 32 * (f("global_ld_sectors") + f("global_st_sectors") + f("global_atom_sectors")) / c["l2_bytes_per_s"],
        "tensor": f("mma_instructions") * 1024 / (TENSOR_MACS_PER_SM_CLOCK * per_clock),
    }


def launch_us(fl, eff):
    return LAUNCH_US + 1e6 * max([fl[k] / eff[k] for k in FLOORS] + [fl["tensor"]])


def load_runs(folder, card):
    runs = {}
    for path in sorted(glob.glob(os.path.join(folder, "*.csv"))):
        algo, layer, direction = os.path.basename(path)[:-4].rsplit(".", 2)
        launches = [floors(r, card) for r in csv.DictReader(open(path))]
        if launches:  # a file with no launch (the algorithm did not run) models nothing
            runs[(algo, layer, direction)] = launches
    return runs


def load_measured(path, run, network):
    out = {}
    for r in csv.DictReader(open(path)):
        if r["run"] != run or r["network"] != network or r["status"] != "ok" or not r["algorithm"].startswith("cuda."):
            continue
        out[(r["algorithm"], r["layer"].split(".")[-1], r["direction"])] = float(r["time_ms"]) * 1e3
    return out


def predict(runs, eff):
    return {k: sum(launch_us(fl, eff) for fl in v) for k, v in runs.items()}


def log_error(runs, measured, eff, keys):
    pred = predict({k: runs[k] for k in keys}, eff)
    return sorted(abs(math.log(pred[k] / measured[k])) for k in keys)


def fit(runs, measured, keys):
    """The efficiencies (a grid over 0.05..1) that minimise the median |log(predicted / measured)|."""
    grid = [0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.65, 0.8, 1.0]
    best, best_eff = None, None
    for combo in itertools.product(grid, repeat=len(FLOORS)):
        eff = dict(zip(FLOORS, combo))
        errs = log_error(runs, measured, eff, keys)
        score = (errs[len(errs) // 2], sum(errs))
        if best is None or score < best:
            best, best_eff = score, eff
    return best_eff


def spearman(a, b):
    def ranks(x):
        order = sorted(range(len(x)), key=lambda i: x[i])
        r = [0.0] * len(x)
        for pos, i in enumerate(order):
            r[i] = pos
        return r
    ra, rb = ranks(a), ranks(b)
    n = len(a)
    if n < 2:
        return float("nan")
    d = sum((x - y) ** 2 for x, y in zip(ra, rb))
    return 1 - 6 * d / (n * (n * n - 1))


def main():
    args = sys.argv[1:]
    if len(args) < 3 or "--card" not in args:
        print("usage: gpu_model.py SIMT_DIR --card h100|h200 [--measured LAYERS.csv --run 1 --network alexnet]",
              file=sys.stderr)
        return 2
    card = args[args.index("--card") + 1]
    if card not in CARDS:
        print(f"error: --card must be one of {', '.join(CARDS)}, got '{card}'", file=sys.stderr)
        return 2
    runs = load_runs(args[0], card)
    if not runs:
        print(f"error: no simt_counts CSV in {args[0]}", file=sys.stderr)
        return 2
    measured = {}
    if "--measured" in args:
        run = args[args.index("--run") + 1] if "--run" in args else "1"
        network = args[args.index("--network") + 1] if "--network" in args else "alexnet"
        measured = load_measured(args[args.index("--measured") + 1], run, network)
    keys = sorted(k for k in runs if k in measured)
    eff = fit(runs, measured, keys) if keys else dict.fromkeys(FLOORS, 1.0)
    pred = predict(runs, eff)
    # leave one algorithm out: its rows predicted with efficiencies fitted on the others
    loo = {}
    for algo in sorted({k[0] for k in keys}):
        rest = [k for k in keys if k[0] != algo]
        e = fit(runs, measured, rest) if rest else eff
        loo.update({k: v for k, v in predict({k: runs[k] for k in keys if k[0] == algo}, e).items()})
    print(f"card {card}; efficiencies fitted on {len(keys)} measured rows: "
          + ", ".join(f"{k} {v:.2f}" for k, v in eff.items()))
    print("\n| algorithm | layer | dir | launches | modelled µs | modelled µs, its algorithm left out | measured µs | ratio (left out) |")
    print("|---|---|---|---:|---:|---:|---:|---:|")
    for k in sorted(runs):
        m = measured.get(k)
        lo = loo.get(k)
        print(f"| {k[0]} | {k[1]} | {k[2]} | {len(runs[k])} | {pred[k]:.0f} | {lo:.0f} | {m:.0f} | {lo / m:.2f} |" if m else
              f"| {k[0]} | {k[1]} | {k[2]} | {len(runs[k])} | {pred[k]:.0f} | - | - | - |")
    if not keys:
        print("\nsummary: modelled only (no measured rows to compare)")
        return 0
    within = lambda p: sum(1 / 2 <= p[k] / measured[k] <= 2 for k in keys)
    # rank correlation of the hand-written algorithms within each (layer, direction)
    groups = collections.defaultdict(list)
    for k in keys:
        groups[(k[1], k[2])].append(k)
    rhos = [spearman([loo[k] for k in g], [measured[k] for k in g]) for g in groups.values() if len(g) >= 3]
    rank = (f"median {sorted(rhos)[len(rhos) // 2]:.2f} over {len(rhos)} groups" if rhos
            else "no (layer, direction) with 3 or more algorithms")
    print(f"\nsummary: within 2x of measured: {within(pred)}/{len(keys)} in sample, {within(loo)}/{len(keys)} "
          f"leaving each algorithm out; rank correlation per (layer, direction), left out: {rank} (all modelled)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
