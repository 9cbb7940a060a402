# get's uncalibrated pick (a fresh `convlab tune --mode get`) priced with a layers run's measured times.
import json, subprocess, sys
conv, cache = sys.argv[1], sys.argv[2]
for lj in sys.argv[3:]:
    d = json.load(open(lj))
    t = {}
    old = {}
    for r in d['rows']:
        if r['status'] != 'ok' or r.get('time_ms') is None: continue
        t.setdefault((r['layer'], r['direction']), {})[r['algorithm']] = r['time_ms']
        if r.get('get_choice'): old[(r['layer'], r['direction'])] = r['algorithm']
    net, batch = d['network'], d['batch']
    out = subprocess.run([conv, 'tune', net, '--batch', str(batch), '--mode', 'get', '--json', '--cache', cache, '--quiet'],
                         capture_output=True, text=True, check=True).stdout
    g = json.loads(out)
    n = ok = okold = 0
    bad = []
    for p in g['pairs']:
        key = (p['layer'], p['dir'])
        if key not in t: continue
        best = min(t[key].values())
        pick = p['get_choice']
        n += 1
        r = t[key].get(pick, float('inf')) / best
        ro = t[key].get(old.get(key), float('inf')) / best
        ok += r <= 1.10
        okold += ro <= 1.10
        if r > 1.10 or ro > 1.10: bad.append(f"  {key[0]} {key[1]}: new {pick} {r:.2f}  old {old.get(key)} {ro:.2f}")
    print(f"{lj}: {net} b{batch}: new get within 10 % on {ok}/{n}, the run's own get {okold}/{n}")
    print("\n".join(bad))
