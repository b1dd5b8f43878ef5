"""One line per task: engine, Cfg, PE words, Common 0x30, NE words, dims."""
import sys, os, re
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dump import cases, words
pat = sys.argv[1] if len(sys.argv) > 1 else ''
for r in cases():
    if not re.search(pat, r['case']): continue
    print(r['case'], r['constant_section']['size'], r['constant_section']['nonzero_bytes'], r['constant_section']['sha256'][:8])
    for i, t in enumerate(r['task_descriptors']):
        w = words(t)
        ne = w[0x38] == 0x100000
        g = lambda a: w.get(a, -1)
        print('  T%d %s cfg=%-8x pe=%-6x s=%08x %08x %08x c30=%-4x ne=%x/%x ps=%x in=%dx%dx%d out=%dx%dx%d grp=%x th=%d k=%x' % (
            i, 'NE' if ne else 'PE', g(0x34), g(0x8800), g(0x8804), g(0x8808), g(0x880c), g(0x30), g(0xc800), g(0xc804), g(0xc810),
            g(0xc), g(0)>>16, g(0)&0xffff, g(0x10), g(0x14)>>16, g(0x14)&0xffff, g(0x24), g(0x28), g(0x1f800)))
