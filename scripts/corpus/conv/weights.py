#!/usr/bin/env python3
"""Rebuilds Apple's H13 constant section (weights + bias) for every conv record and checks it.

Model (see rules.md): the 16 kernel-DMA channels ("chunks") feed the 16 NEs.  Output channels
are dealt to the NEs in passes of 16 * 2^OCG channels; in a pass NE i gets the block of 2^OCG
consecutive channels starting at pass_base + i * 2^OCG (a final partial pass of R channels gives
each NE R/16).  Grouped conv (NumGroups = g): each group is dealt separately (OCG from Cout/g).
Depthwise (UnicastEn): one "group" of Cout channels with 1 input channel each.

Chunk i = concatenation over groups of a segment; a segment = concatenation over passes of a
block [bias (n halfwords, if the conv has a bias)] [weights ordered cin, kh, kw, oc (oc fastest)];
segments are padded to 64 bytes when NumGroups > 1 (then each group's part is 64-aligned);
the chunk is padded to 64 bytes.  Chunks follow each other in DMA-channel order; section = sum.
Tasks split by output channels: each task's chunks are laid out in task order (see predict.py).
Stride-2 (SparseFmt) kernels: per block [bias][u16 byte length of the rest][per input channel:
bit mask (kernel padded to even size, 4 output-channel lanes minimum per tap slot) + the nonzero
values]; exact for 1x1, sizes/nonzero counts exact for 3x3 (bit order unknown; see rules.md).
"""
import hashlib, struct, sys
from common import load, parse_mil

OCG_MAX = 5


def file_halfwords(weights):
    """halfword e of weights.bin as the README describes (header then fill)."""
    P = weights['payload_bytes']
    fill = 0x3800 if weights['value'] == 'fp16(0x1p-1)' else 0x3801
    hdr = bytearray(128)
    struct.pack_into('<II', hdr, 0, 1, 2)
    struct.pack_into('<IQQ', hdr, 64, 0xDEADBEEF, P, 128)
    h = list(struct.unpack('<64H', hdr))
    return lambda e: h[e] if e < 64 else fill


def rup(v, a):
    return (v + a - 1) // a * a


def geometry(d):
    """conv geometry from the parsed MIL"""
    cout, cin_g, kh, kw = d['w_shape']
    cin = d['in_shape'][1]
    g = d['groups']
    dw = g > 1 and g == cin and cin_g == 1
    return dict(cout=cout, cin=cin, cin_g=cin_g, kh=kh, kw=kw, groups=g, dw=dw,
                hw_groups=1 if dw else g, bias=d['bias'])


def ocg_for(n_per_group, out_px):
    """OCGSize: log2 of the per-NE channel block, capped at 5 and by the accumulator budget."""
    per_ne = max(1, -(-n_per_group // 16))
    o = (per_ne - 1).bit_length()           # ceil(log2)
    o = min(o, OCG_MAX)
    while o > 0 and (1 << o) * out_px > 4096:
        o -= 1
    return o


def passes(n, ocg):
    """list of (pass_base, per_ne) covering n channels"""
    out, base, full = [], 0, 16 << ocg
    while base < n:
        r = min(full, n - base)
        out.append((base, max(1, r // 16) if r < full else 1 << ocg))
        base += r
    return out


def chunk_oc_lists(geo, ocg, cout_range):
    """per chunk: list of (group, [oc...]) blocks in storage order"""
    lo, hi = cout_range
    chunks = [[] for _ in range(16)]
    if geo['dw']:
        groups = [(0, list(range(lo, hi)))]
    else:
        ng = geo['cout'] // geo['hw_groups']
        groups = [(gi, list(range(max(lo, gi * ng), min(hi, (gi + 1) * ng)))) for gi in range(geo['hw_groups'])]
        groups = [x for x in groups if x[1]]
    for gi, ocs in groups:
        for base, per in passes(len(ocs), ocg):
            for i in range(16):
                blk = ocs[base + i * per: base + (i + 1) * per]
                if blk:
                    chunks[i].append((gi, blk))
    return chunks


def is_zero(v):
    return (v & 0x7fff) == 0          # +0 and -0 (0x8000) are skipped by the sparse packer


def sparse_block(geo, h, blk):
    """stride-2 (KernelCfg.SparseFmt) block.  Exact for 1x1 kernels; for 3x3 the sizes and
    nonzero-byte counts are exact but the order of mask bits / values is not established."""
    cin_g, k = geo['cin_g'], geo['kh']
    K = 2 * ((k + 1) // 2)                 # kernel padded to even size: 1 -> 2, 3 -> 4
    per_oc = cin_g * k * k
    lanes = max(len(blk), 4)               # mask lanes per tap slot: at least 4 output channels
    slots_per_word = 16 // lanes if lanes <= 16 else 1
    body = bytearray()
    for ci in range(cin_g):
        # logical slot order: (y, x) of the padded K x K kernel; word/nibble placement:
        # for K == 2 the single real tap sits at nibble 2 of the u16 (bits 8..11) - verified;
        # for K == 4 row-major nibbles are assumed (unverified).
        if K == 2:
            slot_of = {(0, 0): 2}
        else:
            slot_of = {(y, x): y * K + x for y in range(k) for x in range(k)}
        nslots = K * K
        m = 0
        vals = []
        for s in range(nslots):
            taps = [p for p, q in slot_of.items() if q == s]
            for (y, x) in taps:
                for j, oc in enumerate(blk):
                    v = h(oc * per_oc + (ci * k + y) * k + x)
                    if not is_zero(v):
                        m |= 1 << (s * lanes + j)
                        vals.append(v)
        body += m.to_bytes(nslots * lanes // 8, 'little')
        body += struct.pack('<%dH' % len(vals), *vals)
    bias = b''.join(struct.pack('<H', h(oc)) for oc in blk) if geo['bias'] else b''
    return bias + len(body).to_bytes(2, 'little') + bytes(body)


def build_task_chunks(geo, ocg, h, cout_range, sparse=False):
    cin_g, kh, kw = geo['cin_g'], geo['kh'], geo['kw']
    per_oc = cin_g * kh * kw
    wbase = 0  # weights start at file halfword 0 (README)
    out = []
    for blocks in chunk_oc_lists(geo, ocg, cout_range):
        buf = bytearray()
        seg_start = 0
        last_g = None
        for gi, blk in blocks:
            if geo['hw_groups'] > 1 and last_g is not None and gi != last_g:
                buf += bytes(rup(len(buf), 64) - len(buf))
            last_g = gi
            if sparse:
                buf += sparse_block(geo, h, blk)
                continue
            if geo['bias']:
                for oc in blk:
                    buf += struct.pack('<H', h(oc))
            vals = []
            for ci in range(cin_g):
                for y in range(kh):
                    for x in range(kw):
                        for oc in blk:
                            vals.append(h(wbase + oc * per_oc + (ci * kh + y) * kw + x))
            buf += struct.pack('<%dH' % len(vals), *vals)
        buf += bytes(rup(len(buf), 64) - len(buf))
        out.append(bytes(buf))
    return out


def task_plan(geo, out_px):
    """returns list of (cout_lo, cout_hi) per task, in task order, and OCG"""
    cout = geo['cout']
    wbytes = cout * geo['cin_g'] * geo['kh'] * geo['kw'] * 2
    ntask = 1
    # split rule (one example): 2 tasks when the weights exceed 1.5 MiB  (see rules.md)
    while wbytes / ntask > 0x180000:
        ntask *= 2
    per = cout // ntask
    ranges = [(k * per, (k + 1) * per) for k in range(ntask)]
    ranges = ranges[::-1] if ntask > 1 else ranges  # Apple's first task computes the last slice
    n_per_group = 1 if geo['dw'] else per // geo['hw_groups']
    return ranges, ocg_for(n_per_group, out_px)


def build_section(c):
    d = parse_mil(c['mil'])
    geo = geometry(d)
    h = file_halfwords(c['weights'])
    out_px = d['out_shape'][2] * d['out_shape'][3]
    ranges, ocg = task_plan(geo, out_px)
    sparse = d['strides'] != [1, 1]
    tasks = [build_task_chunks(geo, ocg, h, r, sparse) for r in ranges]
    return b''.join(b''.join(t) for t in tasks), tasks, ocg, d


def check(c, sec):
    cs = c['constant_section']
    nz = sum(1 for b in sec if b)
    res = dict(size=len(sec) == cs['size'], sha=hashlib.sha256(sec).hexdigest() == cs['sha256'],
               prefix=hashlib.sha256(sec[:128]).hexdigest() == cs['prefix_128_sha256'],
               nonzero=nz == cs['nonzero_bytes'])
    return res, nz


def main():
    allok = 0
    cases = load()
    for c in cases:
        sec, tasks, ocg, d = build_section(c)
        res, nz = check(c, sec)
        ok = all(res.values())
        allok += ok
        cs = c['constant_section']
        print('%-8s %-52s size %7d/%7d nz %7d/%7d prefix %s sha %s' % (
            'MATCH' if ok else 'MISMATCH', c['case'], len(sec), cs['size'], nz, cs['nonzero_bytes'],
            'ok' if res['prefix'] else 'NO', 'ok' if res['sha'] else 'NO'))
    print('%d/%d match' % (allok, len(cases)))


if __name__ == '__main__':
    main()
