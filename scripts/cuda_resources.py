#!/usr/bin/env python3
"""Registers, shared memory, stack and spills of every CUDA kernel, as ptxas reports them.

usage: cuda_resources.py BUILD_DIR [--out FILE.md] [--allow-spill KERNEL]...
Recompiles each .cu file of BUILD_DIR/compile_commands.json (its own flags) to a cubin for
the build's first real architecture with --resource-usage, in parallel, and prints one row
per kernel: registers per thread, the warps per SM those registers allow (of 64; register
file 64K, allocated per warp in units of 256), static shared memory, stack frame, spill
stores and loads. Exit 1 when a kernel spills (a kernel with local-memory spills in a hot
loop is slow in a way no test sees) that no --allow-spill names (its short name, as the
table prints it), 2 on bad input.
"""
import concurrent.futures
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpu_ncu_table import short_name  # noqa: E402  (one spelling of a kernel name for both tables)


def fail(msg):
    print(f"error: {msg}", file=sys.stderr)
    sys.exit(2)


def cubin_command(entry, cubin):
    args = shlex.split(entry["command"])
    arch = None
    out = []
    skip = False
    for a in args:
        if skip:
            skip = False
            continue
        m = re.match(r"--generate-code=arch=compute_(\d+),code=\[?[^\]]*sm_(\d+)", a)
        if m:
            arch = arch or m.group(2)
            continue
        if a == "-o":
            skip = True
            continue
        if a == "-c":
            continue
        out.append(a)
    arch = arch or "90"
    return out + [f"-arch=sm_{arch}", "-cubin", "--resource-usage", "-o", cubin], arch


def demangle(names):
    if not names:
        return {}
    try:
        r = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True, check=True)
        return dict(zip(names, r.stdout.splitlines()))
    except (OSError, subprocess.CalledProcessError):
        return {n: n for n in names}


def compile_one(entry, tmp):
    cubin = os.path.join(tmp, re.sub(r"[^A-Za-z0-9_.]", "_", entry["file"]) + ".cubin")
    cmd, arch = cubin_command(entry, cubin)
    r = subprocess.run(cmd, cwd=entry["directory"], capture_output=True, text=True)
    return entry["file"], arch, r.returncode, r.stdout + r.stderr


def parse(text):
    kernels, cur = [], None
    for line in text.splitlines():
        m = re.search(r"Function properties for (\S+)", line)
        if m:
            cur = {"mangled": m.group(1), "stack": 0, "spill_st": 0, "spill_ld": 0, "regs": None, "smem": 0}
            kernels.append(cur)
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m and cur:
            cur["stack"], cur["spill_st"], cur["spill_ld"] = map(int, m.groups())
            continue
        m = re.search(r"Used (\d+) registers(?:.*?(\d+) bytes smem)?", line)
        if m and cur:
            cur["regs"] = int(m.group(1))
            cur["smem"] = int(m.group(2) or 0)
    # device functions (not __global__) also get properties; keep entries ptxas gave registers to
    return [k for k in kernels if k["regs"] is not None]


def warps_by_registers(regs):
    per_warp = -(-max(regs, 1) * 32 // 256) * 256
    return min(64, 65536 // per_warp)


def main():
    argv = sys.argv[1:]
    allowed = {argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "--allow-spill"}
    if not argv or argv[0].startswith("-"):
        fail("usage: cuda_resources.py BUILD_DIR [--out FILE.md] [--allow-spill KERNEL]...")
    build = argv[0]
    out_file = argv[argv.index("--out") + 1] if "--out" in argv else None
    db = os.path.join(build, "compile_commands.json")
    if not os.path.isfile(db):
        fail(f"{db} not found (configure the build first)")
    entries = [e for e in json.load(open(db)) if e["file"].endswith(".cu")]
    if not entries:
        fail(f"no .cu file in {db}: the build has no CUDA half")
    rows, errors = [], []
    with tempfile.TemporaryDirectory() as tmp, concurrent.futures.ThreadPoolExecutor(max(1, os.cpu_count() or 1)) as ex:
        for f, arch, rc, text in ex.map(lambda e: compile_one(e, tmp), entries):
            if rc != 0:
                errors.append(f"{f}: nvcc exit {rc}: {text.strip().splitlines()[-1] if text.strip() else ''}")
                continue
            for k in parse(text):
                rows.append(dict(k, file=os.path.relpath(f, os.path.dirname(os.path.abspath(build))), arch=arch))
    names = demangle(sorted({r["mangled"] for r in rows}))
    lines = [f"| kernel | file | sm | registers | warps/SM by registers | static smem B | stack B | spill st B | spill ld B |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|"]
    spills = []
    for r in sorted(rows, key=lambda r: (r["file"], names.get(r["mangled"], r["mangled"]))):
        name = short_name(names.get(r["mangled"], r["mangled"]))
        lines.append(f"| {name} | {r['file']} | {r['arch']} | {r['regs']} | {warps_by_registers(r['regs'])} | {r['smem']} | "
                     f"{r['stack']} | {r['spill_st']} | {r['spill_ld']} |")
        if (r["spill_st"] or r["spill_ld"]) and name not in allowed:
            spills.append(f"{name} ({r['file']}): {r['spill_st']} B spill stores, {r['spill_ld']} B spill loads")
        elif r["spill_st"] or r["spill_ld"]:
            lines.append(f"|   (allowed: {name} spills {r['spill_st']} / {r['spill_ld']} B) |||||||||")
    summary = (f"summary: {len(rows)} kernels in {len(entries)} files; {len(spills)} spill unallowed; "
               f"registers {min(r['regs'] for r in rows)}-{max(r['regs'] for r in rows)}" if rows else "summary: no kernel")
    text = "\n".join(lines + [""] + [f"SPILL {s}" for s in spills] + [f"NVCC {e}" for e in errors] + [summary])
    print(text)
    if out_file:
        with open(out_file, "w") as f:
            f.write(text + "\n")
    if errors or not rows:
        return 2
    return 1 if spills else 0


if __name__ == "__main__":
    sys.exit(main())
