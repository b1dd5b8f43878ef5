#!/usr/bin/env python3
"""Writes a MIL model of N elementwise statements (a chain alternating relu, sigmoid and an
add of the two previous results) over a [1, 16, 64] input, for the parse-and-lower
benchmark (scripts/bench/compile_speed.sh; docs/performance.md).

    long_mil.py OUT_FILE N
"""

import sys


def main():
    out, n = sys.argv[1], int(sys.argv[2])
    t = "tensor<fp16, [1, 16, 64]>"
    lines = ["program(1.3)", "{", f"    func main<ios18>({t} x) {{"]
    prev, before = "x", "x"
    for i in range(n):
        name = f"v{i}"
        if i % 3 == 0:
            body = f"relu(x = {prev})"
        elif i % 3 == 1:
            body = f"sigmoid(x = {prev})"
        else:
            body = f"add(x = {prev}, y = {before})"
        lines.append(f'        {t} {name} = {body}[name = string("{name}")];')
        before, prev = prev, name
    lines += [f"    }} -> ({prev});", "}", ""]
    with open(out, "w") as f:
        f.write("\n".join(lines))


if __name__ == "__main__":
    main()
