#!/usr/bin/env python3
"""For each duel of a `convlab layers` JSON: the own and peer algorithms timed warm and with the caches
flushed before every rep (cold.cpp), and the peer/own speed both ways."""
import json, os, re, subprocess, sys
j = json.load(open(sys.argv[1])); harness = sys.argv[2]; avx2 = '--avx2' in sys.argv
env = dict(os.environ)
if avx2: env.update(CONVLAB_ISA='avx2', ONEDNN_MAX_CPU_ISA='AVX2')
batch = j['batch']
print('| layer | dir | own | peer | warm own/peer ms | speed warm | flushed own/peer ms | speed flushed |')
print('|---|---|---|---|---|---:|---|---:|')
for d in j['duels']:
    if not d.get('own') or not d.get('peer'): continue
    out = subprocess.run([harness, d['layer'], d['direction'], d['own'], d['peer']], env=env, capture_output=True, text=True).stdout
    t = {}
    for line in out.splitlines():
        m = re.match(r'(\S+)\s+warm ([\d.]+)\s+flushed ([\d.]+)\s+warm ([\d.]+)', line)
        if m: t[m.group(1)] = (min(float(m.group(2)), float(m.group(4))), float(m.group(3)))
    if len(t) < 2: print('|', d['layer'], '|', d['direction'], '| failed |'); continue
    o, p = t[d['own']], t[d['peer']]
    print(f"| {d['layer']} | {d['direction']} | {d['own']} | {d['peer']} | {o[0]:.3f} / {p[0]:.3f} | {p[0]/o[0]:.2f}x | {o[1]:.3f} / {p[1]:.3f} | {p[1]/o[1]:.2f}x |", flush=True)
