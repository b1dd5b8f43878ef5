#!/usr/bin/env python3
"""Predict the scheduling fields of Apple's modern H13 programs (header words, chaining,
Common block scheduling words, L2 placement/padding) from the network and the task plan,
and print every mismatch against the 150 records of
/work/shared/fixtures/apple-h13-oracles/cases/*.json.

Inputs a rule may use (never the case name, never the recorded value of the field it
predicts):
  * the MIL program: op kinds, operand/output names, shapes (single-op programs are
    classified into an engine path from the op alone; see classify_single_op);
  * the TASK PLAN, i.e. what a compiler has decided before it encodes registers:
    task count and order, the engine of each task (NE / PE), the shapes of each task
    (Common InDim/OutDim/Cin/Cout, kernel geometry), whether each operand is moved by
    the tile DMA from DRAM or stays in L2, whether a kernel is streamed, which
    tensor/intermediate each task reads/writes, the NE function (MACCfg) and the PE op
    (PE block).  For multi-task programs the plan is read back from the blocks of the
    record that are NOT predicted here (tile DMA, NE, PE, kernel DMA records, Common
    shapes) -- exactly the information an encoder has when it writes the header.
Usage: python3 predict.py [-v]   (-v lists every mismatch, otherwise a summary + lists)
"""
import os
SHARED = os.environ.get("ANEC_SHARED", os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../../shared"))
import glob, json, math, re, sys, collections

CASES = SHARED + '/fixtures/apple-h13-oracles/cases'
VERBOSE = '-v' in sys.argv


def lg2ceil(x):
    return (max(1, x) - 1).bit_length()


def round_up(v, a):
    return (v + a - 1) // a * a


# ----------------------------------------------------------------------------- loading
def load():
    out = []
    for f in sorted(glob.glob(CASES + '/*.json')):
        r = json.load(open(f))
        for t in r['task_descriptors']:
            t['hw'] = [int(x, 16) for x in t['header_words']]
            regs = {}
            for b in t['blocks'].values():
                for a, v in b['words'].items():
                    regs[int(a, 16)] = int(v, 16)
            t['regs'] = regs
        out.append(r)
    return out


# ----------------------------------------------------------------------------- MIL
def mil_io(mil):
    sig = re.search(r'main<\w+>\((.*?)\)\s*\{', mil, re.S).group(1)
    ins = re.findall(r'>\s*(\w+)', sig)
    outs = [o.strip() for o in re.search(r'\}\s*->\s*\((.*?)\);', mil).group(1).split(',')]
    return ins, outs


def mil_ops(mil):
    """[(result, op, {arg: value})] for non-const ops."""
    res = []
    for m in re.finditer(r'(\w+)\s*=\s*(\w+)\((.*?)\)\[name', mil):
        name, op, args = m.group(1), m.group(2), m.group(3)
        if op == 'const':
            continue
        d = dict(re.findall(r'(\w+)\s*=\s*([\w\.\-]+)', args))
        res.append((name, op, d))
    return res


def consts(mil):
    """name -> 'scalar' | 'blob' for MIL constants."""
    c = {}
    for m in re.finditer(r'(\w+)\s*=\s*const\(\)\[name = string\("\w+"\), val = (.*?)\];', mil):
        c[m.group(1)] = 'blob' if 'BLOBFILE' in m.group(2) else 'scalar'
    return c


PE_BINARY = {'add', 'sub', 'mul', 'minimum', 'maximum'}


def classify_single_op(mil):
    """Engine path of a one-task program, from the MIL op alone (PE or NE)."""
    ops = mil_ops(mil)
    c = consts(mil)
    kinds = [op for _, op, _ in ops]
    main = kinds[0]
    args = ops[0][2]
    if main in PE_BINARY:
        other = args.get('y')
        if main == 'minimum' and c.get(other) == 'scalar':
            return 'NE'          # clamp against a constant: NE table path
        return 'PE'              # runtime/runtime or x (op) scalar constant
    if main in {'cast', 'abs'}:
        return 'PE'
    if main.startswith('reduce_'):
        axes = re.search(r'axes = (\w+)', mil)
        m = re.search(r'tensor<int32, \[\d+\]> axes = const\(\)\[name = string\("axes"\), val = tensor<int32, \[\d+\]>\(\[([\d, -]+)\]\)', mil)
        ax = [int(a) for a in m.group(1).split(',')] if m else []
        if main == 'reduce_max' and ax == [1]:
            return 'NE'          # max over channels: NE pooling path
        return 'PE'
    return 'NE'                  # activations, conv, slice, transpose, tile, ...


# ----------------------------------------------------------------------------- plan
def bits(v, lo, n):
    return (v >> lo) & ((1 << n) - 1)


def task_plan(r, i, t):
    """What the compiler knows about task i before writing the fields predicted here."""
    g = lambda a: t['regs'].get(a, 0)
    p = {}
    p['i'] = i
    p['n'] = len(r['task_descriptors'])
    p['first'] = i == 0
    p['last'] = i == p['n'] - 1
    p['engine'] = 'NE' if (g(0xc800) & 3) == 2 else 'PE'       # NE KernelFmt set = NE op
    p['src_dram'] = g(0x13800) & 1                            # tile DMA source enabled
    p['src2_dram'] = 1 if g(0x1383c) else 0                     # second tile-DMA source fmt written
    p['dst_dram'] = g(0x17800) & 1                            # tile DMA destination enabled
    p['src_dep'] = bits(g(0x13800), 18, 2)                    # DependencyMode of the source
    p['kernel_stream'] = any(x['count'] == 62 for x in t['records'])
    p['mac'] = g(0xc804)
    p['pe_op'] = g(0x8800)
    p['pe_final_scale'] = g(0x880c)
    p['ne_kcfg'] = g(0xc800)
    p['Cin'], p['Cout'] = g(0xc), g(0x10)
    p['Win'], p['Hin'] = g(0) & 0xffff, g(0) >> 16
    p['Wout'], p['Hout'] = g(0x14) & 0xffff, g(0x14) >> 16
    p['Din'], p['Dout'] = g(4), g(0x18)
    p['kh'], p['kw'] = bits(g(0x1c), 5, 5), bits(g(0x1c), 0, 5)
    p['sy'] = bits(g(0x1c), 15, 2)
    p['groups'] = g(0x24) & 0x1fff
    # the L2 result layout the planner chose (a transposing NE pass writes W as channels)
    p['res_ch'], p['res_row'] = g(0x4838), g(0x483c)
    p['src2_l2'] = 1 if (g(0x481c) or g(0x4820)) else 0       # a second operand (L2 or DRAM)
    # kernel bytes (sum of enabled coefficient buffers), DRAM footprints (tile DMA depth strides)
    p['kbytes'] = sum(g(0x1f888 + 4 * k) & ~63 for k in range(16) if g(0x1f808 + 4 * k) & 1)
    il = lambda fmt: max(1, bits(fmt, 24, 4))                 # tile DMA Fmt.Interleave
    src2_ch = p['Cin']
    # DRAM footprint of an operand: the smaller of (channels / interleave) x plane stride and
    # the depth stride (a slice of a larger tensor reads only its channels; a transposed
    # write touches at most the whole tensor)
    fp = lambda ch, fmt, plane, depth: min(-(-ch // il(fmt)) * plane, depth) if depth else -(-ch // il(fmt)) * plane
    p['sbytes'] = (p['src_dram'] * fp(p['Cin'], g(0x13838), g(0x13810), g(0x13814)) +
                   p['src2_dram'] * fp(src2_ch, g(0x1383c), g(0x13824), g(0x13828))) * max(1, p['Din'])
    p['dbytes'] = p['dst_dram'] * fp(p['Cout'], g(0x17818), g(0x1780c), g(0x17810)) * max(1, p['Dout'])
    # which buffers the task touches (plan identity of operands), kept as BAR-independent
    # roles: 'io' (a program input/output), 'inter' (DRAM intermediate), 'const'
    h = t['hw']
    x8, x9 = h[8], h[9]
    def role(bar):
        return {1: 'const', 3: 'inter'}.get(bar, 'io')
    p['r0'] = role(bits(x8, 0, 5)) if bits(x8, 5, 1) else None
    p['r1'] = role(bits(x8, 6, 5)) if bits(x8, 11, 1) else None
    p['w'] = role(bits(x8, 12, 5)) if bits(x8, 17, 1) else None
    p['k'] = role(bits(x9, 0, 5)) if bits(x9, 5, 1) else None
    return p


# ----------------------------------------------------------------------------- rules
def nne_log2(p):
    """ActiveNE: log2 of the NE count = ceil(log2(output channels)), at most 4 (16 NEs).
    Output channels are the channels the NE writes: Cout, or, for a transposing pass whose
    L2 result is written with a 16-byte channel stride, result row / channel stride."""
    ch = p['Cout']
    if p['res_ch'] == 0x10 and p['res_row'] and p['res_row'] // 0x10 > ch:
        ch = p['res_row'] // 0x10
    return min(4, lg2ceil(ch))


def ne_function(p, mil_main=None):
    """'pass' | 'relu' | 'table' | 'sqrtfam' | 'conv' from the NE MACCfg (plan) and the MIL op."""
    mac = p['mac']
    nl = bits(mac, 16, 2)
    if mil_main in ('sqrt', 'rsqrt') or (mil_main == 'real_div' and p['i'] == 0) or mac == 0x121c08:
        return 'sqrtfam'
    if nl == 2:
        return 'table'
    if nl == 1:
        return 'relu'
    if bits(mac, 0, 3) == 4 and bits(mac, 3, 1) and not p['kernel_stream']:
        return 'pass'
    return 'conv'


def sections(plans):
    """L2 sections: a section ends after the last task and after every task that writes a
    DRAM intermediate (its consumer must reload from DRAM)."""
    ends = [p['last'] or p['w'] == 'inter' for p in plans]
    starts = [True] + ends[:-1]
    return starts, ends


def exe_cycles(p):
    """ExeCycles ~ DRAM traffic / 33750 bytes (kernel + tile-DMA sources + destination)."""
    return (p['kbytes'] + p['sbytes'] + p['dbytes']) // 33750


def dbg_hi(p, fn):
    if p['engine'] == 'NE' and fn == 'pass':
        return 0x0000
    if p['engine'] == 'NE' and fn == 'sqrtfam':
        return 0xffd8
    return 0xfff8


def pe_is_reduction(p):
    """A PE reduction: max/sum/variance ops, or a scaled (mean) / shrinking pass."""
    op = p['pe_op']
    if op in (0x2, 0x1000, 0x2010, 0x92010) or p.get('mil_reduce'):
        return True
    if op == 0:
        shrinks = p['Cout'] * p['Hout'] * p['Wout'] < p['Cin'] * p['Hin'] * p['Win']
        return shrinks or p['pe_final_scale'] != 0x3f800000
    return False


def pe_mode(p):
    """PE Cfg bits 4..6: 2 one-operand elementwise, 3 two-operand elementwise,
    5 reduction, 6 two-operand reduction (PE op 0x92010).  Mode 4 (x * broadcast constant,
    layer-norm normalize step) is not separated from 3 by any plan field tried."""
    if p['pe_op'] == 0x92010:
        return 6
    if pe_is_reduction(p):
        return 5
    if p['src2_l2'] or p['src2_dram']:
        return 3
    return 2


def c2c(p):
    """Common word 0x2c (PE tile): log2(rows) << 4 | log2(cols); cols = clamp(W, 16, 512),
    rows = min(H, budget / cols), budget 512 elements (one operand) or 256 (two)."""
    if p['engine'] == 'NE':
        return 0
    tw = min(9, max(4, lg2ceil(p['Win'])))
    budget = 8 if (p['src2_l2'] or p['src2_dram']) else 9
    th = min(lg2ceil(p['Hin']), max(0, budget - tw))
    return th << 4 | tw


def tile_height(p):
    if p['engine'] == 'PE' and pe_mode(p) == 5 and not p['dst_dram'] and p['Hout'] > 32 and p['Wout'] <= 8:
        return 32
    return p['Hout']


def ne_conv_like(p):
    """NE task whose MAC runs a kernel (OpMode 0) that mixes channels: convolution, matmul,
    channel reduction (KernelMode 0, or Cout != Cin)."""
    return p['kernel_stream'] and bits(p['mac'], 0, 3) == 0 and (bits(p['mac'], 3, 1) == 0 or p['Cout'] != p['Cin'])


def l2_src_row(p, ch):
    """Predicted first-source L2 row stride for a DRAM-loaded source (channel stride ch).
    Padding is 2 or 3 granules of 16 B so that consecutive rows start on different banks."""
    C = p['Cin']
    base = C * ch
    if p['engine'] == 'PE':
        if C == 1 and ch == 0x10:
            return 0x10 * max(2, p['Win'])       # W interleaved, one element per 16 B
        if pe_is_reduction(p):
            return base + (0x20 if p['dst_dram'] else 0)
        return base + (0x20 if ch <= 0x20 else 0)
    # NE: pad only narrow rows (channel stride <= 0x40) that are read row after row
    if ch > 0x40 or not (p['Hin'] > 1 or ne_conv_like(p)):
        return base
    if p['sy'] == 2 or base <= 0x200 or p['res_ch'] >= 0x100:
        return base + 0x20
    return base + 0x30


def small_source_mode(p):
    """SmallSourceMode: a channel-mixing NE kernel task over a small image (H, W <= 8, or a
    stride-2 window) whose kernel is at most ~1.2 MB (2 MB and 8 MB kernels clear it)."""
    return int(ne_conv_like(p) and ((p['Hin'] <= 8 and p['Win'] <= 8) or p['sy'] == 2)
               and p['kbytes'] <= 0x140000)


# ----------------------------------------------------------------------------- checker
class Tally:
    def __init__(self):
        self.ok = collections.Counter()
        self.n = collections.Counter()
        self.bad = collections.defaultdict(list)

    def check(self, field, case, i, pred, act, note=''):
        self.n[field] += 1
        if pred == act:
            self.ok[field] += 1
        else:
            fmt = (lambda v: '%#x' % v) if isinstance(pred, int) and not isinstance(pred, bool) else str
            self.bad[field].append('%s[%d] pred=%s act=%s %s' % (case, i, fmt(pred), fmt(act) if act is not None else None, note))


def main():
    T = Tally()
    recs = load()
    for r in recs:
        case = r['case']
        ts = r['task_descriptors']
        plans = [task_plan(r, i, t) for i, t in enumerate(ts)]
        ins, outs = mil_io(r['mil'])
        ops = mil_ops(r['mil'])
        mil_main = ops[0][1] if ops else None
        # ---- BAR numbering: I/O tensors sorted by name from BAR 4; 3 = DRAM intermediates;
        #      1 = __const; 0 = __text (TBase of the next-task pointer)
        names = sorted(set(ins) | set(outs))
        bar = {nm: 4 + k for k, nm in enumerate(names)}
        # ---- engine path of one-task programs from the MIL op
        if len(ts) == 1:
            T.check('engine(single, from MIL)', case, 0, classify_single_op(r['mil']), plans[0]['engine'])
        # ---- program descriptor / layout
        pd = r['program_descriptor']
        T.check('pd.task_count', case, 0, len(ts), pd['task_count'])
        T.check('pd.task_words_minus_one', case, 0, ts[0]['size_bytes'] // 4 - 1, pd['task_words_minus_one'])
        offs = [0]
        for t in ts[:-1]:
            offs.append(round_up(offs[-1] + t['size_bytes'], 0x100))
        text_size = offs[-1] + ts[-1]['size_bytes']
        if 'task_section' in pd:
            T.check('pd.task_section.size', case, 0, text_size, pd['task_section']['size'])
        T.check('const after text (round 0x40)', case, 0,
                int(pd['text_address'], 16) + round_up(text_size, 0x40), int(pd['constant_address'], 16))
        starts, ends = sections(plans)
        if mil_main and mil_main.startswith('reduce_'):
            for p in plans:                       # the PE task of a reduce_* program reduces
                p['mil_reduce'] = p['engine'] == 'PE'
        for i, (t, p) in enumerate(zip(ts, plans)):
            h = t['hw'] + [None]
            g = lambda a: t['regs'].get(a, 0)
            # size: 10 header words + 1 when the TD has a dependency word; records count+1
            fn = ne_function(p, mil_main if len(ts) <= 2 else None) if p['engine'] == 'NE' else None
            # ---- word 0
            T.check('w0 TID/NID/LNID/EON', case, i, (int(i > 0) << 24) | (int(p['last']) << 25) | i, h[0])
            # ---- word 1
            nxt = ts[i + 1]['size_bytes'] // 4 - 1 if not p['last'] else 0
            T.check('w1.NextSize', case, i, nxt, bits(h[1], 16, 9))
            T.check('w1.ExeCycles ~ DRAM bytes/33750 (approximate)', case, i, exe_cycles(p), bits(h[1], 0, 16),
                    'k=%d s=%d d=%d %s' % (p['kbytes'], p['sbytes'], p['dbytes'], p['engine']))
            # ---- word 2 / 3 / 5
            T.check('w2 LogEvents', case, i, 0x400 | (8 if p['first'] else 0) | (0x22 if p['last'] else 0), h[2])
            T.check('w3/w5 zero', case, i, (0, 0), (h[3], h[5]))
            # ---- word 4
            low = (0x6a if p['last'] else 0x68) if (p['first'] or p['last']) else 0
            T.check('w4 DebugLogEvents', case, i, dbg_hi(p, fn) << 8 | low, h[4], 'fn=%s' % fn)
            # ---- word 6
            spc = int(p['r0'] is not None and not p['src_dram'])
            dpc = int(p['w'] is not None and not p['dst_dram'])
            tde = int(p['k'] == 'inter')
            w6 = (int(bool(p['ne_kcfg'] & 0x1000)) << 8 | int(starts[i]) << 11 | int(ends[i]) << 12 |
                  spc << 13 | dpc << 14 | int(ends[i]) << 15 | tde << 24 | p['src_dram'] << 28 |
                  p['dst_dram'] << 29)
            T.check('w6 flags', case, i, w6, h[6])
            T.check('w6 flags except SPL/TSR/TSE (sections)', case, i, w6 & ~0x9800, h[6] & ~0x9800)
            # ---- word 7
            T.check('w7 NextPointer', case, i, 0 if p['last'] else offs[i + 1], h[7])
            # ---- word 8: ENE, TBE/TBase, BARs
            ane = nne_log2(p) if p['engine'] == 'NE' else None
            ene = ane + 1 if p['engine'] == 'NE' else 0
            T.check('w8.ENE (ActiveNE+1 | 0)', case, i, ene, bits(h[8], 24, 3))
            T.check('w8.ENE == Cfg.ActiveNE+1 (given Cfg)', case, i,
                    (bits(g(0x34), 19, 3) + 1) if p['engine'] == 'NE' else 0, bits(h[8], 24, 3))
            T.check('w8.TBase/TBE', case, i, (0, int(not p['last'])), (bits(h[8], 18, 5), bits(h[8], 23, 1)))
            used = [(bits(h[8], 0, 5), bits(h[8], 5, 1)), (bits(h[8], 6, 5), bits(h[8], 11, 1)),
                    (bits(h[8], 12, 5), bits(h[8], 17, 1)), (bits(h[9], 0, 5), bits(h[9], 5, 1))]
            legal = set(bar.values()) | {1, 3}
            T.check('w8/w9 BARs within {1,3} U sorted-name I/O BARs', case, i, True,
                    all(b in legal for b, e in used if e))
            if len(ts) == 1:
                a = ops[0][2]
                rt = [v for k, v in sorted(a.items()) if k in ('x', 'y') and v in ins]
                if 'x' in a and a['x'] in ins:
                    rt = [a['x']] + ([a['y']] if a.get('y') in ins else [])
                else:
                    rt = [v for v in a.values() if v in ins][:2]
                pr0 = (bar[rt[0]], 1) if rt else (0, 0)
                pr1 = (bar[rt[1]], 1) if len(rt) > 1 and p['engine'] == 'PE' else (0, 0)
                pw = (bar[outs[0]], 1)
                pk = (1, 1) if p['kernel_stream'] else (0, 0)
                T.check('w8/w9 BARs (single-op, from MIL names)', case, i, (pr0, pr1, pw, pk), tuple(used))
            if p['last']:
                T.check('last task W = BAR(output)', case, i, (bar[outs[0]], 1), used[2])
            if p['k'] == 'const' or (p['kernel_stream'] and p['k'] is None):
                T.check('w9 KBase0=1 for a streamed __const kernel', case, i, (1, 1), used[3])
            T.check('w9 KBE0 == kernel DMA streamed', case, i, int(p['kernel_stream']), used[3][1])
            # ---- word 10 (dependency on the producer of a DRAM intermediate read as kernel)
            T.check('header length (11 iff TDE)', case, i, 11 if tde else 10, len(t['hw']))
            if tde:
                prod = max(j for j in range(i) if plans[j]['w'] == 'inter')
                T.check('w10 = TID of the producer of the kernel intermediate', case, i, prod, h[10])
            # ---- size of the task
            T.check('size_bytes = 4*(header + sum(count+1))', case, i,
                    4 * (len(t['hw']) + sum(x['count'] + 1 for x in t['records'])), t['size_bytes'])
            # ---- Common block
            T.check('C.0x20 = 0x2041', case, i, 0x2041, g(0x20))
            T.check('C.TaskInfo (NID=1 on NE)', case, i, (1 << 20) if p['engine'] == 'NE' else 0, g(0x38))
            T.check('C.TileHeight', case, i, tile_height(p), g(0x28), 'Hout=%d' % p['Hout'])
            T.check('C.0x2c (PE tile)', case, i, c2c(p), g(0x2c), '%s W=%d H=%d' % (p['engine'], p['Win'], p['Hin']))
            T.check('C.DPE.Category', case, i, 1 if p['mac'] == 0x121c08 else 0, g(0x3c))
            cfg = g(0x34)
            if p['engine'] == 'PE':
                pred = 0x01 | (2 if p['src2_dram'] else 0) | pe_mode(p) << 4
                T.check('C.Cfg (PE) low byte', case, i, pred, cfg, 'peop=%#x' % p['pe_op'])
            else:
                T.check('C.Cfg.ActiveNE (NE)', case, i, ane, bits(cfg, 19, 3),
                        'Cout=%d res=%#x/%#x' % (p['Cout'], p['res_ch'], p['res_row']))
                T.check('C.Cfg unnamed bit0=1, AccDoubleBufEn=0 (NE)', case, i, (1, 0), (cfg & 1, bits(cfg, 26, 1)))
                ssm_pred = small_source_mode(p)
                T.check('C.Cfg.SmallSourceMode (NE)', case, i, ssm_pred, bits(cfg, 2, 1),
                        'HxW=%dx%d s=%d g=%d' % (p['Hin'], p['Win'], p['sy'], p['groups']))
                sh = (bits(cfg, 8, 3), bits(cfg, 12, 3), bits(cfg, 16, 3))
                T.check('C.Cfg SmallSourceMode => ShPref/ShMin/ShMax = 4,4,4', case, i, True,
                        (not bits(cfg, 2, 1)) or sh == (4, 4, 4))
                T.check('C.Cfg Sh = 0,0,0 for NE pass/elementwise with H == 1 (no kernel mix)', case, i,
                        True, sh == (0, 0, 0) or ne_conv_like(p) or p['Hin'] > 1 or fn not in ('pass', 'relu'),
                        'sh=%s fn=%s' % (sh, fn))
            # ---- L2
            if p['src_dram'] and p['engine'] in ('PE', 'NE'):
                ch = g(0x480c)
                T.check('L2 source row stride (DRAM source)', case, i, l2_src_row(p, ch), g(0x4810),
                        '%s C=%d H=%d W=%d ch=%#x' % (p['engine'], p['Cin'], p['Hin'], p['Win'], ch))
            if len(ts) == 1:
                end1 = g(0x4808) + g(0x4810) * max(1, p['Hin'])
                if p['src2_dram']:
                    b2 = round_up(end1, 0x40)
                    b2 += 0x40 if b2 % 0x400 == 0 else 0  # never on the same 1 KiB phase as src1
                    T.check('L2 src2 base = round_up(end(src1), 0x40) (+0x40 if 1 KiB aligned)', case, i, b2, g(0x481c))
                    end = g(0x481c) + g(0x4824) * max(1, p['Hin'])
                else:
                    end = end1
                T.check('L2 result base = end of last source', case, i, end, g(0x4834))
    # ----------------------------------------------------------------------------- report
    print('%-60s %9s' % ('field', 'match'))
    for f in T.n:
        print('%-60s %4d/%-4d' % (f, T.ok[f], T.n[f]))
    print()
    for f in T.n:
        if T.bad[f]:
            lst = T.bad[f] if VERBOSE else T.bad[f][:25]
            print('--- mismatches: %s (%d)' % (f, len(T.bad[f])))
            for b in lst:
                try:
                    print('    ' + b)
                except BrokenPipeError:
                    sys.exit(0)
            if not VERBOSE and len(T.bad[f]) > 25:
                print('    ... (%d more, -v lists all)' % (len(T.bad[f]) - 25))


# ----------------------------------------------------------------------------- v4.2.1
V4_DIR = SHARED + '/fixtures/apple-h13/hwx'
V4_BANNER_INPUTS = {            # Inputs / Outputs / Bottom of the netplists the files come from
    'sum': (['image2', 'image'], ['probs@output'], ['image', 'image2']),
    'relu': (['image'], ['probs@output'], ['image']),
    'sigmoid': (['image'], ['probs@output'], ['image']),
    'conv': (['image'], ['probs@output'], ['image']),
    'model': (['image'], ['probs@output'], ['image']),
}


def v4_tasks(fn):
    import struct
    sys.path.insert(0, SHARED + '/tools')
    from hwxdump import parse
    o, d = parse(fn)
    text = [s for c in o['cmds'] if c['cmd'] == 'LC_SEGMENT_64' for s in c['sections'] if s['sectname'] == '__text'][0]
    consts = [s for c in o['cmds'] if c['cmd'] == 'LC_SEGMENT_64' for s in c['sections'] if s['sectname'] == '__const'][0]
    off, size = int(text['offset'], 16), int(text['size'], 16)
    blob = d[off:off + size]
    hw = list(struct.unpack_from('<10I', blob, 0))
    regs, q = {}, 40
    while q + 4 <= len(blob):
        w = struct.unpack_from('<I', blob, q)[0]
        cnt, addr = (w >> 26) + 1, w & 0x3ffffff
        if q + 4 + 4 * cnt > len(blob):
            break
        for k, v in enumerate(struct.unpack_from('<%dI' % cnt, blob, q + 4)):
            regs[addr + 4 * k] = v
        q += 4 + 4 * cnt
    return dict(hw=hw, regs=regs, size=size, text_addr=int(text['addr'], 16), const_addr=int(consts['addr'], 16))


def v4_compare():
    """Evaluate the fields where the two generations differ on Apple's v4.2.1 programs."""
    T = Tally()
    for name in ('relu', 'sigmoid', 'conv', 'model', 'sum'):
        t = v4_tasks('%s/%s.hwx' % (V4_DIR, name))
        h, g = t['hw'], (lambda a: t['regs'].get(a, 0))
        # v4 NE elementwise tasks leave KernelFmt 0 (modern writes 2), so detect the NE by an
        # active MAC configuration instead
        ne = g(0xc804) not in (0, 0x100000)
        if ne and bits(g(0xc804), 0, 3) == 4:      # NE pass/table task (relu, sigmoid)
            T.check('[v4] NE pass/table task: KernelFmt 0, BinaryPoint 0 (current: 2, 0x1c)',
                    name, 0, (0, 0), (g(0xc800) & 3, bits(g(0xc804), 8, 5)))
        if not ne:
            T.check('[v4] PE task: NE block all zero (current: KernelCfg 0x80, MACCfg 0x100000)',
                    name, 0, (0, 0), (g(0xc800), g(0xc804)))
        ins, outs, bottom = V4_BANNER_INPUTS[name]
        # BARs: v4 = outputs from 4, then inputs in declaration order; modern = sorted names
        v4bar = {nm: 4 + k for k, nm in enumerate(outs + ins)}
        modbar = {nm: 4 + k for k, nm in enumerate(sorted(outs + ins))}
        act = (bits(h[8], 0, 5), bits(h[8], 6, 5) if bits(h[8], 11, 1) else None, bits(h[8], 12, 5))
        for gen, bar in (('v4', v4bar), ('modern', modbar)):
            pred = (bar[bottom[0]], bar[bottom[1]] if len(bottom) > 1 else None, bar[outs[0]])
            T.check('[%s] BAR numbering' % gen, name, 0, pred, act)
        T.check('[v4] LogEvents single task = 0x422', name, 0, 0x422, h[2])
        T.check('[modern] LogEvents single task = 0x42a', name, 0, 0x42a, h[2])
        T.check('[both] w0/w4/w6 = 0x02000000/0xfff86a/0x30009800', name, 0,
                (0x02000000, 0xfff86a, 0x30009800), (h[0], h[4], h[6]))
        T.check('[both] ENE = ActiveNE+1 | 0', name, 0, (bits(g(0x34), 19, 3) + 1) if ne else 0, bits(h[8], 24, 3))
        cout = g(0x10)
        T.check('[both] ActiveNE = min(4, ceil log2 Cout) (NE)', name, 0,
                min(4, lg2ceil(cout)) if ne else 0, bits(g(0x34), 19, 3) if ne else 0)
        T.check('[v4] TD = dense 0x274 bytes', name, 0, 0x274, t['size'])
        T.check('[both] __const at text + round_up(text, 0x40)', name, 0,
                t['text_addr'] + round_up(t['size'], 0x40), t['const_addr'])
        if ne:
            T.check('[v4] NE AccDoubleBufEn = 1', name, 0, 1, bits(g(0x34), 26, 1))
            T.check('[modern] NE AccDoubleBufEn = 0', name, 0, 0, bits(g(0x34), 26, 1))
            conv = bits(g(0xc804), 0, 4) == 0
            sh = (bits(g(0x34), 8, 3), bits(g(0x34), 12, 3), bits(g(0x34), 16, 3))
            T.check('[v4] NE Sh = (4,4,4)+SSM conv, (1,0,1) elementwise', name, 0,
                    ((4, 4, 4), 1) if conv else ((1, 0, 1), 0), (sh, bits(g(0x34), 2, 1)))
            T.check('[modern] NE Sh = (4,4,4)+SSM conv(small), (0,0,0) elementwise', name, 0,
                    ((4, 4, 4), 1) if conv else ((0, 0, 0), 0), (sh, bits(g(0x34), 2, 1)))
            C, ch = g(0x0c), g(0x480c)
            T.check('[v4] NE source row = C*ch (no padding)', name, 0, C * ch, g(0x4810))
            p = dict(engine='NE', Cin=C, Hin=g(0) >> 16, Win=g(0) & 0xffff, kernel_stream=conv,
                     mac=g(0xc804), Cout=cout, sy=bits(g(0x1c), 15, 2), res_ch=g(0x4838), dst_dram=1)
            T.check('[modern] NE source row (modern padding rule)', name, 0, l2_src_row(p, ch), g(0x4810))
        else:
            T.check('[both] PE row = C*ch + 0x20', name, 0, g(0x0c) * g(0x480c) + 0x20, g(0x4810))
            T.check('[both] PE Cfg = 0x33 (two DRAM operands)', name, 0, 0x33, g(0x34))
        T.check('[both] C.0x2c', name, 0, 4 if not ne else 0, g(0x2c))
    print()
    print('=== v4.2.1 programs (%s): generation-specific rules' % V4_DIR)
    for f in T.n:
        print('%-60s %4d/%-4d' % (f, T.ok[f], T.n[f]))
        for b in T.bad[f]:
            print('    ' + b)


if __name__ == '__main__':
    main()
    v4_compare()
