# Cell-by-cell agreement of dumplens-cli --format msprobe-csv with msprobe's committed tables (run by hand from the repo root
# after building dumplens-cli: python3 tests/data/real/msprobe/agreement.py). Numbers agree within 1e-6 relative.
import csv, glob, subprocess, sys, os, collections
root='tests/data/real/msprobe'
def num(s):
    try: return float(s.rstrip('%'))
    except: return None
for ver in ['8.3.3','26.2.0']:
  for t in sorted(glob.glob(f'{root}/tables/{ver}/*/*')):
    mode=t.split('/')[-2]; pair=os.path.basename(t); npu,bench=pair.split('-vs-')
    exp=glob.glob(t+'/compare_result_*.csv')[0]
    d=f'{root}/dumps/{ver}/{mode}'
    r=subprocess.run(['build/ci/app/dumplens-cli','compare','--format','msprobe-csv','--msprobe-version',ver,f'{d}/{npu}',f'{d}/{bench}'],capture_output=True,text=True)
    if r.returncode not in (0,1,2) or not r.stdout.strip():
        print(ver,mode,pair,'FAIL',r.returncode,r.stderr[:200]); continue
    got=list(csv.DictReader(r.stdout.splitlines())); want=list(csv.DictReader(open(exp)))
    gk={g.get('NPU Name'):g for g in got}
    rows=sum(1 for w in want if w['NPU Name'] in gk)
    cells=ok=0; bad=collections.Counter()
    for w in want:
        g=gk.get(w['NPU Name'])
        if not g: continue
        for c,v in w.items():
            if c not in g: bad['missing col '+c]+=1; cells+=1; continue
            cells+=1; gv=g[c]
            a,b=num(v),num(gv)
            if v==gv or (a is not None and b is not None and abs(a-b)<=1e-6*max(1,abs(a))): ok+=1
            else: bad[c]+=1
    print(f'{ver} {mode} {pair}: rows {rows}/{len(want)} (dumplens {len(got)}), cells {ok}/{cells}; worst:', bad.most_common(6))
