#!/usr/bin/env python3
"""Writes the transformer-block example: `model.mil` and `weights/weight.bin`.

A pre-norm transformer block over a sequence of 128 tokens of width 256 with 4 heads:
layer_norm, q/k/v linear, scaled_dot_product_attention with a causal mask, output linear,
residual add, layer_norm, a gelu MLP (256 -> 1024 -> 256), residual add. Weights are
deterministic pseudo-random fp16 values (seed 0), scaled like a trained block's
(1/sqrt(fan_in)), stored as coremltools stores them: a MILBlob v2 file the MIL text
points into with BLOBFILE. Run from this folder: `python3 generate.py` (numpy only; the blob writer is
`examples/milblob.py`).
"""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from milblob import BlobWriter  # noqa: E402  (examples/milblob.py)

SEQ, WIDTH, HEADS, HIDDEN = 128, 256, 4, 1024
HEAD = WIDTH // HEADS
HERE = Path(__file__).resolve().parent


def main():
    rng = np.random.default_rng(0)
    blobs = BlobWriter()

    def const(name, array):
        shape = ", ".join(str(d) for d in array.shape)
        offset = blobs.add(array)
        return (
            f'        tensor<fp16, [{shape}]> {name} = const()[name = string("{name}"), '
            f'val = tensor<fp16, [{shape}]>(BLOBFILE(path = string("@model_path/weights/weight.bin"), '
            f"offset = uint64({offset})))];"
        )

    def weight(name, rows, cols):
        return const(name, rng.standard_normal((rows, cols)) / np.sqrt(cols))

    def bias(name, n, scale=0.02):
        return const(name, rng.standard_normal(n) * scale)

    lines = []
    for i in (1, 2):
        lines.append(const(f"ln{i}_gamma", 1.0 + rng.standard_normal(WIDTH) * 0.1))
        lines.append(const(f"ln{i}_beta", rng.standard_normal(WIDTH) * 0.1))
    for p in ("q", "k", "v", "o"):
        lines.append(weight(f"w{p}", WIDTH, WIDTH))
        lines.append(bias(f"b{p}", WIDTH))
    lines.append(weight("w1", HIDDEN, WIDTH))
    lines.append(bias("b1", HIDDEN))
    lines.append(weight("w2", WIDTH, HIDDEN))
    lines.append(bias("b2", WIDTH))
    # Additive causal mask: 0 on and below the diagonal, -65504 (fp16 lowest) above it.
    lines.append(const("causal", np.triu(np.full((SEQ, SEQ), -65504.0), 1)))

    x = f"tensor<fp16, [1, {SEQ}, {WIDTH}]>"
    heads = f"tensor<fp16, [1, {SEQ}, {HEADS}, {HEAD}]>"
    per_head = f"tensor<fp16, [1, {HEADS}, {SEQ}, {HEAD}]>"
    hidden = f"tensor<fp16, [1, {SEQ}, {HIDDEN}]>"
    body = [
        f'        {x} n1 = layer_norm(x = x, axes = tensor<int32, [1]>([-1]), gamma = ln1_gamma, beta = ln1_beta, epsilon = fp16(0.00001))[name = string("n1")];',
    ]
    for p in ("q", "k", "v"):
        body += [
            f'        {x} {p} = linear(x = n1, weight = w{p}, bias = b{p})[name = string("{p}")];',
            f'        {heads} {p}_h = reshape(x = {p}, shape = tensor<int32, [4]>([1, {SEQ}, {HEADS}, {HEAD}]))[name = string("{p}_h")];',
            f'        {per_head} {p}_t = transpose(x = {p}_h, perm = tensor<int32, [4]>([0, 2, 1, 3]))[name = string("{p}_t")];',
        ]
    body += [
        f'        {per_head} a = scaled_dot_product_attention(query = q_t, key = k_t, value = v_t, attn_mask = causal)[name = string("attention")];',
        f'        {heads} a_t = transpose(x = a, perm = tensor<int32, [4]>([0, 2, 1, 3]))[name = string("a_t")];',
        f'        {x} a_m = reshape(x = a_t, shape = tensor<int32, [3]>([1, {SEQ}, {WIDTH}]))[name = string("a_m")];',
        f'        {x} o = linear(x = a_m, weight = wo, bias = bo)[name = string("o")];',
        f'        {x} h = add(x = x, y = o)[name = string("residual1")];',
        f'        {x} n2 = layer_norm(x = h, axes = tensor<int32, [1]>([-1]), gamma = ln2_gamma, beta = ln2_beta, epsilon = fp16(0.00001))[name = string("n2")];',
        f'        {hidden} m1 = linear(x = n2, weight = w1, bias = b1)[name = string("mlp_up")];',
        f'        {hidden} g = gelu(x = m1, mode = string("EXACT"))[name = string("gelu")];',
        f'        {x} m2 = linear(x = g, weight = w2, bias = b2)[name = string("mlp_down")];',
        f'        {x} y = add(x = h, y = m2)[name = string("residual2")];',
    ]
    text = (
        "program(1.3)\n[buildInfo = dict<string, string>({{\"generator\", \"anec examples/transformer_block/generate.py\"}})]\n{\n"
        f"    func main<ios18>({x} x) {{\n" + "\n".join(lines + body) + "\n    } -> (y);\n}\n"
    )
    (HERE / "weights").mkdir(exist_ok=True)
    (HERE / "weights" / "weight.bin").write_bytes(blobs.finish())
    (HERE / "model.mil").write_text(text)


if __name__ == "__main__":
    main()
