#!/usr/bin/env python3
"""Compact per-task view of records: python3 brief.py <glob> ..."""
import os, sys, json, glob
SHARED = os.environ.get("ANEC_SHARED", os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../../shared"))
CASES = SHARED + '/fixtures/apple-h13-oracles/cases'
def h(v): return '%x' % v
for pat in sys.argv[1:]:
  for f in sorted(glob.glob(os.path.join(CASES, pat + '.json'))):
    r = json.load(open(f))
    print('=====', r['case'])
    for k, t in enumerate(r['task_descriptors']):
        w = {}
        for b in t['blocks'].values():
            for a, v in b['words'].items():
                w[int(a, 16)] = int(v, 16)
        g = lambda a: h(w.get(a, 0)) if a in w else '-'
        hw = [int(x, 16) for x in t['header_words']]
        w8 = hw[8]
        bars = 'R0=%s R1=%s W=%s K=%s' % (w8 & 31 if w8 >> 5 & 1 else '-', w8 >> 6 & 31 if w8 >> 11 & 1 else '-',
                                          w8 >> 12 & 31 if w8 >> 17 & 1 else '-', hw[9] & 31 if hw[9] >> 5 & 1 else '-')
        print(' T%d %s w6=%s %s exe=%d %s' % (k, 'PE' if w.get(0xc804) == 0x100000 else 'NE', h(hw[6]), bars, hw[1] & 0xffff,
              ('w10=%d' % hw[10]) if len(hw) > 10 else ''))
        print('   C: in=%s cin=%s cout=%s out=%s conv=%s grp=%s th=%s 2c=%s 30=%s cfg=%s dpe=%s ch=%s' % tuple(g(a) for a in (0, 0xc, 0x10, 0x14, 0x1c, 0x24, 0x28, 0x2c, 0x30, 0x34, 0x3c, 8)))
        print('   L2: ' + ' '.join(g(a) for a in range(0x4800, 0x4848, 4)))
        print('   PE: ' + ' '.join(g(a) for a in range(0x8800, 0x8810, 4)) + '  NE: ' + ' '.join(g(a) for a in range(0xc800, 0xc814, 4)))
        print('   src: ' + ' '.join(g(a) for a in range(0x13800, 0x13844, 4)))
        print('   dst: ' + ' '.join(g(a) for a in range(0x17800, 0x1781c, 4)))
        kd = [w.get(a) for a in range(0x1f800, 0x1f8f8, 4)]
        if 0x1f848 in w:
            print('   kdma: %s cfg=%s base=%s size=%s' % (g(0x1f800), g(0x1f808), [h(w[0x1f848 + 4 * i]) for i in range(16)], [h(w[0x1f888 + 4 * i]) for i in range(16)]))
        else:
            print('   kdma: %s cfg=%s (no kernel)' % (g(0x1f800), g(0x1f808)))
