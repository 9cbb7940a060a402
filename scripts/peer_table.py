#!/usr/bin/env python3
"""The oneDNN 3.x peer table: convlab vs Debian's oneDNN 2.6 vs oneDNN 3.x, side by side.

usage: peer_table.py --convlab F.json... --onednn3 F.json... --md OUT.md --json OUT.json --csv OUT.csv
                     [--title T] [--machine LINE]... [--command CMD]

Inputs: the `convlab layers --json` documents and the convlab_onednn3 --json documents of the
same problems, one of each per round (scripts/peer-onednn3.sh runs them back to back). Rows
are joined on (problem, direction), the layer label taken from convlab's rows.

Per (layer, direction) and side, the side's best in each round is its fastest row with status
"ok": convlab's own algorithms are the cpu.* rows except cpu.reference; Debian's oneDNN 2.6 the
onednn.* rows; oneDNN 3.x the onednn3.* rows (each checked against the fp64 reference before it
was timed; a row that failed its check is not "ok" and never a best). Over the rounds a side's
time is the median of its per-round bests; its interval is the union of those bests' 95 %
intervals (lowest lower bound, highest upper bound), so with one round it is that round's
interval. The fastest side has the lowest time; when its interval overlaps the runner-up's the
verdict says so ("... (overlaps ...)"). "convlab / 3.x" is oneDNN 3.x's time over convlab's
(above 1: convlab faster). A side with no ok row in some round has no time ("-").
Exit 0 when the table was written, 2 on bad input (one "error: ..." line).
"""
import csv
import io
import json
import os
import statistics
import sys

SIDES = [("convlab", "convlab's best own"), ("onednn26", "oneDNN 2.6 (Debian) best"),
         ("onednn3", "oneDNN 3.x (PyPI) best")]
SHORT = {"convlab": "convlab", "onednn26": "oneDNN 2.6", "onednn3": "oneDNN 3.x"}


def side_of(tool, algorithm):
    if tool == "onednn3":
        return "onednn3" if algorithm.startswith("onednn3.") else None
    if algorithm.startswith("cpu.") and algorithm != "cpu.reference":
        return "convlab"
    if algorithm.startswith("onednn.") and not algorithm.startswith("onednn3."):
        return "onednn26"
    return None


def die(msg):
    sys.stderr.write("error: %s\n" % msg.encode("unicode_escape").decode("ascii"))
    sys.exit(2)


def load(path, tool):
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        die("%s: cannot read a JSON document: %s" % (path, e))
    if not isinstance(doc, dict) or not isinstance(doc.get("rows"), list):
        die("%s: no \"rows\" list (not a %s --json document)" % (path, tool))
    want = "convlab_onednn3" if tool == "onednn3" else "convlab layers"
    if doc.get("tool") != want:
        die("%s: written by %r, expected %r" % (path, doc.get("tool"), want))
    return doc


def round_bests(doc, tool):
    """{(problem, direction): {side: row}} of one round, and {(problem, direction): layer}."""
    best, labels = {}, {}
    for r in doc["rows"]:
        try:
            key = (r["problem"], r["direction"])
            side = side_of(tool, r["algorithm"])
            ok = r["status"] == "ok" and r["time_ms"] is not None
        except (KeyError, TypeError):
            die("a row of %s lacks problem/direction/algorithm/status/time_ms" % tool)
        if tool != "onednn3":
            labels.setdefault(key, r.get("layer") or r["problem"])
        if side is None or not ok:
            continue
        cur = best.setdefault(key, {}).get(side)
        if cur is None or r["time_ms"] < cur["time_ms"]:
            best[key][side] = r
    return best, labels


def combine(rounds):
    """rounds: [{key: {side: row}}] -> {key: {side: summary}} over the rounds."""
    out = {}
    keys = []
    for rb in rounds:
        for k in rb:
            if k not in keys:
                keys.append(k)
    for k in keys:
        out[k] = {}
        for side, _ in SIDES:
            rows = [rb.get(k, {}).get(side) for rb in rounds]
            if any(r is None for r in rows):
                out[k][side] = None
                continue
            los = [r.get("time_lo_ms") for r in rows]
            his = [r.get("time_hi_ms") for r in rows]
            out[k][side] = {
                "time_ms": statistics.median(r["time_ms"] for r in rows),
                "lo_ms": min(x for x in los if x is not None) if any(x is not None for x in los) else None,
                "hi_ms": max(x for x in his if x is not None) if any(x is not None for x in his) else None,
                "algorithms": sorted({r["algorithm"] for r in rows}),
                "implementations": sorted({r.get("implementation") or "" for r in rows} - {""}),
                "rounds": [r["time_ms"] for r in rows],
            }
    return keys, out


def verdict(sides):
    have = [(v["time_ms"], name) for name, v in sides.items() if v]
    if not have:
        return "", None
    have.sort()
    best = have[0][1]
    text = SHORT[best]
    if len(have) > 1:
        second = have[1][1]
        a, b = sides[best], sides[second]
        if a["hi_ms"] is not None and b["lo_ms"] is not None and a["hi_ms"] >= b["lo_ms"]:
            text += " (overlaps %s)" % SHORT[second]
    return text, best


def fmt_side(v):
    if not v:
        return "-"
    iv = "" if v["lo_ms"] is None else " [%.3f, %.3f]" % (v["lo_ms"], v["hi_ms"])
    impl = (" " + "/".join(v["implementations"])) if v["implementations"] else ""
    return "%.3f%s %s%s" % (v["time_ms"], iv, "/".join(v["algorithms"]), impl)


def table_rows(keys, combined, labels):
    rows = []
    for k in keys:
        s = combined[k]
        text, best = verdict(s)
        ratio = (s["onednn3"]["time_ms"] / s["convlab"]["time_ms"]) if s["convlab"] and s["onednn3"] else None
        rows.append({"layer": labels.get(k, k[0]), "problem": k[0], "direction": k[1], "fastest": text,
                     "fastest_side": best, "convlab_over_onednn3": ratio, **{name: s[name] for name, _ in SIDES}})
    return rows


def markdown(rows, title, machine, command, nrounds):
    out = io.StringIO()
    out.write("# %s\n\n" % title)
    for line in machine:
        out.write("- %s\n" % line)
    if command:
        out.write("- command: `%s`\n" % command)
    out.write("- rounds: %d (each side's time: the median of its per-round bests; interval: the union of their "
              "95 %% intervals), ms\n\n" % nrounds)
    out.write("| layer | dir | %s | fastest | convlab / 3.x |\n" % " | ".join(t for _, t in SIDES))
    out.write("|---|---|---|---|---|---|---|\n")
    for r in rows:
        ratio = "-" if r["convlab_over_onednn3"] is None else "%.2f" % r["convlab_over_onednn3"]
        out.write("| %s | %s | %s | %s | %s |\n" % (r["layer"], r["direction"],
                                                    " | ".join(fmt_side(r[n]) for n, _ in SIDES), r["fastest"], ratio))
    wins = {n: sum(1 for r in rows if r["fastest_side"] == n) for n, _ in SIDES}
    out.write("\nfastest: " + ", ".join("%s %d" % (SHORT[n], wins[n]) for n, _ in SIDES) + " of %d pairs\n" % len(rows))
    return out.getvalue()


def csv_text(rows):
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["layer", "problem", "direction"] + ["%s_%s" % (n, f) for n, _ in SIDES
                                                    for f in ("algorithm", "ms", "lo_ms", "hi_ms")]
               + ["fastest", "convlab_over_onednn3"])
    for r in rows:
        cells = [r["layer"], r["problem"], r["direction"]]
        for n, _ in SIDES:
            v = r[n]
            cells += ["/".join(v["algorithms"]), v["time_ms"], v["lo_ms"], v["hi_ms"]] if v else ["", "", "", ""]
        cells += [r["fastest"], "" if r["convlab_over_onednn3"] is None else r["convlab_over_onednn3"]]
        w.writerow(cells)
    return out.getvalue()


def write_atomic(path, text):
    tmp = path + ".tmp%d" % os.getpid()
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as e:
        if os.path.exists(tmp):
            os.unlink(tmp)
        die("cannot write %s: %s" % (path, e.strerror))


def parse_args(argv):
    a = {"convlab": [], "onednn3": [], "md": None, "json": None, "csv": None, "title": "oneDNN 3.x peer",
         "machine": [], "command": ""}
    i, cur = 0, None
    while i < len(argv):
        arg = argv[i]
        if arg in ("--convlab", "--onednn3"):
            cur = arg[2:]
        elif arg in ("--md", "--json", "--csv", "--title", "--machine", "--command"):
            if i + 1 >= len(argv):
                die("peer_table.py: %s needs a value" % arg)
            key = arg[2:]
            if key == "machine":
                a[key].append(argv[i + 1])
            else:
                a[key] = argv[i + 1]
            i += 1
            cur = None
        elif arg.startswith("--") or cur is None:
            die("peer_table.py: unexpected argument %r" % arg)
        else:
            a[cur].append(arg)
        i += 1
    if not a["convlab"] or not a["onednn3"] or len(a["convlab"]) != len(a["onednn3"]):
        die("peer_table.py: give one --convlab and one --onednn3 document per round (got %d and %d)"
            % (len(a["convlab"]), len(a["onednn3"])))
    if not (a["md"] and a["json"] and a["csv"]):
        die("peer_table.py: --md, --json and --csv are all needed")
    return a


def main(argv):
    a = parse_args(argv)
    rounds, labels = [], {}
    for c, o in zip(a["convlab"], a["onednn3"]):
        cb, cl = round_bests(load(c, "convlab"), "convlab")
        ob, _ = round_bests(load(o, "onednn3"), "onednn3")
        labels.update(cl)
        merged = {k: dict(v) for k, v in cb.items()}
        for k, v in ob.items():
            merged.setdefault(k, {}).update(v)
        rounds.append(merged)
    keys, combined = combine(rounds)
    keys = [k for k in keys if k in labels] + [k for k in keys if k not in labels]
    rows = table_rows(keys, combined, labels)
    write_atomic(a["md"], markdown(rows, a["title"], a["machine"], a["command"], len(rounds)))
    write_atomic(a["csv"], csv_text(rows))
    doc = {"tool": "peer_table", "machine": a["machine"], "command": a["command"], "rounds": len(rounds), "rows": rows}
    write_atomic(a["json"], json.dumps(doc, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
