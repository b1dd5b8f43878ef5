#!/usr/bin/env python3
"""Tests the hazard rule of the L2 alias bits on what a task WRITES into L2 (a source the
tile DMA loads, its result) against every task of every record.

The bits of a source read in place (the recipe's link to the task that wrote it: an alias
bit or Dependent) are taken from the record (`links.py` tests a rule for them); they count
as waits.

Rule, for a task after the first (the first has all four bits in both words), the
convolution engine (NE, bits s/r) and the planar engine (PE, bits S/R):
  * a task's regions are live from the task on until a later task waits for it;
  * the OTHER engine's bits: SourceCfg Rslt when a loaded source overlaps the live result
    of a task of that engine, else Src when it overlaps a live source; ResultCfg likewise
    for the result, checked after the waits the sources imply, and clear when SourceCfg
    already waits for that engine's result;
  * the task's OWN engine's Src and Rslt bits in both words when the task opens a section
    (header SPL) and loads its source; none otherwise;
  * waits: a Rslt bit waits for all of the tasks it names, a Src bit for their sources,
    reading a result in place for all of its writer; a wait for a task covers every
    earlier task of its engine.
  * the live part of a result streamed to memory: --fp row2 its first two rows of the
    destination DMA (default; rowN: N rows), full the whole result, eighth its first eighth.
Options: --same checks the own engine's regions as the other engine's (instead of the
section rule); --no-own drops the section rule; --engines P (planar bits only) or NP.

Usage: hazard.py [-v] [--fp row2|full|eighth] [--same] [--no-own] [--engines NP|P]"""
import argparse
import collections
from load import load, regions, cfg_fields

BITS = ('cs', 'cr', 'ps', 'pr')


def ov(a, b):
    return a[0] < b[1] and b[0] < a[1]


def footprint(t, rg, mode):
    a, b, kind = rg
    if kind != 'stream' or mode == 'full':
        return (a, b)
    if mode.startswith('row'):
        rows = int(mode[3:])
        return (a, min(b, a + rows * max(t['regs'].get(0x17808, 0), 0x10)))
    if mode == 'eighth':
        return (a, a + max(0x10, (b - a) // 8))
    raise ValueError(mode)


def bitset(v):
    f = cfg_fields(v)
    return {k for k in BITS if f[k]}


def release(live, waited):
    """Live regions once the waits are done: a wait for a task (or its sources) covers every
    earlier task of its engine."""
    for q, eng, what in waited:
        live = [l for l in live if not (l[1] == eng and l[0] <= q and (what == 'all' or l[2] == 'src'))]
    return live


def predict(r, a):
    """[(source bits or None when not predicted, result bits)] per task."""
    live = []   # (task index, engine, 'src'|'res', (lo, hi))
    written = []  # (task index, engine, (lo, hi)) of every result so far
    out = []
    for t in r['tasks']:
        rg = regions(t)
        if t['i'] == 0:
            out.append((set(BITS), set(BITS)))
        else:
            waited = set()
            loads = [rg[k] for k in ('src', 'src2') if k in rg and rg[k][2] == 'load']
            reads = [rg[k] for k in ('src', 'src2') if k in rg and rg[k][2] == 'resident']
            given = bitset(t['src_cfg']) if reads else set()
            src_bits, res_bits = set(), set()
            opens = bool(t['hw'][6] >> 11 & 1)
            for eng, S, R in (('NE', 'cs', 'cr'), ('PE', 'ps', 'pr')):
                if eng[0] not in a.engines:
                    continue
                if eng == t['engine'] and not a.same:
                    # its own engine: both bits on what a task opening a section writes
                    if opens and loads and a.own:
                        src_bits |= {S, R}
                        res_bits |= {S, R}
                    continue
                # a loaded source, against the regions live before the task
                hit_r = {l[0] for l in live if l[1] == eng and l[2] == 'res' and any(ov(s, l[3]) for s in loads)}
                hit_s = {l[0] for l in live if l[1] == eng and l[2] == 'src' and any(ov(s, l[3]) for s in loads)}
                if hit_r:
                    src_bits.add(R)
                    waited |= {(q, eng, 'all') for q in hit_r}
                elif hit_s:
                    src_bits.add(S)
                    waited |= {(q, eng, 'src' if a.wait == 'parts' else 'all') for q in hit_s}
            # reading a result in place waits for its writer (before the task runs); with
            # --wait task the source's flags wait only for the tasks after this one
            reads_wait = set()
            for s in reads:
                for l in live:
                    if l[2] == 'res' and ov(s, l[3]):
                        reads_wait.add((l[0], l[1], 'all'))
            live = release(live, reads_wait if a.wait == 'task' else waited | reads_wait)
            res = rg.get('res')
            for eng, S, R in (('NE', 'cs', 'cr'), ('PE', 'ps', 'pr')):
                if eng[0] not in a.engines or res is None or (eng == t['engine'] and not a.same):
                    continue
                if R in src_bits or R in given:
                    continue
                hr = {l[0] for l in live if l[1] == eng and l[2] == 'res' and ov(res, l[3])}
                hs = {l[0] for l in live if l[1] == eng and l[2] == 'src' and ov(res, l[3])}
                if hr:
                    res_bits.add(R)
                    waited |= {(q, eng, 'all') for q in hr}
                elif hs:
                    res_bits.add(S)
                    waited |= {(q, eng, 'src' if a.wait == 'parts' else 'all') for q in hs}
            if reads and not loads:
                src_bits = None
            elif reads and not (t['src_cfg'] >> 2) & 3:
                # the link of a source read in place: the engine of the task that wrote it
                for s in reads:
                    w = [x for x in written if ov(s, x[2])]
                    if w and w[-1][1][0] in a.engines:
                        src_bits.add('cr' if w[-1][1] == 'NE' else 'pr')
            out.append((src_bits, res_bits))
            live = release(live, waited)
        for k in ('src', 'src2'):
            if k in rg:
                live.append((t['i'], t['engine'], 'src', rg[k][:2]))
        if 'res' in rg:
            live.append((t['i'], t['engine'], 'res', footprint(t, rg['res'], a.fp)))
            written.append((t['i'], t['engine'], rg['res'][:2]))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('-v', action='store_true')
    ap.add_argument('--fp', default='row2')
    ap.add_argument('--same', action='store_true')
    ap.add_argument('--engines', default='NP')
    ap.add_argument('--no-own', dest='own', action='store_false')
    ap.add_argument('--wait', default='task', choices=('task', 'parts'))
    a = ap.parse_args()
    keys = [k for k in BITS if (k[0] == 'c' and 'N' in a.engines) or (k[0] == 'p' and 'P' in a.engines)]
    stats = collections.Counter()
    bad = []
    for r in load():
        for t, (ps, pr) in zip(r['tasks'], predict(r, a)):
            if t['i'] == 0 or not t['has_l2']:
                continue
            for cfg, p, v in (('src', ps, t['src_cfg']), ('res', pr, t['res_cfg'])):
                if p is None:
                    continue
                q = bitset(v)
                for k in keys:
                    on = k in q
                    ok = (k in p) == on
                    stats[(cfg, k, on, ok)] += 1
                    if not ok:
                        bad.append((r['case'], t['i'], t['engine'], cfg, k, 'set by Apple' if on else 'predicted only'))
    occ = sum(v for (c, k, on, ok), v in stats.items() if on)
    occ_ok = sum(v for (c, k, on, ok), v in stats.items() if on and ok)
    off_bad = sum(v for (c, k, on, ok), v in stats.items() if not on and not ok)
    print('wait=%s fp=%s same=%s engines=%s: bits set on written regions after the first task %d, explained %d; '
          'predicted but clear %d' % (a.wait, a.fp, a.same, a.engines, occ, occ_ok, off_bad))
    if a.v:
        for k, v in sorted(stats.items()):
            print('  ', k, v)
        for b in bad:
            print('  MISS', *b)


if __name__ == '__main__':
    main()
