#!/usr/bin/env python3
"""The SIMT emulator's counts against Nsight Compute's, launch by launch.

usage: compare_counts.py NCU_KERNELS.csv SIMT_DIR [--tolerance 0.10]
NCU_KERNELS.csv: the GPU check's ncu/kernels.csv (raw sums per kernel, first launch of each
kernel per algorithm, layer and direction). SIMT_DIR: `simt_counts ALGO LAYER --dir D --csv`
outputs named ALGO.LAYER.DIRECTION.csv (LAYER as in the ncu file: conv3 for alexnet.conv3).
Prints one Markdown row per kernel found in both, each count as emulator / ncu, and the share
of compared counts within the tolerance; exit 1 when nothing matched.
"""
import csv
import glob
import os
import re
import sys

PAIRS = [  # (ncu column, simt column)
    ("ld_requests", "global_ld_requests"), ("ld_sectors", "global_ld_sectors"),
    ("st_requests", "global_st_requests"), ("st_sectors", "global_st_sectors"),
    ("smem_ld_wavefronts", "shared_ld_wavefronts"), ("smem_ld_conflicts", "shared_ld_conflicts"),
    ("smem_st_wavefronts", "shared_st_wavefronts"), ("smem_st_conflicts", "shared_st_conflicts"),
]


def key(name):
    """One spelling for ncu's and the emulator's kernel names: no namespaces, casts or spaces, bools as 0/1."""
    name = name.replace("(anonymous namespace)::", "").replace("unnamed>::", "").replace("convlab::cuda::", "")
    head, sep, tail = name.partition("<")
    name = head.split("::")[-1] + sep + tail
    name = re.sub(r"\((?:int|unsigned int|long|bool|convlab::[A-Za-z:]+|[A-Z][A-Za-z]*)\)", "", name)
    return name.replace("true", "1").replace("false", "0").replace(" ", "")


def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def main():
    args = sys.argv[1:]
    if len(args) < 2:
        print("usage: compare_counts.py NCU_KERNELS.csv SIMT_DIR [--tolerance 0.10]", file=sys.stderr)
        return 2
    tol = float(args[args.index("--tolerance") + 1]) if "--tolerance" in args else 0.10
    ncu = {}
    for r in csv.DictReader(open(args[0])):
        ncu[(r["algorithm"], r["layer"], r["direction"], key(r["kernel"]))] = r
    print("| algorithm | layer | dir | kernel | " + " | ".join(p[0] for p in PAIRS) + " |")
    print("|---|---|---|---|" + "---:|" * len(PAIRS))
    within = compared = rows = 0
    for path in sorted(glob.glob(os.path.join(args[1], "*.csv"))):
        algo, layer, direction = os.path.basename(path)[:-4].rsplit(".", 2)
        seen = set()
        for r in csv.DictReader(open(path)):
            k = key(r["function"])
            if k in seen:
                continue
            seen.add(k)
            n = ncu.get((algo, layer, direction, k))
            if not n:
                continue
            rows += 1
            scale = 1.0  # simt_counts prints counts already scaled to the whole grid
            cells = []
            for nc, sc in PAIRS:
                e, g = num(r[sc]), num(n.get(nc))
                if e is None or g is None:
                    cells.append("-")
                    continue
                e *= scale
                if g == 0 and e == 0:
                    cells.append("0 / 0")
                    within += 1
                elif g == 0:
                    cells.append(f"{e:.3g} / 0")
                else:
                    cells.append(f"{e / g:.2f}")
                    within += abs(e / g - 1) <= tol
                compared += 1
            print(f"| {algo} | {layer} | {direction} | {k} | " + " | ".join(cells) + " |")
    if not rows:
        print("summary: no kernel found in both")
        return 1
    print(f"\nsummary: {rows} launches, {compared} counts compared (emulator / ncu), "
          f"{within} within {tol:.0%} ({within / compared:.0%})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
