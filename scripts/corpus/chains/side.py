#!/usr/bin/env python3
"""Apple's program and ours for one record, one line per task, side by side.

    python3 side.py CASE OURS.hwx

(`model.py CASE DIR --compile target/release/anec` writes OURS.hwx.) `s` after a task
number marks the L2 copy that task's tile DMA made of its source; `(tok)` a BAR-3 token
(header SPC/DPC) instead of data; `L2@` a result kept in L2.
"""
import sys

from chainlib import load
from tasks import brief_lines


def main():
    case, ours = sys.argv[1], sys.argv[2]
    a = brief_lines(load(case)[1])
    o = brief_lines(load(ours)[1])
    w = max(len(x) for x in a) + 2
    print("%-*s| %s" % (w, "Apple (%d tasks)" % len(a), "anec (%d tasks)" % len(o)))
    for i in range(max(len(a), len(o))):
        print("%-*s| %s" % (w, a[i] if i < len(a) else "", o[i] if i < len(o) else ""))


if __name__ == "__main__":
    main()
