#!/usr/bin/env python3
"""Predict the task plan and the op-level register words of softmax, layer_norm and
reduce_{sum,mean,max} from the MIL alone, and check them against every record of the
families (softmax_*, norm_softmax_*, layer_norm_*, norm_layer_norm_*, reduce_*,
chain_base_softmax_d256_s64, chain_base_layer_norm_d256_s64).

    python3 predict.py        # per-family figures
    python3 predict.py -v     # plus every mismatching word

What is predicted, per task: engine (Common 0x38), Common 0x00 InDim, 0x0c Cin, 0x10 Cout,
0x14 OutDim, 0x24 GroupConvCfg, 0x28 TileHeight, 0x30 operand-layout word, 0x34 Cfg,
PE 0x08800..0x0880c (op mode, BiasScale, eps word, fp32 scale), NE 0x0c800 / 0x0c804 /
0x0c810, kernel DMA 0x1f800 (table or not), header word 6 bits 28/29 (reads / writes DRAM
through tile DMA); per program: task count, constant-section size, nonzero bytes, SHA-256.
L2 addresses, tile-DMA strides, header scheduling words and ExeCycles are not predicted
here (see ../common/predict.py and ../elementwise/predict.py).
No rule looks at a case name.
"""
import glob
import hashlib
import json
import os
import re
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '../conv'))
sys.path.insert(0, os.path.join(HERE, '../activation'))
from common import CASES, words  # noqa: E402

FAMILIES = {
    'softmax': ['softmax_*', 'norm_softmax_*', 'chain_base_softmax_d256_s64'],
    'layer_norm': ['layer_norm_*', 'norm_layer_norm_*', 'chain_base_layer_norm_d256_s64'],
    'reduce': ['reduce_*'],
}

LOG2E = 0x3dc5          # fp16(log2 e)
ONE16 = 0x3c00


def f32bits(x):
    return struct.unpack('<I', struct.pack('<f', x))[0]


def f16bits(x):
    import numpy as np
    return int(np.array([x], dtype=np.float16).view(np.uint16)[0])


def clog2(v):
    return max(0, (v - 1).bit_length())


def flog2(v):
    return v.bit_length() - 1 if v >= 1 else -1


def ru(v, a):
    return (v + a - 1) // a * a


# ------------------------------------------------------------------------------ MIL
def parse(rec):
    mil = rec['mil']
    m = re.search(r'func main<\w+>\(tensor<fp16, \[([\d, ]+)\]> x\)', mil)
    shp = [int(v) for v in m.group(1).split(',')]
    m = re.search(r'tensor<fp16, \[([\d, ]+)\]> \w+ = (softmax|layer_norm|reduce_sum|reduce_mean|reduce_max)\((.*?)\)\[', mil)
    out = [int(v) for v in m.group(1).split(',')]
    op, args = m.group(2), m.group(3)
    consts = {}
    for cm in re.finditer(r'(\w+) = const\(\)\[name = string\("[^"]*"\), val = (.*?)\];', mil):
        consts[cm.group(1)] = cm.group(2)
    kv = dict(a.split(' = ', 1) for a in args.split(', '))

    def ints(name):
        v = consts[kv[name]]
        mm = re.search(r'\(\[([-\d, ]+)\]\)', v)
        if mm:
            return [int(x) for x in mm.group(1).split(',')]
        return [int(re.search(r'int32\((-?\d+)\)', v).group(1))]
    rank = len(shp)
    x = [1] * (4 - rank) + shp           # N C H W; rank 3 [1,S,D] -> [1,1,S,D]

    def norm_axes(ax):
        return sorted(a + rank if a < 0 else a for a in ax)
    d = {'op': op, 'N': x[0], 'C': x[1], 'H': x[2], 'W': x[3], 'rank': rank, 'out_rank': len(out)}
    if op == 'softmax':
        d['axes'] = [a + 4 - rank for a in norm_axes(ints('axis'))]
    else:
        d['axes'] = [a + 4 - rank for a in norm_axes(ints('axes'))]
    if op == 'layer_norm':
        d['eps'] = float(re.search(r'epsilon = fp32\(([-0-9.e]+)\)', args).group(1))
    d['keep_dims'] = 'keep_dims = bool(false)' not in args
    return d


# ------------------------------------------------------------------------------ task builders
def ne_count(c):
    n = 1
    while n < min(16, c):
        n *= 2
    return n


def pe_task(kind, view, groups=1, op=0, scale=ONE16, eps=None, fscale=1.0, c30=0,
            cfg=0x51, src_dram=False, dst_dram=False, reduction=False, res_l2=False):
    c, h, w = view
    t = {'eng': 'PE', 'kind': kind, 'src_dram': src_dram, 'dst_dram': dst_dram,
         'reduction': reduction, 'res_l2': res_l2, 'view': view, 'groups': groups}
    wd = {0x00: w | h << 16, 0x0c: c, 0x10: c, 0x14: w | h << 16, 0x24: 0x10000 | groups,
          0x30: c30, 0x34: cfg, 0x38: 0,
          0x8800: op, 0x8804: scale << 16, 0x8808: ONE16 << 16 | (f16bits(eps) if eps is not None else 0),
          0x880c: f32bits(fscale),
          0xc804: 0x100000, 0xc810: 0, 0x1f800: 0}
    th = h
    if cfg == 0x51 and res_l2 and h > 32 and w <= 8:
        th = 32
    wd[0x28] = th
    t['w'] = wd
    return t


def ne_task(kind, cin, h, w, cout=None, oh=None, ow=None, cfg=1, mac=0x101c0c, grp=0x14001,
            table=None, src_dram=False, dst_dram=False, n_tab=0):
    cout = cin if cout is None else cout
    oh = h if oh is None else oh
    ow = w if ow is None else ow
    wd = {0x00: w | h << 16, 0x0c: cin, 0x10: cout, 0x14: ow | oh << 16, 0x24: grp, 0x28: oh,
          0x30: 0, 0x34: cfg, 0x38: 0x100000, 0x8800: 0, 0x8804: 0, 0x8808: 0, 0x880c: 0,
          0xc800: 0x82, 0xc804: mac, 0xc810: ONE16, 0x1f800: 0x40 if table else 0}
    return {'eng': 'NE', 'kind': kind, 'w': wd, 'table': table, 'n_tab': n_tab,
            'src_dram': src_dram, 'dst_dram': dst_dram, 'reduction': False, 'res_l2': not dst_dram}


def ne_cfg(n_ne, f8=0, f12=0, f16=0, low=1, transpose=False):
    return low | f8 << 8 | f12 << 12 | f16 << 16 | clog2(n_ne) << 19 | (1 << 28 if transpose else 0)


def shmax(h, w):
    """NE pass ShMax: min(3, floor(log2 H), floor(log2(256 / L2 row bytes)))."""
    row = min(ru(2 * w, 16), 0x100)
    return max(0, min(3, flog2(h), flog2(256 // row)))


def copy_task(C, H, W):
    """NE pass that copies x from DRAM into L2 unchanged (MACCfg 0x101c0c, no table)."""
    return ne_task('copy', C, H, W, cfg=ne_cfg(ne_count(C), f16=shmax(H, W)), src_dram=True)


def transposer(kind, cin, h, w, n_ne, f8, f16, src_dram):
    return ne_task(kind, cin, h, w, cfg=ne_cfg(n_ne, f8=f8, f12=f8, f16=f16, transpose=True),
                   src_dram=src_dram)


def exp_task(cin, h, w, n_ne, transpose):
    """NE exp2 table (MACCfg NonlinearMode 2). Table fields: 4 when the task has several rows,
    else min(4, log2(256 / row bytes))."""
    f = 4 if h > 1 else max(0, min(4, flog2(256 // min(ru(2 * w, 16), 0x100))))
    return ne_task('exp2', cin, h, w, cfg=ne_cfg(n_ne, f, f, f, transpose=transpose),
                   mac=0x121c0c, table='exp2', n_tab=min(n_ne, cin))


def split_w(w, split):
    """A PE reduction over a row of W >= 128 reads it as 4 rows of W/4 (when enabled)."""
    if split and w >= 128:
        return (4, w // 4)
    return (1, w)


# ------------------------------------------------------------------------------ plans
def plan(d):
    C, H, W, N = d['C'], d['H'], d['W'], d['N']
    assert N == 1, 'batch > 1 not covered'
    ax = set(d['axes'])
    op = d['op']
    T = []
    if op.startswith('reduce'):
        kind = op[7:]
        pop = 2 if kind == 'max' else 0
        n = 1
        for a in ax:
            n *= (C, H, W)[a - 1]
        fs = 1.0 / n if kind == 'mean' else 1.0
        if ax == {1} and H * W == 1 and kind == 'max':
            T.append(ne_task('max_c', C, 1, 1, cout=1, cfg=1, mac=0x101c0b, grp=C << 16 | 0x4001,
                             src_dram=True, dst_dram=True))
        elif ax == {1} and H * W > 1:
            T.append(transposer('transpose', C, H, W, min(16, H), 0, shmax(H, W), True))
            hh, ww = split_w(C, True)
            T.append(pe_task(kind, (W, hh, ww), groups=H, op=pop, fscale=fs, c30=0x400,
                             dst_dram=True, reduction=True))
        elif ax == {2}:
            # H reduction: transpose so that H becomes the row, reduce, transpose back
            T.append(transposer('transpose', H, C, W, min(16, H), 3 if W >= 16 else 0, shmax(C, H), True))
            T.append(pe_task(kind, (C, 1, H), groups=W, op=pop, fscale=fs, c30=0, reduction=True, res_l2=True))
            T.append(transposer('transpose', W, C, 1, 8, 0, 4, False))
            T[-1]['dst_dram'] = True
        elif ax == {1, 2, 3} or (ax == {1} and H * W == 1):
            T.append(pe_task(kind, (1, C, W), op=pop, fscale=fs, src_dram=True, dst_dram=True, reduction=True))
        else:   # {2,3}, {3}
            hh, ww = (H, W)
            if ax == {3}:
                assert H == 1, 'reduce over W with H > 1 not covered'
                hh, ww = split_w(W, True)
            flat = d['out_rank'] < 4 and not d['keep_dims']
            T.append(pe_task(kind, (C, hh, ww), op=pop, fscale=fs, c30=0x400 if flat else 0,
                             src_dram=True, dst_dram=True, reduction=True))
        return T

    if op == 'softmax':
        a = d['axes'][0]
        if a == 1 and H * W == 1:
            v = (C, 1, 1)
            T.append(ne_task('max_c', C, 1, 1, cout=1, cfg=1, mac=0x101c0b, grp=C << 16 | 0x4001, src_dram=True))
            T.append(pe_task('x-max', v, op=0xc0000, scale=LOG2E, c30=0x480, cfg=0x31))
            T.append(exp_task(1, 1, C, ne_count(C), True))
            T.append(ne_task('sum_c+recip', C, 1, 1, cout=1, cfg=ne_cfg(1, 4, 4, 4, low=5),
                             mac=0x121c08, grp=0x10001, table='reciprocal', n_tab=1))
            T.append(pe_task('mul', v, op=0x80004, c30=0x8, cfg=0x31, dst_dram=True))
            return T
        assert a == 3, 'softmax over C with H*W > 1, or over H, not covered'
        if H == 1:
            v = (C, 1, W)
            packed = C > 1 and W > 1
            red30 = 0x400 if packed else 0
            T.append(pe_task('max', v, op=2, c30=red30, src_dram=True, reduction=True, res_l2=True))
            T.append(pe_task('x-max', v, op=0xc0000, scale=LOG2E, cfg=0x31,
                             c30=0x10 | (0x200 if packed else 0) | (0x400 if W == 1 else 0)))
            if W == 1:
                T.append(exp_task(1, 1, C, ne_count(C), True))
            else:
                T.append(exp_task(C, 1, W, ne_count(C), False))
            T.append(pe_task('sum+recip', v, op=0x1000, c30=red30, reduction=True, res_l2=True))
            T.append(pe_task('mul', v, op=0x80004, cfg=0x31, c30=0x1 | (0x100 if packed else 0), dst_dram=True))
            return T
        # H > 1: x copied into L2 by an NE pass, reductions over rows
        hh, ww = split_w(W, True)
        rv, g = ((H, hh, ww), 1) if C == 1 else ((C, hh, ww), H)
        v = (C, H, W)
        T.append(copy_task(C, H, W))
        T.append(pe_task('max', rv, groups=g, op=2, reduction=True, res_l2=True))
        T.append(pe_task('x-max', v, op=0xc0000, scale=LOG2E, cfg=0x31, c30=0x10))
        T.append(exp_task(C, H, W, ne_count(C), False))
        T.append(pe_task('sum+recip', rv, groups=g, op=0x1000, reduction=True, res_l2=True))
        T.append(pe_task('mul', v, op=0x80004, cfg=0x31, c30=0x1, dst_dram=True))
        return T

    if op == 'layer_norm':
        eps = d['eps']
        full = {1, 2, 3}
        if ax == full:
            n = C * H * W
            sv = (1, C, W)
            bc = (1 if W > 1 else 0) | (2 if C > 1 else 0) | (4 if H > 1 else 0)
            T.append(pe_task('mean', sv, fscale=1.0 / n, src_dram=True, reduction=True, res_l2=True))
            T.append(pe_task('var+rsqrt', sv, op=0x92010, eps=eps, fscale=1.0 / n, cfg=0x61, c30=bc,
                             reduction=True, res_l2=True))
            T.append(pe_task('(x-mean)*rstd', (C, H, W), op=0xc0000, cfg=0x41, c30=0x80 if C > 1 else 0,
                             src_dram=True, dst_dram=True))
            return T
        if ax == {3} and (H == 1 or C == 1):
            cc = C if H == 1 else H
            v = (cc, 1, W)
            T.append(pe_task('mean', v, fscale=1.0 / W, c30=0x400 if cc > 1 else 0, src_dram=True,
                             reduction=True, res_l2=True))
            T.append(pe_task('var+rsqrt', v, op=0x92010, eps=eps, fscale=1.0 / W, cfg=0x61,
                             c30=0x1 | (0x500 if cc > 1 else 0), reduction=True, res_l2=True))
            T.append(pe_task('(x-mean)*rstd', v, op=0xc0000, cfg=0x41, c30=0x200 if cc > 1 else 0,
                             dst_dram=True))
            return T
        if ax == {3}:
            rv = (C, 1, W)
            v = (C, H, W)
            T.append(copy_task(C, H, W))
            T.append(pe_task('mean', rv, groups=H, fscale=1.0 / W, reduction=True, res_l2=True))
            T.append(pe_task('x-mean', v, op=0xc0000, cfg=0x31, c30=0x10))
            T.append(pe_task('sumsq+rsqrt', rv, groups=H, op=0x2010, eps=eps, fscale=1.0 / W,
                             reduction=True, res_l2=True))
            T.append(pe_task('mul', v, op=0x80004, cfg=0x31, c30=0x10, dst_dram=True))
            return T
        if ax == {1} and H * W == 1:
            v, tv = (C, 1, 1), (1, 1, C)
            T.append(pe_task('pack', v, cfg=0x21, c30=0x400, src_dram=True, res_l2=True))
            T.append(pe_task('mean', tv, fscale=1.0 / C, reduction=True, res_l2=True))
            T.append(pe_task('var+rsqrt', tv, op=0x92010, eps=eps, fscale=1.0 / C, cfg=0x61, c30=0x1,
                             reduction=True, res_l2=True))
            T.append(pe_task('(x-mean)*rstd', tv, op=0xc0000, cfg=0x41, c30=0x200, res_l2=True))
            T.append(pe_task('unpack', v, cfg=0x21, c30=0x100, dst_dram=True))
            return T
        if ax == {1}:
            hh, ww = split_w(C, True)
            rv = (W, hh, ww)
            v = (C, H, W)
            f8 = 3 if W >= 16 else 0
            T.append(transposer('transpose', C, H, W, min(16, H), f8, shmax(H, W), True))
            T.append(pe_task('mean', rv, groups=H, fscale=1.0 / C, c30=0x400, reduction=True, res_l2=True))
            T.append(pe_task('x-mean', v, op=0xc0000, cfg=0x31, c30=0x80))
            T.append(transposer('transpose', C, H, W, min(16, H), f8, shmax(H, W), False))
            T.append(pe_task('sumsq+rsqrt', rv, groups=H, op=0x2010, eps=eps, fscale=1.0 / C, c30=0x400,
                             reduction=True, res_l2=True))
            T.append(pe_task('mul', v, op=0x80004, cfg=0x31, c30=0x80, dst_dram=True))
            return T
        raise NotImplementedError('layer_norm axes %s' % sorted(ax))
    raise NotImplementedError(op)


# ------------------------------------------------------------------------------ data-flow words
def consumers(T):
    """Which later tasks read each task's result (the plans are chains; the reductions'
    results are also read two tasks later by the broadcast ops)."""
    use = {i: [] for i in range(len(T))}
    last = {}
    for i, t in enumerate(T):
        k = t['kind']
        if i > 0:
            use[i - 1].append(i)
        if k in ('x-max', 'x-mean', '(x-mean)*rstd') and 'mean' in last:
            use[last['mean']].append(i)
        if k == 'mul' and 'x-mean' in last:
            use[last['x-mean']].append(i)
        if k in ('var+rsqrt', '(x-mean)*rstd') and 'pack' in last:
            use[last['pack']].append(i)
        if t['eng'] == 'PE' and k in ('mean', 'max', 'var+rsqrt', 'sumsq+rsqrt', 'sum+recip', 'x-mean', 'pack'):
            last[k] = i
        if k == 'var+rsqrt':
            last['mean'] = last.get('mean', i)
    return {i: sorted(set(v)) for i, v in use.items()}


def finish(T):
    """NE-block KernelCfg bits of PE tasks (0x0c800): 0x80 | 0x1000 | 0x4000.
    0x4000: one of the task's operands was produced by a PE task (directly, or through NE pass
    or transpose tasks). 0x1000: the task's result stays in L2 and a later PE task reads it."""
    from_pe = []
    for i, t in enumerate(T):
        # provenance of this task's result: PE, or PE passed through an NE layout task
        if t['eng'] == 'PE':
            from_pe.append(True)
        elif t['kind'] in ('transpose', 'copy') and i > 0:
            from_pe.append(from_pe[i - 1])
        else:
            from_pe.append(False)
    use = consumers(T)
    readers = {j: [i for i in range(len(T)) if j in use[i]] for j in range(len(T))}
    for j, t in enumerate(T):
        if t['eng'] != 'PE':
            continue
        v = 0x80
        if any(from_pe[i] for i in readers[j]):
            v |= 0x4000
        if not t['dst_dram'] and any(T[i]['eng'] == 'PE' for i in use[j]):
            v |= 0x1000
        t['w'][0xc800] = v
    return T


def const_section(T):
    import actlut
    parts = []
    for t in T:
        if t.get('table'):
            tab = actlut.table_exp2() if t['table'] == 'exp2' else actlut.table_mantissa('reciprocal')
            parts.append(actlut.constant_section(tab, 128 * t['n_tab'], 0))
    if not parts:
        return bytes(16384)
    return b''.join(parts)


# ------------------------------------------------------------------------------ compare
def family(case):
    for f, pats in FAMILIES.items():
        for p in pats:
            if re.fullmatch(p.replace('*', '.*'), case):
                return f
    return None


def main():
    verbose = '-v' in sys.argv
    stats = {}
    for f, pats in FAMILIES.items():
        for p in pats:
            for fn in sorted(glob.glob(os.path.join(CASES, p + '.json'))):
                rec = json.load(open(fn))
                s = stats.setdefault(f, {'eq': 0, 'tot': 0, 'cases': 0, 'exact': 0, 'plan': 0})
                s['cases'] += 1
                d = parse(rec)
                try:
                    T = finish(plan(d))
                except (NotImplementedError, AssertionError) as e:
                    print('%-40s NOT COVERED: %s' % (rec['case'], e))
                    continue
                tasks = rec['task_descriptors']
                miss = []
                eq = tot = 0
                tot += 1
                if len(T) == len(tasks):
                    eq += 1
                else:
                    miss.append('task count %d vs %d' % (len(T), len(tasks)))
                for i, (p, t) in enumerate(zip(T, tasks)):
                    w = words(t)
                    h6 = t['header_words'][6]
                    h6 = int(h6, 16) if isinstance(h6, str) else h6
                    items = dict(p['w'])
                    got = {a: w.get(a, 0) for a in items}
                    items['src_dram'] = int(p['src_dram'])
                    items['dst_dram'] = int(p['dst_dram'])
                    got['src_dram'] = h6 >> 28 & 1
                    got['dst_dram'] = h6 >> 29 & 1
                    for a, v in items.items():
                        tot += 1
                        if got[a] == v:
                            eq += 1
                        else:
                            miss.append('T%d %s %s: pred %s rec %s' % (
                                i, p['kind'], a if isinstance(a, str) else '%#x' % a,
                                hex(v), hex(got[a])))
                cs = rec['constant_section']
                sec = const_section(T)
                for name, pv, rv in (('const size', len(sec), cs['size']),
                                     ('const nonzero', sum(1 for b in sec if b), cs['nonzero_bytes']),
                                     ('const sha', hashlib.sha256(sec).hexdigest()[:12], cs['sha256'][:12])):
                    tot += 1
                    if pv == rv:
                        eq += 1
                    else:
                        miss.append('%s: pred %s rec %s' % (name, pv, rv))
                s['eq'] += eq
                s['tot'] += tot
                s['exact'] += eq == tot
                s['plan'] += len(T) == len(tasks) and all(p['eng'] == ('NE' if words(t).get(0x38) == 0x100000 else 'PE')
                                                         for p, t in zip(T, tasks))
                print('%-40s %3d/%3d  tasks %s' % (rec['case'], eq, tot, ' '.join(
                    '%s:%s' % (p['eng'], p['kind']) for p in T)))
                if verbose:
                    for m in miss:
                        print('      ' + m)
    print()
    for f, s in stats.items():
        print('%-11s %2d records: words %d/%d equal (%.1f%%), records fully equal %d/%d, task plan (count+engines) %d/%d'
              % (f, s['cases'], s['eq'], s['tot'], 100.0 * s['eq'] / max(1, s['tot']), s['exact'], s['cases'],
                 s['plan'], s['cases']))


if __name__ == '__main__':
    main()
