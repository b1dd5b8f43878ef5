"""Searches cost models for ExeCycles (header word 1) of the elementwise, broadcast, unary and
activation records: every feature subset whose floor reproduces all tasks (feasibility LP).
Needs numpy and scipy."""
import json,glob,os,math,itertools
import numpy as np
from scipy.optimize import linprog
rows=[]
fams=('binary_','env_bcast_','unary_','env_act_')
SHARED = os.environ.get('ANEC_SHARED', os.path.join(os.path.dirname(__file__), '../../../../shared'))
for f in sorted(glob.glob(os.path.join(SHARED, 'fixtures/apple-h13-oracles/cases/*.json'))):
    name=os.path.basename(f)[:-5]
    if not name.startswith(fams): continue
    d=json.load(open(f))
    for i,t in enumerate(d.get('task_descriptors') or []):
        hw=[int(x,16) for x in t['header_words']]
        exe=hw[1]&0xffff
        h8=hw[8]
        rbe0=(h8>>5)&1; rbe1=(h8>>11)&1; wbe=(h8>>17)&1
        c=t['blocks']['0x00000']['words']
        outd=int(c['0x00014'],16); H=outd>>16; W=outd&0xffff
        C=int(c['0x00010'],16)
        g=int(c['0x00024'],16); ng=g&0x3fff
        nid=(int(c.get('0x00038','0x0'),16)>>20)&1
        cfg=int(c.get('0x00034','0x0'),16); ane=(cfg>>19)&7
        P=ng*C; R=P*H; S=math.ceil(2*W/64); L=R*S
        reads=rbe0+rbe1
        feats={'rP':reads*P,'rR':reads*R,'rL':reads*L,'wP':wbe*P,'wR':wbe*R,'wL':wbe*L,'nP':nid*P,'nR':nid*R,'nL':nid*L,'one':1,'nPd':nid*P/(1<<ane) if nid else 0,'B':(reads+wbe)*R*W*2}
        rows.append((name,i,exe,feats))
keys=list(rows[0][3].keys())
def feasible(ks):
    A=[];b=[]
    for n,i,e,f in rows:
        v=[f[k] for k in ks]
        A.append([-x for x in v]); b.append(-e)
        A.append(v); b.append(e+1-1e-7)
    res=linprog(np.zeros(len(ks)),A_ub=A,b_ub=b,bounds=[(0,None)]*len(ks),method='highs')
    return res.status==0, res.x
for r in range(2,6):
    for ks in itertools.combinations(keys,r):
        ok,x=feasible(ks)
        if ok: print(ks, x)
    print('done',r)
