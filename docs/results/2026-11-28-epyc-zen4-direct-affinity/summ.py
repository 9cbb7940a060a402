import sys, re, math, collections
# pairs.sh output -> per case: near/far rounds, geometric mean of B/A
for f in sys.argv[1:]:
    d = collections.defaultdict(lambda: {'near': [], 'far': []})
    for l in open(f):
        m = re.match(r'round \d+ ping ([\d.]+) (\S+ \S+): \S+ ([\d.]+) \S+ ([\d.]+)', l)
        if not m: continue
        place = 'far' if float(m.group(1)) > 200 else 'near'
        d[m.group(2)][place].append(float(m.group(4)) / float(m.group(3)))
    print('==', f)
    for k, v in d.items():
        out = []
        for p in ('near', 'far'):
            r = v[p]
            if r: out.append(f"{p} {len(r)} rounds: new/old {math.exp(sum(map(math.log, r)) / len(r)):.3f} [{min(r):.2f}, {max(r):.2f}]")
        print(f"  {k:32s} " + '; '.join(out))
