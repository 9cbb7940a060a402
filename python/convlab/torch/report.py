"""The comparison's results folder: compare.json (everything), compare.csv (one row per policy),
layers.csv (per layer and policy), compare.md and report.html (the tables, a self-contained page).
The folder is written whole: into a sibling temporary folder, then renamed over `out`."""

import html
import json
import os
import shutil
import tempfile

from .method import verdict


def _ms(s):
    return f"{s * 1e3:.1f}"


def _policy_table(doc):
    lines = ["| policy | convolutions in | step (ms), median [95 % CI] | × pytorch [95 % CI] | verdict | × limit | "
             "losses within the drift bound | choosing (s) |", "|---|---|---:|---:|---|---:|---|---:|"]
    for p in doc["policies"]:
        lo, hi = p["step_s_ci"]
        slo, shi = p["speedup_ci"]
        xl = f"{p['x_limit']:.2f}" if p["x_limit"] else "-"
        agrees = "yes" if p["loss_agrees"] else f"no (from step {p['loss_exceeds_at']})"
        lines.append(f"| {p['policy']} | {p.get('conv_math', 'fp32')} | {_ms(p['step_s_median'])} "
                     f"[{_ms(lo)}, {_ms(hi)}] | "
                     f"{p['speedup_vs_pytorch']:.3f} [{slo:.3f}, {shi:.3f}] | {p['verdict']} | {xl} | {agrees} | "
                     f"{p['choose_s']:.1f} |")
    return lines


def _attribution(doc):
    """Per policy against pytorch: the conv layers' time difference (hook-timed) beside the step's."""
    base = doc["policies"][0]
    base_layers = {r["layer"]: r for r in base["layers"]}
    lines = []
    for p in doc["policies"][1:]:
        step_diff = p["step_s_median"] - base["step_s_median"]
        rows = []
        conv_diff = 0.0
        for r in p["layers"]:
            b = base_layers.get(r["layer"])
            if b is None:
                continue
            d = (r["fwd_s"] + r["bwd_s"]) - (b["fwd_s"] + b["bwd_s"])
            conv_diff += d
            algos = ", ".join(f"{k} {v}" for k, v in r["algos"].items()) or "PyTorch's convolution"
            rows.append((abs(d), f"| {r['layer']} | {_ms(b['fwd_s'])} / {_ms(b['bwd_s'])} | "
                                 f"{_ms(r['fwd_s'])} / {_ms(r['bwd_s'])} | {d * 1e3:+.1f} | {algos} |"))
        rows.sort(key=lambda t: -t[0])
        lines += ["", f"### {p['policy']} against pytorch",
                  f"Step difference {step_diff * 1e3:+.1f} ms (medians); the convolution layers' difference, "
                  f"timed by hooks in a separate pass, {conv_diff * 1e3:+.1f} ms; the rest "
                  f"({(step_diff - conv_diff) * 1e3:+.1f} ms) is outside the convolutions or the hooks' cost.",
                  "", "| layer | pytorch fwd / bwd (ms) | this fwd / bwd (ms) | difference (ms) | algorithms |",
                  "|---|---:|---:|---:|---|"] + [row for _, row in rows[:12]]
        if len(rows) > 12:
            lines.append(f"| ... {len(rows) - 12} more layers in layers.csv | | | | |")
    return lines


def _claims(doc):
    """Which policy wins, read off the table's own numbers and intervals."""
    pols = doc["policies"]
    best = min(pols, key=lambda p: p["step_s_median"])
    lines = [f"Fastest median step: **{best['policy']}**, {best['speedup_vs_pytorch']:.3f}× pytorch's "
             f"(interval {best['speedup_ci'][0]:.3f}–{best['speedup_ci'][1]:.3f}, {best['verdict']})."]
    base = pols[0]
    for p in pols:
        if p["policy"].partition(",")[0] != "find":
            continue
        slower = p["speedup_ci"][1] < 1
        math, base_math = p.get("conv_math", "fp32"), base.get("conv_math", "fp32")
        maths = ("" if math == base_math
                 else f" (its convolutions in {base_math.upper()}, {p['policy']}'s in {math.upper()})")
        lines.append(f"{p['policy']} against PyTorch's default{maths}: {p['speedup_vs_pytorch']:.3f}× "
                     f"[{p['speedup_ci'][0]:.3f}, {p['speedup_ci'][1]:.3f}]: "
                     + ("slower (the whole interval below 1)." if slower else "not slower."))
        if "speedup_vs_pytorch_fp32" in p:
            lo, hi = p["speedup_fp32_ci"]
            lines.append(f"{p['policy']} against pytorch-fp32 (cuDNN in FP32, {p['policy']} in {math.upper()}): "
                         f"{p['speedup_vs_pytorch_fp32']:.3f}× [{lo:.3f}, {hi:.3f}]: {verdict((lo, hi))}.")
    bad = [p["policy"] for p in pols if not p["loss_agrees"]]
    lines.append("Losses: every policy within the drift bound." if not bad
                 else f"Losses: {', '.join(bad)} left the drift bound (see compare.json).")
    return lines


def markdown(doc):
    d = doc["drift"]
    head = [f"# Training comparison: {doc['model']}, batch {doc['batch']}, {doc['image_size']}×{doc['image_size']}",
            "", f"{doc['device']}, {doc['cpu_isa']}, {doc['threads']} threads, torch {doc['torch']}; "
            f"{doc['rounds']} rounds × {doc['steps']} steps after {doc['warmup_rounds']} warm-up round(s), "
            f"balanced order; SGD lr {doc['sgd']['lr']} momentum {doc['sgd']['momentum']}.",
            f"Step napkin limit {_ms(doc['limit_s'])} ms." if doc["limit_s"] else "Step limit: not computed.",
            f"Loss drift bound: {d['reduction']} × FLT_EPSILON × the loss's measured sensitivity (up to "
            f"{d['sensitivity']:.3g} by the last step; the control: the baseline from weights moved by 2^-22).", ""]
    return "\n".join(head + _claims(doc) + [""] + _policy_table(doc) + _attribution(doc)) + "\n"


def _csv(doc):
    rows = ["policy,step_ms_median,step_ms_lo,step_ms_hi,speedup,speedup_lo,speedup_hi,verdict,x_limit,loss_agrees,"
            "conv_math"]
    for p in doc["policies"]:
        rows.append(f"{p['policy']},{p['step_s_median'] * 1e3:.4f},{p['step_s_ci'][0] * 1e3:.4f},"
                    f"{p['step_s_ci'][1] * 1e3:.4f},{p['speedup_vs_pytorch']:.4f},{p['speedup_ci'][0]:.4f},"
                    f"{p['speedup_ci'][1]:.4f},{p['verdict']},{p['x_limit'] or ''},{str(p['loss_agrees']).lower()},"
                    f"{p.get('conv_math', 'fp32')}")
    layers = ["policy,layer,problem,fwd_ms,bwd_ms,fwd_algo,bwd_data_algo,bwd_filter_algo,own_fwd_ms,own_bwd_data_ms,"
              "own_bwd_filter_ms"]
    for p in doc["policies"]:
        for r in p["layers"]:
            a, o = r["algos"], r["own_s"]
            own = [f"{o[d] * 1e3:.4f}" if d in o else "" for d in ("fwd", "bwd-data", "bwd-filter")]
            layers.append(f"{p['policy']},{r['layer']},{r.get('problem', '')},{r['fwd_s'] * 1e3:.4f},"
                          f"{r['bwd_s'] * 1e3:.4f},{a.get('fwd', '')},{a.get('bwd-data', '')},"
                          f"{a.get('bwd-filter', '')},{','.join(own)}")
    return "\n".join(rows) + "\n", "\n".join(layers) + "\n"


def _html(doc, md):
    pols = doc["policies"]
    top = max(p["step_s_ci"][1] for p in pols) or 1.0
    bars = []
    for i, p in enumerate(pols):
        y = 10 + 26 * i
        w = 480 * p["step_s_median"] / top
        lo, hi = (480 * v / top for v in p["step_s_ci"])
        bars.append(f'<text x="0" y="{y + 14}">{html.escape(p["policy"])}</text>'
                    f'<rect x="220" y="{y}" width="{w:.1f}" height="18" fill="#4a7ab5"/>'
                    f'<line x1="{220 + lo:.1f}" x2="{220 + hi:.1f}" y1="{y + 9}" y2="{y + 9}" stroke="black"/>'
                    f'<text x="{226 + w:.1f}" y="{y + 14}">{_ms(p["step_s_median"])} ms</text>')
    svg = (f'<svg xmlns="http://www.w3.org/2000/svg" width="800" height="{20 + 26 * len(pols)}" '
           f'font-family="sans-serif" font-size="12">{"".join(bars)}</svg>')
    return ("<!doctype html><html><head><meta charset=\"utf-8\"><title>convlab compare</title>"
            "<style>body{font-family:sans-serif;max-width:1100px;margin:2em auto}pre{white-space:pre-wrap}</style>"
            f"</head><body><h2>Median step per policy (whiskers: 95 % CI)</h2>{svg}<pre>{html.escape(md)}</pre>"
            "</body></html>\n")


def write_results(out, doc):
    out = os.path.abspath(out)
    parent = os.path.dirname(out)
    tmp = tempfile.mkdtemp(prefix=".compare-", dir=parent)
    try:
        md = markdown(doc)
        summary, layers = _csv(doc)
        files = {"compare.json": json.dumps(doc, indent=1) + "\n", "compare.csv": summary, "layers.csv": layers,
                 "compare.md": md, "report.html": _html(doc, md)}
        for name, text in files.items():
            with open(os.path.join(tmp, name), "w") as f:
                f.write(text)
        if os.path.exists(out):
            old = out + ".old"
            shutil.rmtree(old, ignore_errors=True)
            os.rename(out, old)
            os.rename(tmp, out)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
