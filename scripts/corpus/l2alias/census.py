#!/usr/bin/env python3
"""Counts of SourceCfg / ResultCfg values and their alias bits over every task."""
import collections
from load import load, cfg_fields

rs = load()
c = collections.Counter()
for r in rs:
    for t in r['tasks']:
        c[('src', t['engine'], t['i'] == 0, hex(t['src_cfg']))] += 1
        c[('res', t['engine'], t['i'] == 0, hex(t['res_cfg']))] += 1
for k, v in sorted(c.items()):
    print(k, v)
print(sum(len(r['tasks']) for r in rs), 'tasks')
