#!/usr/bin/env python3
"""Writes small Core ML models of the kinds users run, as coremltools saves them
(`.mlpackage`, ML program), into `tests/models/`: the real-model tests of issue 11
(`tests/tests/real_models.rs`) compile each, simulate it and compare it with the reference.

Needs coremltools (PyPI; it saves `.mlpackage` files on Linux, it cannot run them there):
    python3 -m venv /tmp/ct && /tmp/ct/bin/pip install coremltools numpy
    /tmp/ct/bin/python scripts/models/build.py
Each model is built with coremltools' MIL builder (no PyTorch needed) and converted with
`ct.convert`, so it has gone through coremltools' own graph passes, as a converted model
has. Weights are seeded pseudo-random values scaled like a trained network's; shapes are
kept small so that the files stay small and the simulator fast.
"""

import shutil
import sys
from pathlib import Path

import numpy as np
import coremltools as ct
from coremltools.converters.mil import Builder as mb
from coremltools.converters.mil.mil import types

OUT = Path(__file__).resolve().parents[2] / "tests" / "models"
RNG = np.random.default_rng(11)


def w(*shape, fan_in=None):
    fan_in = fan_in or int(np.prod(shape[1:])) or 1
    return (RNG.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32)


def b(n, scale=0.05):
    return (RNG.standard_normal(n) * scale).astype(np.float32)


def bn(x, c, name):
    return mb.batch_norm(
        x=x,
        mean=(RNG.standard_normal(c) * 0.1).astype(np.float32),
        variance=(1.0 + RNG.random(c) * 0.2).astype(np.float32),
        gamma=(1.0 + RNG.standard_normal(c) * 0.1).astype(np.float32),
        beta=b(c, 0.1),
        epsilon=1e-5,
        name=name,
    )


def conv(x, cout, cin, k, stride=1, groups=1, pad="same", name=None, bias=True):
    kw = dict(x=x, weight=w(cout, cin // groups, k, k), strides=[stride, stride], pad_type=pad, groups=groups)
    if bias:
        kw["bias"] = b(cout)
    if name:
        kw["name"] = name
    return mb.conv(**kw)


def mobilenet_v2():
    """A MobileNetV2 stem, one inverted-residual block and the classifier head."""

    @mb.program(input_specs=[mb.TensorSpec(shape=(1, 3, 32, 32))])
    def prog(x):
        s = mb.relu6(x=bn(conv(x, 16, 3, 3, stride=2, bias=False), 16, "stem_bn"))
        e = mb.relu6(x=bn(conv(s, 64, 16, 1, bias=False), 64, "expand_bn"))
        d = mb.relu6(x=bn(conv(e, 64, 64, 3, groups=64, bias=False), 64, "dw_bn"))
        p = bn(conv(d, 16, 64, 1, bias=False), 16, "project_bn")
        r = mb.add(x=s, y=p)
        g = mb.reduce_mean(x=r, axes=[2, 3], keep_dims=False)
        return mb.softmax(x=mb.linear(x=g, weight=w(10, 16), bias=b(10)), axis=-1)

    return prog


def resnet():
    """A ResNet basic block (two 3x3 convolutions, batch norms, the identity added) and a head."""

    @mb.program(input_specs=[mb.TensorSpec(shape=(1, 16, 16, 16))])
    def prog(x):
        a = mb.relu(x=bn(conv(x, 16, 16, 3, bias=False), 16, "bn1"))
        c = bn(conv(a, 16, 16, 3, bias=False), 16, "bn2")
        r = mb.relu(x=mb.add(x=x, y=c))
        p = mb.max_pool(x=r, kernel_sizes=[2, 2], strides=[2, 2], pad_type="valid")
        g = mb.reduce_mean(x=p, axes=[2, 3], keep_dims=False)
        return mb.linear(x=g, weight=w(8, 16), bias=b(8))

    return prog


def attention(x, s, d, heads, prefix):
    dh = d // heads

    def proj(name):
        y = mb.linear(x=x, weight=w(d, d), bias=b(d), name=f"{prefix}{name}")
        y = mb.reshape(x=y, shape=[1, s, heads, dh])
        return mb.transpose(x=y, perm=[0, 2, 1, 3])

    q, k, v = proj("q"), proj("k"), proj("v")
    scores = mb.matmul(x=q, y=k, transpose_y=True)
    scores = mb.mul(x=scores, y=np.float32(1.0 / np.sqrt(dh)))
    att = mb.matmul(x=mb.softmax(x=scores, axis=-1), y=v)
    att = mb.reshape(x=mb.transpose(x=att, perm=[0, 2, 1, 3]), shape=[1, s, d])
    return mb.linear(x=att, weight=w(d, d), bias=b(d), name=f"{prefix}o")


def bert():
    """A BERT encoder layer: attention, add and layer norm, a GELU feed-forward, add and layer norm."""
    s, d, heads, f = 8, 64, 2, 128

    @mb.program(input_specs=[mb.TensorSpec(shape=(1, s, d))])
    def prog(x):
        a = attention(x, s, d, heads, "att_")
        h = mb.layer_norm(x=mb.add(x=x, y=a), axes=[-1], gamma=np.ones(d, np.float32), beta=b(d), epsilon=1e-5)
        u = mb.gelu(x=mb.linear(x=h, weight=w(f, d), bias=b(f)))
        o = mb.linear(x=u, weight=w(d, f), bias=b(d))
        return mb.layer_norm(x=mb.add(x=h, y=o), axes=[-1], gamma=np.ones(d, np.float32), beta=b(d), epsilon=1e-5)

    return prog


def rms_norm(x, d, name):
    ms = mb.reduce_mean(x=mb.mul(x=x, y=x), axes=[-1], keep_dims=True)
    r = mb.rsqrt(x=mb.add(x=ms, y=np.float32(1e-5)))
    return mb.mul(x=mb.mul(x=x, y=r), y=(1.0 + RNG.standard_normal(d) * 0.05).astype(np.float32), name=name)


def llama():
    """A Llama decoder layer without rotary embedding: RMS norm, attention, the SiLU-gated MLP."""
    s, d, heads, f = 8, 64, 2, 176

    @mb.program(input_specs=[mb.TensorSpec(shape=(1, s, d))])
    def prog(x):
        h = mb.add(x=x, y=attention(rms_norm(x, d, "norm1"), s, d, heads, "att_"))
        n = rms_norm(h, d, "norm2")
        gate = mb.silu(x=mb.linear(x=n, weight=w(f, d)))
        up = mb.linear(x=n, weight=w(f, d))
        return mb.add(x=h, y=mb.linear(x=mb.mul(x=gate, y=up), weight=w(d, f)))

    return prog


def audio_conv1d():
    """A 1-D convolutional audio front end: strided convolutions over time, ReLU, a pointwise mix."""

    @mb.program(input_specs=[mb.TensorSpec(shape=(1, 1, 256))])
    def prog(x):
        a = mb.relu(x=mb.conv(x=x, weight=w(16, 1, 9), bias=b(16), strides=[2], pad_type="same"))
        c = mb.relu(x=mb.conv(x=a, weight=w(16, 16, 5), bias=b(16), strides=[2], pad_type="same"))
        return mb.conv(x=c, weight=w(8, 16, 1), bias=b(8), pad_type="valid")

    return prog


def unet_decoder():
    """A UNet decoder step: upsample 2x, concatenate the skip connection, two 3x3 convolutions."""

    @mb.program(input_specs=[mb.TensorSpec(shape=(1, 16, 8, 8)), mb.TensorSpec(shape=(1, 8, 16, 16))])
    def prog(x, skip):
        u = mb.upsample_nearest_neighbor(x=x, scale_factor_height=2, scale_factor_width=2)
        c = mb.concat(values=[u, skip], axis=1)
        a = mb.relu(x=conv(c, 8, 24, 3))
        return mb.relu(x=conv(a, 8, 8, 3))

    return prog


def vit_patch():
    """A ViT patch embedding: 16 x 16 patches into tokens, flattened, a class token's place left out, layer norm."""

    @mb.program(input_specs=[mb.TensorSpec(shape=(1, 3, 64, 64))])
    def prog(x):
        p = conv(x, 32, 3, 16, stride=16, pad="valid")
        t = mb.transpose(x=mb.reshape(x=p, shape=[1, 32, 16]), perm=[0, 2, 1])
        return mb.layer_norm(x=t, axes=[-1], gamma=np.ones(32, np.float32), beta=b(32), epsilon=1e-6)

    return prog


def compressed_linear():
    """Two linears with compressed weights: 8-bit affine (per channel) and a 4-bit palette."""

    @mb.program(input_specs=[mb.TensorSpec(shape=(1, 4, 64))], opset_version=ct.target.iOS16)
    def prog(x):
        q = RNG.integers(-127, 128, size=(64, 64)).astype(np.int8)
        scale = (RNG.random(64) * 0.002 + 0.001).astype(np.float32)
        w1 = mb.constexpr_affine_dequantize(quantized_data=q, zero_point=np.int8(0), scale=scale, axis=0)
        a = mb.relu(x=mb.linear(x=x, weight=w1, bias=b(64)))
        lut = (np.linspace(-1, 1, 16) / 8).astype(np.float32)
        idx = RNG.integers(0, 16, size=(32 * 64,)).astype(np.uint8)
        packed = (idx[0::2] | (idx[1::2] << 4)).astype(np.uint8)
        w2 = mb.constexpr_lut_to_dense(indices=packed, lut=lut, shape=np.uint32([32, 64]))
        return mb.linear(x=a, weight=w2, bias=b(32))

    return prog


def lstm():
    """A one-layer LSTM over 4 steps of 8 features, 16 hidden units, the last output."""
    t, i, h = 4, 8, 16

    @mb.program(input_specs=[mb.TensorSpec(shape=(t, 1, i))])
    def prog(x):
        y, hn, cn = mb.lstm(
            x=x,
            initial_h=np.zeros((1, h), np.float32),
            initial_c=np.zeros((1, h), np.float32),
            weight_ih=w(4 * h, i),
            weight_hh=w(4 * h, h),
            bias=b(4 * h),
            direction="forward",
            output_sequence=True,
        )
        return y

    return prog


def gru():
    """A one-layer GRU over 4 steps of 8 features, 16 hidden units."""
    t, i, h = 4, 8, 16

    @mb.program(input_specs=[mb.TensorSpec(shape=(t, 1, i))])
    def prog(x):
        y, hn = mb.gru(
            x=x,
            initial_h=np.zeros((1, h), np.float32),
            weight_ih=w(3 * h, i),
            weight_hh=w(3 * h, h),
            bias=b(3 * h),
            direction="forward",
            output_sequence=True,
        )
        return y

    return prog


MODELS = {
    "mobilenet_v2_block": mobilenet_v2,
    "resnet_block": resnet,
    "bert_layer": bert,
    "llama_layer": llama,
    "audio_conv1d": audio_conv1d,
    "unet_decoder_step": unet_decoder,
    "vit_patch_embedding": vit_patch,
    "compressed_linear": compressed_linear,
    "lstm": lstm,
    "gru": gru,
}


def main(names):
    OUT.mkdir(parents=True, exist_ok=True)
    for name in names or MODELS:
        prog = MODELS[name]()
        model = ct.convert(prog, convert_to="mlprogram", minimum_deployment_target=ct.target.iOS16,
                           compute_precision=ct.precision.FLOAT16)
        path = OUT / f"{name}.mlpackage"
        if path.exists():
            shutil.rmtree(path)
        model.save(str(path))
        print(path.relative_to(OUT.parent.parent))


if __name__ == "__main__":
    main(sys.argv[1:])
