#!/usr/bin/env python3
"""Every region a task after the first WRITES into L2 (a source the tile DMA loads, or its
result), with its alias bits and the engines of the earlier tasks."""
import collections
from load import load, regions
from overlap import ab

rows = collections.Counter()
for r in load():
    ts = r['tasks']
    for t in ts[1:]:
        rg = regions(t)
        eng = ''.join(p['engine'][0] for p in ts[:t['i']])
        for k, cfg in (('src', t['src_cfg']), ('res', t['res_cfg'])):
            if k not in rg:
                continue
            kind = rg[k][2]
            if kind == 'resident':
                continue
            rows[(t['engine'], k, kind, ab(cfg), eng[-3:], r['case'].split('_')[0])] += 1
for k, v in sorted(rows.items()):
    print(v, k)
