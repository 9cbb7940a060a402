#!/usr/bin/env python3
"""The ncu stage's table: one row per hand-written kernel of each profiled run.

usage: gpu_ncu_table.py DIR   (DIR holds ALGO.LAYER.DIRECTION.csv, ncu --csv --page raw)
Writes DIR/kernels.csv (the derived columns and the raw counter sums, first launch of each
kernel per run) and
prints a Markdown table with the derived columns: global sectors per request
(4 is a coalesced fp32 warp load), shared-memory bank conflicts per wavefront,
achieved occupancy, registers, active lanes per instruction (of 32). The last
line is a one-line summary; exit 1 when no kernel row was found.
"""
import csv
import glob
import io
import os
import sys


def number(text):
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def short_name(demangled):
    """The kernel's name with its template arguments, without namespaces or parameters."""
    name = demangled[5:] if demangled.startswith("void ") else demangled
    # ncu's demangled names print the anonymous namespace as "unnamed>::"
    for prefix in ("(anonymous namespace)::", "<unnamed>::", "unnamed>::", "convlab::", "cuda::"):
        name = name.replace(prefix, "")
    depth = 0
    for i, ch in enumerate(name):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "(" and depth == 0:
            return name[:i]
    return name


def rows_of(path):
    text = open(path, errors="replace").read()
    start = text.find('"ID","Process ID"')
    if start < 0:
        return []
    lines = [ln for ln in text[start:].splitlines() if ln.startswith('"')]
    table = list(csv.reader(io.StringIO("\n".join(lines))))
    header, body = table[0], table[2:]  # table[1] holds the units
    return [dict(zip(header, r)) for r in body if len(r) == len(header)]


def ratio(a, b):
    return None if a is None or b in (None, 0) else a / b


def cell(v, fmt):
    return "-" if v is None else format(v, fmt)


def main():
    folder = sys.argv[1]
    out_rows = []
    runs = [p for p in sorted(glob.glob(os.path.join(folder, "*.csv"))) if os.path.basename(p) != "kernels.csv"]
    for path in runs:
        algo, layer, direction = os.path.basename(path)[:-4].rsplit(".", 2)
        seen = set()
        for r in rows_of(path):
            name = short_name(r.get("Kernel Name", ""))
            if name in seen or "flush" in name:
                continue
            seen.add(name)
            m = {k: number(v) for k, v in r.items()}
            out_rows.append({
                "algorithm": algo, "layer": layer, "direction": direction, "kernel": name,
                "grid": r.get("Grid Size") or r.get("launch__grid_size", ""),
                "block": r.get("Block Size") or r.get("launch__block_size", ""),
                "registers": m.get("launch__registers_per_thread"),
                "smem_bytes": (m.get("launch__shared_mem_per_block_static") or 0)
                + (m.get("launch__shared_mem_per_block_dynamic") or 0),
                "occupancy_pct": m.get("sm__warps_active.avg.pct_of_peak_sustained_active"),
                "ld_sectors_per_request": ratio(m.get("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"),
                                                m.get("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum")),
                "st_sectors_per_request": ratio(m.get("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"),
                                                m.get("l1tex__t_requests_pipe_lsu_mem_global_op_st.sum")),
                "smem_ld_conflicts_per_wavefront": ratio(m.get("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"),
                                                         m.get("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum")),
                "smem_st_conflicts_per_wavefront": ratio(m.get("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"),
                                                         m.get("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum")),
                "lanes_per_instruction": m.get("smsp__thread_inst_executed_per_inst_executed.ratio"),
                "warp_instructions": m.get("smsp__inst_executed.sum"),
                "time_us": None if m.get("gpu__time_duration.sum") is None else m["gpu__time_duration.sum"] / 1e3,
                # the raw sums, for comparing with the SIMT emulator's counts of the same launch
                "ld_requests": m.get("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"),
                "ld_sectors": m.get("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"),
                "st_requests": m.get("l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"),
                "st_sectors": m.get("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"),
                "smem_ld_wavefronts": m.get("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"),
                "smem_ld_conflicts": m.get("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"),
                "smem_st_wavefronts": m.get("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"),
                "smem_st_conflicts": m.get("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"),
            })
    if out_rows:
        with open(os.path.join(folder, "kernels.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(out_rows[0].keys()))
            w.writeheader()
            w.writerows(out_rows)
    print("| algorithm | layer | dir | kernel | grid | block | regs | smem B | occupancy % | ld sectors/req |"
          " st sectors/req | smem ld conflicts/wavefront | smem st conflicts/wavefront | lanes/instr | µs |")
    print("|---|---|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in out_rows:
        print(f"| {r['algorithm']} | {r['layer']} | {r['direction']} | {r['kernel']} | {r['grid']} | {r['block']} | "
              f"{cell(r['registers'], '.0f')} | {cell(r['smem_bytes'], '.0f')} | {cell(r['occupancy_pct'], '.1f')} | "
              f"{cell(r['ld_sectors_per_request'], '.2f')} | {cell(r['st_sectors_per_request'], '.2f')} | "
              f"{cell(r['smem_ld_conflicts_per_wavefront'], '.2f')} | {cell(r['smem_st_conflicts_per_wavefront'], '.2f')} | "
              f"{cell(r['lanes_per_instruction'], '.1f')} | {cell(r['time_us'], '.1f')} |")
    print(f"summary: {len(out_rows)} kernel rows from {len(runs)} profiled runs")
    return 0 if out_rows else 1


if __name__ == "__main__":
    sys.exit(main())
