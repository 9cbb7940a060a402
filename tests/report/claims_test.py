#!/usr/bin/env python3
"""A results folder's report claims nothing its own data contradicts.

usage: claims_test.py CONVLAB WORKDIR     run the tiny main job in WORKDIR and check it
       claims_test.py --check DIR        check an existing results folder (train.json, report.md)

Runs the main job (`convlab report`) on the tiny network with find, find-context
and a policy that runs the baseline's code, then reads train.json and report.md
and checks each claim against the data beside it:
1. the in-context find's claimed saving is the sum over the pairs whose rankings
   differ (ties add nothing), and it is called consistent exactly when it lies
   inside the interval of find's iterations minus find-context's; report.md says
   "Inconclusive" exactly when it is not;
2. a pair differs only when its cost interval lies above 1;
3. every speedup's verdict follows from its interval and the run's margin, and
   the policy running the baseline's code is "same";
4. a policy "agrees" exactly when its loss stayed inside the expected drift at
   every iteration.
Exit 0 when every claim holds, 1 with one line per failure.
"""
import json
import os
import shutil
import subprocess
import sys


def run_tiny(convlab, work):
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    out = os.path.join(work, "r")
    cmd = [convlab, "report", "--net", "tiny", "--batch", "4", "--iters", "5", "--warmup", "1", "--classes", "4",
           "--threads", "2", "--gpu", "off", "--no-compare", "--context-factor", "100",
           "--policy", "default;find;find-context;fixed:cpu.im2col_gemm", "--out", out]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600)
    if r.returncode != 0:
        sys.exit("FAIL: convlab report exited %d: %s" % (r.returncode, r.stderr.strip()[-300:]))
    return out


def check(out, margin_pair="fixed:cpu.im2col_gemm"):
    t = json.load(open(os.path.join(out, "train.json")))
    md = open(os.path.join(out, "report.md")).read()
    fails = []
    pol = {p["policy"]: p for p in t["policies"] if p["ran"]}

    # 1, 2: the in-context claim.
    claim = t.get("in_context_claim")
    if claim is None:
        fails.append("train.json has no in_context_claim")
    else:
        saved, differ, ties = 0.0, 0, 0
        for pr in t["in_context_find"]:
            iso = pr["isolated"][0]["algo"]
            ctx = {c["algo"]: c for c in pr["in_context"]}
            lo = pr["cost_ratio_ci"][0]
            if not pr["agree"]:
                differ += 1
                if not lo > 1:
                    fails.append("%s %s differs with a cost interval reaching %.3f" % (pr["layer"], pr["direction"], lo))
                saved += ctx[iso]["ms"] - pr["in_context"][0]["ms"]
            elif pr["tie"]:
                ties += 1
        if claim["differ"] != differ or claim["ties"] != ties:
            fails.append("claim counts %d differ / %d ties, the pairs say %d / %d" % (claim["differ"], claim["ties"], differ, ties))
        if abs(claim["claimed_ms"] - saved) > 1e-6 * max(1.0, abs(saved)):
            fails.append("claimed %.4f ms, the pairs sum to %.4f ms" % (claim["claimed_ms"], saved))
        if claim["checked"]:
            lo, hi = claim["measured_ms_ci"]
            inside = lo <= claim["claimed_ms"] <= hi
            if claim["consistent"] != inside:
                fails.append("consistent=%s but %.3f ms is %s [%.3f, %.3f]" % (claim["consistent"], claim["claimed_ms"],
                                                                               "inside" if inside else "outside", lo, hi))
            measured = pol["find"]["iter_ms_median"] - pol["find-context"]["iter_ms_median"]
            if abs(measured - claim["measured_ms"]) > 1e-6 * max(1.0, abs(measured)):
                fails.append("measured %.4f ms, the medians differ by %.4f ms" % (claim["measured_ms"], measured))
            if differ and (not claim["consistent"]) != ("Inconclusive" in md):
                fails.append("report.md %s 'Inconclusive' although the claim is %s" % (
                    "says" if "Inconclusive" in md else "does not say", "consistent" if claim["consistent"] else "not"))
            if differ and not claim["consistent"] and "Checked:" in md:
                fails.append("report.md says 'Checked:' for a claim the iterations do not bear out")

    # 3: verdicts against the margin.
    m = t["margin"]
    if margin_pair and t["margin_pair"] != margin_pair:
        fails.append("the margin came from %r, not the policy running default's code" % t["margin_pair"])
    for name, p in pol.items():
        if name == t["baseline"]:
            continue
        lo, hi = p["speedup_ci"]
        want = ("faster" if lo > 1 + m else "slower" if hi < 1 / (1 + m) else
                "same" if m > 0 and lo >= 1 / (1 + m) and hi <= 1 + m else "not significant")
        if p["verdict"] != want:
            fails.append("%s: verdict %r, its interval [%.3f, %.3f] and margin %.3f say %r" % (name, p["verdict"], lo, hi, m, want))
    if t["margin_pair"] and pol[t["margin_pair"]]["verdict"] != "same":
        fails.append("the policy running the baseline's code is not called 'same'")

    # 4: the losses against the expected drift.
    d = t["drift"]
    base = pol[t["baseline"]]["losses"]
    for name, p in pol.items():
        exceeds = -1
        for i, (a, b) in enumerate(zip(p["losses"], base)):
            if abs(a - b) / abs(b) > d["bound0"] * d["growth"] ** i:
                exceeds = i
                break
        if p["loss_agrees"] != (exceeds < 0) or p["loss_exceeds_at"] != exceeds:
            fails.append("%s: loss_agrees=%s at %d, the losses say %d" % (name, p["loss_agrees"], p["loss_exceeds_at"], exceeds))
    if not d["measured"]:
        fails.append("the drift growth was not measured")
    return fails


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: claims_test.py CONVLAB WORKDIR | --check DIR")
    if sys.argv[1] == "--check":
        failures = check(sys.argv[2], margin_pair=None)
    else:
        failures = check(run_tiny(sys.argv[1], sys.argv[2]))
    for f in failures:
        print("FAIL: " + f)
    if failures:
        sys.exit(1)
    print("ok: every claim in the report holds against its own data")
