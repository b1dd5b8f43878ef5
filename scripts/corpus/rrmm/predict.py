#!/usr/bin/env python3
"""Predict the task plan and every register word of a runtime x runtime matmul (both operands
MIL inputs) as Apple's current H13 compiler emits it, from the MIL text alone, and compare
with the records rrmm_r2rr_*, rrmm_r3rr_*, env_mm_r3rr_*, chain_attn_s64_dh64 and
env_chain_attention_s64_d64 (matmul tasks only; the softmax tasks between the two matmuls of
the chains are not predicted here).

Usage: python3 predict.py [-v]      (-v prints every differing word)
Words not predicted: header word 1 bits 0..15 (ExeCycles; see header-common-l2.md §6).
No rule looks at a case name or at a recorded value of the word it predicts."""
import os, sys, re, json, glob
SHARED = os.environ.get("ANEC_SHARED", os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../../shared"))
CASES = SHARED + '/fixtures/apple-h13-oracles/cases'
VERBOSE = '-v' in sys.argv
PATTERNS = ['rrmm_r2rr_*', 'rrmm_r3rr_*', 'env_mm_r3rr_*', 'chain_attn_s64_dh64', 'env_chain_attention_s64_d64']


def ru(v, a):
    return (v + a - 1) // a * a


def clog2(v):
    return (max(1, v) - 1).bit_length()


# ------------------------------------------------------------------ MIL
def parse(mil):
    sig = re.search(r'main<\w+>\((.*?)\)\s*\{', mil, re.S).group(1)
    shapes, ins = {}, []
    for ty, name in re.findall(r'tensor<fp16, \[([\d, ]+)\]>\s+(\w+)', sig):
        shapes[name] = [int(v) for v in ty.split(',')]
        ins.append(name)
    outs = [o.strip() for o in re.search(r'\}\s*->\s*\((.*?)\);', mil).group(1).split(',')]
    consts = {}
    for name, val in re.findall(r'(\w+) = const\(\)\[name = string\("\w+"\), val = (.*?)\];', mil):
        consts[name] = val
    ops = []
    for ty, name, op, args in re.findall(r'tensor<fp16, \[([\d, ]+)\]> (\w+) = (\w+)\((.*?)\)\[name', mil):
        shapes[name] = [int(v) for v in ty.split(',')]
        ops.append((name, op, dict(re.findall(r'(\w+) = (\w+)', args))))
    return ins, outs, shapes, consts, ops


def const_bool(consts, n):
    return consts.get(n, '') == 'bool(true)'


def fp16_bits(x):
    import struct
    return struct.unpack('<H', struct.pack('<e', x))[0]


def const_fp16(consts, n):
    m = re.match(r'fp16\((.*)\)', consts[n])
    return float.fromhex(m.group(1)) if m.group(1).startswith(('0x', '-0x')) else float(m.group(1))


# ------------------------------------------------------------------ plan
def slice_rows(M):
    """rows per matmul task: the largest 16*2^O (O <= 3) that divides M."""
    mt = 16
    while mt * 2 <= 128 and M % (mt * 2) == 0:
        mt *= 2
    return mt


def plan_matmul(mm, shapes, consts, bar, kernel_in_bar3_from=None, result_to_l2=False, postscale=0x3c00):
    """The tasks of one matmul(x, y) of two runtime tensors. Returns a list of task dicts."""
    name, _, a = mm
    tx, ty = const_bool(consts, a['transpose_x']), const_bool(consts, a['transpose_y'])
    xs, ys = shapes[a['x']][-2:], shapes[a['y']][-2:]
    M, K = (xs[1], xs[0]) if tx else (xs[0], xs[1])
    N = ys[0] if ty else ys[1]
    Mt = slice_rows(M)
    B = Mt // 16
    O = B.bit_length() - 1
    nsl = M // Mt
    split = nsl > 1
    kplane = ru(B * 2 * K, 64)                      # bytes of one NE's kernel chunk
    tasks = []
    direct = kernel_in_bar3_from is None and not tx and B == 1 and (2 * K) % 64 == 0
    if kernel_in_bar3_from is None and not direct:
        # kernel preparation: x (or x^T) written to BAR 3 in the kernel layout (interleave B)
        pe = not tx and not split
        tasks.append(dict(kind='kcopy', pe=pe, tx=tx, M=M, K=K, B=B, kplane=kplane, src_bar=bar[a['x']]))
    if ty:
        tasks.append(dict(kind='ytrans', N=N, K=K, src_bar=bar[a['y']], handoff_dram=direct))
    for s in reversed(range(nsl)):
        tasks.append(dict(kind='mm', M=M, Mt=Mt, r0=s * Mt, K=K, N=N, B=B, O=O, kplane=kplane, ty=ty,
                          kbar=bar[a['x']] if direct else 3, direct=direct, y_bar=bar[a['y']],
                          out_bar=None if result_to_l2 else bar[name], first_mm=(s == nsl - 1),
                          to_l2=result_to_l2, postscale=postscale, kprod=kernel_in_bar3_from,
                          y_handoff=direct))
    return tasks


def plan(rec):
    ins, outs, shapes, consts, ops = parse(rec['mil'])
    names = sorted(ins + outs)
    bar = {n: 4 + i for i, n in enumerate(names)}
    mms = [o for o in ops if o[1] == 'matmul']
    if len(mms) == 1:
        return plan_matmul(mms[0], shapes, consts, bar), None
    # attention chain: matmul -> [mul by scalar] -> softmax -> matmul
    first, second = mms
    scale = 0x3c00
    for n, op, a in ops:
        if op == 'mul' and a['x'] == first[0] and a['y'] in consts:
            scale = fp16_bits(const_fp16(consts, a['y']))
    t1 = plan_matmul(first, shapes, consts, bar, result_to_l2=True, postscale=scale)
    nsoft = rec['program_descriptor']['task_count'] - len(t1) - 1   # softmax tasks: not predicted
    prod = len(t1) + nsoft - 1            # the softmax's last task writes P to BAR 3 as a kernel
    t2 = plan_matmul(second, shapes, consts, bar, kernel_in_bar3_from=prod)
    return t1 + [None] * nsoft + t2, (len(t1), len(t1) + nsoft)


# ------------------------------------------------------------------ words
KDMA_TAIL = [0x80] * 4 + [0] * 4 + [0x40] * 4


def kdma_words(t):
    w = {0x1f800: 0, 0x1f804: 0}
    if t['kind'] != 'mm':
        for i in range(16):
            w[0x1f808 + 4 * i] = 0x80
    else:
        w[0x1f800] = 0x40
        for i in range(16):
            w[0x1f808 + 4 * i] = 0x81
            w[0x1f848 + 4 * i] = (t['r0'] // t['B'] + i) * t['kplane']
            w[0x1f888 + 4 * i] = t['kplane']
    for i, v in enumerate(KDMA_TAIL):
        w[0x1f8c8 + 4 * i] = v
    return w


def regs(t, first):
    w = kdma_words(t)
    c = {0x04: 1, 0x08: 0x22, 0x18: 1, 0x1c: 0x5000a021, 0x20: 0x2041, 0x28: 1, 0x2c: 0, 0x30: 0, 0x3c: 0}
    l2 = {a: 0 for a in range(0x4800, 0x4848, 4)}
    pe = {0x8800: 0, 0x8804: 0, 0x8808: 0, 0x880c: 0}
    ne = {0xc800: 0x82, 0xc804: 0x101c0c, 0xc808: 0, 0xc80c: 0, 0xc810: 0x3c00}
    src = {a: 0 for a in range(0x13800, 0x13870, 4)}
    src.update({0x13800: 0x33881, 0x13804: 0x8880, 0x13838: 0x1002031, 0x13840: 0x100})
    dst = {0x17800: 0xc0, 0x17804: 0, 0x17808: 0, 0x1780c: 0, 0x17810: 0, 0x17814: 0, 0x17818: 0x1000000}
    first_bits = 0x500000 if first else 0
    k = t['kind']
    if k == 'kcopy':
        # source = x as C channels x 1 x W (tx: x itself, C = K rows; else C = M rows)
        C, W = (t['K'], t['M']) if t['tx'] else (t['M'], t['K'])
        c.update({0x00: 1 << 16 | W, 0x0c: C, 0x10: C, 0x14: 1 << 16 | W})
        if t['pe']:
            c.update({0x24: 0x10001, 0x2c: min(max(clog2(W), 4), 9), 0x34: 0x21, 0x38: 0})
            pe.update({0x8804: 0x3c000000, 0x8808: 0x3c000000, 0x880c: 0x3f800000})
            ne = {0xc800: 0x80, 0xc804: 0x100000, 0xc808: 0, 0xc80c: 0, 0xc810: 0}
            ch = min(ru(2 * W, 16), 0x400)
        else:
            c.update({0x24: 0x14001, 0x34: 0x10231301 if t['tx'] else 0x200001, 0x38: 0x100000})
            ch = min(ru(2 * W, 16), 0x100)
        row = C * ch
        l2.update({0x4804: 0x172 | first_bits, 0x480c: ch, 0x4810: row, 0x4814: row, 0x4818: row,
                   0x4830: 0x7a | t['B'] << 8 | first_bits, 0x4834: row})
        pl = ru(2 * W, 64)
        src.update({0x1380c: C * pl, 0x13810: pl, 0x13814: C * pl, 0x13818: C * pl})
        dst.update({0x17800: 0x40003c1, 0x17808: t['kplane'], 0x1780c: t['kplane'],
                    0x17810: t['M'] // t['B'] * t['kplane'], 0x17814: t['M'] // t['B'] * t['kplane'],
                    0x17818: 0x302031 | t['B'] << 24})
    elif k == 'ytrans':
        N, K = t['N'], t['K']
        c.update({0x00: 1 << 16 | K, 0x0c: N, 0x10: N, 0x14: 1 << 16 | K, 0x24: 0x14001,
                  0x34: 0x10200001, 0x38: 0x100000})
        ch = min(ru(2 * K, 16), 0x100)
        rch = ru(2 * N, 16) + 0x10
        l2.update({0x4804: 0x172 | first_bits, 0x4808: K * rch, 0x480c: ch, 0x4810: N * ch,
                   0x4814: N * ch, 0x4818: N * ch, 0x4830: 0x170 | first_bits, 0x4834: 0,
                   0x4838: rch, 0x483c: K * rch, 0x4840: K * rch})
        pl = ru(2 * K, 64)
        src.update({0x1380c: N * pl, 0x13810: pl, 0x13814: N * pl, 0x13818: N * pl})
        if t['handoff_dram']:
            # the transposed y is handed to the next section as BAR 3 (DPC): its DRAM view
            po = ru(2 * N, 64)
            dst.update({0x17808: po, 0x1780c: po, 0x17810: K * po, 0x17814: K * po, 0x17818: 0x1302031})
    else:  # mm
        N, K, Mt = t['N'], t['K'], t['Mt']
        c.update({0x00: 1 << 16 | N, 0x0c: K, 0x10: Mt, 0x14: 1 << 16 | N, 0x1c: 0x5000a021 | t['O'] << 10,
                  0x24: 0x10001, 0x34: 0x200001, 0x38: 0x100000})
        ne.update({0xc800: 0x10082, 0xc804: 0x101c00, 0xc810: t['postscale']})
        if t['ty']:
            rch = ru(2 * N, 16) + 0x10
            row = K * rch
            scfg = 0x100 | (0x20 if t['first_mm'] else 0) | (0x40 if t['y_handoff'] else 0)
            l2.update({0x4804: scfg, 0x480c: rch, 0x4810: row, 0x4814: row})
            if t['y_handoff']:
                po = ru(2 * N, 64)
                src.update({0x13800: 0x48880, 0x1380c: po, 0x13810: po, 0x13814: K * po, 0x13818: K * po})
            else:
                src.update({0x13800: 0x8880, 0x13838: 0x1000000})
        else:
            ch = min(ru(2 * N, 16), 0x100)
            row = K * ch
            l2.update({0x4804: 0x172 | first_bits, 0x480c: ch, 0x4810: row, 0x4814: row, 0x4818: row})
            pl = ru(2 * N, 64)
            src.update({0x1380c: K * pl, 0x13810: pl, 0x13814: K * pl, 0x13818: K * pl})
        if t['to_l2']:
            och = ru(2 * N, 16)
            l2.update({0x4830: 0x140, 0x4834: 0x80, 0x4838: och, 0x483c: Mt * och, 0x4840: Mt * och})
        else:
            l2.update({0x4830: 0x14a if t['ty'] else 0x17a, 0x4834: row})
            po = ru(2 * N, 64)
            dst.update({0x17800: 0x40000c1, 0x17804: t['r0'] * po, 0x17808: t['M'] * po, 0x1780c: po,
                        0x17810: t['M'] * po, 0x17814: t['M'] * po, 0x17818: 0x1302031})
    for d in (c, l2, pe, ne, src, dst):
        w.update(d)
    return w


# ------------------------------------------------------------------ header
def headers(tasks, rng):
    """Header words of the predicted tasks (None entries: tasks not predicted; their size is
    taken from the record only to place the next task, as a compiler knows it)."""
    out = []
    n = len(tasks)
    for i, t in enumerate(tasks):
        if t is None:
            out.append(None)
            continue
        k = t['kind']
        ne = not (k == 'kcopy' and t['pe'])
        reads_dram = k in ('kcopy', 'ytrans') or (k == 'mm' and not t['ty'])
        writes_dram_tile = k == 'kcopy' or (k == 'mm' and not t['to_l2'])
        spc = k == 'mm' and t['ty'] and t['y_handoff']
        dpc = k == 'ytrans' and t['handoff_dram']
        writes_bar3 = k == 'kcopy' or dpc
        tde = k == 'mm' and not t['direct']
        first, last = i == 0, i == n - 1
        w = [0] * (11 if tde else 10)
        w[0] = i | (i > 0) << 24 | last << 25
        w[2] = 0x400 | (8 if first else 0) | (0x22 if last else 0)
        lo = 0x6a if last else (0x68 if first else 0)
        pure_pass = ne and k in ('kcopy', 'ytrans')
        w[4] = (0 if pure_pass else 0xfff8) << 8 | lo
        # sections: a section ends after a task that writes BAR 3 and after the last task
        prev = tasks[i - 1] if i > 0 else None
        prev_ends = i == 0 or (prev is None and t.get('kprod') == i - 1) or (prev is not None and prev['kind'] == 'kcopy') or (prev['kind'] == 'ytrans' and prev['handoff_dram'])
        ends = last or writes_bar3
        w6 = reads_dram << 28 | writes_dram_tile << 29 | spc << 13 | dpc << 14 | tde << 24
        if prev_ends:
            w6 |= 1 << 11
        if ends:
            w6 |= 1 << 12 | 1 << 15
        w[6] = w6
        if k == 'kcopy':
            r0, wb = t['src_bar'], 3
        elif k == 'ytrans':
            r0, wb = t['src_bar'], (3 if dpc else None)
        else:
            r0 = 3 if spc else (t['y_bar'] if not t['ty'] else None)
            wb = t['out_bar']
        w8 = 0
        if r0 is not None:
            w8 |= r0 | 1 << 5
        if wb is not None:
            w8 |= wb << 12 | 1 << 17
        if not last:
            w8 |= 1 << 23
        if ne:
            w8 |= 5 << 24
        w[8] = w8
        w[9] = (0x20 | t['kbar']) if k == 'mm' else 0
        if tde:
            w[10] = t['kprod'] if t['kprod'] is not None else 0
        out.append(w)
    return out


def size_of(t):
    if t['kind'] != 'mm':
        return 504
    return 632 if not t['direct'] else 628


def main():
    tot_eq = tot = 0
    fam = {}
    recs = []
    for p in PATTERNS:
        recs += sorted(glob.glob(os.path.join(CASES, p + '.json')))
    for f in recs:
        r = json.load(open(f))
        tasks, skip = plan(r)
        rt = r['task_descriptors']
        eq = n = 0
        notes = []
        if len(tasks) != len(rt):
            notes.append('task count %d vs %d' % (len(tasks), len(rt)))
        hdr = headers(tasks, skip)
        # offsets / NextPointer / NextSize from predicted sizes (record size for skipped tasks)
        sizes = [size_of(t) if t is not None else rt[i]['size_bytes'] for i, t in enumerate(tasks)]
        offs = [0]
        for s in sizes[:-1]:
            offs.append(ru(offs[-1] + s, 0x100))
        for i, t in enumerate(tasks):
            if t is None or i >= len(rt):
                continue
            hw = hdr[i]
            hw[7] = offs[i + 1] if i + 1 < len(tasks) else 0
            nxt = (sizes[i + 1] // 4 - 1) if i + 1 < len(tasks) else 0
            act_h = [int(x, 16) for x in rt[i]['header_words']]
            act_h[1] &= ~0xffff          # ExeCycles not predicted
            hw[1] = nxt << 16
            for j in range(max(len(hw), len(act_h))):
                pv = hw[j] if j < len(hw) else None
                av = act_h[j] if j < len(act_h) else None
                n += 1
                if pv == av:
                    eq += 1
                else:
                    notes.append('T%d hdr w%d pred=%s act=%s' % (i, j, hex(pv) if pv is not None else '-', hex(av) if av is not None else '-'))
            n += 1
            if sizes[i] == rt[i]['size_bytes']:
                eq += 1
            else:
                notes.append('T%d size pred=%d act=%d' % (i, sizes[i], rt[i]['size_bytes']))
            pw = regs(t, i == 0)
            aw = {}
            for b in rt[i]['blocks'].values():
                for a, v in b['words'].items():
                    aw[int(a, 16)] = int(v, 16)
            for a in sorted(set(pw) | set(aw)):
                n += 1
                if pw.get(a) == aw.get(a):
                    eq += 1
                else:
                    notes.append('T%d %#07x pred=%s act=%s' % (i, a, hex(pw[a]) if a in pw else '-', hex(aw[a]) if a in aw else '-'))
        tot_eq += eq
        tot += n
        print('%-45s tasks %d/%d  words %4d/%4d%s' % (r['case'], len(tasks), len(rt), eq, n,
              '' if skip is None else '  (tasks %d..%d: softmax, not predicted)' % (skip[0], skip[1] - 1)))
        if VERBOSE:
            for s in notes:
                print('      ' + s)
    print('TOTAL words equal %d / %d' % (tot_eq, tot))


if __name__ == '__main__':
    main()
