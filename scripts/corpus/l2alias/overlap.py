#!/usr/bin/env python3
"""For every task after the first: its regions and which regions of each earlier task
they overlap, beside the alias bits. Usage: overlap.py [case substring]."""
import sys
from load import load, regions, cfg_fields


def ab(v):
    f = cfg_fields(v)
    return ''.join(c if f[k] else '.' for c, k in (('s', 'cs'), ('r', 'cr'), ('S', 'ps'), ('R', 'pr')))


def ov(a, b):
    return a[0] < b[1] and b[0] < a[1]


def main():
    pat = sys.argv[1] if len(sys.argv) > 1 else ''
    for r in load():
        if pat not in r['case'] or len(r['tasks']) < 2:
            continue
        print(r['case'])
        ts = r['tasks']
        for t in ts:
            rg = regions(t)
            desc = ' '.join('%s[%#x,%#x)%s' % (k, v[0], v[1], v[2][0]) for k, v in rg.items())
            print('  %d %s src %s d%d res %s | %s' % (t['i'], t['engine'], ab(t['src_cfg']), (t['src_cfg'] >> 2) & 3,
                                                   ab(t['res_cfg']), desc))
            for k, v in rg.items():
                hits = []
                for p in ts[:t['i']][::-1]:
                    for pk, pv in regions(p).items():
                        if ov(v, pv):
                            hits.append('%d%s.%s' % (p['i'], p['engine'], pk))
                if hits:
                    print('      %s overlaps %s' % (k, ' '.join(hits)))


if __name__ == '__main__':
    main()
