"""Per-task features of Apple's current-compiler records for the ExeCycles study, read from
Apple's own register words (never from anec): engine, DRAM sources and destination, their
shapes and strides, L2 residency, kernel bytes. `python3 features.py` prints one line per task."""
import glob, json, os, sys

SHARED = os.environ.get('ANEC_SHARED', os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../../../shared'))
CASES = os.path.join(SHARED, 'fixtures/apple-h13-oracles/cases')


def words(t):
    w = {}
    for blk in t['blocks'].values():
        for a, v in blk['words'].items():
            w[int(a, 16)] = int(v, 16)
    return w


def ru(v, a):
    return (v + a - 1) // a * a


def task_features(case, i, t):
    hw = [int(x, 16) for x in t['header_words']]
    w = words(t)
    g = lambda a: w.get(a, 0)
    f = {'case': case, 'i': i, 'exe': hw[1] & 0xffff}
    f['ene'] = (hw[8] >> 24) & 7
    f['rbe0'], f['rbe1'], f['wbe'] = (hw[8] >> 5) & 1, (hw[8] >> 11) & 1, (hw[8] >> 17) & 1
    f['srcloc'], f['dstloc'] = (hw[6] >> 28) & 1, (hw[6] >> 29) & 1
    f['Win'], f['Hin'] = g(0x0) & 0x7fff, (g(0x0) >> 16) & 0x7fff
    f['Cin'], f['Cout'] = g(0xc) & 0x1ffff, g(0x10) & 0x1ffff
    f['Wout'], f['Hout'] = g(0x14) & 0x7fff, (g(0x14) >> 16) & 0x7fff
    f['D'] = g(0x4)  # depth / batch-like word
    f['D2'] = g(0x18)
    cc = g(0x1c)
    f['Kw'], f['Kh'] = cc & 31, (cc >> 5) & 31
    f['Sx'], f['Sy'] = (cc >> 13) & 3, (cc >> 15) & 3
    f['groups'] = g(0x24) & 0x1fff
    f['tile_h'] = g(0x28) & 0x7fff
    f['chcfg'] = g(0x8)
    f['cfg'] = g(0x34)
    # TD words 0x154 (the planar engine's tile: log2 rows << 4 | log2 columns), 0x158, 0x148
    f['w2c'], f['w30'], f['w20'] = g(0x2c), g(0x30), g(0x20)
    f['active_ne'] = (g(0x34) >> 19) & 7
    f['small'] = (g(0x34) >> 2) & 1
    f['pe'] = g(0x8800)
    f['ne_kcfg'], f['ne_mac'] = g(0xc800), g(0xc804)
    f['l2_src'], f['l2_res'] = g(0x4804), g(0x4830)
    f['l2_src_cs'], f['l2_src_rs'] = g(0x480c), g(0x4810)
    f['l2_res_cs'], f['l2_res_rs'] = g(0x4838), g(0x483c)
    f['src0_en'], f['src1_en'] = g(0x13800) & 1, g(0x13804) & 1
    f['s0'] = [g(0x1380c), g(0x13810), g(0x13814), g(0x13818)]
    f['s1'] = [g(0x13820), g(0x13824), g(0x13828), g(0x1382c)]
    f['s0fmt'], f['s1fmt'] = g(0x13838), g(0x1383c)
    f['dst_en'] = g(0x17800) & 1
    f['dst_cfg'] = g(0x17800)
    f['d'] = [g(0x17808), g(0x1780c), g(0x17810), g(0x17814)]
    f['dfmt'] = g(0x17818)
    kens = [g(0x1f808 + 4 * k) & 1 for k in range(16)]
    ksz = [g(0x1f888 + 4 * k) & ~63 for k in range(16)]
    f['kernel'] = sum(s for e, s in zip(kens, ksz) if e)
    f['kchunks'] = sum(kens)
    f['conv'] = int(f['kernel'] > 0)
    return f


def load(pattern='*'):
    out = []
    for fn in sorted(glob.glob(os.path.join(CASES, pattern + '.json'))):
        r = json.load(open(fn))
        for i, t in enumerate(r.get('task_descriptors') or []):
            out.append(task_features(r['case'], i, t))
    return out


if __name__ == '__main__':
    pat = sys.argv[1] if len(sys.argv) > 1 else '*'
    for f in load(pat):
        print('%-48s %d exe %4d ene %d r%d%d w%d k%7d C %4d->%4d in %4dx%-4d out %4dx%-4d g%4d pe %08x l2s %08x l2r %08x s0 %s s1 %s d %s' % (
            f['case'][:48], f['i'], f['exe'], f['ene'], f['src0_en'], f['src1_en'], f['dst_en'], f['kernel'], f['Cin'], f['Cout'],
            f['Hin'], f['Win'], f['Hout'], f['Wout'], f['groups'], f['pe'], f['l2_src'], f['l2_res'],
            [hex(x) for x in f['s0']], [hex(x) for x in f['s1']], [hex(x) for x in f['d']]))
