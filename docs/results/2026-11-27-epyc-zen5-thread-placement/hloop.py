import sys, numpy as np, convlab, threading, time, subprocess
def pp(): return float(subprocess.run(["/tmp/m/pingpong"], capture_output=True, text=True).stdout.split()[2])
full = convlab.Problem.parse("g192mb16ic192ih28oc192oh28kh3ph1")
half = convlab.Problem.parse("g192mb8ic192ih28oc192oh28kh3ph1")
s = np.random.rand(*full.src_shape).astype(np.float32); w = np.random.rand(192,1,3,3).astype(np.float32)
d = np.zeros((16,192,28,28), np.float32)
def med(t): t=sorted(t[4:]); return t[len(t)//2]*1e3
p2 = {a: convlab.Plan.make(a, full, "fwd", threads=2) for a in ["cpu.direct_depthwise","onednn.direct"]}
h = [convlab.Plan.make("cpu.direct_depthwise", half, "fwd", threads=1) for _ in range(2)]
end = time.time() + float(sys.argv[1])
while time.time() < end:
    a = pp()
    ours = med(p2["cpu.direct_depthwise"].time(s,w,d,reps=24))
    res=[None,None]
    def go(i): res[i] = h[i].time(s[8*i:8*i+8], w, d[8*i:8*i+8], reps=24)
    ts=[threading.Thread(target=go,args=(i,)) for i in range(2)]; [t.start() for t in ts]; [t.join() for t in ts]
    dnn = med(p2["onednn.direct"].time(s,w,d,reps=24))
    print(f"{a:.1f} cpu.di 2T {ours:.3f} two 1T halves {med(res[0]):.3f}/{med(res[1]):.3f} onednn 2T {dnn:.3f} x x x {pp():.1f}", flush=True)
