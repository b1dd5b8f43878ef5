#!/usr/bin/env python3
"""Predicts every task's header and register words of Apple's (macOS 26) H13 convolution programs
from the MIL program alone, and compares with the records.  Rules: rules.md.  Usage:
  python3 predict.py            # all conv records
  python3 predict.py -v CASE    # one case, every word
"""
import sys, math
from common import load, parse_mil, words, decode_word, field_names, BLOCK_ORDER
import weights as W

L2_CAPACITY = 0x100000          # bytes of L2 a task's source + result must fit in (fitted, see rules.md)
EXE_BYTES_PER_UNIT = 1024000 / 30   # ExeCycles = floor(DMA bytes / this); feasible (34044.7, 34192.7]
KMEM_SSM_MAX = 0x12080          # largest per-NE kernel chunk seen with SmallSourceMode (0x20000 seen without)


def rup(v, a):
    return (v + a - 1) // a * a


def plan(d):
    """network -> list of task dicts"""
    n, cin, H, Wd = d['in_shape']
    _, cout, Ho, Wo = d['out_shape']
    cout_w, cin_g, kh, kw = d['w_shape']
    g = d['groups']
    sy, sx = d['strides']
    dw = g > 1 and g == cin and cin_g == 1
    ng = g if (g > 1 and not dw) else 1
    # padding
    if d['pad_type'] == 'same':
        pt = max((Ho - 1) * sy + kh - H, 0) // 2
        pl = max((Wo - 1) * sx + kw - Wd, 0) // 2
    elif d['pad_type'] == 'valid':
        pt = pl = 0
    else:  # custom: [top, bottom, left, right]
        pt, pl = d['pad'][0], d['pad'][2]
    geo = W.geometry(d)
    # L2 layout of the source
    chs = rup(Wd * 2, 16)
    cin_t = cin_g if ng > 1 else cin
    raw = cin_t * chs
    pad = 0x30 if (sy == 1 and raw >= 0x400) else 0x20
    row = raw + pad
    src_l2 = row * H
    # task split: smallest power-of-two number of output-channel slices whose result fits beside the source
    ntask = 1
    while src_l2 + (cout // ntask) * rup(Wo * 2, 16) * Ho > L2_CAPACITY and cout // ntask > 16:
        ntask *= 2
    per = cout // ntask
    ranges = [(k * per, (k + 1) * per) for k in range(ntask)]
    if ntask > 1:
        ranges = ranges[::-1]          # observed: Apple's first task computes the last slice
    out_px = Ho * Wo
    n_per_group = 1 if dw else per // ng
    ocg = W.ocg_for(n_per_group, out_px)
    sparse = (sy == 2 or sx == 2)
    tasks = []
    koff = 0
    for ti, (lo, hi) in enumerate(ranges):
        tasks.append(dict(index=ti, count=ntask, lo=lo, hi=hi))
    return dict(cin=cin, H=H, W=Wd, cout=cout, Ho=Ho, Wo=Wo, kh=kh, kw=kw, sy=sy, sx=sx, pt=pt, pl=pl,
                g=g, ng=ng, dw=dw, cin_g=cin_g, cin_t=cin_t, chs=chs, raw=raw, row=row, src_l2=src_l2,
                ocg=ocg, sparse=sparse, tasks=tasks, bias=d['bias'], relu=d['relu'], geo=geo)



def predict(c):
    d = parse_mil(c['mil'])
    P = plan(d)
    h = W.file_halfwords(c['weights'])
    out = []
    ntask = len(P['tasks'])
    sizes_all = []
    for t in P['tasks']:
        # chunk sizes come from the packing model of weights.py (stride 2: sparse format, whose
        # sizes depend on how many weights are zero)
        sz = [len(x) for x in W.build_task_chunks(P['geo'], P['ocg'], h, (t['lo'], t['hi']), P['sparse'])]
        sizes_all.append(sz)
    koff = 0
    task_bytes = []
    for t, sz in zip(P['tasks'], sizes_all):
        first, last = t['index'] == 0, t['index'] == ntask - 1
        reads_src = first                      # later slices reuse the L2-resident source
        w = {}
        # ---- kernel DMA (0x1f800)
        w[0x1f800] = 0x40 | (0x20 if P['sparse'] else 0)
        w[0x1f804] = 0
        base = koff
        for i in range(16):
            w[0x1f808 + 4 * i] = 0x81
            w[0x1f848 + 4 * i] = base
            w[0x1f888 + 4 * i] = sz[i]
            base += sz[i]
        kbytes = base - koff
        koff = base
        for i in range(4):
            w[0x1f8c8 + 4 * i] = 0x80
            w[0x1f8d8 + 4 * i] = 0
            w[0x1f8e8 + 4 * i] = 0x40
        # ---- common (0x00000)
        cout_t = (t['hi'] - t['lo']) // P['ng'] if P['ng'] > 1 else (t['hi'] - t['lo'])
        w[0x00] = (P['H'] << 16) | P['W']
        w[0x04] = 1
        w[0x08] = 0x22
        w[0x0c] = P['cin_t']
        w[0x10] = cout_t
        w[0x14] = (P['Ho'] << 16) | P['Wo']
        w[0x18] = 1
        w[0x1c] = (P['kw'] | P['kh'] << 5 | P['ocg'] << 10 | P['sx'] << 13 | P['sy'] << 15 |
                   P['pl'] << 17 | P['pt'] << 22 | 1 << 28 | 1 << 30)
        w[0x20] = 0x2041
        w[0x24] = P['ng'] | (int(P['dw']) << 14) | 1 << 16
        w[0x28] = P['Ho']
        w[0x2c] = 0
        w[0x30] = 0
        kmax = max(sz)
        ssm = P['Wo'] <= 8 and kmax <= KMEM_SSM_MAX
        if ssm:
            shp = shn = shx = 4
        else:
            shx = min(3, max(0, P['Ho'].bit_length() - 1))
            heavy = P['cin_g'] * P['kh'] * P['kw'] >= 256
            shp = shn = shx if heavy else 0
        w[0x34] = 1 | int(ssm) << 2 | shp << 8 | shn << 12 | shx << 16 | 4 << 19
        w[0x38] = 0x100000
        w[0x3c] = 0
        # ---- tile DMA source (0x13800)
        rs = rup(P['W'] * 2, 64)
        for a in range(0x13800, 0x13870, 4):
            w[a] = 0
        if reads_src:
            w[0x13800] = 0x33881
            w[0x1380c] = rs
            w[0x13810] = rs * P['H']
            w[0x13814] = rs * P['H'] * P['cin']
            w[0x13818] = rs * P['H'] * (P['cin_t'] if P['ng'] > 1 else P['cin'])
            w[0x13838] = 0x1002031
        else:
            w[0x13800] = 0x8880
            w[0x13838] = 0x1000000
        w[0x13804] = 0x8880
        w[0x13840] = 0x100
        # ---- L2 (0x04800)
        for a in range(0x4800, 0x4848, 4):
            w[a] = 0
        if ntask == 1:
            w[0x4804] = 0x500172
        else:
            w[0x4804] = 0x500171 if first else 0x100
        w[0x480c] = P['chs']
        w[0x4810] = P['row']
        w[0x4814] = P['raw']
        w[0x4818] = P['raw'] if reads_src else 0
        w[0x4830] = 0x50017a if (ntask == 1 or first) else 0x14a
        w[0x4834] = P['src_l2']
        # ---- PE
        for a in (0x8800, 0x8804, 0x8808, 0x880c):
            w[a] = 0
        # ---- NE (0x0c800)
        w[0xc800] = 0x82 | (0x100 if P['sparse'] else 0)
        w[0xc804] = 0x101c00 | (0x10 if P['bias'] else 0) | (0x10000 if P['relu'] else 0)
        w[0xc808] = 0
        w[0xc80c] = 0
        w[0xc810] = 0x3c00
        # ---- tile DMA destination (0x17800)
        ro = rup(P['Wo'] * 2, 64)
        w[0x17800] = 0x40000c1
        w[0x17804] = t['lo'] * ro * P['Ho']
        w[0x17808] = ro
        w[0x1780c] = ro * P['Ho']
        w[0x17810] = ro * P['Ho'] * P['cout']
        w[0x17814] = ro * P['Ho'] * (P['cout'] // P['ng'])
        w[0x17818] = 0x1302031
        # ---- header
        in_b = P['cin'] * P['H'] * rs if reads_src else 0
        out_b = (t['hi'] - t['lo']) * P['Ho'] * ro
        exe = math.floor((kbytes + in_b + out_b) / EXE_BYTES_PER_UNIT)
        size_bytes = 628
        hdr = [0] * 10
        hdr[0] = t['index'] | (0 if first else 1 << 24) | (1 << 25 if last else 0)
        hdr[1] = exe | ((156 << 16) if not last else 0)
        hdr[2] = 0x400 | (0x8 if first else 0) | (0x22 if last else 0)
        hdr[3] = 0
        hdr[4] = 0xfff800 | (0x68 if first or last else 0) | (0x2 if last else 0)
        hdr[5] = 0
        hdr[6] = (1 << 11 if first else 0) | ((1 << 12 | 1 << 15) if last else 0) | (1 << 28 if reads_src else 0) | 1 << 29
        hdr[7] = 0 if last else rup(size_bytes, 256) * (t['index'] + 1)
        hdr[8] = ((4 | 1 << 5) if reads_src else 0) | 5 << 12 | 1 << 17 | (1 << 23 if (first and not last) else 0) | 5 << 24
        hdr[9] = 0x21
        out.append(dict(header=hdr, words=w))
    return out, P


def field_of(addr):
    f = field_names(addr)
    return ','.join(n.split('.', 1)[1] if not n.startswith('aneTD') else n for n, _, _ in f) or 'unnamed'


def compare(c, verbose=False):
    pred, P = predict(c)
    lines = []
    tot_eq = tot = 0
    if len(pred) != len(c['task_descriptors']):
        lines.append('  TASK COUNT predicted %d actual %d' % (len(pred), len(c['task_descriptors'])))
    for ti, (p, t) in enumerate(zip(pred, c['task_descriptors'])):
        act = words(t)
        ah = [int(x, 16) for x in t['header_words']]
        for i, (x, y) in enumerate(zip(p['header'], ah)):
            tot += 1
            if x == y:
                tot_eq += 1
            else:
                lines.append('  t%d header[%d] predicted %#010x actual %#010x' % (ti, i, x, y))
        for a in sorted(set(act) | set(p['words'])):
            tot += 1
            x, y = p['words'].get(a), act.get(a)
            if x == y:
                tot_eq += 1
                if verbose:
                    lines.append('  t%d %05x = %#x  %s' % (ti, a, y, field_of(a)))
            else:
                fx = decode_word(a, x or 0) if field_names(a) else 'unnamed'
                fy = decode_word(a, y or 0) if field_names(a) else 'unnamed'
                lines.append('  t%d %05x %-40s predicted %s actual %s%s' % (
                    ti, a, field_of(a)[:40], 'absent' if x is None else '%#x' % x, 'absent' if y is None else '%#x' % y,
                    '' if fx == fy else '\n        pred: %s\n        act:  %s' % (fx, fy)))
    return tot_eq, tot, lines


def main():
    verbose = '-v' in sys.argv
    args = [a for a in sys.argv[1:] if a != '-v']
    cases = load(args[0] if args else '*conv*')
    gt = gn = 0
    for c in cases:
        eq, n, lines = compare(c, verbose)
        gt += eq; gn += n
        print('%-52s %4d/%4d words equal%s' % (c['case'], eq, n, '' if eq == n else '  (%d mismatches)' % (n - eq)))
        for l in lines:
            print(l)
    print('TOTAL %d/%d' % (gt, gn))


if __name__ == '__main__':
    main()
