#!/usr/bin/env python3
"""The L2 map of a program: every region a task writes (its kept or staged result, the L2
copy its tile DMA makes of its source), by base address, with the tasks that read it in
place afterwards (chains.md §4).

    python3 l2map.py CASE|FILE.hwx [...]
"""
import sys

from chainlib import links, load


def regions(tasks):
    lk = links(tasks)
    readers = {}
    for t in tasks:
        for (n, p, kind, _off) in lk[t.i]:
            if p is not None:
                readers.setdefault((p, "staged" if kind.startswith("staged") else "result"), []).append("T%d.%s" % (t.i, n))
    out = []
    for t in tasks:
        if t.src_dma:
            b, s = t.src_region()
            out.append((b, s, t.i, "staged source", "BAR%s in" % t.bars()[0], readers.get((t.i, "staged"), [])))
        b, s = t.result_region()
        what = "result -> DRAM (staging)" if t.dst_dma else "result kept"
        out.append((b, s, t.i, what, t.op().split()[0], readers.get((t.i, "result"), [])))
    return sorted(out, key=lambda r: (r[0], r[2]))


def main():
    for spec in sys.argv[1:]:
        label, tasks, _ = load(spec)
        print("=====", label)
        for (b, s, i, what, op, rd) in regions(tasks):
            print("  [%#8x, %#8x)  T%-2d %-26s %-14s read by %s" % (b, b + s, i, what, op, ", ".join(rd) or "-"))


if __name__ == "__main__":
    main()
