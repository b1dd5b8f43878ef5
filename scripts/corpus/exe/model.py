"""The ExeCycles model of backend-h13/src/encode/exe_cycles.rs, evaluated on Apple's own
register words (features.py, common.py): per task the predicted value against Apple's.
`python3 model.py [-v] [-i] [-l]` prints the count per engine kind, -v every miss, -i the
interval of each constant (the others at their values), -l a leave-one-case-out check."""
import math, sys, collections, os
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import features, common

B = 1024000 / 30          # DRAM bytes per unit
P = 0.00444               # per DRAM-read plane of one-element rows
A_EW, B_EW = 0.0000215, 0.00059   # engine pass: per result element (planar engine), per source plane
A_NE = 0.000034                    # per result element of a neural-engine activation table
C_RED, K_RED = 0.0027, 0.0000865  # PE reduction: per tile, per tile column


def dma(d):
    n1 = d['nreads'] * d['in']['planes'] if d['Win'] == 1 else 0
    return max(d['dram'] / B, P * n1)


def pe(d):
    G = d['groups'] * (d['D'] or 1)
    if d['kind'] != 'PE':
        table = (d['ne_mac'] >> 16) & 3 == 2
        a = A_NE if table else A_EW
        return a * G * d['Cout'] * d['Hout'] * d['Wout'] + B_EW * G * d['Cin']
    if d['reduce']:
        # the planar engine's tile, word 0x154 (anec writes Apple's): log2 rows << 4 | log2 columns
        cols, rows = d['w2c'] & 15, (d['w2c'] >> 4) & 15
        units = G * d['Cin'] * -(-d['Hin'] // 2 ** rows) * -(-d['Win'] // 2 ** cols)
        return units * max(C_RED, K_RED * 2 ** cols)
    return A_EW * G * d['Cout'] * d['Hout'] * d['Wout'] + B_EW * G * d['Cin']


def predict(d):
    return math.floor(max(dma(d), pe(d)) + 1e-9)


if __name__ == '__main__':
    F = [common.derive(f) for f in features.load()]
    ok, tot = collections.Counter(), collections.Counter()
    for d in F:
        l2only = not (d['src0'] or d['src1'] or d['dst'])
        k = d['kind'] + ('-L2' if l2only else '')
        tot[k] += 1
        p = predict(d)
        if p == d['exe']:
            ok[k] += 1
        elif '-v' in sys.argv:
            print('%-7s %-46s %d apple %3d model %3d dma %.2f pe %.2f' % (k, d['case'], d['i'], d['exe'], p, dma(d), pe(d)))
    for k in sorted(tot):
        print('%-8s %3d / %3d' % (k, ok[k], tot[k]))
    print('all      %3d / %3d' % (sum(ok.values()), sum(tot.values())))


def interval(name, lo, hi, steps=4000):
    """The values of one constant (the others at theirs) that keep every task the model
    reproduces reproduced."""
    F = [common.derive(f) for f in features.load()]
    base = globals()[name]
    good = [d for d in F if predict(d) == d['exe']]
    ok = []
    for i in range(steps + 1):
        v = lo + (hi - lo) * i / steps
        globals()[name] = v
        if all(predict(d) == d['exe'] for d in good):
            ok.append(v)
    globals()[name] = base
    return (min(ok), max(ok)) if ok else None


if __name__ == '__main__' and '-i' in sys.argv:
    for name, lo, hi in [('B', 33000, 35000), ('A_NE', 0.00002, 0.00005), ('P', 0.004, 0.005), ('A_EW', 0.000015, 0.00003),
                         ('B_EW', 0.0002, 0.001), ('C_RED', 0.002, 0.0035), ('K_RED', 0.00007, 0.0001)]:
        print(name, interval(name, lo, hi))


PARAMS = [('B', 33900, 34400), ('P', 0.0040, 0.0050), ('A_EW', 0.000015, 0.00003),
          ('A_NE', 0.00002, 0.00005), ('B_EW', 0.0002, 0.001), ('C_RED', 0.002, 0.0035),
          ('K_RED', 0.00007, 0.0001)]


def leave_one_case_out(steps=400):
    """For each case: every constant re-centred (one at a time, the others at their values)
    on the tasks of the other cases the model reproduces; the case's tasks predicted."""
    F = [common.derive(f) for f in features.load()]
    base = {n: globals()[n] for n, _, _ in PARAMS}
    good = [d for d in F if predict(d) == d['exe']]
    misses = []
    for case in sorted({d['case'] for d in F}):
        train = [d for d in good if d['case'] != case]
        centre = {}
        for name, lo, hi in PARAMS:
            ok = []
            for i in range(steps + 1):
                globals()[name] = lo + (hi - lo) * i / steps
                if all(predict(d) == d['exe'] for d in train):
                    ok.append(globals()[name])
            globals()[name] = base[name]
            centre[name] = (min(ok) + max(ok)) / 2 if ok else base[name]
        globals().update(centre)
        for d in F:
            if d['case'] == case and predict(d) != d['exe'] and (d['case'], d['i']) in {(g['case'], g['i']) for g in good}:
                misses.append((case, d['i'], d['exe'], predict(d)))
        globals().update(base)
    return misses


if __name__ == '__main__' and '-l' in sys.argv:
    m = leave_one_case_out()
    print('leave-one-case-out misses among reproduced tasks:', len(m))
    for x in m:
        print('  ', x)
