#!/usr/bin/env python3
"""Writes the CNN example: `model.mil` and `weights/weight.bin`.

A small image classifier over a 64 x 64 RGB image: a 3 x 3 stride-2 convolution with
padding, batch norm and relu; a depthwise 3 x 3 convolution, batch norm and relu; a 1 x 1
convolution and batch norm added to the block's input (a residual), relu; a 2 x 2 max
pool; a 3 x 3 convolution and relu; a global average pool; a linear layer to 10 classes
and a softmax. Weights are deterministic pseudo-random fp16 values (seed 0), scaled like
a trained network's (1/sqrt(fan_in)); batch-norm statistics near 0 and 1. Stored as
coremltools stores them: a MILBlob v2 file the MIL text points into with BLOBFILE. Run
from this folder: `python3 generate.py` (numpy only; the blob writer is
`examples/milblob.py`).
"""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from milblob import BlobWriter  # noqa: E402  (examples/milblob.py)

HERE = Path(__file__).resolve().parent
SIZE, C1, C2, CLASSES = 64, 16, 32, 10


def t(shape):
    return f"tensor<fp16, [{', '.join(str(d) for d in shape)}]>"


def ints(values):
    return f"tensor<int32, [{len(values)}]>([{', '.join(str(v) for v in values)}])"


def main():
    rng = np.random.default_rng(0)
    blobs = BlobWriter()
    lines = []

    def const(name, array):
        offset = blobs.add(array)
        lines.append(
            f'        {t(array.shape)} {name} = const()[name = string("{name}"), '
            f'val = {t(array.shape)}(BLOBFILE(path = string("@model_path/weights/weight.bin"), '
            f"offset = uint64({offset})))];"
        )
        return name

    def kernel(name, cout, cin, k):
        return const(name, rng.standard_normal((cout, cin, k, k)) / np.sqrt(cin * k * k))

    def norm(name, c):
        for part, values in (
            ("mean", rng.standard_normal(c) * 0.1),
            ("var", 1.0 + rng.random(c) * 0.2),
            ("gamma", 1.0 + rng.standard_normal(c) * 0.1),
            ("beta", rng.standard_normal(c) * 0.1),
        ):
            const(f"{name}_{part}", values)

    h, q = SIZE // 2, SIZE // 4
    kernel("w_stem", C1, 3, 3)
    norm("bn_stem", C1)
    kernel("w_dw", C1, 1, 3)
    norm("bn_dw", C1)
    kernel("w_pw", C1, C1, 1)
    norm("bn_pw", C1)
    kernel("w_conv", C2, C1, 3)
    const("b_conv", rng.standard_normal(C2) * 0.02)
    const("w_fc", rng.standard_normal((CLASSES, C2)) / np.sqrt(C2))
    const("b_fc", rng.standard_normal(CLASSES) * 0.02)

    def conv(out, x, w, shape, stride, pad, groups=1, bias=None):
        b = f", bias = {bias}" if bias else ""
        return (
            f"        {t(shape)} {out} = conv(x = {x}, weight = {w}{b}, strides = {ints([stride, stride])}, "
            f'pad_type = string("custom"), pad = {ints([pad] * 4)}, dilations = {ints([1, 1])}, '
            f'groups = int32({groups}))[name = string("{out}")];'
        )

    def bn(out, x, name, shape):
        return (
            f"        {t(shape)} {out} = batch_norm(x = {x}, mean = {name}_mean, variance = {name}_var, "
            f'gamma = {name}_gamma, beta = {name}_beta, epsilon = fp16(0.00001))[name = string("{out}")];'
        )

    def relu(out, x, shape):
        return f'        {t(shape)} {out} = relu(x = {x})[name = string("{out}")];'

    s1, s2 = [1, C1, h, h], [1, C1, q, q]
    body = [
        conv("stem", "x", "w_stem", s1, 2, 1),
        bn("stem_bn", "stem", "bn_stem", s1),
        relu("stem_relu", "stem_bn", s1),
        conv("dw", "stem_relu", "w_dw", s1, 1, 1, groups=C1),
        bn("dw_bn", "dw", "bn_dw", s1),
        relu("dw_relu", "dw_bn", s1),
        conv("pw", "dw_relu", "w_pw", s1, 1, 0),
        bn("pw_bn", "pw", "bn_pw", s1),
        f'        {t(s1)} res = add(x = stem_relu, y = pw_bn)[name = string("residual")];',
        relu("res_relu", "res", s1),
        f"        {t(s2)} pool = max_pool(x = res_relu, kernel_sizes = {ints([2, 2])}, strides = {ints([2, 2])}, "
        f'pad_type = string("valid"), ceil_mode = bool(false))[name = string("pool")];',
        conv("conv", "pool", "w_conv", [1, C2, q, q], 1, 1, bias="b_conv"),
        relu("conv_relu", "conv", [1, C2, q, q]),
        f"        {t([1, C2, 1, 1])} gap = reduce_mean(x = conv_relu, axes = {ints([2, 3])}, keep_dims = bool(true))"
        f'[name = string("global_pool")];',
        f'        {t([1, C2])} flat = reshape(x = gap, shape = {ints([1, C2])})[name = string("flat")];',
        f'        {t([1, CLASSES])} logits = linear(x = flat, weight = w_fc, bias = b_fc)[name = string("fc")];',
        f'        {t([1, CLASSES])} y = softmax(x = logits, axis = int32(-1))[name = string("probs")];',
    ]
    text = (
        "program(1.3)\n[buildInfo = dict<string, string>({{\"generator\", \"anec examples/cnn/generate.py\"}})]\n{\n"
        f"    func main<ios18>({t([1, 3, SIZE, SIZE])} x) {{\n" + "\n".join(lines + body) + "\n    } -> (y);\n}\n"
    )
    (HERE / "weights").mkdir(exist_ok=True)
    (HERE / "weights" / "weight.bin").write_bytes(blobs.finish())
    (HERE / "model.mil").write_text(text)


if __name__ == "__main__":
    main()
