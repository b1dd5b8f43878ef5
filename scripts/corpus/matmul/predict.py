#!/usr/bin/env python3
"""Predicts every task's header words and register words of Apple's (macOS 26) H13 programs for
matmul / linear with a constant weight, from the MIL program alone, and compares them with the
records `matmul_*`, `env_mm_r2rb_*`, `chain_base_matmul_d256_s64`, `chain_pair_mm_*`.
Rules and their evidence: docs/rationale/current-compiler/matmul.md.

  python3 predict.py              # every record of the families: words equal / total
  python3 predict.py -v CASE      # one case (substring), every mismatching word decoded
  python3 predict.py -a CASE      # ... and every equal word too
  python3 predict.py --heldout    # the same rules on rrmm_r2rb_*_tx0_* (not used to derive them)

The plan (matmul.md section 1):
  y[M, N] = x[M, K] @ w[N, K]^T  is a 1x1 convolution with Cin = K, Cout = N over M "pixels".
  P  prep task   (NE pass, no kernel): x read as C = Mc rows, H = Mh, W = K, written transposed
                 (Cfg bit 28: W -> C) as C = K, H = Mh, W = Mc.  It stays in L2 (regime A) and is
                 handed on through the BAR 3 dependency, or goes to DRAM scratch (regime B).
  C  compute task(s) (NE conv 1x1, OCG 4): Cin = K, W = Mc, H = Mh, Cout = N (or a slice), result
                 written transposed (C -> W) so that it lands as product rows [M, N].
  Y  copy-out task (NE pass) when the transposed result stays in L2 (regime A, big result).
  A chained matmul (mm -> mm) reads the previous compute's untransposed L2 result directly.
"""
import sys, os, math
sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), '../conv'))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import words, decode_word, field_names
from dump import cases, HELDOUT
import weights as WT
import re

L2_CAPACITY = 0x100000            # bytes (regime A/B boundary; interval in matmul.md)
L2_RESULT_KEEP = 0x10000          # transposed result bytes above which it stays in L2 + copy task (1 example)
KMEM_PER_NE_DRAM = 0x10000        # regime B: N slices of at most 64 KiB per NE
EXE_BYTES_PER_UNIT = 1024000 / 30 # as convolution.md
KMEM_SSM_MAX = 0x12080            # as convolution.md
FOLD_W = 8                        # regime A with kept result: M folded as H = M/8 rows of W = 8


def rup(v, a):
    return (v + a - 1) // a * a


def bars(mil):
    """inputs and outputs sorted by name from BAR 4 (header-common-l2.md)"""
    m = re.search(r'func main<\w+>\((.*?)\) \{', mil)
    ins = re.findall(r'> (\w+)', m.group(1))
    outs = re.search(r'\} -> \((.*?)\);', mil).group(1).replace(' ', '').split(',')
    return {n: 4 + i for i, n in enumerate(sorted(ins + outs))}


def parse(c):
    mil = c['mil']
    mms = WT.matmuls(mil)
    xshape = [int(v) for v in re.search(r'func main<\w+>\(tensor<fp16, \[([\d, ]+)\]>', mil).group(1).split(',')]
    M, K = xshape[-2], xshape[-1]
    act = None
    if re.search(r'= relu\(', mil):
        act = 'relu'
    if re.search(r'= gelu\(', mil):
        act = 'gelu'
    b = bars(mil)
    xname = re.search(r'func main<\w+>\(tensor<[^>]*> (\w+)\)', mil).group(1)
    oname = re.search(r'\} -> \((\w+)\);', mil).group(1)
    return dict(M=M, K=K, mms=mms, act=act, bx=b[xname], by=b[oname])


def plan(c):
    d = parse(c)
    M, K = d['M'], d['K']
    mm0 = d['mms'][0]
    N = mm0['N']
    # ---- regime: does x^T (K channels of M) fit in L2 beside x?
    chs_t = rup(2 * M, 16)
    xt_bytes = K * chs_t
    regime = 'A' if xt_bytes + M * min(rup(2 * K, 16), 0x100) <= L2_CAPACITY else 'B'
    tasks = []
    if regime == 'A':
        keep = len(d['mms']) == 1 and M * N * 2 > L2_RESULT_KEEP
        Mc, Mh = (FOLD_W, M // FOLD_W) if keep else (M, 1)
        tasks.append(dict(kind='P', Mc=Mc, Mh=Mh))
        for i, mm in enumerate(d['mms']):
            last_mm = i == len(d['mms']) - 1
            tasks.append(dict(kind='C', mm=mm, lo=0, hi=mm['N'], Mc=Mc, Mh=Mh,
                              src='scratch' if i == 0 else 'l2',
                              dst='l2keep' if keep else ('dram' if last_mm else 'l2next'),
                              transposed=last_mm, act=d['act'] if last_mm else None))
        if keep:
            tasks.append(dict(kind='Y', Mc=Mc, Mh=Mh, N=N))
    else:
        tasks.append(dict(kind='P', Mc=M, Mh=1))
        n = 1
        while N // n * K * 2 // 16 > KMEM_PER_NE_DRAM:
            n *= 2
        per = N // n
        for s in range(n):
            tasks.append(dict(kind='C', mm=mm0, lo=s * per, hi=(s + 1) * per, Mc=M, Mh=1, src='dram',
                              dst='dram', transposed=True, act=d['act'], slice=s, nslices=n))
    return d, regime, tasks


def l2_layout(d, regime, tasks):
    """L2 regions.  Prep: result then x source; a compute result after its source; a result kept
    for the copy-out task goes at 0 and shifts the rest (one example)."""
    M, K = d['M'], d['K']
    P = tasks[0]
    Mc, Mh = P['Mc'], P['Mh']
    lay = {}
    # prep source (x streamed from DRAM): channel stride capped at 0x100 (NE source), 0x40 when folded
    xs_ch = min(rup(2 * K, 16), 0x100 if Mh == 1 else 0x40)
    xs_raw = Mc * xs_ch
    xs_row = xs_raw + (0x20 if Mh > 1 else 0)
    # prep result (x^T): channel = r16(2 Mc) (+0x10 when >= 0x40), row = K channels (+0x30 when Mh > 1)
    r_ch = rup(2 * Mc, 16)
    r_ch += 0x10 if r_ch >= 0x40 else 0
    r_raw = K * r_ch
    r_row = r_raw + (0x30 if Mh > 1 else 0)
    keep = any(t['kind'] == 'Y' for t in tasks)
    N = tasks[1]['mm']['N']
    kept = Mh * Mc * 2 * N if keep else 0
    if regime == 'A':
        # the compute task puts the larger of its source (x^T) and its kept result at 0; the prep
        # task puts its x source right after x^T; a DRAM-bound result goes right after the source
        xt = r_row * Mh
        lay['P_res'] = kept if kept > xt else 0
        lay['C_res'] = 0 if kept > xt else xt
        lay['P_src'] = lay['P_res'] + xt
    else:
        lay['P_src'] = 0
        lay['P_res'] = xs_row * Mh
    lay.update(xs_ch=xs_ch, xs_raw=xs_raw, xs_row=xs_row, r_ch=r_ch, r_raw=r_raw, r_row=r_row, kept=kept)
    return lay


def predict(c):
    d, regime, tasks = plan(c)
    lay = l2_layout(d, regime, tasks)
    M, K = d['M'], d['K']
    out = []
    koff = 0
    sizes = [504 if t['kind'] in 'PY' else 628 for t in tasks]
    offs = [0]
    for s in sizes[:-1]:
        offs.append(offs[-1] + rup(s, 256))
    ntask = len(tasks)
    prev_res = None   # (base, ch, row, plane) of the previous compute's L2 result
    for ti, t in enumerate(tasks):
        first, last = ti == 0, ti == ntask - 1
        w = {}
        Mc, Mh = t['Mc'], t['Mh']
        # -------- kernel DMA
        kbytes = 0
        if t['kind'] == 'C':
            mm = t['mm']
            h = WT.file_halfwords(c['weights'], mm['ci'])
            ocg_c = WT.ocg_for(t['hi'] - t['lo'], t['transposed'], Mh * Mc)
            ch = WT.chunks(mm['N'], mm['K'], h, t['lo'], t['hi'], mm['ty'], B=1 << ocg_c)
            table = 0x80 if t['act'] == 'gelu' else 0
            sz = [len(x) + table for x in ch]
            w[0x1f800] = 0x40
            base = koff
            for i in range(16):
                w[0x1f808 + 4 * i] = 0x81
                w[0x1f848 + 4 * i] = base
                w[0x1f888 + 4 * i] = sz[i]
                base += sz[i]
            kbytes = base - koff
            koff = base
        else:
            w[0x1f800] = 0
            for i in range(16):
                w[0x1f808 + 4 * i] = 0x80
        w[0x1f804] = 0
        for i in range(4):
            w[0x1f8c8 + 4 * i] = 0x80
            w[0x1f8d8 + 4 * i] = 0
            w[0x1f8e8 + 4 * i] = 0x40
        # -------- common
        if t['kind'] == 'P':
            indim, cin, cout, gc, ocg, th = (Mh << 16) | K, Mc, Mc, 0x14001, 0, Mh
        elif t['kind'] == 'C':
            indim, cin, cout, gc, ocg, th = (Mh << 16) | Mc, t['mm']['K'], t['hi'] - t['lo'], 0x10001, ocg_c, Mh
        else:
            indim, cin, cout, gc, ocg, th = (1 << 16) | t['N'], M, M, 0x14001, 0, 1
        w[0x00] = indim
        w[0x04] = 1
        w[0x08] = 0x22
        w[0x0c] = cin
        w[0x10] = cout
        w[0x14] = indim
        w[0x18] = 1
        w[0x1c] = 0x5000a021 | ocg << 10
        w[0x20] = 0x2041
        w[0x24] = gc
        w[0x28] = th
        w[0x2c] = 0
        w[0x30] = 0
        if t['kind'] == 'P':
            # W -> C transposing pass.  Sh fields: fitted (matmul.md section 3)
            shx = 3 if (rup(2 * Mc, 16) == 0x10 or regime == 'B') else 0
            shn = shx if Mh > 1 else 0
            cfg = 1 | shx << 8 | shn << 12 | shx << 16 | 4 << 19 | 1 << 28
        elif t['kind'] == 'C':
            kmax = max(sz)
            ssm = Mc <= 8 and kmax <= KMEM_SSM_MAX          # convolution.md rule, Wo = Mc
            if ssm:
                sh = 4 | 4 << 4 | 4 << 8
            else:
                shx = min(3, max(0, Mh.bit_length() - 1))
                sh = shx | shx << 4 | shx << 8               # heavy (Cin >= 256) in every record
            cfg = 1 | int(ssm) << 2 | sh << 8 | 4 << 19 | int(t['transposed']) << 28
        else:
            cfg = 1 | 4 << 19
        w[0x34] = cfg
        w[0x38] = 0x100000
        w[0x3c] = 0
        # -------- tile DMA source
        for a in range(0x13800, 0x13870, 4):
            w[a] = 0
        w[0x13804] = 0x8880
        w[0x13840] = 0x100
        xt_row = rup(2 * Mc, 64)                  # x^T as a DRAM surface [K, Mh, Mc]
        if t['kind'] == 'P':
            pl = rup(2 * K, 64)
            w[0x13800] = 0x33881
            w[0x1380c] = Mc * pl
            w[0x13810] = pl
            w[0x13814] = w[0x13818] = M * pl
            w[0x13838] = 0x1002031
        elif t['kind'] == 'C' and t['src'] == 'scratch':
            w[0x13800] = 0x48880                  # idle source + dependency on the BAR 3 producer
            w[0x1380c] = xt_row
            w[0x13810] = Mh * xt_row
            w[0x13814] = w[0x13818] = K * Mh * xt_row
            w[0x13838] = 0x1002031
        elif t['kind'] == 'C' and t['src'] == 'dram':
            s, n = t['slice'], t['nslices']
            w[0x13800] = 0x7bb81 if s == 0 else (0x13901 if s == n - 1 else 0x3bb81)   # fitted, 1 example
            w[0x1380c] = w[0x13810] = 8 * rup(2 * M, 64)                                  # fitted, 1 example
            w[0x13814] = w[0x13818] = K * rup(2 * M, 64)
            w[0x13838] = 0x8002031                # the x^T DRAM surface format (bit 27), as the prep wrote it
        else:
            w[0x13800] = 0x8880
            w[0x13838] = 0x1000000
        # -------- L2
        for a in range(0x4800, 0x4848, 4):
            w[a] = 0
        if t['kind'] == 'P':
            w[0x4804] = 0x500172
            w[0x4808] = lay['P_src']
            w[0x480c] = lay['xs_ch']
            w[0x4810] = lay['xs_row']
            w[0x4814] = w[0x4818] = lay['xs_raw']
            w[0x4834] = lay['P_res']
            if regime == 'A':
                w[0x4830] = 0x500170
                w[0x4838] = lay['r_ch']
                w[0x483c] = lay['r_row']
                w[0x4840] = lay['r_raw']
            else:
                w[0x4830] = 0x50087a
            src_end = None
        elif t['kind'] == 'C':
            if t['src'] == 'scratch':
                w[0x4804] = 0x160
                sbase, sch, srow, sraw = lay['P_res'], lay['r_ch'], lay['r_row'], lay['r_raw']
                w[0x4818] = 0
            elif t['src'] == 'l2':
                w[0x4804] = 0x104
                sbase, sch, srow, sraw = prev_res
                w[0x4818] = 0
            else:
                w[0x4804] = 0x872 if t['slice'] % 2 == 0 else 0x842
                sch = min(rup(2 * Mc, 16), 0x100)
                sbase, sraw = 0, K * sch
                srow = sraw
                w[0x4818] = sraw
            w[0x4808] = sbase
            w[0x480c] = sch
            w[0x4810] = srow
            w[0x4814] = sraw
            n_t = t['hi'] - t['lo']
            if t['dst'] == 'dram':
                w[0x4830] = (0x17a if t['slice'] % 2 == 0 else 0x14a) if t['src'] == 'dram' else 0x14a
                w[0x4834] = sbase + srow * Mh
            elif t['dst'] == 'l2keep':
                w[0x4830] = 0x140
                w[0x4834] = lay['C_res']
                rch = 2 * n_t
                w[0x4838] = rch
                w[0x483c] = Mc * rch
                w[0x4840] = Mh * Mc * rch
            else:  # l2next: untransposed, for a following matmul
                w[0x4830] = 0x140
                rb = sbase + srow * Mh
                rch = rup(2 * Mc, 16)
                w[0x4834] = rb
                w[0x4838] = rch
                w[0x483c] = n_t * rch
                w[0x4840] = n_t * rch
                prev_res = (rb, rch, n_t * rch, n_t * rch)
        else:  # copy-out of the kept result
            w[0x4804] = 0x120
            w[0x4808] = lay['C_res']
            w[0x480c] = 2 * t['N']
            w[0x4810] = w[0x4814] = M * 2 * t['N']
            w[0x4830] = 0x14a
            w[0x4834] = lay['C_res'] + M * 2 * t['N']
        # -------- PE, NE
        for a in (0x8800, 0x8804, 0x8808, 0x880c):
            w[a] = 0
        w[0xc800] = 0x82
        if t['kind'] == 'C':
            w[0xc804] = 0x101c00 | {None: 0, 'relu': 0x10000, 'gelu': 0x20000}[t['act']]
        else:
            w[0xc804] = 0x101c0c
        w[0xc808] = 0
        w[0xc80c] = 0
        w[0xc810] = 0x3c00
        # -------- tile DMA destination
        for a in range(0x17800, 0x1781c, 4):
            w[a] = 0
        w[0x17818] = 0x1302031
        out_b = 0
        if t['kind'] == 'P':
            if regime == 'A':
                w[0x17800] = 0xc0                 # not enabled: x^T stays in L2, BAR 3 is a dependency only
                w[0x17808] = xt_row
                w[0x1780c] = Mh * xt_row
                w[0x17810] = w[0x17814] = K * Mh * xt_row
            else:
                w[0x17800] = 0x40003c1
                w[0x17808] = w[0x1780c] = 8 * rup(2 * M, 64)   # fitted, 1 example
                w[0x17810] = w[0x17814] = K * rup(2 * M, 64)
                w[0x17818] = 0x8302031
                out_b = K * rup(2 * M, 64)
        elif t['kind'] == 'C' and t['dst'] == 'dram':
            Ntot = t['mm']['N']
            pl = rup(2 * Ntot, 64)
            w[0x17800] = 0x40000c1
            w[0x17804] = 2 * t['lo']
            w[0x17808] = Mc * pl
            w[0x1780c] = pl
            w[0x17810] = w[0x17814] = M * pl
            out_b = M * 2 * (t['hi'] - t['lo'])
        elif t['kind'] == 'C':
            w[0x17800] = 0xc0
            w[0x17818] = 0x1000000
        else:
            pl = rup(2 * t['N'], 64)
            w[0x17800] = 0x40000c1
            w[0x17808] = M * pl
            w[0x1780c] = pl
            w[0x17810] = w[0x17814] = M * pl
            out_b = M * pl
        # -------- header
        in_b = 0
        if t['kind'] == 'P':
            in_b = M * rup(2 * K, 64)
        elif t['kind'] == 'C' and t['src'] == 'dram':
            in_b = K * rup(2 * M, 64)
        exe = math.floor((kbytes + in_b + out_b) / EXE_BYTES_PER_UNIT)
        hdr = [0] * 10
        hdr[0] = ti | (0 if first else 1 << 24) | (1 << 25 if last else 0)
        hdr[1] = exe | ((sizes[ti + 1] // 4 - 1) << 16 if not last else 0)
        hdr[2] = 0x400 | (0x8 if first else 0) | (0x22 if last else 0)
        lo = (0x68 if first or last else 0) | (0x2 if last else 0)
        hdr[4] = lo | (0 if t['kind'] in 'PY' else 0xfff800)
        # word 6: SPL 11, TSR 12, TSE 15, SPC 13, DPC 14, SrcLoc 28, DstLoc 29
        reads_dram = t['kind'] == 'P' or (t['kind'] == 'C' and t['src'] == 'dram')
        writes_dram = w[0x17800] & 1
        if t['kind'] == 'P':
            spl, end = True, True
        elif regime == 'B':
            spl, end = t['slice'] % 2 == 0, t['slice'] % 2 == 1 or last
        else:
            spl = tasks[ti - 1]['kind'] == 'P'
            end = last
        hw6 = (spl << 11) | (end << 12) | (end << 15) | (reads_dram << 28) | (writes_dram << 29)
        if t['kind'] == 'P' and regime == 'A':
            hw6 |= 1 << 14                        # DPC: hands x^T on as BAR 3 without the tile DMA
        if t['kind'] == 'C' and t['src'] == 'scratch':
            hw6 |= 1 << 13                        # SPC
        hdr[6] = hw6
        hdr[7] = 0 if last else offs[ti + 1]
        r0 = 0
        if t['kind'] == 'P':
            r0 = d['bx'] | 1 << 5
        elif t['kind'] == 'C' and t['src'] in ('scratch', 'dram'):
            r0 = 3 | 1 << 5
        wb = 0
        if t['kind'] == 'P' and regime == 'A':
            wb = 3 | 1 << 5
        elif t['kind'] == 'P':
            wb = 3 | 1 << 5
        elif writes_dram:
            wb = d['by'] | 1 << 5
        hdr[8] = r0 | wb << 12 | (0 if last else 1 << 23) | 5 << 24
        hdr[9] = 0x21 if t['kind'] == 'C' else 0
        out.append(dict(header=hdr, words=w, chunks=ch if t['kind'] == 'C' else None,
                        table=t['kind'] == 'C' and t['act'] == 'gelu'))
    return out, regime, tasks


def section_check(c, pred):
    """constant section = the compute tasks' chunks in task order; a fused table (gelu) is the
    first 128 bytes of every chunk (its bytes are not reproduced: activations.md)"""
    import hashlib
    cs = c['constant_section']
    table = any(p['table'] for p in pred)
    sec = b''.join((b'\0' * 0x80 if p['table'] else b'') + x for p in pred if p['chunks'] for x in p['chunks'])
    if table:
        return 'size %s (table bytes not modelled)' % ('ok' if len(sec) == cs['size'] else 'NO')
    ok = (len(sec) == cs['size'] and hashlib.sha256(sec).hexdigest() == cs['sha256']
          and hashlib.sha256(sec[:128]).hexdigest() == cs['prefix_128_sha256'])
    return 'sha256 %s' % ('ok' if ok else 'NO')


def descriptor(c, pred, regime, tasks):
    """program descriptor: BAR 3 scratch (x^T as a DRAM surface [K, Mh, Mc], rows of round64(2 Mc))
    at 0x30000000, then the BARs 4.. (inputs and outputs sorted by name) each rounded up to 0x4000,
    then __text, then __const at text + round_up(end of the last task, 0x80)."""
    d = parse(c)
    M, K = d['M'], d['K']
    P = tasks[0]
    scratch = K * P['Mh'] * rup(2 * P['Mc'], 64)
    N = d['mms'][-1]['N']
    surf = {d['bx']: M * rup(2 * K, 64), d['by']: M * rup(2 * N, 64)}
    addr = 0x30000000 + rup(scratch, 0x4000)
    res = []
    for b in sorted(surf):
        res.append(addr)
        addr += rup(surf[b], 0x4000)
    text = addr
    sizes = [504 if t['kind'] in 'PY' else 628 for t in tasks]
    end = sum(rup(x, 256) for x in sizes[:-1]) + sizes[-1]
    got = c['program_descriptor']
    exp = dict(task_count=len(tasks), task_words_minus_one=sizes[0] // 4 - 1, text_address=hex(text),
               constant_address=hex(text + rup(end, 0x80)),
               resource_addresses=[hex(a) for a in res] + ['0x0'] * (5 - len(res)))
    return sum(1 for k, v in exp.items() if got[k] == v), len(exp), [
        '  descriptor %s predicted %s actual %s' % (k, v, got[k]) for k, v in exp.items() if got[k] != v]


def field_of(addr):
    f = field_names(addr)
    return ','.join(n.split('.', 1)[1] for n, _, _ in f) or 'unnamed'


def compare(c, verbose=False, allw=False):
    pred, regime, tasks = predict(c)
    lines = []
    eq = tot = 0
    sec = section_check(c, pred)
    de, dn, dl = descriptor(c, pred, regime, tasks)
    eq += de
    tot += dn
    lines += dl
    if len(pred) != len(c['task_descriptors']):
        lines.append('  TASK COUNT predicted %d actual %d' % (len(pred), len(c['task_descriptors'])))
    for ti, (p, t) in enumerate(zip(pred, c['task_descriptors'])):
        act = words(t)
        ah = [int(x, 16) for x in t['header_words']]
        for i, (x, y) in enumerate(zip(p['header'], ah)):
            tot += 1
            if x == y:
                eq += 1
            else:
                lines.append('  t%d header[%d] predicted %#010x actual %#010x' % (ti, i, x, y))
        for a in sorted(set(act) | set(p['words'])):
            tot += 1
            x, y = p['words'].get(a), act.get(a)
            if x == y:
                eq += 1
                if allw:
                    lines.append('  t%d %05x = %#x  %s' % (ti, a, y, field_of(a)))
            else:
                lines.append('  t%d %05x %-34s predicted %s actual %s' % (
                    ti, a, field_of(a)[:34], 'absent' if x is None else '%#x' % x, 'absent' if y is None else '%#x' % y))
    return eq, tot, lines, regime, tasks, sec


def main():
    allw = '-a' in sys.argv
    verbose = '-v' in sys.argv or allw
    args = [a for a in sys.argv[1:] if not a.startswith('-')]
    ge = gt = nsec = 0
    for c in cases(HELDOUT if '--heldout' in sys.argv else None):
        if args and args[0] not in c['case']:
            continue
        eq, n, lines, regime, tasks, sec = compare(c, verbose, allw)
        nsec += sec.startswith('sha256 ok')
        ge += eq
        gt += n
        plan_s = regime + ':' + ''.join(t['kind'] for t in tasks)
        print('%-40s %-12s %5d/%5d words equal%s  const %s' % (c['case'], plan_s, eq, n, '' if eq == n else '  (%d differ)' % (n - eq), sec))
        if verbose or eq != n:
            for l in lines:
                print(l)
    print('TOTAL %d/%d words equal; %d constant sections reproduced (SHA-256)' % (ge, gt, nsec))


if __name__ == '__main__':
    main()
