#!/usr/bin/env python3
"""get's share within 10 % of find on MobileNetV2, depthwise pairs apart: one fresh probe (`convlab tune mobilenet_v2
--batch 16 --threads 2 --mode get --no-cache --json`) against a `convlab layers --json` file.
usage: depthwise_share.py CONVLAB LAYERS.json [avx2]  (any third argument: the AVX2 path)"""
import json,subprocess,sys,collections,os
binary,jf=sys.argv[1],sys.argv[2]; env=dict(os.environ)
if len(sys.argv)>3: env.update(CONVLAB_ISA='avx2',ONEDNN_MAX_CPU_ISA='AVX2')
meas=collections.defaultdict(dict)
for r in json.load(open(jf))['rows']:
    if r['status']=='ok' and r.get('time_ms'): meas[(r['layer'],r['direction'])][r['algorithm']]=r['time_ms']
out=subprocess.run([binary,'tune','mobilenet_v2','--batch','16','--threads','2','--mode','get','--no-cache','--json','--quiet'],capture_output=True,text=True,env=env,check=True)
ok=n=0; okall=nall=0
for p in json.loads(out.stdout)['pairs']:
    m=meas.get((p['layer'],p['dir']))
    if not m: continue
    good=m.get(p['get_choice'],1e9)<=1.1*min(m.values())
    nall+=1; okall+=good
    if p['problem'].startswith('g'): n+=1; ok+=good
print(f'depthwise {ok}/{n}, all {okall}/{nall}')
