"""Depthwise (B = 1) stride-2 3x3: every 9-of-16 nibble slot set (lane 0 = bit 0 of the slot's
nibble), every placement of taps 0 and 2 on it, framing by mask groups of 16/32/64 bits each
followed by its values (slot order), block padding 0/4/8, and length conventions
(body bytes + c for c in -8..16, value bytes, value count, body words).  Research only."""
import itertools, hashlib, struct
from s2lib import *
cases = {c.name: c for c in load_cases()}
c = cases['conv_probe_k3_c256_n256_s16_st2_g256_bias1_same']
t = c.cs['prefix_128_sha256']
F = 0x3800
biases = [1, 0, 0xBEEF, 0, F]


def body(S, vals_of, gb):
    out = bytearray()
    per = gb // 4
    for g0 in range(0, 16, per):
        m = 0; vs = []
        for s in range(g0, g0 + per):
            if s in S and vals_of(s):
                m |= 1 << ((s - g0) * 4); vs.append(vals_of(s))
        out += m.to_bytes(per // 2, 'little') + struct.pack('<%dH' % len(vs), *vs)
    return bytes(out)


lenfns = {('body%+d' % k): (lambda b, nv, k=k: len(b) + k) for k in (-4, -2, 0, 2, 4)}
lenfns.update({'valbytes': lambda b, nv: 2 * nv, 'nvals': lambda b, nv: nv, 'words': lambda b, nv: len(b) // 2})
n = 0
for S in itertools.combinations(range(16), 9):
    Sset = set(S)
    for a, b in itertools.permutations(S, 2):
        for gb in (16, 32, 64):
            b0 = body(Sset, lambda s: {a: 1, b: 2}.get(s, 0), gb)
            bf = body(Sset, lambda s: F, gb)
            for bpad in (0, 4, 8):
                for ln, lf in lenfns.items():
                    out = bytearray()
                    for i, bias in enumerate(biases):
                        bd, nv = (b0, 2) if i == 0 else (bf, 9)
                        blk = struct.pack('<HH', bias, lf(bd, nv) & 0xffff) + bd
                        if bpad:
                            blk += bytes(rup(len(blk), bpad) - len(blk))
                        out += blk
                    n += 1
                    if hashlib.sha256(bytes(out[:128])).hexdigest() == t:
                        print('HIT', S, a, b, gb, bpad, ln, flush=True)
print('tested', n)
