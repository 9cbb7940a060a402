# Median ms of cpu.direct_depthwise and onednn.direct on 1 and on 2 threads per layer and direction.
# Usage: PYTHONPATH=build/python python3 threads.py fwd,bwd-filter LAYER[,LAYER...]
import sys, numpy as np, convlab
def med(t): t=sorted(t[4:]); return t[len(t)//2]*1e3
for L in sys.argv[2].split(","):
  P = convlab.Problem.parse(L)
  s = np.random.rand(*P.src_shape).astype(np.float32); w = np.random.rand(*P.wei_shape).astype(np.float32); d = np.random.rand(*P.dst_shape).astype(np.float32)
  for dr in sys.argv[1].split(","):
    out=[]
    for th in (1,2):
      for a in ["cpu.direct_depthwise","onednn.direct"]:
        out.append(med(convlab.Plan.make(a, P, dr, threads=th).time(s,w,d,reps=30)))
    print(f"{L} {dr}: 1T ours {out[0]:.3f} dnn {out[1]:.3f} ({out[1]/out[0]:.2f}) | 2T ours {out[2]:.3f} dnn {out[3]:.3f} ({out[3]/out[2]:.2f})", flush=True)
