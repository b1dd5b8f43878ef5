#!/usr/bin/env python3
"""The L2 hand-over words of every task of the corpus, predicted from the task plan and
the L2 placement (chains.md §3), with the score of each rule:

- SourceType (L2 SourceCfg bits 0..1) of a task whose tile DMA loads its source;
- Dependent (SourceCfg bits 2..3) of a task reading its first source in place;
- the alias bits AliasConvSrc / AliasConvRslt / AliasPlanarRslt (SourceCfg bits 4, 5, 22)
  of a task reading in place.

    python3 links.py [--all]      # scores and misses (--all: every in-place read)

The plan facts come from the records' own words (chainlib: engine, shapes, the L2 regions
each task reads and writes, which earlier task wrote a region); no rule looks at a case
name. Region sizes are approximations (rows x row stride); they only decide overlaps.
"""
import glob
import os
import sys

from chainlib import CASES, links, record, src_cfg_str, tasks_of_record


def overlap(a, b):
    return a[0] < b[0] + b[1] and b[0] < a[0] + a[1]


def source_type(tasks, lk, t):
    """1 when a later task reads the L2 copy this task's tile DMA made of its source
    (the staging is kept), 2 when it is dropped after the task."""
    reread = any(p == t.i and k.startswith("staged") for u in tasks for (_n, p, k, _o) in lk[u.i] if p is not None)
    return 1 if reread else 2


def dependent(tasks, lk, t):
    """Dependent of an in-place reader: the producer's engine (1 NE, 2 PE) when
    - source 1 is the result of the task just before (not the program's first task),
    - read whole, with the producer's own shape (Cout, Hout, Wout) as the reader's
      (Cin, Hin, Win) -- no re-view, broadcast or transposition in between,
    - and the reader's result does not overwrite the producer's source (unless the
      producer works in place): the reader may then start on rows as they arrive.
    Else 0."""
    h1 = next((x for x in lk[t.i] if x[0] == "src1"), None)
    if h1 is None:
        return 0
    _name, pi, kind, off = h1
    if pi is None or kind != "result" or off or pi != t.i - 1 or pi == 0:
        return 0
    p = tasks[pi]
    pd, td = p.dims(), t.dims()
    if (pd["Cout"], pd["Hout"], pd["Wout"]) != (td["Cin"], td["Hin"], td["Win"]):
        return 0
    ps, pr = p.src_region(), p.result_region()
    if ps[0] != pr[0] and overlap(ps, t.result_region()):
        return 0
    return {"NE": 1, "PE": 2}[p.engine]


def aliases(tasks, lk, t, sect):
    """The alias bits of an in-place reader's SourceCfg ({'aCS', 'aCR', 'aPR'})."""
    ops = [(n, pi, k) for (n, pi, k, _o) in lk[t.i] if pi is not None]
    prev = tasks[t.i - 1]
    mine = {(pi, k) for (_n, pi, k) in ops}
    theirs = {(pi, k) for (_n, pi, k, _o) in lk[prev.i] if pi is not None}
    if prev.src_dma:
        theirs.add((prev.i, "staged"))
    # A later slice of a split NE task re-reading what the previous slice read.
    if mine and mine <= theirs and prev.engine == t.engine == "NE":
        return set()
    dep = dependent(tasks, lk, t)
    if dep == 2:
        return set()
    if dep == 1:
        # The region also holds what a PE task of this L2 section wrote there earlier
        # (an NE table run in place over a PE result).
        s1 = t.src_region()
        hist = any(p.engine == "PE" and p.i >= sect and overlap(p.result_region(), s1) for p in tasks[:t.i - 1])
        return {"aPR"} if hist else set()
    if any(tasks[pi].engine == "PE" for (_n, pi, _k) in ops):
        return {"aPR"}
    out = set()
    if any(tasks[pi].engine == "NE" and k.startswith("staged") for (_n, pi, k) in ops):
        out |= {"aCS", "aCR"}
    if any(tasks[pi].engine == "NE" and k == "result" for (_n, pi, k) in ops):
        out.add("aCR")
    return out


def actual_aliases(v):
    return {b for b, s in (("aCS", 4), ("aCR", 5), ("aPS", 20), ("aPR", 22)) if v >> s & 1}


def main():
    show_all = "--all" in sys.argv
    score = {"SourceType": [0, 0], "Dependent": [0, 0], "aliases": [0, 0]}
    for f in sorted(glob.glob(os.path.join(CASES, "*.json"))):
        case = os.path.basename(f)[:-5]
        ts = tasks_of_record(record(case))
        lk = links(ts)
        sect = 0
        for t in ts:
            if t.flag(11):
                sect = t.i
            v = t.g(0x4804)
            if t.src_dma:
                ok = source_type(ts, lk, t) == v & 3
                score["SourceType"][0] += ok
                score["SourceType"][1] += 1
                if not ok:
                    print("!! SourceType %s T%d %#x" % (case, t.i, v))
                continue
            if t.i == 0:
                continue
            dep, al = dependent(ts, lk, t), aliases(ts, lk, t, sect)
            ok_d, ok_a = dep == (v >> 2 & 3), al == actual_aliases(v)
            score["Dependent"][0] += ok_d
            score["aliases"][0] += ok_a
            score["Dependent"][1] += 1
            score["aliases"][1] += 1
            if show_all or not (ok_d and ok_a):
                desc = "; ".join("%s <- T%s %s" % (n, pi, k) for (n, pi, k, _o) in lk[t.i])
                print("%s %-40s T%d %s %-26s SourceCfg %#-9x (%s) predicted Dep %d aliases %s  [%s]" % (
                    "  " if ok_d and ok_a else "!!", case, t.i, t.engine, t.op()[:26], v, src_cfg_str(v), dep,
                    sorted(al), desc))
    for k, (ok, n) in score.items():
        print("%-10s %d/%d" % (k, ok, n))


if __name__ == "__main__":
    main()
