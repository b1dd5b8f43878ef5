#!/usr/bin/env python3
"""Side-by-side dump of the task words of one record: python3 dump.py <case> [...]"""
import os, sys, json
SHARED = os.environ.get("ANEC_SHARED", os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../../shared"))
CASES = SHARED + '/fixtures/apple-h13-oracles/cases'
for case in sys.argv[1:]:
    r = json.load(open(os.path.join(CASES, case + '.json')))
    ts = r['task_descriptors']
    print('=====', case, 'tasks', len(ts))
    print('%-8s' % 'hdr', ' '.join('%10s' % i for i in range(len(ts))))
    for i in range(11):
        print('%-8s' % ('w%d' % i), ' '.join('%10s' % (t['header_words'][i] if i < len(t['header_words']) else '-') for t in ts))
    print('records', [[(hex(int(x['header'],16)) if isinstance(x['header'],str) else x['header']) for x in t['records']] for t in ts][:1])
    allw = {}
    for k, t in enumerate(ts):
        for b in t['blocks'].values():
            for a, v in b['words'].items():
                allw.setdefault(int(a, 16), {})[k] = int(v, 16)
    for a in sorted(allw):
        row = allw[a]
        vals = ['%10s' % (hex(row[k]) if k in row else '.') for k in range(len(ts))]
        if a >= 0x1f848 and a < 0x1f8c8 and len(set(row.values())) == 1 and 0 in row.values():
            pass
        print('%-8s' % hex(a), ' '.join(vals))
