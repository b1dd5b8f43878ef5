#!/usr/bin/env python3
"""Writes a MIL model of LAYERS stacked 1x1 convolutions CHANNELS -> CHANNELS over an
input [1, CHANNELS, SIZE, SIZE], with its MILBlob v2 weight file, for the compile-speed
benchmark (scripts/bench/compile_speed.sh; docs/performance.md).

    stacked_convs.py OUT_DIR LAYERS [--channels 2048] [--size 8] [--dtype fp16|fp32]
                     [--palette-bits N] [--seed 0]

OUT_DIR gets model.mil and weights/weight.bin. The weights are streamed to the file one
layer at a time (seeded random values in [-0.02, 0.02]), so a model larger than memory
can be written. fp32 weights are stored as fp32 blobs; the MIL casts nothing (the
compiler converts them to fp16 once). With --palette-bits N (1, 2, 4 or 8) each layer's
weights are palettized instead: a uint8 blob of packed N-bit indices (least significant
bit first) and an inline fp16 palette of 2^N values, expanded by `constexpr_lut_to_dense`
(the iOS16 form coremltools writes).
"""

import argparse
import os
import struct

import numpy as np

CODES = {"fp16": 1, "fp32": 2, "uint8": 3}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("layers", type=int)
    ap.add_argument("--channels", type=int, default=2048)
    ap.add_argument("--size", type=int, default=8)
    ap.add_argument("--dtype", choices=CODES, default="fp16")
    ap.add_argument("--palette-bits", type=int, choices=[1, 2, 4, 8])
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    os.makedirs(os.path.join(a.out, "weights"), exist_ok=True)
    c, s, n = a.channels, a.size, a.layers
    np_dtype = np.float16 if a.dtype == "fp16" else np.float32
    rng = np.random.default_rng(a.seed)
    offsets = []
    with open(os.path.join(a.out, "weights", "weight.bin"), "wb") as f:
        f.write(struct.pack("<II", n, 2).ljust(64, b"\0"))
        for _ in range(n):
            code = CODES[a.dtype]
            if a.palette_bits:
                data, code = packed_indices(rng, c * c, a.palette_bits), CODES["uint8"]
            else:
                data = rng.uniform(-0.02, 0.02, size=(c, c)).astype(np_dtype).tobytes()
            record = f.tell()
            start = record + 64
            f.write(struct.pack("<IIQQQ", 0xDEADBEEF, code, len(data), start, 0).ljust(64, b"\0"))
            f.write(data)
            f.write(b"\0" * (-f.tell() % 64))
            offsets.append(record)
    t = f"tensor<fp16, [1, {c}, {s}, {s}]>"
    wt = f"tensor<{a.dtype}, [{c}, {c}, 1, 1]>"
    lines = [
        "program(1.3)",
        '[buildInfo = dict<string, string>({{"generator", "anec scripts/bench/stacked_convs.py"}})]',
        "{",
        f"    func main<ios18>({t} x) {{",
        '        string pad = const()[name = string("pad"), val = string("valid")];',
        '        tensor<int32, [2]> ones = const()[name = string("ones"), val = tensor<int32, [2]>([1, 1])];',
        '        tensor<int32, [4]> zeros = const()[name = string("zeros"), val = tensor<int32, [4]>([0, 0, 0, 0])];',
        '        int32 groups = const()[name = string("groups"), val = int32(1)];',
    ]
    prev = "x"
    for i, off in enumerate(offsets):
        blob = f'BLOBFILE(path = string("@model_path/weights/weight.bin"), offset = uint64({off}))'
        if a.palette_bits:
            lines.append(palettized(i, blob, c, a.palette_bits))
        else:
            lines.append(f'        {wt} w{i} = const()[name = string("w{i}"), val = {wt}({blob})];')
        lines.append(
            f"        {t} y{i} = conv(dilations = ones, groups = groups, pad = zeros, pad_type = pad, "
            f'strides = ones, weight = w{i}, x = {prev})[name = string("y{i}")];'
        )
        prev = f"y{i}"
    lines += [f"    }} -> ({prev});", "}", ""]
    with open(os.path.join(a.out, "model.mil"), "w") as f:
        f.write("\n".join(lines))


def packed_indices(rng, count, bits):
    """COUNT random BITS-bit indices packed into bytes, least significant bit first."""
    idx = rng.integers(0, 1 << bits, size=count, dtype=np.uint8)
    per = 8 // bits
    idx = idx.reshape(-1, per).astype(np.uint16)
    packed = np.zeros(idx.shape[0], dtype=np.uint16)
    for k in range(per):
        packed |= idx[:, k] << (k * bits)
    return packed.astype(np.uint8).tobytes()


def palettized(i, blob, c, bits):
    """The constexpr_lut_to_dense statement of layer I's weights."""
    n = c * c * bits // 8
    lut = ", ".join(f"{v:.6f}" for v in np.linspace(-0.02, 0.02, 1 << bits))
    return (
        f"        tensor<fp16, [{c}, {c}, 1, 1]> w{i} = constexpr_lut_to_dense()[indices = tensor<uint8, [{n}]>({blob}), "
        f"lut = tensor<fp16, [{1 << bits}]>([{lut}]), shape = tensor<uint32, [4]>([{c}, {c}, 1, 1]), "
        f'name = string("w{i}")];'
    )


if __name__ == "__main__":
    main()
