#!/usr/bin/env python3
"""Counts, for the planar alias bits (AliasPlanarSrc / AliasPlanarRslt) of what a task
after the first writes into L2 (a loaded source, its result), how many each earlier
hypothesis explains (the bits Apple sets it predicts, and the bits it predicts that Apple
leaves clear). The hazard rule itself is `hazard.py`."""
from load import load, regions
from hazard import bitset, ov


def written(t):
    rg = regions(t)
    src = [rg[k] for k in ('src', 'src2') if k in rg and rg[k][2] == 'load']
    return src, rg.get('res')


def h_previous(ts, t):
    """S / R when the region overlaps the previous task's sources / result (a PE task)."""
    p = ts[t['i'] - 1]
    if p['engine'] != 'PE':
        return set(), set()
    pr = regions(p)
    psrc = [pr[k] for k in ('src', 'src2') if k in pr]
    src, res = written(t)
    bits = lambda rs: ({'pr'} if 'res' in pr and any(ov(r, pr['res']) for r in rs) else set()) | \
        ({'ps'} if any(ov(r, q) for r in rs for q in psrc) else set())
    return bits(src), bits([res] if res else [])


def h_same_start(ts, t):
    """S / R when the region starts where the previous PE task's source / result starts."""
    pes = [p for p in ts[:t['i']] if p['engine'] == 'PE']
    if not pes:
        return set(), set()
    pr = regions(pes[-1])
    src, res = written(t)
    bits = lambda rs: ({'pr'} if 'res' in pr and any(r[0] == pr['res'][0] for r in rs) else set()) | \
        ({'ps'} if 'src' in pr and any(r[0] == pr['src'][0] for r in rs) else set())
    return bits(src), bits([res] if res else [])


for name, h in (('overlap with the previous task', h_previous), ('same start as the last PE task', h_same_start)):
    on = ok = false = 0
    for r in load():
        ts = r['tasks']
        for t in ts[1:]:
            src, res = written(t)
            ps, pr = h(ts, t)
            for loaded, pred, cfg in ((bool(src), ps, t['src_cfg']), (res is not None, pr, t['res_cfg'])):
                if not loaded:
                    continue
                act = bitset(cfg) & {'ps', 'pr'}
                on += len(act)
                ok += len(act & pred)
                false += len(pred - act)
    print('%s: Apple sets %d planar bits on written regions after the first task; explained %d; predicted but clear %d'
          % (name, on, ok, false))
