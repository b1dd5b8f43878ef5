"""Derived quantities of one task for the ExeCycles models (from features.task_features):
DRAM bytes of its sources, destination and kernel as the hardware moves them, its kind."""
import math

B = 1024000 / 30


def ru(v, a):
    return (v + a - 1) // a * a


def surf(C, H, W, D=1, es=2):
    """bytes, planes, rows, lines of a C x H x W surface in memory (rows padded to 64 B)."""
    rb = ru(W * es, 64)
    return {'bytes': D * C * H * rb, 'planes': D * C, 'rows': D * C * H, 'lines': D * C * H * rb // 64,
            'raw': D * C * H * W * es}


def derive(f):
    d = dict(f)
    d['src0'] = bool(f['src0_en'])
    d['src1'] = bool(f['rbe1'] and any(f['s1']))
    d['dst'] = bool(f['dst_en'])
    D = (f['D'] or 1) * (f['groups'] or 1)
    sin = surf(f['Cin'], f['Hin'], f['Win'], D)
    sout = surf(f['Cout'], f['Hout'], f['Wout'], D)
    d['in'], d['out'] = sin, sout
    d['nreads'] = int(d['src0']) + int(d['src1'])
    d['transposed'] = bool((f['cfg'] >> 28) & 1)
    if d['transposed']:
        sout = surf(f['Wout'], f['Hout'], f['Cout'], D)
        d['out'] = sout
    d['f_src0'] = sin['bytes'] if d['src0'] else 0
    d['f_src1'] = sin['bytes'] if d['src1'] else 0
    d['f_dst'] = sout['bytes'] if d['dst'] else 0
    d['rd_bytes'] = d['f_src0'] + d['f_src1']
    d['wr_bytes'] = d['f_dst']
    d['dram'] = d['rd_bytes'] + d['wr_bytes'] + f['kernel']
    # a planar-engine reduction (Common.Cfg mode 5 or 6) writes one value per channel:
    # a packed row (word 0x158 bit 10) or a column of 64-byte rows
    d['reduce'] = f['ene'] == 0 and (f['cfg'] & 0xf0) in (0x50, 0x60)
    if d['reduce'] and d['dst']:
        planes = D * f['Cout']
        d['f_dst'] = D * ru(f['Cout'] * 2, 64) if f['w30'] & 0x400 else planes * 64
        d['wr_bytes'] = d['f_dst']
        d['dram'] = d['rd_bytes'] + d['wr_bytes'] + f['kernel']
    ene = f['ene']
    op = f['ne_mac'] & 7
    if ene == 0:
        d['kind'] = 'PE'
    elif op == 0 and f['kernel'] > 0:
        d['kind'] = 'CONV'
    else:
        d['kind'] = 'NE'
    return d
