"""The ExeCycles model of backend-h13/src/encode/header.rs: the centre of the feasible region
of the chosen features, and a leave-one-case-out check. Needs numpy and scipy."""
exec(open(__file__.replace("exefit.py", "exefit_search.py")).read().split("keys=list")[0])
import numpy as np
from scipy.optimize import linprog
def center(ks, rows):
    # maximize t: a.f >= e + t, a.f <= e+1-t
    A=[];b=[]
    for n,i,e,f in rows:
        v=[f[k] for k in ks]
        A.append([-x for x in v]+[1]); b.append(-e)
        A.append(v+[1]); b.append(e+1)
    c=np.zeros(len(ks)+1); c[-1]=-1
    res=linprog(c,A_ub=A,b_ub=b,bounds=[(0,None)]*len(ks)+[(None,None)],method='highs')
    return res.x
for ks in [('rP','rR','wR','B'),('rP','rL','wR','B'),('rP','rL','wL','B'),('rP','rR','wR','one','B')]:
    x=center(ks,rows); print(ks, x)
    miss=0
    names=sorted(set(r[0] for r in rows))
    for n in names:
        tr=[r for r in rows if r[0]!=n]; te=[r for r in rows if r[0]==n]
        y=center(ks,tr)
        for _,i,e,f in te:
            p=math.floor(sum(y[j]*f[k] for j,k in enumerate(ks))+1e-9)
            if p!=e: miss+=1; print('  loo miss',n,i,e,p)
    print(' loo misses',miss)
