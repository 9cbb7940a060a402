# Median ms of cpu.direct_depthwise and onednn.auto (or the algorithms named in argv[3]) per layer and direction,
# 2 threads, with the round trip after (pingpong.c of the thread-placement results, compiled to /tmp/m/pingpong).
# Usage: PYTHONPATH=build/python python3 plane_vs_blocked.py fwd,bwd-data,bwd-filter LAYER[,LAYER...] [ALGOS]
# The plane-vs-blocked columns of the results file came from a measuring build whose plane path was
# switched by an environment variable DWP (the largest plane, in pixels, to take it; 0: never), printed
# first on each line; the committed code has no such switch (tests: set_depthwise_plane_path).
import sys, os, numpy as np, convlab, subprocess
def pp(): return float(subprocess.run(["/tmp/m/pingpong"], capture_output=True, text=True).stdout.split()[2])
def med(t): t=sorted(t[4:]); return t[len(t)//2]*1e3
layers = sys.argv[2].split(",")
dirs = sys.argv[1].split(",")
algs = sys.argv[3].split(",") if len(sys.argv)>3 else ["cpu.direct_depthwise","onednn.auto"]
for L in layers:
    P = convlab.Problem.parse(L)
    s = np.random.rand(*P.src_shape).astype(np.float32); w = np.random.rand(*P.wei_shape).astype(np.float32); d = np.random.rand(*P.dst_shape).astype(np.float32)
    for dr in dirs:
        out=[]
        for a in algs:
            pl = convlab.Plan.make(a, P, dr, threads=2)
            out.append(med(pl.time(s,w,d,reps=40)))
        print(f"{os.environ.get('DWP','-')} {L} {dr} " + " ".join(f"{x:.3f}" for x in out) + f" ratio {out[-1]/out[0]:.2f} pp {pp():.0f}", flush=True)
