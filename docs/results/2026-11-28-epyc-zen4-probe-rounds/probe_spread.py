#!/usr/bin/env python3
"""Spread of the machine probe's algorithm rates over several probes, one cache file each.

usage: probe_spread.py CACHE.jsonl...   (each written by `convlab tune PROBLEM --mode get --cache F`)

Prints, per algorithm rate, its values and max/min; then the ratios cpu.im2col_gemm / other within
the 1x1 class, per direction, one per probe.
"""
import collections, json, sys

rates = collections.defaultdict(list)
for f in sys.argv[1:]:
    for line in open(f):
        d = json.loads(line)
        if 'probe' in d and 'rates' in d['probe']:
            for k, x in d['probe']['rates'].items():
                rates[k].append(x)
spread = []
for k in sorted(rates):
    if '|' in k:
        x = rates[k]
        spread.append(max(x) / min(x))
        print(f'{k:42s}', ' '.join(f'{a:6.1f}' for a in x), f' spread {max(x) / min(x):.2f}')
spread.sort()
print(f'max/min over the algorithm rates: median {spread[len(spread) // 2]:.2f}, '
      f'upper quartile {spread[3 * len(spread) // 4]:.2f}, largest {spread[-1]:.2f}')
for d in ['fwd', 'bwd-data', 'bwd-filter']:
    a = rates[f'cpu.im2col_gemm|{d}|1x1']
    for o in ['cpu.direct', 'cpu.im2col_openblas', 'onednn.direct']:
        b = rates[f'{o}|{d}|1x1']
        print(f'{d} 1x1 rate cpu.im2col_gemm / {o}:', ' '.join(f'{x / y:.2f}' for x, y in zip(a, b)))
