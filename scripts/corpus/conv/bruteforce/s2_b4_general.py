"""B = 4 cases (c64 g1 with bias, c512 without): every 9-of-16 slot set, every placement of
taps 0 and 2 (the only taps whose lane 0 is nonzero in cin 0), framings F1 (64-bit mask then the
values) and F2 (u16 mask group, its values, x4), value order slot-major or lane-major, and a list
of length-word candidates.  Research only."""
import itertools, hashlib, struct, sys
from s2lib import *

cases = {c.name: c for c in load_cases()}
C64 = cases['env_conv_k3_c64_n64_s16_st2_g1_bias1']
C512 = cases['conv_probe_k3_c512_n64_s16_st2_g1_bias0_same']
F = 0x3800


def cin_body(S, lane0, framing, vorder):
    """S: sorted used slots; lane0: dict slot -> value for lane 0 (missing = zero)"""
    out = bytearray()
    groups = [range(0, 16)] if framing == 'F1' else [range(4 * g, 4 * g + 4) for g in range(4)]
    for gr in groups:
        m = 0; vals = []
        used = [s for s in gr if s in S]
        order = [(s, j) for s in used for j in range(4)] if vorder == 'sl' else [(s, j) for j in range(4) for s in used]
        for s, j in order:
            v = (lane0.get(s, 0) if j == 0 else F)
            if v:
                m |= 1 << ((s - gr[0]) * 4 + j); vals.append(v)
        out += m.to_bytes(len(gr) // 2, 'little') + struct.pack('<%dH' % len(vals), *vals)
    return bytes(out)


def main():
    t64 = C64.cs['prefix_128_sha256']; t512 = C512.cs['prefix_128_sha256']
    bias = struct.pack('<4H', 1, 0, 2, 0)
    # length candidates: bytes/words/values/value bytes, +-padding variants
    L64 = {5006, 5008, 5016, 5018, 5020, 2503, 2504, 2247, 4494, 512, 64, 5014, 5004, 2508, 2509}
    L512 = {40844, 40848, 20422, 20424, 18374, 36748, 4096, 512, 40846, 40842}
    n = 0
    for S in itertools.combinations(range(16), 9):
        Sset = set(S)
        for a, b in itertools.permutations(S, 2):
            for framing in ('F1', 'F2'):
                for vorder in ('sl', 'ls'):
                    b0 = cin_body(Sset, {a: 1, b: 2}, framing, vorder)
                    b1 = cin_body(Sset, {}, framing, vorder)
                    body = b0 + b1 + b1
                    for ln in L64:
                        n += 1
                        if hashlib.sha256((bias + struct.pack('<H', ln) + body)[:128]).hexdigest() == t64:
                            print('HIT c64', S, a, b, framing, vorder, ln, flush=True)
                    for ln in L512:
                        if hashlib.sha256((struct.pack('<H', ln) + body)[:128]).hexdigest() == t512:
                            print('HIT c512', S, a, b, framing, vorder, ln, flush=True)
    print('tested', n)


main()
