"""Counts the tasks whose ExeCycles anec reproduces, from an oracle report
(`ANEC_ORACLE_REPORT=FILE cargo test --release -p anec-tests --test oracles`), per engine
kind of Apple's task. Only cases compiled with Apple's task count are compared task by task.
`python3 report_count.py FILE [FILE2]` (two files: before and after, and what changed)."""
import collections, os, re, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import features, common


def parse(fn):
    cases, cur = {}, None
    for line in open(fn):
        m = re.match(r'== (\S+)', line)
        if m:
            cur = m.group(1)
            cases[cur] = {'compiled': True, 'count_ok': True, 'exe': set()}
            continue
        if cur is None:
            continue
        if 'not compiled' in line:
            cases[cur]['compiled'] = False
        if line.strip().startswith('task count:'):
            cases[cur]['count_ok'] = False
        m = re.match(r'\s+TD (\d+) aneTD.Header\[1\].ExeCycles', line)
        if m:
            cases[cur]['exe'].add(int(m.group(1)))
    return cases


def kind(d):
    l2only = not (d['src0'] or d['src1'] or d['dst'])
    return d['kind'] + ('-L2' if l2only else '')


def count(fn, tasks):
    rep = parse(fn)
    ok, tot, good = collections.Counter(), collections.Counter(), set()
    for d in tasks:
        r = rep.get(d['case'])
        if r is None or not r['compiled'] or not r['count_ok']:
            continue
        k = kind(d)
        tot[k] += 1
        if d['i'] not in r['exe']:
            ok[k] += 1
            good.add((d['case'], d['i']))
    return ok, tot, good


if __name__ == '__main__':
    tasks = [common.derive(f) for f in features.load()]
    results = [count(fn, tasks) for fn in sys.argv[1:]]
    for fn, (ok, tot, _) in zip(sys.argv[1:], results):
        print(fn)
        for k in sorted(tot):
            print('  %-8s %3d / %3d' % (k, ok[k], tot[k]))
        print('  all      %3d / %3d' % (sum(ok.values()), sum(tot.values())))
    if len(results) == 2:
        a, b = results[0][2], results[1][2]
        print('now reproduced:', sorted(b - a))
        print('no longer reproduced:', sorted(a - b))
