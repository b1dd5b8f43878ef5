"""Generalised framing search (research only).

Block = [bias (B fp16) if bias][u16 length][body], body = per cin, per mask group of `gb` bits
(gb/L slots, L = max(B, 4) lanes, lane j = bit j of the slot's L-bit field): [mask group][values
of that group], value order 'sl' (slot-major, lane fastest), 'ls' (lane-major) or 'rt'
(raster tap order, lane fastest); blocks padded to `bpad` bytes.  Slot maps: polyphase-structured
(s2_poly.all_slot_maps) plus every order-preserving 9-of-16 placement.
Stage 1 filters on the five prefix nonzero counts; stage 2 hashes the survivors with the length
word as a wildcard (0..65535) on c512 (no bias) and c64 g1, then the others."""
import itertools, hashlib, struct, sys
from s2lib import *
from s2_poly import all_slot_maps

NV = {}


def make_block(slot, gb, vorder, bpad):
    inv = {s: t for t, s in slot.items()}

    def block(case, blk, pre):
        L = max(len(blk), 4)
        per = max(1, gb // L)
        body = bytearray()
        ncin = min(case.cin_g, 12) if pre else case.cin_g
        for ci in range(ncin):
            for g0 in range(0, 16, per):
                slots = [s for s in range(g0, g0 + per) if s in inv]
                if vorder == 'sl':
                    order = [(s, j) for s in slots for j in range(len(blk))]
                elif vorder == 'ls':
                    order = [(s, j) for j in range(len(blk)) for s in slots]
                else:
                    order = [(s, j) for s in sorted(slots, key=lambda s: inv[s]) for j in range(len(blk))]
                m = 0; vals = []
                for s, j in order:
                    v = case.W(blk[j], ci, inv[s])
                    if not is_zero(v):
                        m |= 1 << ((s - g0) * L + j); vals.append(v)
                body += m.to_bytes(per * L // 8, 'little') + struct.pack('<%dH' % len(vals), *vals)
        if pre and ncin < case.cin_g:
            key = (case.name, tuple(blk))
            if key not in NV:
                NV[key] = sum(1 for ci in range(case.cin_g) for t in range(9) for oc in blk if not is_zero(case.W(oc, ci, t)))
            n = case.cin_g * 2 * L + 2 * NV[key]
        else:
            n = len(body)
        bias = b''.join(struct.pack('<H', case.bias(oc)) for oc in blk) if case.geo['bias'] else b''
        out = bias + struct.pack('<H', n) + bytes(body)
        return out + bytes(rup(len(out), bpad) - len(out)) if bpad else out
    return block


def slot_maps():
    maps = {k: ('poly',) + v for k, v in all_slot_maps().items()}
    for S in itertools.combinations(range(16), 9):
        maps.setdefault(S, ('flat', S))
    return maps


if __name__ == '__main__':
    sys.stdout.reconfigure(line_buffering=True)
    cases = load_cases()
    maps = slot_maps()
    print(len(maps), 'maps')
    surv = []
    from collections import Counter
    cnt = Counter(); tested = 0
    for key, param in maps.items():
        slot = dict(enumerate(key))
        for gb in (16, 32, 64):
            for vorder in ('sl', 'ls', 'rt'):
                for bpad in (0, 4, 8):
                    tested += 1
                    fn = make_block(slot, gb, vorder, bpad)
                    ok = []
                    for c in cases:
                        ok.append(nz(section(c, fn, prefix_only=True)) == c.cs['prefix_128_nonzero_bytes'])
                        if not ok[-1] and sum(ok) < len(ok) - 1:
                            break
                    cnt[sum(ok)] += 1
                    if sum(ok) == 5:
                        surv.append((key, param, gb, vorder, bpad))
    print('stage1 tested', tested, cnt, 'survivors', len(surv))
    for s in surv[:50]:
        print('  ', s)
    import pickle
    pickle.dump(surv, open('/tmp/s2_groups_surv.pkl', 'wb'))
