# The same plans timed back to back (40 reps) and alternated call by call (40 each), medians.
# Usage: PYTHONPATH=build/python python3 interleaved.py fwd,bwd-data,bwd-filter LAYER[,LAYER...]
import sys, numpy as np, convlab, time
def med(t): t=sorted(t); return t[len(t)//2]*1e3
for L in sys.argv[2].split(","):
  P = convlab.Problem.parse(L)
  s = np.random.rand(*P.src_shape).astype(np.float32); w = np.random.rand(*P.wei_shape).astype(np.float32); d = np.random.rand(*P.dst_shape).astype(np.float32)
  s2, w2, d2 = s.copy(), w.copy(), d.copy()
  for dr in sys.argv[1].split(","):
    a = convlab.Plan.make("cpu.direct_depthwise", P, dr, threads=2); b = convlab.Plan.make("onednn.auto", P, dr, threads=2)
    ba = med(a.time(s,w,d,reps=40)[4:]); bb = med(b.time(s2,w2,d2,reps=40)[4:])
    ta, tb = [], []
    for i in range(40):
      ta += a.time(s,w,d,reps=1); tb += b.time(s2,w2,d2,reps=1)
    print(f"{L} {dr}: back-to-back ours {ba:.3f} dnn {bb:.3f} ratio {bb/ba:.2f} | interleaved ours {med(ta):.3f} dnn {med(tb):.3f} ratio {med(tb)/med(ta):.2f}", flush=True)
