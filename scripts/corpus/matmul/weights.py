#!/usr/bin/env python3
"""Rebuilds the constant section of the matmul-family records and checks size, nonzero bytes,
prefix-128 SHA-256 and full SHA-256.

Model (matmul.md section 1): y = x @ w^T with w = [N, K] is the 1x1 convolution Cout = N, Cin = K.
The packing is the convolution packing (scripts/corpus/conv/weights.py) with OCGSize capped at 4
instead of 5 (blocks of B = 2^OCG output channels per NE, B = 16 for N >= 256): chunk i = for each
pass, for k in 0..K-1, for b in 0..B-1: w[pass*16B + B i + b][k].  Tasks that split N take consecutive N slices in task order.
A fused activation with a table (gelu) puts a 2048-byte table (16 x 128) in front (not modelled:
only size is checked)."""
import hashlib, struct, sys, os, re
sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), '../conv'))
from dump import cases

def file_halfwords(wt, const_index=0):
    if 'record_offsets' in wt:                     # form C: constant i holds 0x3400 + i
        v = 0x3400 + const_index
        return lambda e: v
    P = wt['payload_bytes']
    fill = 0x3800 if wt['value'] == 'fp16(0x1p-1)' else 0x3801
    hdr = bytearray(128)
    struct.pack_into('<II', hdr, 0, 1, 2)
    struct.pack_into('<IQQ', hdr, 64, 0xDEADBEEF, P, 128)
    h = list(struct.unpack('<64H', hdr))
    return lambda e: h[e] if e < 64 else fill

def matmuls(mil):
    """list of (N, K, const_index) per matmul with a constant y, in program order"""
    consts = [m.group(1) for m in re.finditer(r'> (\w+) = const\(\)\[name = string\("\w+"\), val = tensor<fp16', mil)]
    out = []
    for m in re.finditer(r'matmul\(transpose_x = \w+, transpose_y = (\w+), x = \w+, y = (\w+)\)', mil):
        ty, y = m.groups()
        shp = re.search(r'tensor<fp16, \[(\d+), (\d+)\]> %s = const' % y, mil)
        a, b = int(shp.group(1)), int(shp.group(2))
        tyv = re.search(r'bool %s = const\(\)\[name = string\("\w+"\), val = bool\((\w+)\)' % ty, mil).group(1) == 'true'
        N, K = (a, b) if tyv else (b, a)
        out.append(dict(N=N, K=K, ty=tyv, ci=consts.index(y)))
    return out

OCG_MAX_MATMUL = 4          # convolution caps OCGSize at 5; a matmul compute task at 4


def ocg_for(n, transposed=True, out_px=1):
    """OCGSize of a compute task with n output channels: ceil(log2(ceil(n/16))).
    Transposed write (Cfg bit 28, the result lands as product rows): at most 4, no pixel budget
    (env_mm_r2rb_m512: 512 px, OCG 4).  Untransposed (result kept in L2 for a following matmul):
    the convolution rule, at most 5 and 2^OCG * pixels <= 4096 (chain_ffn task 1: OCG 5)."""
    per_ne = max(1, -(-n // 16))
    o = (per_ne - 1).bit_length()
    if transposed:
        return min(o, OCG_MAX_MATMUL)
    o = min(o, 5)
    while o > 0 and (1 << o) * out_px > 4096:
        o -= 1
    return o


def chunks(N, K, h, lo, hi, ty=True, B=None):
    """16 chunks of output channels lo..hi-1 (w[n][k] = halfword n*K + k when ty)"""
    ch = []
    n = hi - lo
    if B is None:
        B = 1 << ocg_for(n)
    for i in range(16):
        vals = []
        for p in range(0, n, 16 * B):
            blk = [lo + p + i * B + b for b in range(B) if p + i * B + b < n]
            for k in range(K):
                for oc in blk:
                    vals.append(h(oc * K + k) if ty else h(k * N + oc))
        buf = struct.pack('<%dH' % len(vals), *vals)
        buf += bytes(-len(buf) % 64)
        ch.append(buf)
    return ch

def ntasks_for(N, K):
    """compute tasks: N slices so that each NE's chunk is at most 64 KB when x comes from DRAM"""
    return 1

def section(c, plan_fn=None):
    mms = matmuls(c['mil'])
    out = b''
    for mm in mms:
        h = file_halfwords(c['weights'], mm['ci'])
        slices = plan_fn(c, mm) if plan_fn else [(0, mm['N'])]
        for lo, hi in slices:
            out += b''.join(chunks(mm['N'], mm['K'], h, lo, hi, mm['ty']))
    return out

def check(c, sec, table=0):
    cs = c['constant_section']
    nz = sum(1 for b in sec if b)
    return dict(size=len(sec) + table == cs['size'], nonzero=nz == cs['nonzero_bytes'] if not table else None,
                prefix=hashlib.sha256(sec[:128]).hexdigest() == cs['prefix_128_sha256'],
                sha=hashlib.sha256(sec).hexdigest() == cs['sha256']), nz

if __name__ == '__main__':
    for c in cases():
        sec = section(c)
        res, nz = check(c, sec)
        print('%-44s size %8d/%8d nz %8d/%8d prefix %s sha %s' % (c['case'], len(sec), c['constant_section']['size'],
              nz, c['constant_section']['nonzero_bytes'], res['prefix'], res['sha']))
