#!/usr/bin/env python3
"""convlab's CPU kernels against oneDNN, per network, from `convlab layers NET --json` files.

usage: cpu_vs_onednn.py [--near-ns N] LAYERS.json...
For each file (one network at one batch) and each (layer, direction): the best hand-written
algorithm (cpu.*, not the reference and not the library-backed cpu.im2col_openblas / cpu.fft_fftw),
the best of every cpu.* algorithm, and the best oneDNN algorithm (onednn.*), their medians measured
side by side in that one run, and speed = oneDNN's time / ours (>= 1.0: ours is at least as fast).
Then per file: the pairs where the hand-written best is at least as fast, the slowest pair, pairs
below 0.8x, the depthwise pairs (one input channel per group), get's pick against find's
(within 10 % of find's time), and each family's median % of the measured peak over the pairs where
it ran. Rows whose status is not "ok" never count as a time. The last line per file is a summary.
Files from `convlab layers` runs that timed the two again interleaved (the "duels": rounds of one
run each, alternating, so a slow spell of the machine falls on both) add that speed with its 95 %
interval per pair, and the summary's second line counts by it: at >= 1.0, below 0.8, and the pairs
whose interval lies wholly below or above 1.
Files that record where the run's threads sat ("placements": a cache line's round trip between
them before and after each case's find and its interleaved timing) add a placement column: near
(every round trip within 2x of the run's nearest: the threads shared a cache), far (every one
beyond: their caches were apart) or moved (both within the case), and, when a run saw both, the
summary again per placement: the two are different machines, and a ratio from one says nothing
about the other. A run whose round trips all lie within 2x of each other saw one placement, and
which one cannot be told from the run alone: its cases are "one" unless --near-ns N gives the
machine's shared-cache round trip (measured apart, e.g. in a run that saw both), which then stands
for the run's nearest.
"""
import collections
import json
import re
import sys

LIBRARY_BACKED = {"cpu.im2col_openblas", "cpu.fft_fftw"}


def best(rows):
    rows = [r for r in rows if r["status"] == "ok" and r.get("time_ms")]
    return min(rows, key=lambda r: r["time_ms"]) if rows else None


def depthwise(problem):
    """One input channel per group: g == ic (benchdnn's g and ic)."""
    g = re.search(r"(?:^|[^a-z])g(\d+)", problem)
    ic = re.search(r"ic(\d+)", problem)
    return bool(g and ic and int(g.group(1)) == int(ic.group(1)) and int(g.group(1)) > 1)


FAR_RATIO = 2.0  # core/thread_distance.hpp's kFarRatio


def placement_classes(doc, near_ns=None):
    """(layer, direction) -> (find's class, the duel's class, round trips) from the file's placements."""
    rows = doc.get("placements") or []
    trips = [x for r in rows for x in r.get("round_trip_ns", []) if x]
    if not trips:
        return {}
    nearest = near_ns or min(trips)
    one = near_ns is None and max(trips) <= FAR_RATIO * min(trips)  # one placement, unknown which

    def cls(xs):
        xs = [x for x in xs if x]
        if not xs:
            return None
        if one:
            return "one"
        if max(xs) <= FAR_RATIO * nearest:
            return "near"
        return "far" if min(xs) > FAR_RATIO * nearest else "moved"

    out = {}
    for r in rows:
        t = (r.get("round_trip_ns") or []) + [None] * 3
        out[(r["layer"], r["direction"])] = (cls(t[:2]), cls(t[1:3]) if t[2] else None, [x for x in t[:3] if x])
    return out


def table(path, near_ns=None):
    doc = json.load(open(path))
    pairs = collections.OrderedDict()
    for r in doc["rows"]:
        pairs.setdefault((r["layer"], r["direction"]), []).append(r)
    load = doc.get("load", {})
    print(f"## {path}\n")
    print(f"batch {doc.get('batch')}, threads {sorted({r.get('threads') for r in doc['rows']})}, "
          f"machine {'DISTURBED: ' + load.get('why', '') if load.get('disturbed') else 'quiet'}\n")
    duels = {(x["layer"], x["direction"]): x for x in doc.get("duels", []) if x.get("rounds")}
    places = placement_classes(doc, near_ns)
    if places:
        trips = [x for v in places.values() for x in v[2]]
        if any(v[0] == "one" for v in places.values()):
            print(f"threads' round trip {min(trips):.0f}-{max(trips):.0f} ns over the run: one placement "
                  f"throughout (\"one\"), near or far not told from this run alone (--near-ns N: the "
                  f"machine's shared-cache round trip)\n")
        else:
            print(f"threads' round trip {min(trips):.0f}-{max(trips):.0f} ns over the run; near: within "
                  f"{FAR_RATIO:.0f}x of {near_ns or min(trips):.0f} ns"
                  f"{' (--near-ns)' if near_ns else ''}\n")
    print("| layer | dir | best hand-written | ms | best oneDNN | ms | speed | best cpu.* (with OpenBLAS/FFTW) | speed | get's pick | get ÷ find | interleaved speed [95 %] |"
          + (" placement (find / interleaved) |" if places else ""))
    print("|---|---|---|---:|---|---:|---:|---|---:|---|---:|---:|" + ("---|" if places else ""))
    by_place = collections.defaultdict(list)  # class -> find's speeds; ("i", class) -> interleaved speeds
    inter = []
    speeds, all_speeds, dw, getfind = [], [], [], []
    fam_peak = collections.defaultdict(list)
    for (layer, d), rs in pairs.items():
        ok = [r for r in rs if r["status"] == "ok"]
        own = best([r for r in ok if r["algorithm"].startswith("cpu.") and r["algorithm"] != "cpu.reference"
                    and r["algorithm"] not in LIBRARY_BACKED])
        anyc = best([r for r in ok if r["algorithm"].startswith("cpu.") and r["algorithm"] != "cpu.reference"])
        dnn = best([r for r in ok if r["algorithm"].startswith("onednn.")])
        find = best([r for r in ok if r["algorithm"] != "cpu.reference"])
        g = next((r for r in ok if r.get("get_choice")), None)
        sp = dnn["time_ms"] / own["time_ms"] if own and dnn else None
        sa = dnn["time_ms"] / anyc["time_ms"] if anyc and dnn else None
        gf = g["time_ms"] / find["time_ms"] if g and find else None
        pl = places.get((layer, d))
        if sp is not None:
            speeds.append((sp, layer, d))
            if pl and pl[0]:
                by_place[pl[0]].append(sp)
            if depthwise(rs[0]["problem"]):
                dw.append((sp, layer, d))
        if sa is not None:
            all_speeds.append(sa)
        if gf is not None:
            getfind.append(gf)
        fams = collections.defaultdict(list)
        for r in ok:
            if r["algorithm"].startswith("cpu.") and r["algorithm"] != "cpu.reference" and r.get("peak_fraction"):
                fams[r["family"]].append(r["peak_fraction"])
        for f, v in fams.items():
            fam_peak[f].append(max(v))
        cell = lambda r: f"{r['algorithm']} | {r['time_ms']:.3f}" if r else "- | -"
        print(f"| {layer} | {d} | {cell(own)} | {cell(dnn)} | {sp:.2f}× | " if sp else f"| {layer} | {d} | {cell(own)} | {cell(dnn)} | - | ",
              end="")
        du = duels.get((layer, d))
        if du:
            inter.append((du["speed"], du["speed_lo"], du["speed_hi"], layer, d))
            if pl and pl[1]:
                by_place[("i", pl[1])].append(du["speed"])
        dcell = f"{du['speed']:.2f}× [{du['speed_lo']:.2f}, {du['speed_hi']:.2f}]" if du else "-"
        pcell = f" {pl[0] or '-'} / {pl[1] or '-'} |" if places and pl else (" - |" if places else "")
        print(f"{anyc['algorithm'] if anyc else '-'} | {f'{sa:.2f}×' if sa else '-'} | {g['algorithm'] if g else '-'} | "
              f"{f'{gf:.2f}' if gf else '-'} | {dcell} |{pcell}")
    print("\nEach family's best row per pair, median % of the measured FMA peak (over the pairs it ran):\n")
    for f in sorted(fam_peak):
        v = sorted(fam_peak[f])
        print(f"- {f}: {100 * v[len(v) // 2]:.1f} % over {len(v)} pairs")
    if not speeds:
        print("\nsummary: no (layer, direction) with both a hand-written and a oneDNN time\n")
        return 1
    worst = min(speeds)
    n = len(speeds)
    faster = sum(s >= 1.0 for s, _, _ in speeds)
    below = sum(s < 0.8 for s, _, _ in speeds)
    dws = f"depthwise {sum(s >= 1.0 for s, _, _ in dw)}/{len(dw)} at >= 1.0x" if dw else "no depthwise pair"
    within = sum(x <= 1.10 for x in getfind)
    print(f"\nsummary: hand-written best >= oneDNN's best on {faster}/{n} pairs ({100 * faster / n:.0f} %), "
          f"{below} below 0.8x, slowest {worst[0]:.2f}x ({worst[1]} {worst[2]}); with OpenBLAS/FFTW "
          f"{sum(s >= 1.0 for s in all_speeds)}/{len(all_speeds)}; {dws}; get within 10 % of find on "
          f"{within}/{len(getfind)} ({100 * within / max(len(getfind), 1):.0f} %)")
    if inter:
        m = len(inter)
        w = min(inter)
        print(f"interleaved: hand-written >= oneDNN on {sum(x[0] >= 1.0 for x in inter)}/{m} pairs "
              f"({100 * sum(x[0] >= 1.0 for x in inter) / m:.0f} %), {sum(x[0] < 0.8 for x in inter)} below 0.8x, "
              f"slowest {w[0]:.2f}x ({w[3]} {w[4]}); interval wholly above 1 on {sum(x[1] > 1 for x in inter)}, "
              f"wholly below 1 on {sum(x[2] < 1 for x in inter)}")
    if len({k for k in by_place if isinstance(k, str)} | {k[1] for k in by_place if isinstance(k, tuple)}) > 1:
        parts = []
        for c in ("near", "far", "moved"):
            f, i = by_place.get(c, []), by_place.get(("i", c), [])
            if f or i:
                parts.append(f"{c}: find's medians {sum(x >= 1.0 for x in f)}/{len(f)}, interleaved "
                             f"{sum(x >= 1.0 for x in i)}/{len(i)} at >= 1.0x")
        print("by placement (the threads' caches shared: near; apart: far): " + "; ".join(parts))
    print()
    return 0


def main():
    args = sys.argv[1:]
    near_ns = None
    if args[:1] == ["--near-ns"]:
        try:
            near_ns = float(args[1])
        except (IndexError, ValueError):
            near_ns = -1
        if not near_ns > 0:
            print("cpu_vs_onednn.py: --near-ns needs a positive round trip in ns", file=sys.stderr)
            return 2
        args = args[2:]
    if not args:
        print("usage: cpu_vs_onednn.py [--near-ns N] LAYERS.json...", file=sys.stderr)
        return 2
    return max(table(p, near_ns) for p in args)


if __name__ == "__main__":
    sys.exit(main())
