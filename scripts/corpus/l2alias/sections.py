#!/usr/bin/env python3
"""Header word 6 flags (SPL 11, TSR 12, TSE 15, SPC 13, DPC 14, KPC 10) of every task
beside its alias bits."""
import sys
from load import load
from overlap import ab

pat = sys.argv[1] if len(sys.argv) > 1 else ''
for r in load():
    if pat not in r['case'] or len(r['tasks']) < 2:
        continue
    print(r['case'])
    for t in r['tasks']:
        h6 = t['hw'][6]
        fl = ' '.join(n for n, b in (('KPC', 10), ('SPL', 11), ('TSR', 12), ('SPC', 13), ('DPC', 14), ('TSE', 15)) if h6 >> b & 1)
        print('  %d %s %-8s src %s %s res %s %s  h6=%#x %s' % (t['i'], t['engine'], hex(t['src_cfg']), ab(t['src_cfg']), t['src_cfg'] & 3,
                                                       ab(t['res_cfg']), t['res_cfg'] & 3, h6, fl))
