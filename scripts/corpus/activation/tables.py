#!/usr/bin/env python3
"""Build the constant section of every unary-activation record (and real_div) from the
function alone and check it against the record's hashes.

    python3 tables.py          # per case MATCH / MISMATCH
    python3 tables.py -v       # also print the synthesised table words
"""
import os
SHARED = os.environ.get("ANEC_SHARED", os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../../../shared"))
import glob
import hashlib
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import actlut  # noqa: E402

CASES = SHARED + "/fixtures/apple-h13-oracles/cases"
PATTERNS = ["unary_*.json", "env_act_*.json", "binary_real_div_1x64x1x1.json"]


def mil_op(rec):
    """The op and its attributes, read from the MIL text."""
    mil = rec["mil"]
    m = re.search(r"= (\w+)\((.*)\)\[name", mil)
    op, args = m.group(1), m.group(2)
    params = {}
    a = re.search(r"alpha = fp32\(([-0-9.e]+)\)", args)
    if a:
        params["alpha"] = float(a.group(1))
    e = re.search(r"epsilon = fp32\(([-0-9.e]+)\)", args)
    if e:
        params["epsilon"] = float(e.group(1))
    mo = re.search(r'mode = string\("(\w+)"\)', args)
    if mo:
        params["mode"] = mo.group(1)
    return op, params


def main():
    verbose = "-v" in sys.argv
    files = sorted(set(f for p in PATTERNS for f in glob.glob(os.path.join(CASES, p))))
    cache = {}
    n_ok = 0
    for f in files:
        rec = json.load(open(f))
        op, params = mil_op(rec)
        key = (op, tuple(sorted(params.items())))
        if key not in cache:
            cache[key] = actlut.table_for(op, params)
        table = cache[key]
        cs = rec["constant_section"]
        sec = actlut.constant_section(table, cs["size"], 0)
        full = hashlib.sha256(sec).hexdigest() == cs["sha256"]
        pre = hashlib.sha256(sec[:128]).hexdigest() == cs["prefix_128_sha256"]
        nz = sum(1 for b in sec if b)
        ok = full and pre and nz == cs["nonzero_bytes"]
        n_ok += ok
        print("%-9s %-50s op=%-10s size=%5d sha256=%s prefix128=%s nonzero=%d/%d" % (
            "MATCH" if ok else "MISMATCH", rec["case"], op + ("/" + params["mode"] if "mode" in params else ""),
            cs["size"], "ok" if full else "NO", "ok" if pre else "NO", nz, cs["nonzero_bytes"]))
        if verbose and table is not None:
            w = actlut.unpack(table)
            print("    hdr ", " ".join("%04x" % v for v in w[:4]))
            print("    knots", " ".join("%04x" % v for v in w[4:37]))
            print("    lines", " ".join("%04x" % v for v in w[37:41]), " k=%d mode=0x%02x" % (w[41], w[42]))
    print("%d/%d cases reproduce Apple's constant section" % (n_ok, len(files)))


if __name__ == "__main__":
    main()
