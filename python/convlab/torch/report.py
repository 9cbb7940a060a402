"""The comparison's results folder: compare.json (everything), compare.csv (one row per policy),
layers.csv (per layer and policy), compare.md (the tables and claims), train.json (the same results in
`convlab train`'s schema) and report.html (convlab's report page drawn from that train.json, as
`convlab report` draws it; `convlab html DIR` redraws it). The folder is written whole: into a sibling
temporary folder, then renamed over `out`."""

import json
import os
import shutil
import tempfile
import time
import uuid

from .. import _convlab
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
        if p["policy"].partition(",")[0] not in ("find", "find-context"):
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
    return "\n".join(head + _claims(doc) + [""] + _policy_table(doc) + _in_context(doc) + _attribution(doc)) + "\n"


def _in_context(doc):
    """find-context's isolated and in-context rankings per (layer, direction), and what they claim per step
    against find's measured steps."""
    p = next((p for p in doc["policies"] if p.get("in_context")), None)
    if p is None:
        return []
    c = p["in_context"]
    lines = ["", f"## In-context find (`{p['policy']}`)", "",
             f"Per (layer, direction), find's candidates within {c['factor']:.2f}x of the isolated best, each timed "
             f"inside training steps (only that choice swapped, every other layer at the isolated choice; "
             f"{c['steps_per_candidate']} timed steps per candidate, each the second of two in a row with it, "
             f"candidates interleaved); ms = that layer and direction's median inside the step [95 %]. Cost: "
             f"{c['steps']} training steps, {c['seconds']:.1f} s, on top of the isolated find. cost = the isolated "
             f"winner's in-context time / the in-context winner's [95 %, paired over the rounds]; the rankings "
             f"differ only when that interval lies above 1 (tie: swapped inside the noise, the isolated winner kept).",
             "", "| layer | dir | isolated ranking (ms alone) | in-context ranking (ms in the step) | agree | cost |",
             "|---|---|---|---|---|---:|"]
    claimed = 0.0
    differ = ties = 0
    for pr in c["pairs"]:
        iso = ", ".join(f"{k['algo']} {k['ms']:.3g}" for k in pr["isolated"])
        ctx = ", ".join(f"{k['algo']} {k['ms']:.3g} [{k['ms_ci'][0]:.3g}, {k['ms_ci'][1]:.3g}]"
                        for k in pr["in_context"])
        lo, hi = pr["cost_ratio_ci"]
        cost = "1.00x" if (lo, hi) == (1, 1) else f"{pr['cost_ratio']:.2f}x [{lo:.2f}, {hi:.2f}]"
        lines.append(f"| {pr['layer']} | {pr['direction']} | {iso} | {ctx} | "
                     f"{'tie' if pr['tie'] else 'yes' if pr['agree'] else 'no'} | {cost} |")
        ties += pr["tie"]
        if not pr["agree"]:
            differ += 1
            ms_of = {k["algo"]: k["ms"] for k in pr["in_context"]}
            claimed += ms_of[pr["isolated"][0]["algo"]] - pr["in_context"][0]["ms"]
    lines.append("")
    head, sep, constraints = p["policy"].partition(",")
    find = next((q for q in doc["policies"] if q["policy"] == "find" + sep + constraints), None)
    if differ == 0:
        swapped = f" ({ties} of {len(c['pairs'])} swap their order inside their intervals)" if ties else ""
        lines.append(f"No pair ranks differently inside the step beyond the noise{swapped}: the in-context find keeps "
                     f"every isolated choice.")
        return lines
    text = (f"{differ} of {len(c['pairs'])} pairs rank differently inside the step; by the per-layer times inside "
            f"the step the isolated winners would cost {claimed:.1f} ms per step more than the in-context winners. ")
    if find is None:
        text += "Not checked against whole steps: find did not run in this comparison."
    else:
        diff, lo, hi = _convlab.median_diff_ci(find["steps_s"], p["steps_s"])
        holds = lo * 1e3 <= claimed <= hi * 1e3
        text += (f"{'Checked' if holds else '**Inconclusive:**'}: {p['policy']}'s steps run {diff * 1e3:.1f} ms "
                 f"[{lo * 1e3:.1f}, {hi * 1e3:.1f}] faster than {find['policy']}'s, "
                 + ("consistent with that estimate." if holds else
                    "an interval that does not hold the per-layer estimate: read the in-context ranking as "
                    "unconfirmed."))
    lines.append(text)
    return lines


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


def _train_layer(r):
    """A layers row as train.json's layer: convlab's own time per direction where the layer ran them,
    PyTorch's backward (timed whole by the hooks) in bwd-data with the reason where PyTorch ran it."""
    algos, own = r["algos"], r["own_s"]
    layer = {"name": r["layer"], "kind": "conv", "problem": r.get("problem", ""), "fwd_s": r["fwd_s"],
             "bwd_data_s": 0.0, "bwd_filter_s": 0.0, "input_grad": True, "algos": {}}
    if not algos:  # PyTorch's convolution
        why = "PyTorch's convolution" + (f" ({r['fallback']})" if r.get("fallback") else "")
        layer["bwd_data_s"] = r["bwd_s"]
        layer["algos"] = {"fwd": {"algo": "pytorch", "why": why},
                          "bwd-data": {"algo": "pytorch", "why": why + "; its whole backward, timed as one"},
                          "bwd-filter": {"algo": "pytorch", "why": "in bwd-data's time: PyTorch's backward is "
                                                                  "timed whole"}}
        return layer
    layer["input_grad"] = "bwd-data" in algos
    for d, key in (("bwd-data", "bwd_data_s"), ("bwd-filter", "bwd_filter_s")):
        if d in own:
            layer[key] = own[d]
    missing = [d for d in ("bwd-data", "bwd-filter") if d in algos and d not in own]
    if len(missing) == 1:  # run by PyTorch: the hooks' backward less the direction convlab timed
        key = "bwd_data_s" if missing[0] == "bwd-data" else "bwd_filter_s"
        layer[key] = max(0.0, r["bwd_s"] - sum(own.get(d, 0.0) for d in ("bwd-data", "bwd-filter")))
    for d, a in algos.items():
        layer["algos"][d] = {"algo": a, "why": "PyTorch's convolution for this direction" if a == "pytorch"
                             else "the policy's choice"}
    return layer


REST = "rest of the step (fc, norms, loss, update: the median step less the convolutions' hook times)"


def _rest_of_step(p):
    """Everything but the convolutions as one pseudo-layer: the bridge times only the convolutions."""
    conv = sum(r["fwd_s"] + r["bwd_s"] for r in p["layers"])
    return {"name": REST, "kind": REST, "fwd_s": max(0.0, p["step_s_median"] - conv), "bwd_data_s": 0.0,
            "bwd_filter_s": 0.0}


def train_json(doc, run_id):
    """The comparison in `convlab train`'s train.json schema (report/train_json.cpp reads it back)."""
    pols = []
    for p in doc["policies"]:
        lo, hi = p["step_s_ci"]
        pols.append({"policy": p["policy"], "ran": True, "choose_seconds": p["choose_s"],
                     "iter_median_s": p["step_s_median"], "iter_ms_median": p["step_s_median"] * 1e3,
                     "iter_ms_ci": [lo * 1e3, hi * 1e3], "speedup": p["speedup_vs_pytorch"],
                     "speedup_ci": p["speedup_ci"], "significant": p["verdict"] in ("faster", "slower"),
                     "verdict": p["verdict"], "x_limit": p["x_limit"], "loss_agrees": p["loss_agrees"],
                     "loss_exceeds_at": p["loss_exceeds_at"], "losses": p["losses"],
                     "iter_s": p["steps_s"], "workspace_bytes": p.get("workspace_bytes"),
                     "layers": [_train_layer(r) for r in p["layers"]] + [_rest_of_step(p)]})
    d = doc["drift"]
    return {"command": "compare", "run_id": run_id, "net": doc["model"], "batch": doc["batch"],
            "iters": doc["rounds"] * doc["steps"], "warmup": doc["warmup_rounds"] * doc["steps"],
            "threads": doc["threads"], "classes": doc["classes"], "first_layer_grad": False,
            "sgd": {"lr": doc["sgd"]["lr"], "momentum": doc["sgd"]["momentum"], "weight_decay": 0.0},
            "device": doc["device"] + (f", {doc['cpu_isa']}" if doc["device"] == "cpu" else ""),
            "data": f"synthetic random batches ({doc['image_size']}x{doc['image_size']}, {doc['classes']} classes)",
            "drift": {"bound0": d["bound0"], "reduction": d["reduction"], "growth": 1, "measured": True,
                      "control": d["control"]},
            "baseline": "pytorch", "rounds": doc["rounds"], "warmup_rounds": doc["warmup_rounds"],
            "order": doc["order"], "policies": pols,
            "limit": _train_limit(doc), **_train_context(doc)}


def _train_context(doc):
    """find-context's pairs and cost as convlab train writes them (the first policy that has them)."""
    p = next((p for p in doc["policies"] if p.get("in_context")), None)
    if p is None:
        return {}
    c = p["in_context"]
    return {"in_context_find": c["pairs"],
            "in_context_cost": {"policy": p["policy"], "steps": c["steps"], "seconds": c["seconds"],
                                "factor": c["factor"], "steps_per_candidate": c["steps_per_candidate"]}}


def _train_limit(doc):
    lim = doc["limit"]
    if not doc["limit_s"]:
        return {"skipped": lim.get("skipped", "not computed")}
    keys = ("conv_flops", "fc_flops", "compute_bound_seconds", "memory_bound_seconds", "memory_bound_passes")
    return {"seconds": doc["limit_s"], "peak_gflops": lim["peak_flops"] * 1e-9,
            "bandwidth_gbs": lim["bandwidth_bytes"] * 1e-9, "other_bytes": lim["other_bytes"], "passes": lim["passes"],
            "threads": doc["threads"],
            **{k: lim[k] for k in keys if k in lim}}


def _html(doc, train_text):
    command = (f"python -m convlab.torch compare --model {doc['model']} --batch {doc['batch']} "
               f"--device {doc['device']}")
    return _convlab.report_html(train_text, command, "train.json (convlab.torch.compare)",
                                "GPU" if doc["device"] == "cuda" else "CPU")


def write_results(out, doc):
    out = os.path.abspath(out)
    parent = os.path.dirname(out)
    tmp = tempfile.mkdtemp(prefix=".compare-", dir=parent)
    try:
        md = markdown(doc)
        summary, layers = _csv(doc)
        run_id = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()) + "-" + uuid.uuid4().hex[:8]
        train_text = json.dumps(train_json(doc, run_id), indent=1) + "\n"
        files = {"compare.json": json.dumps(doc, indent=1) + "\n", "compare.csv": summary, "layers.csv": layers,
                 "compare.md": md, "train.json": train_text, "report.html": _html(doc, train_text)}
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
