#!/usr/bin/env python3
"""Reads an ANEC_ORACLE_REPORT file: per case the differing fields, and the cases whose
only differences are alias bits (and ExeCycles). Usage: report.py REPORT"""
import re
import sys

cases = {}
cur = None
for line in open(sys.argv[1]):
    m = re.match(r'== (\S+)', line)
    if m:
        cur = cases.setdefault(m.group(1), [])
        continue
    if cur is not None and line.strip():
        cur.append(line.strip())
alias = lambda l: 'Alias' in l
exe = lambda l: 'ExeCycles' in l
print('identical:', sum(1 for v in cases.values() if not v))
for c, v in sorted(cases.items()):
    if v and all(alias(l) or exe(l) for l in v) and any(alias(l) for l in v):
        print('ALIAS-ONLY', c)
        for l in v:
            print('   ', l)
for c, v in sorted(cases.items()):
    a = [l for l in v if alias(l)]
    if a and not all(alias(l) or exe(l) for l in v):
        print('alias among other diffs:', c, len(a), 'of', len(v))
