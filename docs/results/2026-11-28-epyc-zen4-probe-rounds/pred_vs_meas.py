import json,sys,collections,re,statistics
g=json.load(open(sys.argv[1])); f=json.load(open(sys.argv[2]))
meas=collections.defaultdict(dict)
for r in f['rows']:
    if r['status']=='ok' and r.get('time_ms'): meas[(r['layer'],r['direction'])][r['algorithm']]=r['time_ms']
def cls(p):
    if p.startswith('g'): return 'dw'
    return '1x1' if 'kh1' in p and 'kh11' not in p else 'kxk'
agg=collections.defaultdict(list)
miss=[]
for p in g['pairs']:
    m=meas.get((p['layer'],p['dir']))
    if not m: continue
    c=cls(p['problem'])
    for e in p['get']:
        if e['status']=='ok' and e['algo'] in m and e['time']:
            agg[(c,p['dir'],e['algo'])].append(e['time']*1e3/m[e['algo']])
    best=min(m,key=m.get)
    if m.get(p['get_choice'],1e9)>1.1*m[best]:
        pr={e['algo']:e['time']*1e3 for e in p['get'] if e['time']}
        miss.append((p['layer'],p['dir'],p['get_choice'],'%.2f'%m.get(p['get_choice'],0),'pred %.2f'%pr.get(p['get_choice'],0),best,'%.2f'%m[best],'pred %.2f'%pr.get(best,0)))
for k in sorted(agg):
    v=sorted(agg[k])
    if len(v)<2: continue
    print('%-4s %-10s %-22s n=%2d pred/meas median %.2f  [%.2f..%.2f]'%(k[0],k[1],k[2],len(v),v[len(v)//2],v[0],v[-1]))
for x in miss: print(*x)
