#!/usr/bin/env python3
"""Hand-written CUDA kernels against cuDNN, from one `convlab layers --device cuda --json` file.

usage: gpu_vs_cudnn.py LAYERS.json
Prints Markdown: per (layer, direction) the best hand-written cuda.* algorithm and the
best cuDNN algorithm (fp32 only: *_tf32 entries are left out), their median times
measured side by side in that one run and the ratio; then each family against cuDNN's
same family; then TF32: cuda.implicit_gemm_tf32 against the best cudnn.*_tf32 and against
the best fp32 cuda.* of the same pair; the last line is a one-line summary. Rows whose status is not "ok" (failed,
inaccurate, unsupported, unavailable) are never counted as a time.
"""
import collections
import json
import sys


def best(rows):
    rows = [r for r in rows if r["status"] == "ok" and r.get("time_ms")]
    return min(rows, key=lambda r: r["time_ms"]) if rows else None


def fmt_ratio(ours, theirs):
    return "-" if not ours or not theirs else f"{ours['time_ms'] / theirs['time_ms']:.2f}×"


def main():
    doc = json.load(open(sys.argv[1]))
    rows = [r for r in doc["rows"] if not r["algorithm"].endswith("_tf32")]
    pairs = collections.OrderedDict()
    for r in rows:
        pairs.setdefault((r["layer"], r["direction"]), []).append(r)
    print(f"Batch {doc.get('batch')}, {doc.get('fingerprint') or doc.get('device', '')}: median ms of each algorithm, measured side by side in one run.\n")
    print("| layer | dir | best cuda.* | ms | best cudnn.* (fp32) | ms | ours / cuDNN |")
    print("|---|---|---|---:|---|---:|---:|")
    ratios = []
    for (layer, d), rs in pairs.items():
        ours = best([r for r in rs if r["algorithm"].startswith("cuda.")])
        theirs = best([r for r in rs if r["algorithm"].startswith("cudnn.")])
        if ours and theirs:
            ratios.append((ours["time_ms"] / theirs["time_ms"], layer, d))
        print(f"| {layer} | {d} | {ours['algorithm'] if ours else '-'} | {ours['time_ms']:.3f} | " if ours else
              f"| {layer} | {d} | - | - | ", end="")
        print(f"{theirs['algorithm']} | {theirs['time_ms']:.3f} | {fmt_ratio(ours, theirs)} |" if theirs else
              f"- | - | - |")
    print("\nEach family's best hand-written algorithm against cuDNN's best of the same family:\n")
    families = sorted({r["family"] for r in rows if r["algorithm"].startswith("cuda.")})
    print("| layer | dir | " + " | ".join(families) + " |")
    print("|---|---|" + "---:|" * len(families))
    for (layer, d), rs in pairs.items():
        cells = []
        for fam in families:
            ours = best([r for r in rs if r["algorithm"].startswith("cuda.") and r["family"] == fam])
            theirs = best([r for r in rs if r["algorithm"].startswith("cudnn.") and r["family"] == fam])
            cells.append(fmt_ratio(ours, theirs))
        print(f"| {layer} | {d} | " + " | ".join(cells) + " |")
    tf32_ratios = tf32_section(doc, pairs)
    if not ratios:
        print("\nsummary: no (layer, direction) with both a cuda.* and a cudnn.* time")
        return 1
    worst = max(ratios)
    within = sum(r <= 1.5 for r, _, _ in ratios)
    over2 = sum(r > 2 for r, _, _ in ratios)
    bad = [r for r in doc["rows"] if r["status"] not in ("ok", "unsupported", "unavailable")]
    for r in bad:
        print(f"- {r['layer']} {r['direction']} {r['algorithm']}: {r['status']} {r.get('note', '')}")
    print(f"\nsummary: best cuda.* / best cudnn.* per (layer, direction): {within}/{len(ratios)} within 1.5×, "
          f"{over2} over 2×, worst {worst[0]:.2f}× ({worst[1]} {worst[2]}); {len(bad)} rows failed or inaccurate"
          + (f"; TF32 cuda.implicit_gemm_tf32 / best cudnn.*_tf32: {sum(r <= 1.5 for r, _, _ in tf32_ratios)}/"
             f"{len(tf32_ratios)} within 1.5×, worst {max(tf32_ratios)[0]:.2f}× ({max(tf32_ratios)[1]} "
             f"{max(tf32_ratios)[2]})" if tf32_ratios else ""))
    return 0


def tf32_section(doc, fp32_pairs):
    """cuda.implicit_gemm_tf32 against the best cuDNN TF32 algorithm per pair; returns the ratios."""
    tf = collections.OrderedDict()
    for r in doc["rows"]:
        if r["algorithm"].endswith("_tf32"):
            tf.setdefault((r["layer"], r["direction"]), []).append(r)
    if not tf:
        return []
    print("\nTF32 (tensor cores): the hand-written implicit GEMM against cuDNN's TF32 algorithms, and what the "
          "tensor cores buy over the best fp32 hand-written kernel of the same pair:\n")
    print("| layer | dir | cuda.implicit_gemm_tf32 ms | best cudnn.*_tf32 | ms | ours / cuDNN TF32 | "
          "best fp32 cuda.* ms | TF32 / fp32 |")
    print("|---|---|---:|---|---:|---:|---:|---:|")
    ratios = []
    for (layer, d), rs in tf.items():
        ours = best([r for r in rs if r["algorithm"] == "cuda.implicit_gemm_tf32"])
        theirs = best([r for r in rs if r["algorithm"].startswith("cudnn.")])
        fp32 = best([r for r in fp32_pairs.get((layer, d), []) if r["algorithm"].startswith("cuda.")])
        if ours and theirs:
            ratios.append((ours["time_ms"] / theirs["time_ms"], layer, d))
        o = f"{ours['time_ms']:.3f}" if ours else "-"
        t = f"{theirs['algorithm']} | {theirs['time_ms']:.3f}" if theirs else "- | -"
        f = f"{fp32['time_ms']:.3f}" if fp32 else "-"
        print(f"| {layer} | {d} | {o} | {t} | {fmt_ratio(ours, theirs)} | {f} | {fmt_ratio(ours, fp32)} |")
    return ratios


if __name__ == "__main__":
    sys.exit(main())
