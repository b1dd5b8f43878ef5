"""Shared helpers for the stride-2 3x3 sparse-kernel searches (research only)."""
import hashlib, struct, sys, os
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
os.environ.setdefault('ANEC_SHARED', os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../../../../shared'))
from common import load, parse_mil, words
from weights import file_halfwords, geometry, ocg_for, chunk_oc_lists, task_plan, rup, is_zero

CASES = ['env_conv_k3_c64_n64_s16_st2_g1_bias1', 'env_conv_k3_c64_n64_s16_st2_g4_bias1',
         'env_conv_k3_c128_n128_s16_st2_g1_bias1', 'conv_probe_k3_c512_n64_s16_st2_g1_bias0_same',
         'conv_probe_k3_c256_n256_s16_st2_g256_bias1_same']
SHORT = ['c64g1', 'c64g4', 'c128', 'c512', 'dw256']


class Case:
    def __init__(self, c):
        self.c = c
        self.name = c['case']
        d = parse_mil(c['mil'])
        self.d = d
        self.geo = geometry(d)
        self.h = file_halfwords(c['weights'])
        out_px = d['out_shape'][2] * d['out_shape'][3]
        ranges, self.ocg = task_plan(self.geo, out_px)
        assert len(ranges) == 1
        self.chunks = chunk_oc_lists(self.geo, self.ocg, ranges[0])
        cs = c['constant_section']
        self.cs = cs
        w = words(c['task_descriptors'][0])
        self.dma = [(w[0x1f848 + 4 * i], w[0x1f888 + 4 * i]) for i in range(16)]
        g = self.geo
        self.k = g['kh']; self.cin_g = g['cin_g']; self.per_oc = g['cin_g'] * 9
        self.B = 1 << self.ocg

    def W(self, oc, ci, t):
        """weight halfword of output channel oc, input channel ci (within group), tap t (= y*3+x)"""
        return self.h(oc * self.per_oc + ci * 9 + t)

    def bias(self, oc):
        return self.h(oc)


def load_cases():
    allc = {c['case']: c for c in load('*st2*')}
    return [Case(allc[n]) for n in CASES]


def section(case, block_fn, chunk_fn=None, prefix_only=False):
    """block_fn(case, blk_ocs, limit) -> bytes of one block.  Groups padded to 64 when NG > 1,
    chunk padded to 64.  With prefix_only, stop after 128 bytes of chunk 0."""
    out = bytearray()
    for ci, blocks in enumerate(case.chunks):
        buf = bytearray()
        last_g = None
        for gi, blk in blocks:
            if case.geo['hw_groups'] > 1 and last_g is not None and gi != last_g:
                buf += bytes(rup(len(buf), 64) - len(buf))
            last_g = gi
            buf += block_fn(case, blk, prefix_only)
            if prefix_only and len(buf) >= 128:
                return bytes(buf[:128])
        buf += bytes(rup(len(buf), 64) - len(buf))
        if prefix_only:
            return bytes(buf[:128])
        out += buf
    return bytes(out)


def chunk_sizes(case, block_fn):
    sizes = []
    for blocks in case.chunks:
        n = 0; last_g = None
        for gi, blk in blocks:
            if case.geo['hw_groups'] > 1 and last_g is not None and gi != last_g:
                n = rup(n, 64)
            last_g = gi
            n += len(block_fn(case, blk, False))
        sizes.append(rup(n, 64))
    return sizes


def check_prefix(case, pre):
    return hashlib.sha256(pre).hexdigest() == case.cs['prefix_128_sha256']


def nz(b):
    return sum(1 for x in b if x)
