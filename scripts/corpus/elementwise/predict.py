#!/usr/bin/env python3
"""Predict Apple's (macOS 26 compiler, H13) task descriptors for elementwise MIL programs.

predict(record) reads ONLY record['mil'] (and record['weights'] for how a BLOBFILE constant
was filled, which only matters for the constant-section bytes) and returns a list of tasks
{header_words: [10 ints], words: {reg_addr: int}, size_bytes, records}.  Nothing of the
recorded decode (task_descriptors, tensor_descriptors, program_descriptor, constant_section)
is read inside predict().

Run:  python3 predict.py [-v] [case-glob ...]   (default: binary_* and env_bcast_*)
"""
import os
SHARED = os.environ.get("ANEC_SHARED", os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../../shared"))
import glob
import hashlib
import json
import math
import re
import struct
import sys

CASES = SHARED + '/fixtures/apple-h13-oracles/cases/'

# --------------------------------------------------------------------------------------
# MIL parsing
# --------------------------------------------------------------------------------------


def to_nchw(shape):
    s = list(shape)
    while len(s) < 4:
        s.insert(0 if len(s) != 3 else 0, 1)
    # rank 3 [a,b,c] -> [1,a,b,c]; rank 2 [h,w] -> [1,1,h,w]; rank 1 [w] -> [1,1,1,w]
    return s


def parse_fp16_literal(txt):
    m = re.match(r'fp16\(([^)]*)\)', txt.strip())
    v = m.group(1)
    return float.fromhex(v) if 'p' in v or v.startswith('0x') else float(v)


def parse_mil(mil):
    head = re.search(r'func main<[^>]*>\((.*?)\)\s*\{', mil, re.S).group(1)
    inputs = []
    for m in re.finditer(r'tensor<(\w+),\s*\[([^\]]*)\]>\s+(\w+)', head):
        inputs.append((m.group(3), to_nchw([int(x) for x in m.group(2).split(',')]), m.group(1)))
    consts = {}
    ops = []
    for line in mil.splitlines():
        line = line.strip()
        m = re.match(r'(\S+(?:<[^>]*>)?)\s+(\w+)\s*=\s*const\(\)\[.*?val\s*=\s*(.*)\]\s*;', line)
        if m:
            typ, name, val = m.group(1), m.group(2), m.group(3)
            if typ.startswith('tensor'):
                shp = to_nchw([int(x) for x in re.search(r'\[([^\]]*)\]', typ).group(1).split(',')])
                kind = 'blob' if 'BLOBFILE' in val else 'inline'
                consts[name] = dict(kind=kind, shape=shp, text=val)
            else:
                consts[name] = dict(kind='scalar', dtype=typ, value=parse_fp16_literal(val) if typ == 'fp16' else val)
            continue
        m = re.match(r'tensor<(\w+),\s*\[([^\]]*)\]>\s+(\w+)\s*=\s*(\w+)\((.*)\)\[name', line)
        if m:
            args = dict(re.findall(r'(\w+)\s*=\s*(\w+)', m.group(5)))
            ops.append(dict(out=m.group(3), shape=to_nchw([int(x) for x in m.group(2).split(',')]),
                            op=m.group(4), args=args))
    outs = re.search(r'\}\s*->\s*\(([^)]*)\)', mil).group(1)
    outputs = [o.strip() for o in outs.split(',')]
    return inputs, consts, ops, outputs


# --------------------------------------------------------------------------------------
# layout helpers
# --------------------------------------------------------------------------------------

def ru(v, a):
    return (v + a - 1) // a * a


def clog2(v):
    return max(0, math.ceil(math.log2(v))) if v > 1 else 0


def f16bits(x):
    return struct.unpack('<H', struct.pack('<e', x))[0]


def dram(shape):
    """DRAM (tile DMA) byte strides of an fp16 NCHW tensor: row, plane, depth, group."""
    n, c, h, w = shape
    row = ru(w * 2, 64)
    plane = ru(row * h, 64)
    depth = c * plane
    return row, plane, depth, depth


def pe_row_pad(p):
    """Row padding of an L2 region the planar engine reads (a 64-channel 1x1 row of 0x400
    bytes is written 0x420): +0x20 when the unpadded row is a multiple of 0x400."""
    return 0x20 if p % 0x400 == 0 else 0


def pe_src_region(c, h, w):
    ch = ru(w * 2, 16)
    p = c * ch
    row = p + pe_row_pad(p)
    return dict(ch=ch, row=row, p1=p, p2=p, size=h * row)


def ne_src_region(c, h, w):
    """An NE task's tile-DMA source is streamed through L2 in <= 0x100-byte channel chunks."""
    ch = min(ru(w * 2, 16), 0x100)
    row = c * ch
    return dict(ch=ch, row=row, p1=row, p2=row, size=h * row)


def vec_rows_pad(r):
    """Row stride of the 2-row (bias row, scale row) constant vector: candidate rule fitted on
    0x400 -> 0x420 and 0x600 -> 0x610."""
    if r % 0x400 == 0:
        return 0x20
    if r % 0x200 == 0:
        return 0x10
    return 0


# --------------------------------------------------------------------------------------
# per-op constants
# --------------------------------------------------------------------------------------

# PE block word 0x8800: bits [4:2] operation between source 1 and source 2, bit 18 negate
# source 2 (sub), bit 19 second operand present.  max (2) is inferred from the gap.
PE_OP = {'add': 0x0, 'sub': 0x0, 'mul': 0x4, 'maximum': 0x8, 'minimum': 0xc}
PE_SRC2 = 1 << 19
PE_NEG2 = 1 << 18

EXE = [0.00171359, 0.0, 0.00178645, 0.0, 0.00173233, 0.00011794, 0.00050125]  # fitted


def exe_cycles(n_reads, n_write, is_ne, P, R, L64):
    f = [n_reads * P, n_reads * R, n_reads * L64, n_write * P, n_write * R, n_write * L64, is_ne * P]
    return int(sum(a * b for a, b in zip(EXE, f)))


# --------------------------------------------------------------------------------------
# task construction
# --------------------------------------------------------------------------------------

class Task:
    def __init__(self):
        self.w = {}
        self.kind = None


def kernel_dma(words, n_tables):
    """Kernel DMA block: PE and table-less NE tasks write 0x1f800..0x1f844 and 0x1f8c8..0x1f8f4
    (18 + 12 words); a table-reading NE task writes all 62 words."""
    if n_tables:
        words[0x1f800] = 0x40
        words[0x1f804] = 0
        for i in range(16):
            words[0x1f808 + 4 * i] = 0x81 if i < n_tables else 0x80
            words[0x1f848 + 4 * i] = 0
            words[0x1f888 + 4 * i] = 0x80 if i < n_tables else 0x40
    else:
        words[0x1f800] = 0
        words[0x1f804] = 0
        for i in range(16):
            words[0x1f808 + 4 * i] = 0x80
    for i in range(4):
        words[0x1f8c8 + 4 * i] = 0x80
        words[0x1f8d8 + 4 * i] = 0
        words[0x1f8e8 + 4 * i] = 0x40


def common(words, src, out, cin, cout, n_groups, is_ne, n_ops, src2_dma, bcast, n_ne=1, transpose=False):
    n, c, h, w = src
    words[0x00000] = w | (h << 16)
    words[0x00004] = 1
    words[0x00008] = 0x22 | (0x8 if n_ops >= 2 else 0)
    words[0x0000c] = cin
    words[0x00010] = cout
    words[0x00014] = out[3] | (out[2] << 16)
    words[0x00018] = 1
    words[0x0001c] = 0x5000a021           # ConvCfg: 1x1 kernel, stride 1, Ox=Oy=1
    words[0x00020] = 0x2041
    words[0x00024] = 0x10000 | n_groups | (0x4000 if is_ne else 0)
    words[0x00028] = out[2]               # TileHeight = Hout
    if is_ne:
        words[0x0002c] = 0
        words[0x00030] = 0
        words[0x00034] = 1 | (clog2(n_ne) << 19) | ((1 << 28) if transpose else 0)
        words[0x00038] = 0x100000
    else:
        lo = min(max(clog2(out[3]), 4), 9)
        budget = 8 if n_ops >= 2 else 9
        hi = max(0, min(clog2(out[2]), budget - lo))
        if bcast & 0xb0 == 0x10:  # operand 2 broadcast along W only (softmax's x - max): 16 x 16 unit
            lo, hi = 4, budget - 4
        words[0x0002c] = (hi << 4) | lo
        words[0x00030] = bcast
        words[0x00034] = 1 | ((n_ops + 1) << 4) | (2 if src2_dma else 0)
        words[0x00038] = 0
    words[0x0003c] = 0


def tile_src(words, s1, s2=None):
    words[0x13800] = 0x33881
    words[0x13804] = 0x33880 if s2 else 0x8880
    words[0x13808] = 0
    r = s1 or (0, 0, 0, 0)
    words[0x1380c], words[0x13810], words[0x13814], words[0x13818] = r
    words[0x1381c] = 0
    r = s2 or (0, 0, 0, 0)
    words[0x13820], words[0x13824], words[0x13828], words[0x1382c] = r
    words[0x13830] = 0
    words[0x13834] = 0
    words[0x13838] = 0x1002031
    words[0x1383c] = 0x2030 if s2 else 0
    words[0x13840] = 0x100
    for a in range(0x13844, 0x13870, 4):
        words[a] = 0


def tile_dst(words, d):
    if d:
        words[0x17800] = 0x40000c1
        words[0x17804] = 0
        words[0x17808], words[0x1780c], words[0x17810], words[0x17814] = d
        words[0x17818] = 0x1302031
    else:
        words[0x17800] = 0xc0
        for a in range(0x17804, 0x17818, 4):
            words[a] = 0
        words[0x17818] = 0x1000000


def l2(words, src_cfg, s1_base, s1, s2_base=None, s2=None, res_cfg=0, res_base=0, res=None):
    words[0x04800] = 0
    words[0x04804] = src_cfg
    words[0x04808] = s1_base
    words[0x0480c], words[0x04810], words[0x04814], words[0x04818] = s1['ch'], s1['row'], s1['p1'], s1['p2']
    if s2:
        words[0x0481c] = s2_base
        words[0x04820], words[0x04824], words[0x04828], words[0x0482c] = s2['ch'], s2['row'], s2['p1'], s2['p2']
    else:
        for a in range(0x0481c, 0x04830, 4):
            words[a] = 0
    words[0x04830] = res_cfg
    words[0x04834] = res_base
    if res:
        words[0x04838], words[0x0483c], words[0x04840] = res['ch'], res['row'], res['p1']
    else:
        words[0x04838] = words[0x0483c] = words[0x04840] = 0
    words[0x04844] = 0


def pe_block(words, cfg=0, scale=1.0, bias=0.0, active=True):
    if active:
        words[0x08800] = cfg
        words[0x08804] = (f16bits(scale) << 16) | f16bits(bias)
        words[0x08808] = 0x3c000000
        words[0x0880c] = 0x3f800000
    else:
        for a in (0x08800, 0x08804, 0x08808, 0x0880c):
            words[a] = 0


def ne_block(words, is_ne, nonlinear=0):
    if is_ne:
        words[0x0c800] = 0x82
        words[0x0c804] = 0x101c0c | (nonlinear << 16)
        words[0x0c810] = 0x3c00
    else:
        words[0x0c800] = 0x80
        words[0x0c804] = 0x100000
        words[0x0c810] = 0
    words[0x0c808] = 0
    words[0x0c80c] = 0


def records_of(words):
    recs = []
    if 0x1f848 in words:
        recs.append((0x1f800, 62))
    else:
        recs += [(0x1f800, 18), (0x1f8c8, 12)]
    recs += [(0x00000, 16), (0x13800, 28), (0x04800, 18), (0x08800, 4), (0x0c800, 5), (0x17800, 7)]
    return recs


def bar_word(r0=None, r1=None, wr=None, tbe=False, ene=0):
    v = 0
    if r0 is not None:
        v |= r0 | 0x20
    if r1 is not None:
        v |= (r1 << 6) | 0x800
    if wr is not None:
        v |= (wr << 12) | 0x20000
    if tbe:
        v |= 1 << 23
    return v | (ene << 24)


# --------------------------------------------------------------------------------------
# lowering
# --------------------------------------------------------------------------------------

def next_pow2(v):
    return 1 << clog2(v)


def predict(record):
    inputs, consts, ops, outputs = parse_mil(record['mil'])
    names = sorted([n for n, _, _ in inputs] + outputs)
    bar = {n: 4 + i for i, n in enumerate(names)}
    shapes = {n: s for n, s, _ in inputs}
    assert len(ops) == 1, 'one elementwise op expected'
    op = ops[0]
    kind = op['op']
    out = op['out']
    oshape = op['shape']
    N, C, H, W = oshape
    a, b = op['args']['x'], op['args']['y']
    # The broadcast (smaller) operand goes second.
    if a in shapes and b in shapes and shapes[a] != oshape and shapes[b] == oshape and kind in ('add', 'mul', 'maximum', 'minimum'):
        a, b = b, a
    xs = shapes[a]
    one = [1, C, H, W]
    tasks = []
    const_bytes = b''

    def finish(t, P, R, L64, reads, write, is_ne):
        t.exe = exe_cycles(reads, write, is_ne, P, R, L64)

    L64 = N * C * H * ((W * 2 + 63) // 64)
    P, R = N * C, N * C * H

    if b in shapes and shapes[b] == oshape and kind != 'real_div':
        # ---- two runtime operands of the output's shape: one PE task, both through tile DMA
        t = Task()
        w = t.w
        kernel_dma(w, 0)
        common(w, one, one, C, C, N, False, 2, True, 0)
        d = dram(oshape)
        tile_src(w, d, d)
        s1 = pe_src_region(C, H, W)
        s2 = pe_src_region(C, H, W)
        b2 = ru(s1['size'], 0x40)
        if b2 % 0x400 == 0:      # keep source 2 off source 1's 0x400 bank alignment
            b2 += 0x40
        l2(w, 0x1500172, 0, s1, b2, s2, 0x50017a, b2 + s2['size'])
        cfg = PE_SRC2 | PE_OP[kind] | (PE_NEG2 if kind == 'sub' else 0)
        pe_block(w, cfg)
        ne_block(w, False)
        tile_dst(w, d)
        t.bars = bar_word(bar[a], bar[b], bar[out])
        t.flags = dict(reads_dram=True, writes_dram=True)
        t.exe = exe_cycles(2, 1, 0, P, R, L64)
        tasks.append(t)
    elif b in consts and consts[b]['kind'] == 'scalar' and kind in ('add', 'sub', 'mul', 'real_div'):
        # ---- scalar constant folded into the PE's scale / bias
        v = consts[b]['value']
        scale, bias = {'add': (1.0, v), 'sub': (1.0, -v), 'mul': (v, 0.0), 'real_div': (1.0 / v, 0.0)}[kind]
        t = Task()
        w = t.w
        kernel_dma(w, 0)
        common(w, one, one, C, C, N, False, 1, False, 0)
        d = dram(oshape)
        tile_src(w, d)
        s1 = pe_src_region(C, H, W)
        l2(w, 0x500172, 0, s1, None, None, 0x50017a, s1['size'])
        pe_block(w, 0, scale, bias)
        ne_block(w, False)
        tile_dst(w, d)
        t.bars = bar_word(bar[a], None, bar[out])
        t.flags = dict(reads_dram=True, writes_dram=True)
        t.exe = exe_cycles(1, 1, 0, P, R, L64)
        tasks.append(t)
    elif b in consts and consts[b]['kind'] == 'scalar':
        # ---- minimum / maximum (and presumably pow) with a scalar: one NE task, table-driven
        t = Task()
        w = t.w
        n_ne = min(16, next_pow2(C))
        kernel_dma(w, n_ne)
        common(w, one, one, C, C, 1, True, 1, False, 0, n_ne=n_ne)
        d = dram(oshape)
        tile_src(w, d)
        s1 = ne_src_region(C, H, W)
        l2(w, 0x500172, 0, s1, None, None, 0x50017a, s1['size'])
        pe_block(w, active=False)
        ne_block(w, True, nonlinear=2)
        tile_dst(w, d)
        t.bars = bar_word(bar[a], None, bar[out], ene=clog2(n_ne) + 1)
        t.table = True
        t.flags = dict(reads_dram=True, writes_dram=True)
        t.exe = exe_cycles(1, 1, 1, P, R, L64)
        tasks.append(t)
        const_bytes = None  # table format not reproduced (see rules.md)
        const_size = 128 * n_ne
    else:
        # ---- two tasks: task 0 (NE) puts operand 2 into L2, task 1 (PE) reads x from DRAM and
        #      operand 2 from L2.
        t0 = Task()
        w0 = t0.w
        t1 = Task()
        w1 = t1.w
        n_ops1 = 2
        bcast = 0
        if kind == 'pow' and b in shapes:
            raise NotImplementedError('pow with a runtime exponent: no Apple program of it here')
        if kind == 'real_div' and b in shapes and shapes[b][2:] == [1, 1]:
            # reciprocal of z by the NE's table, written into L2 as a packed channel vector
            zs = shapes[b]
            n_ne = 8
            kernel_dma(w0, n_ne)
            common(w0, zs, zs, zs[1], zs[1], 1, True, 1, False, 0, n_ne=n_ne, transpose=True)
            src_shape = zs
            vec = ru(zs[1] * 2, 16)
            res = dict(ch=vec, row=vec, p1=vec, p2=0, size=vec)
            ne_block(w0, True, nonlinear=2)
            t0.bars = bar_word(bar[b], None, None, tbe=True, ene=clog2(n_ne) + 1)
            t0.table = True
            t0.table_fn = 'inv'
            bcast = 0x200
            cfg1 = PE_SRC2 | PE_OP['mul']
            const_bytes = None
            const_size = 128 * n_ne
        elif kind == 'real_div' and b in shapes:
            # GUESS (no Apple example): spatial divisor -> reciprocal table in the standard
            # layout, one NE per channel up to 16, then a PE multiply
            zs = shapes[b]
            n_ne = min(16, next_pow2(zs[1]))
            kernel_dma(w0, n_ne)
            common(w0, zs, zs, zs[1], zs[1], 1, True, 1, False, 0, n_ne=n_ne)
            src_shape = zs
            ch = ru(zs[3] * 2, 16)
            p = zs[1] * ch
            row = p + (pe_row_pad(p) if zs[2] > 1 else 0)
            res = dict(ch=ch, row=row, p1=p, p2=0, size=zs[2] * row)
            ne_block(w0, True, nonlinear=2)
            t0.bars = bar_word(bar[b], None, None, tbe=True, ene=clog2(n_ne) + 1)
            t0.table = True
            t0.table_fn = 'inv'
            bcast = (0x10 if zs[3] != W else 0) | (0x20 if zs[2] != H else 0) | (0x80 if zs[1] != C else 0)
            cfg1 = PE_SRC2 | PE_OP['mul']
            const_bytes = None
            const_size = 128 * n_ne
        elif b in consts and consts[b]['kind'] in ('blob', 'inline') and consts[b]['shape'][2:] == [1, 1] and consts[b]['shape'][1] == C:
            # per-channel constant vector: loaded as 2 rows [bias ; scale] from __const (BAR 1),
            # the PE computes (x op bias) * scale (a ternary, GOC-like task)
            cshape = [1, 1, 2, C]
            kernel_dma(w0, 0)
            common(w0, cshape, cshape, 1, 1, 1, True, 1, False, 0, n_ne=1)
            src_shape = cshape
            vec = ru(C * 2, 16)
            row = vec + vec_rows_pad(vec)
            res = dict(ch=vec, row=row, p1=vec, p2=0, size=2 * row)
            ne_block(w0, True, 0)
            t0.bars = bar_word(1, None, None, tbe=True, ene=1)
            t0.table = False
            n_ops1 = 3
            bcast = 0x200
            cfg1 = PE_SRC2 | (PE_NEG2 if kind == 'sub' else 0)
            vals = blob_halfwords(record, consts, b, C) if consts[b]['kind'] == 'blob' else const_values(record, consts[b], C)
            if kind == 'mul':
                rows = ([0] * C, vals)
            elif kind in ('add', 'sub'):
                rows = (vals, [0x3c00] * C)
            elif kind == 'real_div':
                rows = ([0] * C, [f16bits(1.0 / struct.unpack('<e', struct.pack('<H', v))[0]) for v in vals])
            else:
                rows = ([0] * C, vals)
            const_bytes = b''.join(struct.pack('<%dH' % C, *r) + bytes(ru(C * 2, 64) - C * 2) for r in rows)
        else:
            # runtime (or non-per-channel constant) operand with broadcasting: NE copy into L2
            # in the standard layout, PE broadcasts it
            if b in shapes:
                zs = shapes[b]
                rbar = bar[b]
            else:
                zs = consts[b]['shape']
                rbar = 1
            n_ne = min(16, next_pow2(zs[1]))
            kernel_dma(w0, 0)
            common(w0, zs, zs, zs[1], zs[1], 1, True, 1, False, 0, n_ne=n_ne)
            src_shape = zs
            ch = ru(zs[3] * 2, 16)
            p = zs[1] * ch
            row = p + (pe_row_pad(p) if zs[2] > 1 else 0)
            res = dict(ch=ch, row=row, p1=p, p2=0, size=zs[2] * row)
            ne_block(w0, True, 0)
            t0.bars = bar_word(rbar, None, None, tbe=True, ene=clog2(n_ne) + 1)
            t0.table = False
            bcast = (0x10 if zs[3] != W else 0) | (0x20 if zs[2] != H else 0) | (0x80 if zs[1] != C else 0)
            cfg1 = PE_SRC2 | PE_OP.get(kind, 0) | (PE_NEG2 if kind == 'sub' else 0)
            if b in consts:
                const_bytes = const_tensor_bytes(record, consts, b)
        # task 0 common rest
        tile_src(w0, dram(src_shape))
        s0 = ne_src_region(src_shape[1], src_shape[2], src_shape[3])
        l2(w0, 0x500172, res['size'], s0, None, None, 0x500170, 0, res)
        pe_block(w0, active=False)
        tile_dst(w0, None)
        t0.flags = dict(reads_dram=True, writes_dram=False)
        t0.exe = 0
        # task 1
        kernel_dma(w1, 0)
        common(w1, one, one, C, C, N, False, n_ops1, False, bcast)
        d = dram(oshape)
        tile_src(w1, d)
        s1 = pe_src_region(C, H, W)
        s2 = dict(res)
        l2(w1, 0x172, res['size'], s1, 0, s2, 0x14a, res['size'] + s1['size'])
        pe_block(w1, cfg1)
        ne_block(w1, False)
        tile_dst(w1, d)
        t1.bars = bar_word(bar[a], None, bar[out])
        t1.flags = dict(reads_dram=True, writes_dram=True)
        t1.exe = exe_cycles(1, 1, 0, P, R, L64)
        tasks += [t0, t1]

    # ---- headers and chaining
    n = len(tasks)
    sizes = []
    for t in tasks:
        t.records = records_of(t.w)
        t.size = 4 * (10 + sum(cnt + 1 for _, cnt in t.records))
        sizes.append(t.size)
    offs = [0]
    for s in sizes:
        offs.append(offs[-1] + ru(s, 0x100))
    result = []
    for i, t in enumerate(tasks):
        first, last = i == 0, i == n - 1
        h = [0] * 10
        h[0] = i | ((1 << 24) if i > 0 else 0) | ((1 << 25) if last else 0)
        h[1] = t.exe | (0 if last else ((sizes[i + 1] // 4 - 1) << 16))
        h[2] = 0x400 | (0x8 if first else 0) | (0x22 if last else 0)
        is_ne = (t.bars >> 24) & 7
        pure_copy = is_ne and not getattr(t, 'table', False) and (t.w[0x0c804] >> 16) & 3 == 0
        hi = 0 if pure_copy else (0xffd800 if getattr(t, 'table_fn', '') in ('inv', 'sqrt', 'rsqrt') else 0xfff800)
        lo = (0x68 if (first or last) else 0) | (0x2 if last else 0)
        h[4] = hi | lo
        w6 = 0
        if first:
            w6 |= 1 << 11
        if t.flags['writes_dram']:
            w6 |= (1 << 12) | (1 << 15) | (1 << 29)
        if t.flags['reads_dram']:
            w6 |= 1 << 28
        h[6] = w6
        h[7] = 0 if last else offs[i + 1]
        h[8] = t.bars
        h[9] = 0x21 if getattr(t, 'table', False) else 0
        result.append(dict(header_words=h, words=dict(t.w), size_bytes=t.size, records=t.records))
    # constant section
    if not any(getattr(t, 'table', False) for t in tasks) and const_bytes == b'':
        const = bytes(16384)
    else:
        const = const_bytes
    return result, dict(const=const, const_size=(len(const) if const is not None else locals().get('const_size')))


def blob_halfwords(record, consts, name, count):
    """Element e of a BLOBFILE constant as Apple's compiler read it (README 'Weights')."""
    wts = record.get('weights', {})
    if 'record_offsets' in wts:      # form C: constant i (declaration order) = 0x3400 + i
        blobs = [n for n, c in consts.items() if c['kind'] == 'blob']
        return [0x3400 + blobs.index(name)] * count
    P = wts['payload_bytes']
    fill = 0x3800 if wts.get('value') == 'fp16(0x1p-1)' else 0x3801
    hdr = bytearray(128)
    struct.pack_into('<II', hdr, 0, 1, 2)
    struct.pack_into('<IQQ', hdr, 64, 0xDEADBEEF, P, 128)
    b = bytes(hdr) + struct.pack('<H', fill) * (P // 2)
    return list(struct.unpack('<%dH' % count, b[:2 * count]))


def const_tensor_bytes(record, consts, name):
    """A constant operand stored in __const in its DRAM layout (rows padded to 64 bytes)."""
    c = consts[name]
    n, ch, h, w = c['shape']
    vals = blob_halfwords(record, consts, name, n * ch * h * w) if c['kind'] == 'blob' else const_values(record, c, n * ch * h * w)
    row, plane, depth, _ = dram(c['shape'])
    out = bytearray(n * depth)
    for e, v in enumerate(vals):
        i, r = divmod(e, w)
        hh = i % h
        cc = (i // h) % ch
        nn = i // (h * ch)
        struct.pack_into('<H', out, nn * depth + cc * plane + hh * row + 2 * r, v)
    return bytes(out)


def const_values(record, c, C):
    """fp16 bit patterns of a per-channel constant, as Apple's compiler read them."""
    wts = record.get('weights', {})
    if c['kind'] == 'blob':
        P = wts['payload_bytes']
        fill = 0x3800 if wts.get('value') == 'fp16(0x1p-1)' else 0x3801
        hdr = bytearray(128)
        struct.pack_into('<II', hdr, 0, 1, 2)
        struct.pack_into('<IQQ', hdr, 64, 0xDEADBEEF, P, 128)
        b = bytes(hdr) + struct.pack('<H', fill) * (P // 2)
        return list(struct.unpack('<%dH' % C, b[:2 * C]))
    vals = re.findall(r'[-0-9.a-fx]+p[-+0-9]+|[-+]?\d+\.?\d*(?:e[-+]?\d+)?', c['text'].split('(', 1)[1])
    return [f16bits(float.fromhex(v) if 'p' in v else float(v)) for v in vals][:C]


# --------------------------------------------------------------------------------------
# comparison main
# --------------------------------------------------------------------------------------

FIELDS = None


def field_name(addr):
    names = {0x00000: 'Common.InDim', 0x00004: 'Common.(0x12c, depth)', 0x00008: 'Common.ChCfg', 0x0000c: 'Common.Cin',
             0x00010: 'Common.Cout', 0x00014: 'Common.OutDim', 0x00018: 'Common.(0x140)', 0x0001c: 'Common.ConvCfg',
             0x00020: 'Common.(0x148)', 0x00024: 'Common.GroupConvCfg', 0x00028: 'Common.TileCfg', 0x0002c: 'Common.(0x154) PE work unit',
             0x00030: 'Common.(0x158) operand broadcast', 0x00034: 'Common.Cfg', 0x00038: 'Common.TaskInfo', 0x0003c: 'Common.DPE',
             0x04804: 'L2.SourceCfg', 0x04808: 'L2.SourceBase', 0x0480c: 'L2.SourceChannelStride', 0x04810: 'L2.SourceRowStride',
             0x04814: 'L2.(0x1f4) src plane', 0x04818: 'L2.(0x1f8) src plane2', 0x0481c: 'L2.(0x1fc) src2 base',
             0x04820: 'L2.(0x200) src2 channel', 0x04824: 'L2.(0x204) src2 row', 0x04828: 'L2.(0x208) src2 plane',
             0x0482c: 'L2.(0x20c) src2 plane2', 0x04830: 'L2.ResultCfg', 0x04834: 'L2.ResultBase',
             0x04838: 'L2.ConvResultChannelStride', 0x0483c: 'L2.ConvResultRowStride', 0x04840: 'L2.(0x220) result plane',
             0x08800: 'PE.Cfg', 0x08804: 'PE.BiasScale', 0x08808: 'PE.PreScale', 0x0880c: 'PE.FinalScale',
             0x0c800: 'NE.KernelCfg', 0x0c804: 'NE.MACCfg', 0x0c810: 'NE.PostScale',
             0x13800: 'TileDMASrc.DMAConfig', 0x13804: 'TileDMASrc.(0x170) src2 cfg', 0x1380c: 'TileDMASrc.RowStride',
             0x13810: 'TileDMASrc.PlaneStride', 0x13814: 'TileDMASrc.DepthStride', 0x13818: 'TileDMASrc.GroupStride',
             0x13820: 'TileDMASrc.(0x18c) src2 row', 0x13824: 'TileDMASrc.(0x190) src2 plane', 0x13828: 'TileDMASrc.(0x194) src2 depth',
             0x1382c: 'TileDMASrc.(0x198) src2 group', 0x13838: 'TileDMASrc.Fmt', 0x1383c: 'TileDMASrc.(0x1a8) src2 fmt',
             0x17800: 'TileDMADst.DMAConfig', 0x17808: 'TileDMADst.RowStride', 0x1780c: 'TileDMADst.PlaneStride',
             0x17810: 'TileDMADst.DepthStride', 0x17814: 'TileDMADst.GroupStride', 0x17818: 'TileDMADst.Fmt',
             0x1f800: 'KernelDMASrc.(0x2c)'}
    if addr in names:
        return names[addr]
    if 0x1f808 <= addr < 0x1f848:
        return 'KernelDMASrc.CoeffDMAConfig[%d]' % ((addr - 0x1f808) // 4)
    if 0x1f848 <= addr < 0x1f888:
        return 'KernelDMASrc.CoeffBaseAddr[%d]' % ((addr - 0x1f848) // 4)
    if 0x1f888 <= addr < 0x1f8c8:
        return 'KernelDMASrc.CoeffBfrSize[%d]' % ((addr - 0x1f888) // 4)
    if 0x1f8c8 <= addr < 0x1f8f8:
        return 'KernelDMASrc.stream word %d' % ((addr - 0x1f8c8) // 4)
    return '?'


HDR = ['TID/EON', 'ExeCycles/NextSize', 'LogEvents', 'Exceptions', 'DebugLogEvents', 'DebugExceptions', 'flags',
       'NextPointer', 'BARs', 'KBARs']


def compare(rec, verbose=False):
    actual = rec['task_descriptors']
    pred, extra = predict(rec)
    out = []
    tot = ok = 0
    if len(pred) != len(actual):
        out.append('  TASK COUNT predicted %d actual %d' % (len(pred), len(actual)))
    for i, (p, a) in enumerate(zip(pred, actual)):
        ah = [int(x, 16) for x in a['header_words']]
        for k, (x, y) in enumerate(zip(p['header_words'], ah)):
            tot += 1
            if x == y:
                ok += 1
            else:
                out.append('  task%d hdr[%d] %-20s pred %#x actual %#x' % (i, k, HDR[k], x, y))
        aw = {}
        for blk in a['blocks'].values():
            for ad, v in blk['words'].items():
                aw[int(ad, 16)] = int(v, 16)
        for ad in sorted(set(aw) | set(p['words'])):
            tot += 1
            x, y = p['words'].get(ad), aw.get(ad)
            if x == y:
                ok += 1
            else:
                out.append('  task%d %05x %-34s pred %s actual %s' % (i, ad, field_name(ad),
                                                                      '-' if x is None else hex(x), '-' if y is None else hex(y)))
        arec = [(int(r['address'], 16), r['count']) for r in a['records']]
        if arec != p['records']:
            out.append('  task%d records differ' % i)
        if p['size_bytes'] != a['size_bytes']:
            out.append('  task%d size pred %d actual %d' % (i, p['size_bytes'], a['size_bytes']))
    pd = predict_program(rec, pred)
    for k, v in pd.items():
        av = rec['program_descriptor'][k]
        if k == 'resource_addresses':
            av = [x for x in av if x != '0x0']
        tot += 1
        if av == v:
            ok += 1
        else:
            out.append('  program_descriptor.%s pred %s actual %s' % (k, v, av))
    cs = rec['constant_section']
    c = extra['const']
    if c is not None:
        good = (len(c) == cs['size'] and hashlib.sha256(c).hexdigest() == cs['sha256'])
        cmsg = 'const sha256 %s (size %d nz %d)' % ('MATCH' if good else 'DIFF', len(c), sum(1 for x in c if x))
    else:
        good = extra.get('const_size') == cs['size']
        cmsg = 'const size %s (%s vs %d; table bytes not reproduced)' % ('MATCH' if good else 'DIFF', extra.get('const_size'), cs['size'])
    return tot, ok, out, cmsg


def main():
    args = [a for a in sys.argv[1:] if not a.startswith('-')]
    pats = args or ['binary_*', 'env_bcast_*']
    files = []
    for p in pats:
        files += sorted(glob.glob(CASES + p + '.json'))
    allok = 0
    for f in files:
        rec = json.load(open(f))
        try:
            tot, ok, out, cmsg = compare(rec)
        except Exception as e:  # noqa
            print('%-52s ERROR %r' % (rec['case'], e))
            continue
        status = 'IDENTICAL' if (tot == ok and not out) else 'DIFF'
        allok += status == 'IDENTICAL'
        print('%-52s %s  %d/%d words+fields  %s' % (rec['case'], status, ok, tot, cmsg))
        for line in out:
            print(line)
    print('%d/%d cases identical (header words, register words, records, sizes, program descriptor)' % (allok, len(files)))



def predict_program(record, tasks):
    """Program descriptor fields: surfaces in BAR order (names sorted), each rounded up to
    16 KiB from 0x30000000, then __text, then __const at the next 128-byte boundary."""
    inputs, consts, ops, outputs = parse_mil(record['mil'])
    shp = {n: s for n, s, _ in inputs}
    for o in ops:
        shp[o['out']] = o['shape']
    names = sorted([n for n, _, _ in inputs] + outputs)
    addr = 0x30000000
    res = []
    for n in names:
        s = shp[n]
        res.append(addr)
        addr += ru(s[0] * dram(s)[2], 0x4000)
    text = addr
    end = 0
    off = 0
    for t in tasks:
        end = off + t['size_bytes']
        off += ru(t['size_bytes'], 0x100)
    return dict(task_count=len(tasks), task_words_minus_one=tasks[0]['size_bytes'] // 4 - 1,
                text_address=hex(text), constant_address=hex(text + ru(end, 0x80)),
                resource_addresses=[hex(a) for a in res])


if __name__ == '__main__':
    main()
