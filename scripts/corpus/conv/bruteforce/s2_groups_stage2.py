"""Stage 2 of s2_groups.py: hash the nz survivors (natural length, then length wildcard on the
given case index)."""
import pickle, sys, hashlib, struct
from s2_groups import *
cases = load_cases()
surv = pickle.load(open('/tmp/s2_groups_surv.pkl', 'rb'))
wild = [int(a) for a in sys.argv[1:]]
nat = 0
for key, param, gb, vorder, bpad in surv:
    fn = make_block(dict(enumerate(key)), gb, vorder, bpad)
    for i, c in enumerate(cases):
        pre = section(c, fn, prefix_only=True)
        if check_prefix(c, pre):
            print('HIT natural', SHORT[i], param, gb, vorder, bpad, flush=True)
        if i in wild:
            off = 2 * len(c.chunks[0][0][1]) if c.geo['bias'] else 0
            p = bytearray(pre); t = c.cs['prefix_128_sha256']
            for ln in range(65536):
                struct.pack_into('<H', p, off, ln)
                if hashlib.sha256(p).hexdigest() == t:
                    print('HIT wild', SHORT[i], param, gb, vorder, bpad, ln, flush=True)
print('done', len(surv))
