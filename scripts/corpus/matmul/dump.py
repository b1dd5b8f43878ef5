#!/usr/bin/env python3
"""Side-by-side dump of the matmul-family records' register words (research aid)."""
import sys, os, glob, json
sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), '../conv'))
from common import CASES, words, field_names
PATTERNS = ['matmul_*', 'env_mm_r2rb_*', 'chain_base_matmul_d256_s64', 'chain_pair_mm_*']
HELDOUT = ['rrmm_r2rb_*_tx0_*']     # constant-weight matmuls of another family: not used to derive rules


def cases(patterns=None):
    out = []
    for p in patterns or PATTERNS:
        for f in sorted(glob.glob(os.path.join(CASES, p + '.json'))):
            out.append(json.load(open(f)))
    return out
def fname(a):
    f = field_names(a)
    return ','.join(n.split('.', 1)[-1] for n, _, _ in f)[:30] or 'unnamed'
if __name__ == '__main__':
    sel = sys.argv[1] if len(sys.argv) > 1 else None
    cs = [c for c in cases() if sel is None or sel in c['case']]
    cols = []
    for c in cs:
        for i, t in enumerate(c['task_descriptors']):
            cols.append(('%s:%d' % (c['case'][:14], i), words(t), t['header_words']))
    addrs = sorted(set(a for _, w, _ in cols for a in w))
    print('%-36s' % 'addr' + ''.join('%12s' % n[-12:] for n, _, _ in cols))
    for i in range(10):
        print('%-36s' % ('hdr%d' % i) + ''.join('%12s' % (h[i][2:] if i < len(h) else '-') for _, _, h in cols))
    for a in addrs:
        print('%-36s' % ('%05x %s' % (a, fname(a))) + ''.join('%12s' % ('%x' % w[a] if a in w else '.') for _, w, _ in cols))
