"""Polyphase hypotheses for the stride-2 3x3 sparse kernel (research only).

slot(t) = PH[phase] * 4 + SUB[sub] where, for tap t = (ky, kx) shifted by (dy, dx) inside the
padded 4x4 kernel (optionally transposed), phase = (ky' % 2, kx' % 2), sub = (ky' // 2, kx' // 2).
Framings (per block, after [bias][len]):
  F1: per cin: [mask 16 slots x L lanes][values of the cin]
  F2: per cin, per phase: [mask 4 slots x L lanes][values of the phase]
  F3: per phase, per cin: [mask of phase][values]
  F4: per cin: [values][mask]
Value order: 'sl' slot-major, lane fastest; 'ls' lane-major, slot fastest.
"""
import itertools, struct, hashlib, sys
from s2lib import *


def tap_slots(PH, SUB, dy, dx, tr):
    out = {}
    for t in range(9):
        ky, kx = divmod(t, 3)
        if tr:
            ky, kx = kx, ky
        ky += dy; kx += dx
        ph = (ky % 2) * 2 + (kx % 2)
        sb = (ky // 2) * 2 + (kx // 2)
        out[t] = PH[ph] * 4 + SUB[sb]
    return out


def all_slot_maps():
    seen = {}
    for PH in itertools.permutations(range(4)):
        for SUB in itertools.permutations(range(4)):
            for dy in (0, 1):
                for dx in (0, 1):
                    for tr in (0, 1):
                        m = tap_slots(PH, SUB, dy, dx, tr)
                        key = tuple(m[t] for t in range(9))
                        seen.setdefault(key, (PH, SUB, dy, dx, tr))
    return seen


NV = {}


def make_block(slot, framing, vorder, lenmode='bytes', maskbits='slot_lane', biaspos='front'):
    inv = {}
    for t, s in slot.items():
        inv[s] = t

    def enc_mask(bits, nslots, L):
        m = 0
        for (s, j) in bits:
            if maskbits == 'slot_lane':
                m |= 1 << (s * L + j)
            else:  # lane-major
                m |= 1 << (j * nslots + s)
        return m.to_bytes(nslots * L // 8, 'little')

    def part(case, blk, ci, slots, base):
        L = max(len(blk), 4)
        bits = []; vals = []
        order = [(s, j) for s in slots for j in range(len(blk))] if vorder == 'sl' else \
                [(s, j) for j in range(len(blk)) for s in slots]
        for (s, j) in order:
            if s in inv:
                v = case.W(blk[j], ci, inv[s])
                if not is_zero(v):
                    bits.append((s - base, j)); vals.append(v)
        return enc_mask(bits, len(slots), L), struct.pack('<%dH' % len(vals), *vals)

    def block(case, blk, pre):
        body = bytearray()
        ncin = case.cin_g if not pre else min(case.cin_g, 12)
        if framing in ('F1', 'F4'):
            for ci in range(ncin):
                m, v = part(case, blk, ci, range(16), 0)
                body += (m + v) if framing == 'F1' else (v + m)
        elif framing == 'F2':
            for ci in range(ncin):
                for p in range(4):
                    m, v = part(case, blk, ci, range(4 * p, 4 * p + 4), 4 * p)
                    body += m + v
        elif framing == 'F3':
            for p in range(4):
                for ci in range(ncin):
                    m, v = part(case, blk, ci, range(4 * p, 4 * p + 4), 4 * p)
                    body += m + v
        if pre and ncin < case.cin_g:
            # length of the whole block is needed: compute it from counts
            L = max(len(blk), 4)
            key = (case.name, tuple(blk))
            if key not in NV:
                NV[key] = sum(1 for ci in range(case.cin_g) for t in range(9) for oc in blk if not is_zero(case.W(oc, ci, t)))
            nv = NV[key]
            n = case.cin_g * 2 * L + 2 * nv
        else:
            n = len(body)
        if lenmode == 'bytes':
            ln = n
        elif lenmode == 'words':
            ln = n // 2
        elif lenmode == 'vals':
            ln = (n - case.cin_g * 2 * max(len(blk), 4)) // 2
        elif lenmode == 'valbytes':
            ln = (n - case.cin_g * 2 * max(len(blk), 4))
        lw = struct.pack('<H', ln)
        bias = b''.join(struct.pack('<H', case.bias(oc)) for oc in blk) if case.geo['bias'] else b''
        if biaspos == 'front':
            return bias + lw + bytes(body)
        else:
            return lw + bias + bytes(body)
    return block


if __name__ == '__main__':
    sys.stdout.reconfigure(line_buffering=True)
    cases = load_cases()
    maps = all_slot_maps()
    print(len(maps), 'distinct slot maps')
    hits = 0; tested = 0
    nzok = {}
    for key, param in maps.items():
        slot = dict(enumerate(key))
        for framing in ('F1', 'F2', 'F3', 'F4'):
            for vorder in ('sl', 'ls'):
                for maskbits in ('slot_lane', 'lane_slot'):
                    pres = []
                    blkfn = make_block(slot, framing, vorder, 'bytes', maskbits)
                    okn = 0
                    for c in cases:
                        pre = section(c, blkfn, prefix_only=True)
                        pres.append(pre)
                        okn += nz(pre) == c.cs['prefix_128_nonzero_bytes']
                    nzok[(key, framing, vorder, maskbits)] = okn
                    for lenmode in ('bytes', 'words', 'vals', 'valbytes'):
                        for biaspos in ('front', 'after'):
                            blkfn = make_block(slot, framing, vorder, lenmode, maskbits, biaspos)
                            tested += 1
                            for c in cases:
                                pre = section(c, blkfn, prefix_only=True)
                                if check_prefix(c, pre):
                                    hits += 1
                                    print('HIT', c.name, param, framing, vorder, maskbits, lenmode, biaspos)
    print('tested', tested, 'hits', hits)
    from collections import Counter
    print(Counter(nzok.values()))
    best = [k for k, v in nzok.items() if v >= 4]
    for b in best[:40]:
        print(nzok[b], maps[b[0]], b[1:])
