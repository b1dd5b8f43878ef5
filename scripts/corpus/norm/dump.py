"""Dump the norm/softmax/reduce records compactly: per task the words that vary."""
import sys, os, json, glob, re
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '../conv'))
from common import CASES, words
PATS = ['softmax_*', 'norm_softmax_*', 'layer_norm_*', 'norm_layer_norm_*', 'reduce_*',
        'chain_base_softmax_d256_s64', 'chain_base_layer_norm_d256_s64']
def cases():
    out = []
    for p in PATS:
        for f in sorted(glob.glob(os.path.join(CASES, p + '.json'))):
            out.append(json.load(open(f)))
    return out
SHOW = [0x00,0x0c,0x10,0x14,0x24,0x28,0x2c,0x30,0x34,0x38,
        0x8800,0x8804,0x8808,0x880c,0xc800,0xc804,0xc808, 0xc80c, 0xc810,
        0x4804,0x4808,0x480c,0x4810,0x4814,0x4818,0x481c,0x4820,0x4824,0x4828,0x482c,0x4830,0x4834,0x4838,0x483c,0x4840,
        0x13804,0x1380c,0x13810,0x13814,0x13820,0x13824,0x17800,0x17808,0x1780c, 0x1f800]
if __name__ == '__main__':
    pat = sys.argv[1] if len(sys.argv) > 1 else None
    for r in cases():
        if pat and not re.search(pat, r['case']): continue
        print('=' * 20, r['case'], r['parameters'])
        print([l.strip() for l in r['mil'].splitlines() if '=' in l and 'const()' not in l])
        cs = r['constant_section']; print('const', cs['size'], cs['nonzero_bytes'], cs['sha256'][:8], 'weights', r.get('weights'))
        for i, t in enumerate(r['task_descriptors']):
            w = words(t); h = [int(x, 16) if isinstance(x, str) else x for x in t['header_words']]
            print(' T%d size %d h1 %#x h4 %#x h6 %#x h8 %#x h9 %#x' % (i, t['size_bytes'], h[1], h[4], h[6], h[8], h[9]))
            print('   ' + ' '.join('%x=%x' % (a, w[a]) for a in SHOW if a in w))
