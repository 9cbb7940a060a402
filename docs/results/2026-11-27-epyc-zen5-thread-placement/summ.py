import sys, statistics as st
for f in sys.argv[1:]:
    rows=[l.split() for l in open(f) if l.strip() and 'cpu.di' in l]
    for name, cond in (("far", lambda a,b: a>250 and b>250), ("near", lambda a,b: a<200 and b<200)):
        sel=[r for r in rows if cond(float(r[0]), float(r[-1]))]
        if not sel: print(f, name, 0); continue
        ours=[float(r[3]) for r in sel]; halves=[max(map(float, r[7].split('/'))) for r in sel]; dnn=[float(r[10]) for r in sel]
        print(f"{f} {name}: n={len(sel)} ours 2T median {st.median(ours):.3f} [{min(ours):.3f}-{max(ours):.3f}], two 1T halves {st.median(halves):.3f}, oneDNN 2T {st.median(dnn):.3f}")
