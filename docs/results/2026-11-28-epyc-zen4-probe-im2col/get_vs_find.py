#!/usr/bin/env python3
"""get's picks against find's times of an earlier `convlab layers NET --json` run on the same machine.

usage: get_vs_find.py CONVLAB JSON_DIR REPEATS [--avx2] [NET...]

For each network (JSON_DIR/NET-b16.json, AlexNet -b32) it runs `CONVLAB tune NET --mode get --no-cache --json`
REPEATS times -- each run measures a fresh machine probe -- and counts the (layer, direction) pairs whose get
pick took at most 1.10x find's best time in the JSON. --avx2: under CONVLAB_ISA=avx2 ONEDNN_MAX_CPU_ISA=AVX2
(for a JSON measured so). Prints each repeat's share and the last repeat's most common misses.
"""
import collections, json, os, subprocess, sys

args = [a for a in sys.argv[1:] if a != '--avx2']
binary, jdir, reps = args[0], args[1], int(args[2])
env = dict(os.environ)
if '--avx2' in sys.argv:
    env.update(CONVLAB_ISA='avx2', ONEDNN_MAX_CPU_ISA='AVX2')
for net in args[3:] or ['resnet50', 'mobilenet_v2', 'densenet121', 'vgg16', 'alexnet']:
    b = 32 if net == 'alexnet' else 16
    f = f'{jdir}/{net}-b{b}.json'
    if not os.path.exists(f):
        continue
    meas = collections.defaultdict(dict)
    for r in json.load(open(f))['rows']:
        if r['status'] == 'ok' and r.get('time_ms'):
            meas[(r['layer'], r['direction'])][r['algorithm']] = r['time_ms']
    for k in range(reps):
        out = subprocess.run([binary, 'tune', net, '--batch', str(b), '--threads', '2', '--mode', 'get', '--no-cache',
                              '--json', '--quiet'], capture_output=True, text=True, env=env, check=True)
        ok = n = 0
        miss = collections.Counter()
        for p in json.loads(out.stdout)['pairs']:
            m = meas.get((p['layer'], p['dir']))
            if not m:
                continue
            n += 1
            if m.get(p['get_choice'], float('inf')) <= 1.10 * min(m.values()):
                ok += 1
            else:
                miss[(p['dir'], p['get_choice'], min(m, key=m.get))] += 1
        print(f'{net} repeat {k}: {ok}/{n} = {100 * ok / n:.0f} %')
        if k == reps - 1:
            for key, v in miss.most_common(6):
                print('    ', v, 'x', key[0], 'get', key[1], 'find', key[2])
