#!/usr/bin/env python3
"""Write a record's model folder as the oracle harness does (tests/src/oracle.rs `model_dir`),
and optionally compile it with anec.

    python3 model.py CASE DIR [--compile ANEC_BINARY]

DIR/model.mil is the record's MIL with each BLOBFILE offset pointing at its blob of a
well-formed MILBlob v2 DIR/weights.bin holding the values Apple's compiler read (README
"Weights": form C = constant i is fp16 bits 0x3400 + i; forms A/B = halfword e of the
corpus tool's file). With --compile, runs `ANEC compile DIR/model.mil -t h13g -o DIR/out`
and prints the .hwx path.
"""
import glob
import os
import struct
import subprocess
import sys

from chainlib import record


def form_ab_halfword(e, payload, fill):
    header = bytearray(128)
    header[0:4] = struct.pack("<I", 1)
    header[4:8] = struct.pack("<I", 2)
    header[64:84] = struct.pack("<IQQ", 0xDEADBEEF, payload, 128)
    if e < 64:
        return struct.unpack_from("<H", header, 2 * e)[0]
    return fill


def constant_values(w):
    def count(s):
        n = 1
        for d in s:
            n *= d
        return n
    fill = {"fp16(0x1p-1)": 0x3800, "distinct": 0x3801}
    if w.get("shapes") and w.get("record_offsets"):
        return [[0x3400 + i] * count(s) for i, s in enumerate(w["shapes"])]
    shapes = [w["shape"]] if w.get("shape") else w["shapes"]
    f = fill[w["value"]]
    return [[form_ab_halfword(e, w.get("payload_bytes", 0), f) for e in range(count(s))] for s in shapes]


def blob_file(blobs):
    out = bytearray(64)
    out[0:8] = struct.pack("<II", len(blobs), 2)
    offsets = []
    for b in blobs:
        rec = len(out)
        offsets.append(rec)
        meta = bytearray(64)
        meta[0:24] = struct.pack("<IIQQ", 0xDEADBEEF, 1, 2 * len(b), rec + 64)
        out += meta
        out += struct.pack("<%dH" % len(b), *b)
        out += bytes((-len(out)) % 64)
    return bytes(out), offsets


def repoint(mil, offsets):
    """The i-th BLOBFILE's `offset = uint64(N)` set to offsets[i] (oracle.rs `repoint`)."""
    out, rest, i = [], mil, 0
    while "BLOBFILE(" in rest:
        at = rest.index("BLOBFILE(")
        head, tail = rest[:at], rest[at:]
        key = "offset = uint64("
        k = tail.index(key)
        close = tail.index(")", k)
        out.append(head + tail[:k + len(key)] + str(offsets[i]))
        rest = tail[close:]
        i += 1
    out.append(rest)
    assert i == len(offsets), "BLOBFILE count differs from the weights record"
    return "".join(out)


def model_dir(case, d):
    r = record(case)
    os.makedirs(d, exist_ok=True)
    mil = r["mil"]
    if r["weights"]["storage"] == "BLOBFILE":
        data, offsets = blob_file(constant_values(r["weights"]))
        open(os.path.join(d, "weights.bin"), "wb").write(data)
        mil = repoint(mil, offsets)
    p = os.path.join(d, "model.mil")
    open(p, "w").write(mil)
    return p


def compile_case(case, d, anec):
    p = model_dir(case, d)
    out = os.path.join(d, "out")
    subprocess.run([anec, "compile", p, "-t", "h13g", "-o", out], check=True, stdout=subprocess.DEVNULL)
    hwx = sorted(glob.glob(os.path.join(out, "**", "*.hwx"), recursive=True))
    return hwx[0] if hwx else None


if __name__ == "__main__":
    case, d = sys.argv[1], sys.argv[2]
    if "--compile" in sys.argv:
        print(compile_case(case, d, sys.argv[sys.argv.index("--compile") + 1]))
    else:
        print(model_dir(case, d))
