"""Synthesis of the H13 neural-engine activation table (NonlinearMode 2) from the function.

Table layout (128 bytes, 64 little-endian 16-bit words; every value fp16 unless said):

  [0]  xL   inputs below xL produce [2]           [1]  xR   inputs above xR produce [3]
  [2]  yL   output for x < xL                     [3]  yR   output for x > xR
  [4..36]   33 knots y_0..y_32 (fp16), knot i at u_i = base + i * 2^-k
  [37] mL  [38] bL   left line  y = mL*x + bL, used for x below the first knot
  [39] mR  [40] bR   right line y = mR*x + bR, used for x above the last knot
  [41] k    integer (not fp16): knot spacing is 2^-k
  [42] mode integer (not fp16): how x is mapped to the table argument u (see MODES)
  [43..63]  zero

The rules below synthesise every table from the function; nothing is copied.
"""
import math
import numpy as np
from mpmath import mp

mp.dps = 60

# ----------------------------------------------------------------------------- fp16 helpers
POS16 = np.arange(0, 0x7C00, dtype=np.uint16).view(np.float16).astype(np.float64)  # +0 .. 65504
ALL16 = np.concatenate([-POS16[::-1][:-1], POS16])                                    # all finite, one zero
NORMAL16 = ALL16[(np.abs(ALL16) >= 2.0 ** -14) | (ALL16 == 0)]
INF = float("inf")


def h(x):
    """fp16 bits of x (round to nearest even, overflow to inf)."""
    with np.errstate(over="ignore"):
        return int(np.array(float(x), dtype=np.float64).astype(np.float16).view(np.uint16))


def hv(x):
    """fp16 value of x."""
    with np.errstate(over="ignore"):
        return float(np.float16(float(x)))


def f16(bits):
    return float(np.array([bits], dtype=np.uint16).view(np.float16)[0])


def exact16(fn, x):
    """fp16 bits of fn(x) evaluated in 60-digit arithmetic (correct rounding)."""
    v = fn(mp.mpf(float(x)))
    if mp.isinf(v):
        return 0x7C00 if v > 0 else 0xFC00
    return h(float(v))


# ----------------------------------------------------------------------------- modes
# The mode byte [42] selects how the engine forms the table argument u from x.  The values
# are hardware/ISA constants (like NonlinearMode); what they do follows from the tables
# that carry them (see rules.md).
MODE_AFFINE = 0x01   # u = x, knots centred on 0: u_i = (i - 16) 2^-k, lines outside
MODE_ODD = 0x60      # u = |x|, knots u_i = i 2^-k, result takes the sign of x
MODE_EXP2 = 0x0A     # x = n + f (n integer, 0 <= f < 1): y = 2^n * T(f), knots f_i = i 2^-k
MODE_SQRT = 0xC5     # x = m 2^(2e), m in [0.5, 2): y = T(m) 2^e, knots m_i = i 2^-k
MODE_RSQRT = 0xC6    # x = m 2^(2e), m in [0.5, 2): y = T(m) 2^-e, knots m_i = i 2^-k
MODE_RECIP = 0x67    # |x| = m 2^e, m in [0.5, 1): y = sign(x) T(m) 2^-e, knots m_i = 0.5 + i 2^-k
MODE_LOG2 = 0xC9     # x = m 2^e, m in [0.5, 1): y = e + T(m), knots m_i = 0.5 + i 2^-k


def pack(words):
    assert len(words) == 43
    b = b"".join(int(w & 0xFFFF).to_bytes(2, "little") for w in words)
    return b + bytes(128 - len(b))


def unpack(table):
    return [int.from_bytes(table[2 * i:2 * i + 2], "little") for i in range(64)]


# ----------------------------------------------------------------------------- functions
SQ2 = mp.sqrt(2)
FUNCS = {
    # name: (mp function, limit at -inf, limit at +inf, asymptotic slope at +inf)
    "sigmoid": (lambda t: 1 / (1 + mp.exp(-t)), 0.0, 1.0, 0.0),
    "tanh": (mp.tanh, -1.0, 1.0, 0.0),
    "gelu": (lambda t: t / 2 * (1 + mp.erf(t / SQ2)), 0.0, INF, 1.0),
    "gelu_sigmoid": (lambda t: t / (1 + mp.exp(-mp.mpf("1.702") * t)), 0.0, INF, 1.0),
    "silu": (lambda t: t / (1 + mp.exp(-t)), 0.0, INF, 1.0),
    # functions without an Apple record (proposals, see rules.md)
    "erf": (mp.erf, -1.0, 1.0, 0.0),
    "elu": (lambda t: t if t >= 0 else mp.exp(t) - 1, -1.0, INF, 1.0),
    "softplus": (lambda t: mp.log(1 + mp.exp(t)), 0.0, INF, 1.0),
}


def npf(name):
    """float64 numpy version of a function (for error sweeps and fits)."""
    import scipy.special as sp
    return {
        "sigmoid": lambda x: sp.expit(x),
        "tanh": np.tanh,
        "gelu": lambda x: 0.5 * x * sp.erfc(-x / math.sqrt(2)),
        "gelu_sigmoid": lambda x: x * sp.expit(1.702 * x),
        "silu": lambda x: x * sp.expit(x),
        "erf": sp.erf,
        "elu": lambda x: np.where(x >= 0, x, np.expm1(np.minimum(x, 0))),
        "softplus": lambda x: np.logaddexp(0, x),
    }[name]


# ----------------------------------------------------------------------------- evaluation of a table
def evaluate(table, x):
    """What the engine computes from a table (affine and odd modes), in float64, then fp16."""
    w = unpack(table)
    xL, xR, yL, yR = (f16(v) for v in w[0:4])
    kn = np.array([f16(v) for v in w[4:37]])
    mL, bL, mR, bR = (f16(v) for v in w[37:41])
    k, mode = w[41], w[42]
    step = 2.0 ** -k
    x = np.asarray(x, dtype=np.float64)
    sgn = np.ones_like(x)
    u = x
    base = -16 * step
    if mode == MODE_ODD:
        sgn = np.where(x < 0, -1.0, 1.0)
        u = np.abs(x)
        base = 0.0
    t = (u - base) / step
    j = np.clip(np.floor(t).astype(int), 0, 31)
    fr = t - j
    y = kn[j] * (1 - fr) + kn[j + 1] * fr
    y = np.where(t < 0, mL * u + bL, y)
    y = np.where(t > 32, mR * u + bR, y)
    y = np.where(u < xL, yL, y)
    y = np.where(u > xR, yR, y)
    return (sgn * y).astype(np.float16).astype(np.float64)


# ----------------------------------------------------------------------------- tails (sampled tables)
def _beyond(knot, d):
    xs = ALL16[(ALL16 - knot) * d > 0]
    return xs[np.argsort((xs - knot) * d, kind="stable")]


def minimax_tail(f, xk, yk, d, limit):
    """Line from the boundary knot (xk, yk) to (end, limit), end an fp16 value between the knot
    and the first fp16 x where fp16(f(x)) == limit; slope and intercept rounded to fp16 and the
    line clamped at the limit; the end with the smallest largest error over every fp16 input
    beyond the knot wins (ties: the nearer end).  Returns (end, m, b)."""
    xs = _beyond(xk, d)
    with np.errstate(all="ignore"):
        fx = f(xs)
    fr = fx.astype(np.float16).astype(np.float64)
    hit = np.nonzero(fr == limit)[0]
    sat = hit[0] if len(hit) else len(xs) - 1
    best = None
    for end in xs[: sat + 1]:
        m = hv((limit - yk) / (end - xk))
        b = hv(yk - m * xk)
        line = m * xs + b
        cl = np.minimum(line, limit) if d > 0 else np.maximum(line, limit)
        err = float(np.max(np.abs(cl - fx)))
        if best is None or err < best[0]:
            best = (err, float(end), m, b)
    return best[1], best[2], best[3]


# ----------------------------------------------------------------------------- range choice
def choose_k(name, mode):
    """The knot range is a power of two, W = 2^p: affine tables span [-W, W] (step 2W/32),
    odd tables [0, W] (step W/32).  W is the power of two whose table (knots fp16(f(u_i)),
    extrapolation towards the function's asymptotes) has the smallest largest absolute error
    over every finite fp16 input.  Returns (k, W)."""
    f = npf(name)
    _, lo, hi, slope = FUNCS[name]
    fx = f(ALL16)
    best = None
    for p in range(-2, 7):
        W = 2.0 ** p
        if mode == MODE_ODD:
            step = W / 32
            u = np.abs(ALL16)
            kn = f(step * np.arange(33)).astype(np.float16).astype(np.float64)
            t = u / step
            j = np.clip(np.floor(t).astype(int), 0, 31)
            y = kn[j] + (kn[j + 1] - kn[j]) * (t - j)
            y = np.where(t > 32, hi, y) * np.sign(ALL16)
        else:
            step = 2 * W / 32
            kn = f(-W + step * np.arange(33)).astype(np.float16).astype(np.float64)
            t = (ALL16 + W) / step
            j = np.clip(np.floor(t).astype(int), 0, 31)
            y = kn[j] + (kn[j + 1] - kn[j]) * (t - j)
            right = (kn[32] + slope * (ALL16 - W)) if slope else np.full_like(ALL16, hi)
            y = np.where(t > 32, right, np.where(t < 0, lo, y))
        err = float(np.max(np.abs(y.astype(np.float16).astype(np.float64) - fx)))
        if best is None or err < best[0]:
            best = (err, W, step)
    _, W, step = best
    return int(round(-math.log2(step))), W


# ----------------------------------------------------------------------------- table builders
def table_sampled_affine(name):
    """Bounded saturating function, affine mode (sigmoid): knots fp16(f(u_i)), u_i = -W + i 2W/32;
    both tails minimax lines (minimax_tail) towards the limits; [xL, xR] where the lines end."""
    fn, lo, hi, _ = FUNCS[name]
    k, W = choose_k(name, MODE_AFFINE)
    step = 2.0 ** -k
    xs = [-W + step * i for i in range(33)]
    knots = [exact16(fn, x) for x in xs]
    f = npf(name)
    xl, mL, bL = minimax_tail(f, xs[0], f16(knots[0]), -1.0, lo)
    xr, mR, bR = minimax_tail(f, xs[-1], f16(knots[-1]), 1.0, hi)
    words = [h(xl), h(xr), h(lo), h(hi)] + knots + [h(mL), h(bL), h(mR), h(bR), k, MODE_AFFINE]
    return pack(words)


def table_sampled_odd(name):
    """Odd bounded function (tanh), odd mode: knots fp16(f(i W/32)) on [0, W]; no extrapolation:
    [xL, xR, yL, yR] = [0, W, f(0), limit], lines (0, 0, 0, limit)."""
    fn, lo, hi, _ = FUNCS[name]
    k, W = choose_k(name, MODE_ODD)
    step = 2.0 ** -k
    knots = [exact16(fn, step * i) for i in range(33)]
    words = [h(0.0), h(W), exact16(fn, 0.0), h(hi)] + knots + [0, 0, 0, h(hi), k, MODE_ODD]
    return pack(words)


def table_exp2():
    """exp2 mode: T(f) = 2^f on f in [0, 1] (k = 5: 32 segments); xL = last fp16 x with
    fp16(2^x) == 0 (-25), xR = first fp16 x with fp16(2^x) == inf (16); yL = 0, yR = inf;
    no lines.  MIL exp uses it with NE.PostScale = fp16(log2 e)."""
    k = 5
    knots = [exact16(lambda t: mp.power(2, t), i * 2.0 ** -k) for i in range(33)]
    xs = ALL16
    with np.errstate(over="ignore"):
        y = np.exp2(xs).astype(np.float16).astype(np.float64)
    xl = float(xs[y == 0].max())
    xr = float(xs[np.isinf(y)].min())
    words = [h(xl), h(xr), h(0.0), h(INF)] + knots + [0, 0, 0, 0, k, MODE_EXP2]
    return pack(words)


def table_mantissa(kind):
    """Mantissa modes.  sqrt / rsqrt: k = 4, knot i at m = i/16 (two octaves, [0, 2]); the
    engine only reaches m in [0.5, 2], so knots 0..7 (m < 0.5) are 0.  reciprocal / log2:
    k = 6, knot i at m = 0.5 + i/64 (one octave).  [xL, xR] = [0, +inf]; yL = f(0+),
    yR = f(+inf) (log2: 0); no lines."""
    if kind == "sqrt":
        k, mode, fn, m0, first = 4, MODE_SQRT, mp.sqrt, 0.0, 8
        yl, yr = 0.0, INF
    elif kind == "rsqrt":
        k, mode, fn, m0, first = 4, MODE_RSQRT, lambda t: 1 / mp.sqrt(t), 0.0, 8
        yl, yr = INF, 0.0
    elif kind == "reciprocal":
        k, mode, fn, m0, first = 6, MODE_RECIP, lambda t: 1 / t, 0.5, 0
        yl, yr = INF, 0.0
    elif kind == "log2":
        k, mode, fn, m0, first = 6, MODE_LOG2, lambda t: mp.log(t, 2), 0.5, 0
        yl, yr = -INF, 0.0
    else:
        raise ValueError(kind)
    step = 2.0 ** -k
    knots = [0 if i < first else exact16(fn, m0 + step * i) for i in range(33)]
    words = [h(0.0), h(INF), h(yl), h(yr)] + knots + [0, 0, 0, 0, k, mode]
    return pack(words)


def table_pwl(f0, lo, hi, xlo, xhi, mL, bL, mR, bR):
    """Piecewise-linear functions (leaky_relu, clip, relu6, max/min with a scalar...): k = 64
    (the knot range collapses onto x = 0, so every knot is fp16(f(0))), affine mode; the two
    lines are the function's two linear pieces and [xL, xR, yL, yR] its clamps."""
    words = [h(xlo), h(xhi), h(lo), h(hi)] + [h(f0)] * 33 + [h(mL), h(bL), h(mR), h(bR), 64, MODE_AFFINE]
    return pack(words)


def table_leaky_relu(alpha):
    return table_pwl(0.0, -INF, INF, -INF, INF, alpha, 0.0, 1.0, 0.0)


def table_clip(lo, hi):
    """clip(x, lo, hi) with lo < 0 < hi (relu6: lo = 0 is handled the same way, f(0) = 0)."""
    return table_pwl(min(max(0.0, lo), hi), lo, hi, lo, hi, 1.0, 0.0, 1.0, 0.0)


# ----------------------------------------------------------------------------- fitted tables (gelu, silu)
def table_fitted_affine(name):
    """gelu / silu / gelu(SIGMOID_APPROXIMATION): affine mode, W from choose_k; knots are the
    least-squares continuous piecewise-linear fit over every normal fp16 input (and 0) in
    [-W, W], each rounded to fp16; right line slope 1 through the last knot; left line through
    the first knot towards 0 (minimax_tail); yL = 0, xR = yR = +inf.

    APPROXIMATE: Apple's knots are a least-squares fit of this kind but not this exact one
    (see rules.md); the result does not reproduce Apple's bytes."""
    k, W = choose_k(name, MODE_AFFINE)
    step = 2.0 ** -k
    f = npf(name)
    xs = NORMAL16[(NORMAL16 >= -W) & (NORMAL16 <= W)]
    t = (xs + W) / step
    j = np.clip(np.floor(t).astype(int), 0, 31)
    fr = t - j
    A = np.zeros((len(xs), 33))
    A[np.arange(len(xs)), j] = 1 - fr
    A[np.arange(len(xs)), j + 1] += fr
    y = np.linalg.lstsq(A, f(xs), rcond=None)[0]
    knots = [h(v) for v in y]
    y0, y32 = f16(knots[0]), f16(knots[32])
    if y0 == 0.0:
        xl, mL, bL = -W - step, 0.0, 0.0
    else:
        xl, mL, bL = minimax_tail(f, -W, y0, -1.0, 0.0)
    mR, bR = 1.0, hv(y32 - W)
    words = [h(xl), h(INF), h(0.0), h(INF)] + knots + [h(mL), h(bL), h(mR), h(bR), k, MODE_AFFINE]
    return pack(words)


# ----------------------------------------------------------------------------- dispatcher
def table_for(op, params=None):
    """The 128-byte table Apple's compiler writes for a MIL unary op, or None (no table)."""
    params = params or {}
    if op in ("relu", "abs"):
        return None
    if op == "sigmoid":
        return table_sampled_affine("sigmoid")
    if op == "tanh":
        return table_sampled_odd("tanh")
    if op in ("exp", "exp2"):
        return table_exp2()
    if op == "sqrt":
        return table_mantissa("sqrt")
    if op == "rsqrt":
        return table_mantissa("rsqrt")
    if op in ("inverse", "real_div"):
        return table_mantissa("reciprocal")
    if op == "leaky_relu":
        return table_leaky_relu(params.get("alpha", 0.01))
    if op == "gelu":
        mode = params.get("mode") or "EXACT"
        return table_fitted_affine("gelu_sigmoid" if mode == "SIGMOID_APPROXIMATION" else "gelu")
    if op == "silu":
        return table_fitted_affine("silu")
    if op == "erf":
        return table_sampled_odd("erf")
    if op in ("elu", "softplus"):
        return table_sampled_affine_unbounded(op)
    if op == "log":
        return table_mantissa("log2")
    if op in ("clip", "relu6"):
        lo, hi = (0.0, 6.0) if op == "relu6" else (params["alpha"], params["beta"])
        return table_clip(lo, hi)
    if op == "sign":
        return pack([h(-INF), h(INF), h(-1.0), h(1.0)] + [h(-1.0)] * 16 + [0] + [h(1.0)] * 16
                    + [0, h(-1.0), 0, h(1.0), 64, MODE_AFFINE])
    raise ValueError(op)


def table_sampled_affine_unbounded(name):
    """PROPOSAL (no Apple record): affine mode, knots fp16(f(u_i)); left minimax line towards the
    lower limit (as sigmoid); right line with the asymptotic slope through the last knot;
    xR = yR = +inf."""
    fn, lo, hi, slope = FUNCS[name]
    k, W = choose_k(name, MODE_AFFINE)
    step = 2.0 ** -k
    xs = [-W + step * i for i in range(33)]
    knots = [exact16(fn, x) for x in xs]
    f = npf(name)
    xl, mL, bL = minimax_tail(f, xs[0], f16(knots[0]), -1.0, lo)
    mR, bR = slope, hv(f16(knots[-1]) - slope * xs[-1])
    words = [h(xl), h(INF), h(lo), h(INF)] + knots + [h(mL), h(bL), h(mR), h(bR), k, MODE_AFFINE]
    return pack(words)


def constant_section(table, size, offset=0):
    buf = bytearray(size)
    if table is not None:
        buf[offset:offset + len(table)] = table
    return bytes(buf)
