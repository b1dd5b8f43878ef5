#!/usr/bin/env python3
"""The alias bits of a SourceCfg whose sources are all read in place (the recipes' links;
anec writes them per recipe step, `hazard.py` takes them as given). Rule tested: the bits
name what the sources overlap of the task just before: its engine's Rslt for its result,
its engine's Src for a source it loaded (not one it read in place) when it ran on the
other engine; a nonzero Dependent replaces them. With --older-pe, also AliasPlanarRslt when
a source overlaps the result of an older planar-engine task (whatever Dependent says).
Prints the count and every exception."""
from load import load, regions
from hazard import bitset, ov

import sys
OLDER_PE = '--older-pe' in sys.argv
n_tasks = n_bits = n_ok = 0
bad = []
for r in load():
    ts = r['tasks']
    for t in ts[1:]:
        rg = regions(t)
        reads = [rg[k] for k in ('src', 'src2') if k in rg and rg[k][2] == 'resident']
        loads = [rg[k] for k in ('src', 'src2') if k in rg and rg[k][2] == 'load']
        if not t['has_l2'] or not reads or loads:
            continue
        n_tasks += 1
        act = bitset(t['src_cfg'])
        n_bits += len(act)
        p = ts[t['i'] - 1]
        prg = regions(p)
        e = 'c' if p['engine'] == 'NE' else 'p'
        pred = set()
        if not (t['src_cfg'] >> 2) & 3:
            if p['engine'] != t['engine'] and any(ov(s, prg[k]) for s in reads for k in ('src', 'src2')
                                                  if k in prg and prg[k][2] == 'load'):
                pred.add(e + 's')
            if 'res' in prg and any(ov(s, prg['res']) for s in reads):
                pred.add(e + 'r')
        if OLDER_PE and any(ov(s, regions(q)['res']) for s in reads for q in ts[:t['i'] - 1]
                            if q['engine'] == 'PE' and 'res' in regions(q)):
            pred.add('pr')
        n_ok += len(act & pred)
        if act != pred:
            bad.append((r['case'], t['i'], t['engine'], 'Dependent %d' % ((t['src_cfg'] >> 2) & 3), 'Apple', sorted(act), 'rule', sorted(pred)))
print('tasks reading all sources in place: %d; alias bits Apple sets there: %d; the rule gives %d of them; '
      'tasks where the rule differs: %d' % (n_tasks, n_bits, n_ok, len(bad)))
for b in bad:
    print('  ', *b)
