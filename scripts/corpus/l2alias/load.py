"""Shared loader for the L2 alias-bit analysis: every task of every record, with the
L2 block decoded (SourceCfg / ResultCfg fields, bases, strides) and the engine."""
import glob, json, os

_HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.environ.get("ANEC_SHARED") or next(
    (p for p in (os.path.join(_HERE, "../../../../shared"), "/work/shared") if os.path.isdir(p)), "/work/shared")
CASES = SHARED + '/fixtures/apple-h13-oracles/cases'


def bits(v, lo, n):
    return (v >> lo) & ((1 << n) - 1)


def cfg_fields(v):
    return dict(type=bits(v, 0, 2), dep=bits(v, 2, 2), bfr=bits(v, 3, 1), cs=bits(v, 4, 1), cr=bits(v, 5, 1),
                fmt=bits(v, 6, 2), il=bits(v, 8, 4), ps=bits(v, 20, 1), pr=bits(v, 22, 1), b24=bits(v, 24, 1))


def load():
    out = []
    for f in sorted(glob.glob(CASES + '/*.json')):
        r = json.load(open(f))
        tasks = []
        for i, t in enumerate(r['task_descriptors']):
            regs = {}
            for b in t['blocks'].values():
                for a, v in b['words'].items():
                    regs[int(a, 16)] = int(v, 16)
            g = lambda a: regs.get(a, 0)
            k = dict(i=i, regs=regs, hw=[int(x, 16) for x in t['header_words']])
            k['engine'] = 'NE' if (g(0xc800) & 3) == 2 else 'PE'
            k['src_cfg'], k['res_cfg'] = g(0x4804), g(0x4830)
            k['has_l2'] = 0x4804 in regs
            k['src_base'], k['src_ch'], k['src_row'], k['src_p1'], k['src_p2'] = (g(0x4808), g(0x480c), g(0x4810), g(0x4814), g(0x4818))
            k['src2_base'], k['src2_ch'], k['src2_row'], k['src2_p1'], k['src2_p2'] = (g(0x481c), g(0x4820), g(0x4824), g(0x4828), g(0x482c))
            k['res_base'], k['res_ch'], k['res_row'], k['res_p1'], k['res_p2'] = (g(0x4834), g(0x4838), g(0x483c), g(0x4840), g(0x4844))
            k['Win'], k['Hin'] = g(0) & 0xffff, g(0) >> 16
            k['Din'], k['Dout'] = g(4), g(0x18)
            k['Cin'], k['Cout'] = g(0xc), g(0x10)
            k['Wout'], k['Hout'] = g(0x14) & 0xffff, g(0x14) >> 16
            k['src_dram'] = g(0x13800) & 1
            k['dst_dram'] = g(0x17800) & 1
            k['src2_dram'] = 1 if g(0x1383c) else 0
            k['kdma'] = any(0x1f800 <= a < 0x1f900 and v for a, v in regs.items())
            tasks.append(k)
        r['tasks'] = tasks
        out.append(r)
    return out


def regions(t):
    """The task's L2 regions as {'src'|'src2'|'res': (start, end, kind)}; kind is 'load'
    (the tile DMA fills it), 'resident' (an earlier task left it), 'kept' (the result stays
    in L2) or 'stream' (the result leaves through the destination DMA)."""
    out = {}
    if not t['has_l2']:
        return out
    st = t['src_cfg'] & 3
    h = max(1, t['Hin'])
    size = max(t['src_row'] * h, t['src_p1'], t['src_p2'])
    out['src'] = (t['src_base'], t['src_base'] + size, 'resident' if st == 0 else 'load')
    if t['src2_base'] or t['src2_ch'] or t['src2_row']:
        size2 = max(t['src2_row'] * h, t['src2_p1'])
        out['src2'] = (t['src2_base'], t['src2_base'] + size2, 'load' if t['src2_dram'] else 'resident')
    rt = t['res_cfg'] & 3
    if rt == 2 and not t['res_ch']:
        size = t['Cout'] * max(1, t['Wout']) * max(1, t['Hout']) * 2
        out['res'] = (t['res_base'], t['res_base'] + size, 'stream')
    else:
        size = max(t['res_row'] * max(1, t['Hout']), t['res_p1'])
        out['res'] = (t['res_base'], t['res_base'] + size, 'kept' if rt == 0 else 'stream')
    return out
