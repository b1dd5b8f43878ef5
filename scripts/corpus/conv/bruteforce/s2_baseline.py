"""Baseline model (rowmajor 4x4 nibbles) and nonzero-byte bookkeeping per component."""
import struct
from s2lib import *

ROWMAJOR = {t: (t // 3) * 4 + t % 3 for t in range(9)}


def block_rowmajor(case, blk, pre):
    L = max(len(blk), 4)
    body = bytearray()
    for ci in range(case.cin_g):
        m = 0; vals = []
        for s in range(16):
            for t in [t for t in range(9) if ROWMAJOR[t] == s]:
                for j, oc in enumerate(blk):
                    v = case.W(oc, ci, t)
                    if not is_zero(v):
                        m |= 1 << (s * L + j); vals.append(v)
        body += m.to_bytes(16 * L // 8, 'little') + struct.pack('<%dH' % len(vals), *vals)
    bias = b''.join(struct.pack('<H', case.bias(oc)) for oc in blk) if case.geo['bias'] else b''
    return bias + struct.pack('<H', len(body)) + bytes(body)


if __name__ == '__main__':
    for c in load_cases():
        pre = section(c, block_rowmajor, prefix_only=True)
        sec = section(c, block_rowmajor)
        print(c.name, 'prefix nz', nz(pre), c.cs['prefix_128_nonzero_bytes'], 'total nz', nz(sec), c.cs['nonzero_bytes'],
              'sizes', chunk_sizes(c, block_rowmajor) == [s for _, s in c.dma])
        print('  ', pre.hex())
