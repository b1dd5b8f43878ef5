"""Depthwise: as s2_dw_general.py but the single channel on lane 1, 2 or 3 of each slot nibble
(bit 4*slot + lane); groups of 16/64 mask bits, padding 0/4, length = body bytes or +2.  Research only."""
import itertools, hashlib, struct
from s2lib import *
cases = {c.name: c for c in load_cases()}
c = cases['conv_probe_k3_c256_n256_s16_st2_g256_bias1_same']
t = c.cs['prefix_128_sha256']
F = 0x3800
biases = [1, 0, 0xBEEF, 0, F]


def body(S, vals_of, gb, lane):
    out = bytearray(); per = gb // 4
    for g0 in range(0, 16, per):
        m = 0; vs = []
        for s in range(g0, g0 + per):
            if s in S and vals_of(s):
                m |= 1 << ((s - g0) * 4 + lane); vs.append(vals_of(s))
        out += m.to_bytes(per // 2, 'little') + struct.pack('<%dH' % len(vs), *vs)
    return bytes(out)


n = 0
for S in itertools.combinations(range(16), 9):
    Sset = set(S)
    for a, b in itertools.permutations(S, 2):
        for lane in (1, 2, 3):
            for gb in (16, 64):
                b0 = body(Sset, lambda s: {a: 1, b: 2}.get(s, 0), gb, lane)
                bf = body(Sset, lambda s: F, gb, lane)
                for bpad in (0, 4):
                    for k in (0, 2):
                        out = bytearray()
                        for i, bias in enumerate(biases):
                            bd = b0 if i == 0 else bf
                            blk = struct.pack('<HH', bias, len(bd) + k) + bd
                            if bpad:
                                blk += bytes(rup(len(blk), bpad) - len(blk))
                            out += blk
                        n += 1
                        if hashlib.sha256(bytes(out[:128])).hexdigest() == t:
                            print('HIT', S, a, b, lane, gb, bpad, k, flush=True)
print('tested', n)
