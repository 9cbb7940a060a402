import sys, numpy as np, convlab, threading, time
full = convlab.Problem.parse("g192mb16ic192ih28oc192oh28kh3ph1")
half = convlab.Problem.parse("g192mb8ic192ih28oc192oh28kh3ph1")
s = np.random.rand(*full.src_shape).astype(np.float32); w = np.random.rand(192,1,3,3).astype(np.float32)
d = np.zeros((16,192,28,28), np.float32)
def med(t): t=sorted(t[8:]); return t[len(t)//2]*1e3
out=[]
for a in ["cpu.direct_depthwise","onednn.direct"]:
  p2 = convlab.Plan.make(a, full, "fwd", threads=2)
  out.append(f"{a[:6]} 2T {med(p2.time(s,w,d,reps=30)):.3f}")
  h = [convlab.Plan.make(a, half, "fwd", threads=1) for _ in range(2)]
  res = [None, None]
  def go(i): res[i] = h[i].time(s[8*i:8*i+8], w, d[8*i:8*i+8], reps=30)
  ts = [threading.Thread(target=go, args=(i,)) for i in range(2)]
  [t.start() for t in ts]; [t.join() for t in ts]
  out.append(f"two 1T halves {med(res[0]):.3f}/{med(res[1]):.3f}")
print(*out)
