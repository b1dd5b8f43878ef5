import os
SHARED = os.environ.get("ANEC_SHARED", os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../../shared"))
import json, glob, os, re
CASES = SHARED + '/fixtures/apple-h13-oracles/cases'
REGMAP = SHARED + '/fixtures/apple-h13/regmap/aneregs.json'
BLOCKS = [(0x1f800, 0x2c), (0x00000, 0x128), (0x13800, 0x16c), (0x04800, 0x1e0),
          (0x08800, 0x22c), (0x0c800, 0x240), (0x17800, 0x258)]
BLOCK_ORDER = [0x1f800, 0x00000, 0x13800, 0x04800, 0x08800, 0x0c800, 0x17800]

def td_of(addr):
    for base, td in BLOCKS:
        if base <= addr < base + 0x400:
            return td + (addr - base)
    raise ValueError(hex(addr))

def addr_of(td):
    best = None
    for base, t in BLOCKS:
        if td >= t and (best is None or t > best[1]):
            best = (base, t)
    return best[0] + td - best[1]

_fields = None
def fields():
    """td word offset -> list of (name, lsb, width)"""
    global _fields
    if _fields is None:
        _fields = {}
        for name, (byte, bit, width) in json.load(open(REGMAP)):
            word = byte & ~3
            lsb = (byte - word) * 8 + bit
            _fields.setdefault(word, []).append((name, lsb, width))
    return _fields

def field_names(addr):
    return fields().get(td_of(addr), [])

def decode_word(addr, val):
    fl = field_names(addr)
    if not fl:
        return 'unnamed'
    return ' '.join('%s=%#x' % (n.split('.', 1)[1] if n.startswith('aneTD') is False else n, (val >> l) & ((1 << w) - 1)) for n, l, w in fl)

def load(pattern='*conv*'):
    out = []
    for f in sorted(glob.glob(os.path.join(CASES, pattern + '.json'))):
        out.append(json.load(open(f)))
    return out

def words(task):
    w = {}
    for blk in task['blocks'].values():
        for a, v in blk['words'].items():
            w[int(a, 16)] = int(v, 16)
    return w

def parse_mil(mil):
    """minimal parser for the conv MIL: returns dict"""
    d = {}
    m = re.search(r'func main<\w+>\(tensor<(\w+), \[([\d, ]+)\]> x\)', mil)
    d['in_dtype'] = m.group(1); d['in_shape'] = [int(x) for x in m.group(2).split(',')]
    consts = {}
    for m in re.finditer(r'^\s*(.*?) (\w+) = const\(\)\[name = string\("[^"]*"\), val = (.*?)\];$', mil, re.M):
        ty, name, val = m.groups()
        consts[name] = (ty, val)
    d['consts'] = consts
    m = re.search(r'tensor<(\w+), \[([\d, ]+)\]> (\w+) = conv\((.*?)\)\[', mil)
    d['out_dtype'] = m.group(1); d['out_shape'] = [int(x) for x in m.group(2).split(',')]
    args = dict(kv.split(' = ') for kv in m.group(4).split(', '))
    d['args'] = args
    def cval(name):
        ty, val = consts[name]
        mm = re.search(r'\(\[([-\d, ]+)\]\)', val)
        if mm: return [int(x) for x in mm.group(1).split(',')]
        mm = re.search(r'int32\((-?\d+)\)', val)
        if mm: return int(mm.group(1))
        mm = re.search(r'string\("(\w+)"\)', val)
        if mm: return mm.group(1)
        return val
    d['strides'] = cval(args['strides']); d['pad'] = cval(args['pad']); d['pad_type'] = cval(args['pad_type'])
    d['dilations'] = cval(args['dilations']); d['groups'] = cval(args['groups'])
    wty = consts[args['weight']][0]
    d['w_shape'] = [int(x) for x in re.search(r'\[([\d, ]+)\]', wty).group(1).split(',')]
    d['bias'] = 'bias' in args
    if d['bias']:
        bty = consts[args['bias']][0]
        d['b_shape'] = [int(x) for x in re.search(r'\[([\d, ]+)\]', bty).group(1).split(',')]
    d['relu'] = 'relu(' in mil
    return d
