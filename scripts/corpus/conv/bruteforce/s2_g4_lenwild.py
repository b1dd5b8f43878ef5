"""g4 (B = 1): every polyphase-structured slot map (s2_poly.all_slot_maps), framings F1/F2/F4,
length word wildcard 0..65535.  Research only."""
import hashlib, struct, sys
from s2_poly import *
cases = {c.name: c for c in load_cases()}
c = cases['env_conv_k3_c64_n64_s16_st2_g4_bias1']
t = c.cs['prefix_128_sha256']
maps = all_slot_maps()
n = 0
for key, param in maps.items():
    for fr in sys.argv[1:]:
        blk = make_block(dict(enumerate(key)), fr, 'sl')
        pre = bytearray(section(c, blk, prefix_only=True))
        for ln in range(65536):
            struct.pack_into('<H', pre, 2, ln)
            n += 1
            if hashlib.sha256(pre).hexdigest() == t:
                print('HIT', param, fr, ln, flush=True)
print('tested', n)
