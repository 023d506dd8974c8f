"""Elementwise ops on npu against PyTorch's CPU results: arithmetic, comparisons, logical ops,
where/masked_fill, clamp, lerp, addcmul/addcdiv, unary math, the Cast kernel, integer/bool paths,
foreach optimizers, and the bad-input errors.

Tolerances: float32 exact for + - * / max min (rtol 1e-6 for the composed ones, 1e-5 for
transcendentals), float16 1e-3, bfloat16 1e-2 (half/bf16 compute in float inside the kernel).
"""
import math

import pytest
import torch
import torch.nn.functional as F

import torch_ops_nn  # noqa: F401
from torch_ops_nn import _C

pytestmark = pytest.mark.usefixtures("fallback_error")

FLOATS = [torch.float32, torch.float16, torch.bfloat16]
EXACT = {torch.float32: dict(rtol=0, atol=0), torch.float16: dict(rtol=1e-3, atol=1e-3),
         torch.bfloat16: dict(rtol=1e-2, atol=1e-2)}
CLOSE = {torch.float32: dict(rtol=1e-6, atol=1e-6), torch.float16: dict(rtol=1e-3, atol=1e-3),
         torch.bfloat16: dict(rtol=1e-2, atol=1e-2)}
TRANS = {torch.float32: dict(rtol=1e-5, atol=1e-6), torch.float16: dict(rtol=2e-3, atol=2e-3),
         torch.bfloat16: dict(rtol=1.6e-2, atol=1.6e-2)}
SHAPES = [(0,), (1,), (7,), (33,), (1000,), (100003,), (2, 3, 5, 7), (4, 16, 9, 9)]
BCAST = [((4, 3, 5, 6), (3, 1, 1)),        # NCHW + per-channel: COL mode
         ((4, 3, 5, 6), (4, 3, 1, 1)),     # SE-style scale: COL mode
         ((6, 40), (40,)),                 # bias row: ROW mode
         ((6, 40), (6, 1)),                # per-row: COL mode
         ((5, 1), (1, 70)),                # outer product: ROW + COL
         ((2, 3, 4, 20), (2, 1, 1, 20)),   # no mode fits: materialized
         ((3, 1, 5), (1, 4, 1)),           # short rows: materialized
         ((30, 5000), (5000,)),            # rows longer than... one tile per row
         ((3, 20000), (3, 1)),             # chunked rows with a per-row value
         ((33,), ())]                      # 0-dim npu tensor: SCALAR mode


def rand(shape, dtype=torch.float32, lo=-3.0, hi=3.0, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(shape, generator=g) * (hi - lo) + lo).to(dtype)


def npu(t):
    return t.to("npu")


def assert_same(actual, expected, tol):
    assert actual.device.type == "npu", actual.device
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    torch.testing.assert_close(actual.cpu().float(), expected.float(), equal_nan=True, **tol)


# ---------------------------------------------------------------- binary arithmetic
BINARY = {
    "add": (lambda a, b: torch.add(a, b), EXACT),
    "add_alpha": (lambda a, b: torch.add(a, b, alpha=0.5), CLOSE),
    "sub": (lambda a, b: torch.sub(a, b), EXACT),
    "sub_alpha": (lambda a, b: torch.sub(a, b, alpha=2), CLOSE),
    "rsub": (lambda a, b: torch.rsub(a, b), EXACT),
    "mul": (lambda a, b: a * b, EXACT),
    "div": (lambda a, b: a / b, EXACT),
    "div_trunc": (lambda a, b: torch.div(a, b, rounding_mode="trunc"), EXACT),
    "div_floor": (lambda a, b: torch.div(a, b, rounding_mode="floor"), EXACT),
    "maximum": (torch.maximum, EXACT),
    "minimum": (torch.minimum, EXACT),
    "pow": (lambda a, b: torch.pow(a.abs() + 0.5, b), TRANS),
}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", list(BINARY))
def test_binary_same_shape(op, dtype):
    fn, tol = BINARY[op]
    for shape in SHAPES:
        a, b = rand(shape, dtype, seed=1), rand(shape, dtype, seed=2)
        b = torch.where(b.abs() < 0.25, torch.full_like(b, 0.5), b)  # keep divisions well conditioned
        if op == "div_floor":  # floor(a / b) is exact when no quotient is within an ulp of an integer
            a, b = (a * 8).round(), (b * 8).round()
        assert_same(fn(npu(a), npu(b)), fn(a, b), tol[dtype])


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", ["add", "sub_alpha", "mul", "div", "maximum", "pow"])
def test_binary_broadcast(op, dtype):
    fn, tol = BINARY[op]
    for sa, sb in BCAST:
        a, b = rand(sa, dtype, seed=3), rand(sb, dtype, lo=0.5, hi=2.0, seed=4)
        assert_same(fn(npu(a), npu(b)), fn(a, b), tol[dtype])
        assert_same(fn(npu(b), npu(a)), fn(b, a), tol[dtype])


@pytest.mark.parametrize("dtype", FLOATS)
def test_binary_scalar_forms(dtype):
    a = rand((1000,), dtype, seed=5)
    d = npu(a)
    for fn in [lambda x: x + 1.5, lambda x: x - 0.1, lambda x: 2 - x, lambda x: x * 0.3, lambda x: x / 3,
               lambda x: 3 / (x.abs() + 1), lambda x: torch.add(x, 2, alpha=3), lambda x: x ** 2, lambda x: x ** 3,
               lambda x: (x.abs() + 0.1) ** 0.5, lambda x: (x.abs() + 0.1) ** -0.5, lambda x: (x.abs() + 0.1) ** -1,
               lambda x: (x.abs() + 0.1) ** -2, lambda x: x ** 2.5, lambda x: x ** 4, lambda x: x ** 0,
               lambda x: x ** 1, lambda x: 2 ** x, lambda x: 0.5 ** x, lambda x: torch.pow(-2.0, x.round()),
               lambda x: x + torch.tensor(2.0), lambda x: torch.tensor(3.0) * x]:
        assert_same(fn(d), fn(a), TRANS[dtype])


def test_pow_special_values():
    a = torch.tensor([-2.0, -2.0, -2.0, -0.5, 0.0, 0.0, 0.0, 1.0, 1.0, 2.0, float("nan"), 3.0])
    b = torch.tensor([2.0, 3.0, 0.5, -3.0, 2.0, 0.0, -1.0, float("nan"), 5.0, 10.0, 0.0, -2.0])
    assert_same(torch.pow(npu(a), npu(b)), torch.pow(a, b), TRANS[torch.float32])
    for e in [3.0, 2.5, -1.0, 0.0, -3.0]:
        assert_same(torch.pow(npu(a), e), torch.pow(a, e), TRANS[torch.float32])


@pytest.mark.parametrize("dtype", FLOATS)
def test_inplace_and_out(dtype):
    a, b = rand((4, 3, 5, 6), dtype, seed=6), rand((3, 1, 1), dtype, lo=0.5, hi=2, seed=7)
    for name in ["add_", "sub_", "mul_", "div_", "pow_"]:
        x, y = a.clone().abs(), npu(a).abs()
        getattr(x, name)(b)
        r = getattr(y, name)(npu(b))
        assert r is y
        assert_same(y, x, TRANS[dtype])
    for fn in [torch.add, torch.sub, torch.mul, torch.div, torch.maximum, torch.minimum]:
        out = torch.empty(0, dtype=dtype, device="npu")
        r = fn(npu(a), npu(b), out=out)
        assert r is out
        assert_same(out, fn(a, b), EXACT[dtype])


def test_non_contiguous_inputs_and_outputs():
    a, b = rand((40, 30), seed=8), rand((30, 40), seed=9)
    assert_same(npu(a) + npu(b).t(), a + b.t(), EXACT[torch.float32])
    assert_same(npu(a)[:, ::2] * npu(b).t()[:, 1::2], a[:, ::2] * b.t()[:, 1::2], EXACT[torch.float32])
    # in-place into a view, and out= into a strided view
    x, y = a.clone(), npu(a)
    x[:, ::3].add_(b.t()[:, ::3])
    y[:, ::3].add_(npu(b).t()[:, ::3])
    assert_same(y, x, EXACT[torch.float32])
    out = torch.zeros(30, 80, device="npu")[:, ::2]
    torch.mul(npu(b), 2.0, out=out)
    assert_same(out, b * 2.0, EXACT[torch.float32])
    # channels_last inputs stay channels_last and run as one flat pass
    c = rand((2, 8, 5, 5), seed=10).to(memory_format=torch.channels_last)
    r = torch.relu(npu(c)) + npu(c)
    assert r.is_contiguous(memory_format=torch.channels_last)
    assert_same(r, torch.relu(c) + c, EXACT[torch.float32])


def _launch_details(fn):
    """Runs fn with debug logging and returns the elementwise launches' detail lines."""
    import logging

    import torch_ops_nn._logging as lg
    lines = []

    class Keep(logging.Handler):
        def emit(self, record):
            lines.append(record.getMessage())

    keep = Keep()
    lg.logger.addHandler(keep)
    lg.set_level(_C, 0)
    try:
        fn()
        torch.npu.synchronize()
    finally:
        lg.set_level(_C, lg.level_from_env())
        lg.logger.removeHandler(keep)
    return lines


@pytest.mark.parametrize("dtype", FLOATS)
def test_row_pitched_views_run_in_place(dtype):
    """2-D strided views (rows of dense elements one pitch apart: a narrowed last dim, narrowed H of
    NCHW, an out= slice) are read and written in place with DataCopyPad strides: no copy of any
    operand, no temporary output, and the results are the CPU's."""
    a, b = rand((6, 50), dtype, seed=20), rand((6, 30), dtype, seed=21)
    x, y = a.clone(), npu(a)
    bn = npu(b)
    torch.npu.synchronize()
    before = torch.npu.memory_stats().get("allocation.all.allocated", 0)
    lines = _launch_details(lambda: y[:, 7:37].add_(bn, alpha=2))
    assert torch.npu.memory_stats().get("allocation.all.allocated", 0) == before  # nothing materialized
    x[:, 7:37].add_(b, alpha=2)
    assert_same(y, x, CLOSE[dtype])
    ew = [m for m in lines if "op=add" in m]
    assert len(ew) == 1 and "out.pitch=50" in ew[0] and "in0.pitch=50" in ew[0], lines
    assert not any("copy_" in m for m in lines), lines
    # two different pitches, out-of-place; mixed storage dtypes (float view + 16-bit view)
    c = rand((8, 64), torch.float32, seed=22)
    got = npu(a)[:, 3:40] * npu(c)[:6, 10:47]
    assert_same(got, a[:, 3:40] * c[:6, 10:47], CLOSE[torch.float32])
    # NCHW narrowed along H: rows of H' * W elements, one image-channel plane apart
    d, e = rand((2, 3, 8, 16), dtype, seed=23), rand((2, 3, 4, 16), dtype, seed=24)
    got = torch.maximum(npu(d)[:, :, 2:6, :], npu(e))
    assert_same(got, torch.maximum(d[:, :, 2:6, :], e), EXACT[dtype])
    # out= into a column block of a wider tensor
    out = torch.zeros(6, 80, dtype=dtype, device="npu")
    torch.sub(npu(b), 1.5, out=out[:, 20:50])
    want = torch.zeros(6, 80, dtype=dtype)
    want[:, 20:50] = b - 1.5
    assert_same(out, want, CLOSE[dtype])


def test_row_pitched_partial_overlap_keeps_copy_semantics():
    """An input overlapping the written view at other positions is not read in place (a core could
    read rows another core has already written): it is copied first, as before."""
    a = rand((5, 40), seed=25)
    y = npu(a)
    y[:, 1:31].add_(y[:, 0:30])
    want = a.clone()
    want[:, 1:31] = a[:, 1:31] + a[:, 0:30]
    assert_same(y, want, EXACT[torch.float32])


def test_mixed_dtype_promotion():
    a, b = rand((100,), torch.float16, seed=11), rand((100,), torch.float32, seed=12)
    assert_same(npu(a) + npu(b), a + b, EXACT[torch.float32])
    assert_same(npu(a) * npu(b.bfloat16()), a * b.bfloat16(), CLOSE[torch.float32])
    i = torch.arange(-50, 50, dtype=torch.int32)
    assert_same(npu(i) * 0.5, i * 0.5, EXACT[torch.float32])
    assert_same(npu(i) / 3, i / 3, CLOSE[torch.float32])
    assert_same(npu(a) + torch.tensor(2.0, device="npu"), a + torch.tensor(2.0), EXACT[torch.float16])
    m = torch.rand(100) > 0.5
    assert_same(npu(b) * npu(m), b * m, EXACT[torch.float32])


# ---------------------------------------------------------------- comparisons, logical, where
CMPS = [torch.eq, torch.ne, torch.lt, torch.le, torch.gt, torch.ge]


@pytest.mark.parametrize("dtype", FLOATS + [torch.int32, torch.int64])
def test_comparisons(dtype):
    if dtype.is_floating_point:
        a = rand((1000,), dtype, seed=13).round()
        b = rand((1000,), dtype, seed=14).round()
    else:
        big = 2**31 - 1 if dtype == torch.int32 else 2**31 - 1
        a = torch.randint(-big, big, (1000,), dtype=dtype, generator=torch.Generator().manual_seed(1))
        b = a.clone()
        b[::3] += 1
        b[1::3] -= 1
        b[::7] = -b[::7]
    for fn in CMPS:
        assert_same(fn(npu(a), npu(b)), fn(a, b), EXACT[torch.float32])
        assert_same(fn(npu(a), 1), fn(a, 1), EXACT[torch.float32])
        assert_same(fn(npu(a)[:7].reshape(7, 1), npu(b)[:9]), fn(a[:7].reshape(7, 1), b[:9]), EXACT[torch.float32])
        out = torch.empty(0, dtype=torch.bool, device="npu")
        fn(npu(a), npu(b), out=out)
        assert_same(out, fn(a, b), EXACT[torch.float32])
    x, y = a.clone(), npu(a)
    x.ge_(0)
    y.ge_(0)
    assert_same(y, x, EXACT[torch.float32])


def test_comparisons_nan_and_half_scalar():
    a = torch.tensor([float("nan"), 1.0, -1.0, 0.1, float("inf")])
    for fn in CMPS:
        assert_same(fn(npu(a), npu(a.flip(0))), fn(a, a.flip(0)), EXACT[torch.float32])
    h = torch.tensor([0.1, 0.2, 0.3], dtype=torch.float16)
    assert_same(npu(h) == 0.1, h == 0.1, EXACT[torch.float32])  # the scalar is rounded to half first


def test_logical_and_bitwise_bool():
    g = torch.Generator().manual_seed(2)
    a, b = torch.rand(1003, generator=g) > 0.5, torch.rand(1003, generator=g) > 0.3
    f = torch.randn(1003, generator=g).round()
    for fn in [torch.logical_and, torch.logical_or, torch.logical_xor]:
        assert_same(fn(npu(a), npu(b)), fn(a, b), EXACT[torch.float32])
        assert_same(fn(npu(f), npu(a)), fn(f, a), EXACT[torch.float32])
    assert_same(torch.logical_not(npu(f)), torch.logical_not(f), EXACT[torch.float32])
    assert_same(~npu(a), ~a, EXACT[torch.float32])
    assert_same(npu(a) & npu(b), a & b, EXACT[torch.float32])
    assert_same(npu(a) | npu(b), a | b, EXACT[torch.float32])
    assert_same(npu(a) ^ npu(b), a ^ b, EXACT[torch.float32])
    assert_same(npu(a) == npu(b), a == b, EXACT[torch.float32])


@pytest.mark.parametrize("dtype", FLOATS + [torch.int32, torch.int64])
def test_where_and_masked_fill(dtype):
    a = rand((4, 3, 5, 6), seed=15).to(dtype)
    b = rand((4, 3, 5, 6), seed=16).to(dtype)
    cond = rand((4, 3, 5, 6), seed=17) > 0
    assert_same(torch.where(npu(cond), npu(a), npu(b)), torch.where(cond, a, b), EXACT[torch.float32])
    assert_same(npu(a).where(npu(cond), npu(b)), a.where(cond, b), EXACT[torch.float32])
    assert_same(torch.where(npu(cond), npu(a), 0), torch.where(cond, a, 0), EXACT[torch.float32])
    assert_same(torch.where(npu(cond), 2, npu(b)), torch.where(cond, 2, b), EXACT[torch.float32])
    c2 = cond[:, :1]  # broadcast condition
    assert_same(torch.where(npu(c2), npu(a), npu(b)), torch.where(c2, a, b), EXACT[torch.float32])
    assert_same(npu(a).masked_fill(npu(cond), 7), a.masked_fill(cond, 7), EXACT[torch.float32])
    mask = torch.rand(4, 1, 1, 6) > 0.5  # attention-style broadcast mask
    assert_same(npu(a).masked_fill(npu(mask), -5), a.masked_fill(mask, -5), EXACT[torch.float32])
    x, y = a.clone(), npu(a)
    x.masked_fill_(cond, torch.tensor(3))
    y.masked_fill_(npu(cond), torch.tensor(3, device="npu"))
    assert_same(y, x, EXACT[torch.float32])


# ---------------------------------------------------------------- clamp, lerp, addcmul, addcdiv
@pytest.mark.parametrize("dtype", FLOATS)
def test_clamp_family(dtype):
    a = rand((1003,), dtype, seed=18)
    lo, hi = rand((1003,), dtype, lo=-2, hi=0, seed=19), rand((1003,), dtype, lo=0, hi=2, seed=20)
    for fn in [lambda x: x.clamp(-1, 0.5), lambda x: x.clamp(min=0.2), lambda x: x.clamp(max=-0.2),
               lambda x: torch.clamp_min(x, 0), lambda x: torch.clamp_max(x, 1), lambda x: x.clamp(2, 1)]:
        assert_same(fn(npu(a)), fn(a), EXACT[dtype])
    assert_same(npu(a).clamp(npu(lo), npu(hi)), a.clamp(lo, hi), EXACT[dtype])
    assert_same(npu(a).clamp(min=npu(lo)), a.clamp(min=lo), EXACT[dtype])
    assert_same(npu(a).clamp(max=npu(hi)), a.clamp(max=hi), EXACT[dtype])
    x, y = a.clone(), npu(a)
    x.clamp_(-0.5, 0.5)
    y.clamp_(-0.5, 0.5)
    assert_same(y, x, EXACT[dtype])
    n = torch.tensor([float("nan"), 1.0, -5.0], dtype=dtype)
    assert_same(npu(n).clamp(-1, 1), n.clamp(-1, 1), EXACT[dtype])
    assert_same(torch.maximum(npu(n), npu(n.flip(0))), torch.maximum(n, n.flip(0)), EXACT[dtype])


@pytest.mark.parametrize("dtype", FLOATS)
def test_lerp_addcmul_addcdiv(dtype):
    s, e = rand((4, 3, 5, 6), dtype, seed=21), rand((4, 3, 5, 6), dtype, seed=22)
    w = rand((3, 1, 1), dtype, lo=-0.5, hi=1.5, seed=23)
    t2 = rand((5, 6), dtype, lo=0.5, hi=2, seed=24)
    for weight in [0.3, 0.7, -0.2]:
        assert_same(torch.lerp(npu(s), npu(e), weight), torch.lerp(s, e, weight), CLOSE[dtype])
    assert_same(torch.lerp(npu(s), npu(e), npu(w)), torch.lerp(s, e, w), CLOSE[dtype])
    assert_same(torch.addcmul(npu(s), npu(e), npu(t2), value=0.5), torch.addcmul(s, e, t2, value=0.5), CLOSE[dtype])
    assert_same(torch.addcdiv(npu(s), npu(e), npu(t2), value=-2), torch.addcdiv(s, e, t2, value=-2), CLOSE[dtype])
    x, y = s.clone(), npu(s)
    x.addcmul_(e, t2, value=3).lerp_(e, 0.25).addcdiv_(e, t2)
    y.addcmul_(npu(e), npu(t2), value=3).lerp_(npu(e), 0.25).addcdiv_(npu(e), npu(t2))
    assert_same(y, x, CLOSE[dtype])


# ---------------------------------------------------------------- unary math
UNARY = {
    "neg": (torch.neg, EXACT, None), "abs": (torch.abs, EXACT, None), "exp": (torch.exp, TRANS, None),
    "log": (torch.log, TRANS, (0.01, 10)), "sqrt": (torch.sqrt, TRANS, (0, 10)),
    "rsqrt": (torch.rsqrt, CLOSE, (0.01, 10)), "reciprocal": (torch.reciprocal, CLOSE, (0.1, 10)),
    "sign": (torch.sign, EXACT, None), "sgn": (torch.sgn, EXACT, None), "floor": (torch.floor, EXACT, None),
    "ceil": (torch.ceil, EXACT, None), "trunc": (torch.trunc, EXACT, None), "round": (torch.round, EXACT, None),
    "square": (torch.square, EXACT, None),
    "log1p": (torch.log1p, TRANS, (-0.99, 10)), "expm1": (torch.expm1, TRANS, None), "frac": (torch.frac, CLOSE, None),
    "erf": (torch.erf, TRANS, (-6, 6)), "erf_small": (torch.erf, TRANS, (-1e-3, 1e-3)),
    "nan_to_num": (torch.nan_to_num, EXACT, None),
}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", list(UNARY))
def test_unary(op, dtype):
    fn, tol, rng = UNARY[op]
    lo, hi = rng or (-5, 5)
    for shape in SHAPES:
        a = rand(shape, dtype, lo, hi, seed=25)
        assert_same(fn(npu(a)), fn(a), tol[dtype])
    a = rand((8, 9), dtype, lo, hi, seed=26)
    assert_same(fn(npu(a).t()), fn(a.t()), tol[dtype])
    x, y = a.clone(), npu(a)
    if hasattr(x, op + "_"):
        getattr(x, op + "_")()
        getattr(y, op + "_")()
        assert_same(y, x, tol[dtype])


@pytest.mark.parametrize("dtype", FLOATS)
def test_isnan_nan_to_num_log1p_expm1_special_values(dtype):
    """isnan / nan_to_num (PyTorch's per-dtype defaults and given values), and log1p / expm1 keeping
    full relative precision for tiny |x| (Kahan's method) and their limits, against the CPU."""
    x = torch.tensor([0.0, -0.0, 1e-30, -1e-30, 1e-7, -1e-7, 1e-4, 0.5, -0.5, -1.0, 30.0, -30.0, 100.0, -100.0,
                      float("inf"), -float("inf"), float("nan")] * 3, dtype=dtype)
    d = npu(x)
    assert torch.equal(torch.isnan(d).cpu(), torch.isnan(x))
    assert torch.equal(torch.isnan(npu(torch.arange(5))).cpu(), torch.zeros(5, dtype=torch.bool))
    for args in [(), (1.5, 7.0, -9.0), (None, 2.0, None)]:
        assert_same(torch.nan_to_num(d, *args), torch.nan_to_num(x, *args), EXACT[dtype])
    y = d.clone()
    torch.nan_to_num_(y, 0.25)
    assert_same(y, torch.nan_to_num(x, 0.25), EXACT[dtype])
    tol = {torch.float32: dict(rtol=2e-6, atol=0), torch.float16: dict(rtol=1e-3, atol=0),
           torch.bfloat16: dict(rtol=8e-3, atol=0)}[dtype]
    for fn in [torch.log1p, torch.expm1]:
        want = fn(x.float()).to(dtype)  # the CPU's correctly rounded float result, rounded once
        assert_same(fn(d), want, tol)


def test_unary_int_inputs_promote_to_float():
    i = torch.arange(1, 100, dtype=torch.int32)
    for fn in [torch.exp, torch.sqrt, torch.log, torch.sigmoid, torch.rsqrt]:
        assert_same(fn(npu(i)), fn(i), TRANS[torch.float32])


# ---------------------------------------------------------------- integer and bool paths
@pytest.mark.parametrize("dtype", [torch.int32, torch.int64])
def test_integer_arithmetic(dtype):
    g = torch.Generator().manual_seed(3)
    a = torch.randint(-40000, 40000, (1003,), dtype=dtype, generator=g)
    b = torch.randint(-40000, 40000, (1003,), dtype=dtype, generator=g)
    for fn in [torch.add, torch.sub, torch.maximum, torch.minimum, lambda x, y: torch.add(x, y, alpha=3),
               lambda x, y: torch.where(x > y, x, y)]:
        assert_same(fn(npu(a), npu(b)), fn(a, b), EXACT[torch.float32])
    assert_same(npu(a) * npu(b // 1000), a * (b // 1000), EXACT[torch.float32])
    for fn in [torch.neg, torch.abs, torch.relu, lambda x: x.clamp(-100, 100), lambda x: x + 5, lambda x: x * 3]:
        assert_same(fn(npu(a)), fn(a), EXACT[torch.float32])
    assert_same(torch.div(npu(a), npu(b), rounding_mode="floor"), torch.div(a, b, rounding_mode="floor"),
                EXACT[torch.float32])
    assert_same(torch.div(npu(a), npu(b), rounding_mode="trunc"), torch.div(a, b, rounding_mode="trunc"),
                EXACT[torch.float32])
    assert_same(npu(a) / npu(b), a / b, CLOSE[torch.float32])


def _same_bits(got, want):
    """Equal values, NaN where NaN, and the same sign of zero."""
    got = got.cpu()
    return ((got == want) & (torch.signbit(got) == torch.signbit(want))) | (got.isnan() & want.isnan())


def test_float_floor_division_is_exact():
    """float32 a // b is the floor of the exact quotient, as PyTorch derives it from fmod, not the
    floor of the rounded a / b (1 // 0.1f is 9: 1 / 0.1f rounds to 10). Checked against the CPU on
    quotients within an ulp of an integer, on random magnitudes (|a / b| < 2^21; beyond, the CPU's own
    steps round: there the npu result must be the exact floor, computed in float64), and on every
    pair of special values (zeros of both signs, infinities, NaN, tiny and huge numbers)."""
    g = torch.Generator().manual_seed(5)
    n = 100000
    # Near-integer quotients: a = k * b nudged one ulp either way.
    k = torch.randint(-3000000, 3000000, (n,), generator=g).float()
    b = torch.randn(n, generator=g) * torch.exp2(torch.randint(-10, 10, (n,), generator=g).float())
    up = torch.rand(n, generator=g) < 0.5
    a = torch.nextafter(k * b, torch.where(up, torch.tensor(float("inf")), torch.tensor(-float("inf"))))
    assert _same_bits(torch.div(npu(a), npu(b), rounding_mode="floor"), torch.div(a, b, rounding_mode="floor")).all()
    assert torch.equal((npu(torch.ones(1)) // npu(torch.tensor([0.1]))).cpu(), torch.tensor([9.0]))
    # Random magnitudes.
    a = torch.randn(n, generator=g) * torch.exp2(torch.randint(-20, 20, (n,), generator=g).float())
    b = torch.randn(n, generator=g) * torch.exp2(torch.randint(-20, 20, (n,), generator=g).float())
    got = torch.div(npu(a), npu(b), rounding_mode="floor").cpu()
    q = (a.double() / b.double()).abs()
    moderate = q < 2**21
    assert _same_bits(got, torch.div(a, b, rounding_mode="floor"))[moderate].all()
    below = q < 2**24
    assert torch.equal(got[below].double(), torch.floor(a.double() / b.double())[below])
    # Special values, every pair; the scalar form too.
    sp = torch.tensor([0.0, -0.0, 1.0, -1.0, 2.5, -2.5, 7.0, float("inf"), -float("inf"), float("nan"), 1e-38,
                       -1e-45, 3e38])
    A, B = (t.reshape(-1) for t in torch.meshgrid(sp, sp, indexing="ij"))
    assert _same_bits(torch.div(npu(A), npu(B), rounding_mode="floor"), torch.div(A, B, rounding_mode="floor")).all()
    assert _same_bits(npu(sp) // 0.1, sp // 0.1).all()
    assert _same_bits(npu(sp).floor_divide_(npu(torch.full_like(sp, -0.3))), sp.floor_divide(-0.3)).all()


@pytest.mark.parametrize("fn", [torch.remainder, torch.fmod], ids=["remainder", "fmod"])
def test_remainder_fmod_bit_exact(fn, monkeypatch):
    """remainder (Python's %) and fmod are native and bit-identical to the CPU: the exact integer
    quotient (floor / trunc, checked with an exact remainder) and one rounding. Quotients one ulp from
    an integer, random magnitudes (|a / b| < 2^23), special values, scalar / 0-dim / in-place / out=
    forms, int32 / int64 and half. A float quotient of 2^24 or more is not an exact integer: such
    lanes are redone exactly in the kernel (no fallback, nothing read back), bit-identical to the CPU
    except where a / b overflows float: there the CPU's vectorized kernel gives NaN, the npu the exact
    value as C's fmodf (and CUDA) do."""
    g = torch.Generator().manual_seed(7)
    n = 50000
    k = torch.randint(-3000000, 3000000, (n,), generator=g).float()
    b = torch.randn(n, generator=g)
    up = torch.rand(n, generator=g) < 0.5
    a = torch.nextafter(k * b, torch.where(up, torch.tensor(float("inf")), torch.tensor(-float("inf"))))
    assert _same_bits(fn(npu(a), npu(b)), fn(a, b)).all()
    a = torch.randn(n, generator=g) * torch.exp2(torch.randint(-20, 20, (n,), generator=g).float())
    b = torch.randn(n, generator=g) * torch.exp2(torch.randint(-20, 20, (n,), generator=g).float())
    keep = (a / b).abs() < 2**23
    a, b = a[keep], b[keep]
    assert _same_bits(fn(npu(a), npu(b)), fn(a, b)).all()
    sp = torch.tensor([0.0, -0.0, 1.0, -1.0, 2.5, -2.5, 7.0, float("inf"), -float("inf"), float("nan"), 1e-38,
                       -1e-45, 3e-3])
    A, B = (t.reshape(-1) for t in torch.meshgrid(sp, sp[:10], indexing="ij"))  # no tiny divisors
    assert _same_bits(fn(npu(A), npu(B)), fn(A, B)).all()
    assert _same_bits(fn(npu(sp), 0.3), fn(sp, 0.3)).all()
    x = torch.randn(5, 7, generator=g) * 100
    assert _same_bits(fn(npu(x), npu(torch.tensor(-3.0))), fn(x, torch.tensor(-3.0))).all()
    y = npu(x).clone()
    getattr(y, fn.__name__ + "_")(0.37)
    assert _same_bits(y, fn(x, 0.37)).all()
    out = npu(torch.empty(5, 7))
    fn(npu(x), 0.1, out=out)
    assert _same_bits(out, fn(x, 0.1)).all()
    if fn is torch.remainder:
        assert _same_bits(2.5 % npu(sp[:7]), 2.5 % sp[:7]).all()
    ai = torch.randint(-100000, 100000, (3000,), generator=g)
    bi = torch.randint(1, 300, (3000,), generator=g) * torch.where(torch.rand(3000, generator=g) < 0.5, 1, -1)
    for dt in (torch.int64, torch.int32):
        got = fn(npu(ai.to(dt)), npu(bi.to(dt)))
        assert got.dtype == dt and torch.equal(got.cpu(), fn(ai.to(dt), bi.to(dt)))
    ah, bh = (torch.randn(3000, generator=g) * 50).half(), (torch.randn(3000, generator=g) * 3).half()
    assert _same_bits(fn(npu(ah), npu(bh)), fn(ah, bh)).all()
    # Every pair of exponents (subnormals included), mixed into tiles with small quotients.
    monkeypatch.setenv("TORCH_OPS_NN_FALLBACK", "error")
    n = 40000
    ea = torch.randint(-149, 128, (n,), generator=g).double()
    eb = torch.randint(-149, 128, (n,), generator=g).double()
    sign = lambda: torch.where(torch.rand(n, generator=g) < 0.5, -1.0, 1.0)  # noqa: E731
    a = ((torch.rand(n, generator=g).double() + 1) * torch.exp2(ea)).float() * sign()
    b = ((torch.rand(n, generator=g).double() + 1) * torch.exp2(eb)).float() * sign()
    a = torch.cat([a, torch.tensor([1e30, -3e20, 3e38, 2.621199e38, 1e-45]), torch.randn(2000, generator=g)])
    b = torch.cat([b, torch.tensor([3.0, 7.0, 1e-40, -2.0970819e38, 1e-45]), torch.randn(2000, generator=g)])
    got, want = fn(npu(a), npu(b)), fn(a, b)
    overflow = (a.double() / b.double()).abs() > torch.finfo(torch.float32).max
    assert _same_bits(got, want)[~overflow].all()
    exact = torch.tensor([math.fmod(x, y) for x, y in zip(a[overflow].tolist(), b[overflow].tolist())])
    if fn is torch.remainder:
        exact = torch.where((exact != 0) & ((exact < 0) != (b[overflow] < 0)), exact + b[overflow], exact)
    assert _same_bits(got[overflow], exact).all()
    assert overflow.sum() > 100 and ((a / b).abs() >= 2**24)[~overflow].sum() > 1000
    graph, sa, sb = torch.npu.NPUGraph(), npu(a), npu(b)  # nothing is read back: the op captures
    with torch.npu.graph(graph):
        captured = fn(sa, sb)
    graph.replay()
    assert _same_bits(captured, got.cpu()).all()


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64])
def test_integer_division_beyond_float_precision_is_exact(dtype, monkeypatch):
    """Integer floor/trunc division runs in float only while every value is within +-2^24 (exact
    there); larger values go to the CPU fallback instead of a silently wrong quotient (123456789 // 10
    was 12345679 in float)."""
    small = torch.tensor([-7, 7, -8, 8, 16777215, -16777215], dtype=dtype)
    d = torch.tensor([2, -2, 3, -3, 2, 7], dtype=dtype)
    assert torch.equal((npu(small) // npu(d)).cpu(), small // d)  # native (fallback_error is set)
    assert torch.equal(torch.div(npu(small), 3, rounding_mode="trunc").cpu(), torch.div(small, 3, rounding_mode="trunc"))
    big = torch.tensor([123456789, -123456789, 2_000_000_001], dtype=dtype)
    with pytest.raises(NotImplementedError, match="div"):
        npu(big) // 10
    monkeypatch.setenv("TORCH_OPS_NN_FALLBACK", "silent")
    assert torch.equal((npu(big) // 10).cpu(), big // 10)
    e = torch.tensor([7, 7, -3], dtype=dtype)
    assert torch.equal(torch.div(npu(big), npu(e), rounding_mode="trunc").cpu(), torch.div(big, e, rounding_mode="trunc"))


def test_int64_exact_beyond_int32():
    """int64 add/sub, comparisons, max/min, where/masked_fill, neg/abs/relu/clamp are exact on all 64
    bits (int32 kernels on the two halves with carry and lexicographic compare), wrapping like the CPU."""
    g = torch.Generator().manual_seed(4)
    a = torch.randint(-2**62, 2**62, (1003,), generator=g)
    b = a.clone()
    b[::3] += 1
    b[1::3] -= 2**33
    b[::7] = -b[::7]
    a[10], b[10], a[11], b[11] = 2**63 - 1, 1, -2**63, -1  # wrap around
    A, B = npu(a), npu(b)
    for fn in CMPS + [torch.maximum, torch.minimum, torch.add, torch.sub]:
        r = fn(A, B)
        assert torch.equal(r.cpu(), fn(a, b)), fn
    for fn in [lambda x: x + 5, lambda x: x - 2**40, lambda x: x < 3, lambda x: -x, lambda x: x.abs(),
               torch.relu, lambda x: x.clamp(-5, 7), lambda x: x[:10].view(10, 1) >= x[:7]]:
        assert torch.equal(fn(A).cpu(), fn(a))
    c = a > 0
    assert torch.equal(torch.where(npu(c), A, B).cpu(), torch.where(c, a, b))
    assert torch.equal(A.masked_fill(npu(c), 2**40).cpu(), a.masked_fill(c, 2**40))
    x, y = a.clone(), A.clone()
    x.add_(b)
    y.add_(B)
    assert torch.equal(y.cpu(), x)


def test_int64_counter_like_batchnorm():
    t = torch.tensor(0, dtype=torch.long, device="npu")
    for _ in range(3):
        t.add_(1)
    assert t.item() == 3 and t.dtype == torch.int64
    steps = torch.zeros((), device="npu")
    steps += 1
    assert steps.item() == 1.0


# ---------------------------------------------------------------- Cast kernel (tensor.to(dtype))
CASTABLE = [torch.float32, torch.float16, torch.bfloat16, torch.int32, torch.int64, torch.int16, torch.int8,
            torch.uint8, torch.bool]


@pytest.mark.parametrize("src", CASTABLE)
def test_cast_pairs(src):
    # every pair runs on the cast kernel (no host conversion), equal to the CPU's conversion
    a = rand((1003,), torch.float32, -300, 300, seed=27)
    a[::5] = 0
    a = a.to(src)
    for dst in CASTABLE:
        if dst == src:
            continue
        for layout in ("contiguous", "strided", "broadcast"):
            x = a if layout == "contiguous" else a[::3] if layout == "strided" else a[:7].reshape(7, 1).expand(7, 5)
            _C._reset_kernel_counters()
            r = npu(x).to(dst)
            torch.npu.synchronize()
            assert_same(r, x.to(dst), EXACT[torch.float32])
            assert "cast_kernel" in _C._kernel_counters(), (src, dst, layout)


def test_cast_integer_semantics():
    # C++ conversions as PyTorch's CPU does them: toward zero, then the low bits of narrow targets
    f = torch.tensor([-1.0, 300.7, -129.5, 255.9, 65537.0, -32769.0, 1e9, -0.7])
    for dt in (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64):
        assert torch.equal(npu(f).to(dt).cpu(), f.to(dt)), dt
    big = torch.tensor([2**33 + 5, -(2**40) - 3, 2**31, -(2**31) - 1, 255, 256, -1, 2**62 + 2**10])
    for dt in (torch.int32, torch.int16, torch.int8, torch.uint8, torch.bool, torch.float32, torch.float16,
               torch.bfloat16):
        assert torch.equal(npu(big).to(dt).cpu(), big.to(dt)), dt
    u = torch.arange(256, dtype=torch.int32)
    for dt in (torch.int8, torch.uint8, torch.int16, torch.int64, torch.bool):
        assert torch.equal(npu(u).to(dt).cpu(), u.to(dt)), dt
    nan = torch.tensor([float("nan"), 0.0, -0.0, float("inf")])
    assert torch.equal(npu(nan).to(torch.bool).cpu(), nan.to(torch.bool))
    # in place and out-of-place views of the destination
    d = torch.zeros(4, 6, dtype=torch.int8)
    dn = npu(d)
    dn[:, ::2].copy_(npu(f[:3].repeat(4, 1)))
    d[:, ::2].copy_(f[:3].repeat(4, 1))
    assert torch.equal(dn.cpu(), d)


def test_float64_arithmetic_is_a_fallback(monkeypatch):
    # float64 add / sub / mul / div and the unary math ops take the CPU fallback (no float64 on the
    # vector unit; torch.amp.GradScaler takes a float64 reciprocal): an error under
    # TORCH_OPS_NN_FALLBACK=error (this module's setting), else correct
    d = npu(torch.ones(3, dtype=torch.float64))
    with pytest.raises(NotImplementedError, match=r"aten::add.Tensor.*TORCH_OPS_NN_FALLBACK=error"):
        d + d
    with pytest.raises(NotImplementedError, match=r"aten::reciprocal.*TORCH_OPS_NN_FALLBACK=error"):
        d.reciprocal()
    assert torch.equal((npu(torch.ones(3)) + 1).cpu(), torch.full((3,), 2.0))  # float32 stays native
    monkeypatch.setenv("TORCH_OPS_NN_FALLBACK", "silent")
    d64 = npu(torch.tensor([1.0, 2.0, 1e-300], dtype=torch.float64))
    assert torch.equal((d64 + d64 * 3).cpu(), d64.cpu() + d64.cpu() * 3)
    assert torch.equal(d64.reciprocal().cpu(), d64.cpu().reciprocal())
    out = npu(torch.empty(3, dtype=torch.float64))
    torch.div(d64, d64, out=out)
    assert torch.equal(out.cpu(), torch.ones(3, dtype=torch.float64))
    d64.sub_(d64)
    assert torch.equal(d64.cpu(), torch.zeros(3, dtype=torch.float64))



def test_complex_math_is_a_fallback(monkeypatch):
    # complex128 (and the complex64 ops without a float-pair composition) take the CPU fallback like
    # float64: they raised "dtype ComplexFloat, which is not supported" from add / mul / abs / exp /
    # eq / matmul; the ops below are native in complex64 now and must give the same values.
    torch.manual_seed(3)
    z = torch.randn(4, 5, dtype=torch.complex64)
    d = npu(z)
    d128 = npu(z.to(torch.complex128))
    with pytest.raises(NotImplementedError, match=r"aten::div.Tensor.*TORCH_OPS_NN_FALLBACK=error"):
        d128 / d128
    with pytest.raises(NotImplementedError, match=r"aten::tanh.*TORCH_OPS_NN_FALLBACK=error"):
        d.tanh()
    monkeypatch.setenv("TORCH_OPS_NN_FALLBACK", "silent")
    assert torch.allclose((d128 / d128).cpu(), torch.ones(4, 5, dtype=torch.complex128))
    for f in (lambda t: t + t, lambda t: t * 2, lambda t: t * t, lambda t: t / 3, lambda t: t.abs(), lambda t: t.exp(),
              lambda t: t == t, lambda t: t != 0, lambda t: t @ t.t(), lambda t: t @ t.conj().t(),
              lambda t: torch.bmm(t[None], t.t()[None]), lambda t: torch.addmm(t[:, :4], t, t.t()[:, :4])):
        got, ref = f(d), f(z)
        assert got.device.type == "npu" and got.dtype == ref.dtype
        assert torch.allclose(got.cpu(), ref, atol=1e-5), (got.cpu(), ref)
    x = npu(torch.randn(2, 400))
    spec = torch.stft(x, 64, window=npu(torch.hann_window(64)), return_complex=True).abs()
    ref = torch.stft(x.cpu(), 64, window=torch.hann_window(64), return_complex=True).abs()
    assert spec.dtype == torch.float32 and torch.allclose(spec.cpu(), ref, atol=1e-4)


def test_complex64_abs_and_conj_physical_are_native():
    """abs of complex64 (spectrogram magnitudes) is hypot of the float pairs and conj_physical
    (resolve_conj, torch.fft.hfft / ihfft) negates the imaginary floats, on the vector unit (the
    fixture forbids the CPU fallback), with the CPU's values; conj bits, out= and views included."""
    torch.manual_seed(5)
    z = torch.randn(6, 7, dtype=torch.complex64) * 1e3
    z[0, 0] = 0
    z[1, 1] = complex(float("inf"), 1.0)
    z[2, 2] = complex(float("nan"), 0.0)
    d = npu(z)
    torch.testing.assert_close(d.abs().cpu(), z.abs(), rtol=2e-7, atol=0, equal_nan=True)
    torch.testing.assert_close(d.conj().abs().cpu(), z.abs(), rtol=2e-7, atol=0, equal_nan=True)
    torch.testing.assert_close(d[:, 1:5:2].abs().cpu(), z[:, 1:5:2].abs(), rtol=2e-7, atol=0, equal_nan=True)
    out = torch.empty(0, device="npu")
    torch.abs(d, out=out)
    torch.testing.assert_close(out.cpu(), z.abs(), rtol=2e-7, atol=0, equal_nan=True)
    same = dict(rtol=0, atol=0, equal_nan=True)
    torch.testing.assert_close(d.conj().resolve_conj().cpu(), z.conj().resolve_conj(), **same)
    torch.testing.assert_close(torch.conj_physical(d).cpu(), torch.conj_physical(z), **same)
    torch.testing.assert_close(torch.conj_physical(d.conj()).cpu(), torch.conj_physical(z.conj()), **same)
    c = d.clone()
    c.conj_physical_()
    torch.testing.assert_close(c.cpu(), torch.conj_physical(z), **same)
    x = npu(torch.randn(3, 5))
    assert torch.equal(torch.conj_physical(x).cpu(), x.cpu())  # real: a copy


def _assert_complex_case_matches_cpu(fn, args, tol=3e-7):
    want = fn(*args)
    got = fn(*[npu(a) for a in args])
    assert got.device.type == "npu" and got.dtype == want.dtype and got.shape == want.shape
    torch.testing.assert_close(got.cpu().resolve_conj(), want.resolve_conj(), rtol=tol, atol=tol)


@pytest.mark.parametrize("case", ["complex", "broadcast", "real_operand", "real_first", "real_scalar",
                                  "complex_scalar", "real_times_imaginary", "conj_operand", "in_place", "out"])
def test_complex64_mul_is_native(case):
    """complex64 products run on the float pairs (no CPU fallback: the fixture forbids it) with the
    CPU's values to an ulp: complex and real tensors, broadcasting, host scalars, conj bits, mul_ / out=."""
    torch.manual_seed(7)
    z, w = torch.randn(4, 6, dtype=torch.complex64), torch.randn(4, 6, dtype=torch.complex64)
    v, x = torch.randn(6, dtype=torch.complex64), torch.randn(4, 6)
    fn, args = {
        "complex": (lambda a, b: a * b, (z, w)),
        "broadcast": (lambda a, b: a * b, (z, v)),
        "real_operand": (lambda a, b: a * b, (z, x)),
        "real_first": (lambda a, b: a * b, (x, z)),
        "real_scalar": (lambda a: a * 2.5, (z,)),
        "complex_scalar": (lambda a: a * (1 - 2j), (z,)),
        "real_times_imaginary": (lambda a: a * 1j, (x,)),
        "conj_operand": (lambda a, b: a.conj() * b, (z, v)),
        "in_place": (lambda a, b: a.clone().mul_(b), (z, v)),
        "out": (lambda a, b: torch.mul(a, b, out=torch.empty(0, dtype=torch.complex64, device=a.device)), (z, v)),
    }[case]
    _assert_complex_case_matches_cpu(fn, args)


@pytest.mark.parametrize("case", ["complex", "broadcast", "real_tensor", "real_first", "scalar", "complex_scalar",
                                  "scalar_first", "alpha", "sub", "rsub_scalar", "in_place", "out"])
def test_complex64_add_sub_are_native(case):
    """complex64 sums part by part on the float pairs, with the CPU's values (the fixture forbids the
    fallback): complex / real tensors, host scalars on either side, alpha, sub, add_ / out=."""
    torch.manual_seed(9)
    z, w = torch.randn(4, 6, dtype=torch.complex64), torch.randn(4, 6, dtype=torch.complex64)
    v, x = torch.randn(6, dtype=torch.complex64), torch.randn(4, 6)
    fn, args = {
        "complex": (lambda a, b: a + b, (z, w)),
        "broadcast": (lambda a, b: a + b, (z, v)),
        "real_tensor": (lambda a, b: a + b, (z, x)),
        "real_first": (lambda a, b: a - b, (x, z)),
        "scalar": (lambda a: a + 2.5, (z,)),
        "complex_scalar": (lambda a: a - (1 - 2j), (z,)),
        "scalar_first": (lambda a: 3 - a, (z,)),
        "alpha": (lambda a, b: torch.add(a, b, alpha=-0.5), (z, v)),
        "sub": (lambda a, b: torch.sub(a, b, alpha=2), (z, w)),
        "rsub_scalar": (lambda a: (1 + 1j) + a, (z,)),
        "in_place": (lambda a, b: a.clone().sub_(b), (z, v)),
        "out": (lambda a, b: torch.add(a, b, out=torch.empty(0, dtype=torch.complex64, device=a.device)), (z, v)),
    }[case]
    _assert_complex_case_matches_cpu(fn, args)


@pytest.mark.parametrize("case", ["neg", "neg_conj", "neg_", "neg_out", "complex", "complex_broadcast", "polar"])
def test_complex64_neg_and_construction_are_native(case):
    """neg of complex64, torch.complex and torch.polar (LLaMA's freqs_cis = polar(ones, angles)) on the
    float pairs, with the CPU's values (cos / sin to the vector unit's accuracy)."""
    torch.manual_seed(10)
    z, x, y = torch.randn(4, 6, dtype=torch.complex64), torch.randn(4, 6), torch.randn(6)
    fn, args = {
        "neg": (lambda a: -a, (z,)),
        "neg_conj": (lambda a: -a.conj(), (z,)),
        "neg_": (lambda a: a.clone().neg_(), (z,)),
        "neg_out": (lambda a: torch.neg(a, out=torch.empty(0, dtype=torch.complex64, device=a.device)), (z,)),
        "complex": (lambda a, b: torch.complex(a, b), (x, x * 2)),
        "complex_broadcast": (lambda a, b: torch.complex(a, b), (x, y)),
        "polar": (lambda a, b: torch.polar(a.abs(), b), (x, x * 3)),
    }[case]
    _assert_complex_case_matches_cpu(fn, args, tol=2e-6)


def _ulps(got, want):
    return (got.view(torch.int32).long() - want.view(torch.int32).long()).abs()


@pytest.mark.parametrize("form", ["tensor", "scalar_exponent", "scalar_base"])
def test_pow_is_within_a_few_ulp(form):
    """pow runs a double-float log / exp where b ln a is large: within 3 ulp of the exact value (the
    plain exp(b ln a) was 30-90 ulp off there, failing assert_close for 10% of wide-range inputs);
    subnormal bases included."""
    g = torch.Generator().manual_seed(21)
    n = 1 << 16
    x = torch.exp(torch.empty(n).uniform_(-9, 9, generator=g))  # 1e-4 .. 8e3
    x[:64] = torch.logspace(-44, -38, 64)  # subnormal and near-subnormal bases
    e = torch.empty(n).uniform_(-10, 10, generator=g)
    if form == "tensor":
        want = torch.pow(x.double(), e.double())
        got = torch.pow(npu(x), npu(e)).cpu()
    elif form == "scalar_exponent":
        s = float(torch.tensor(7.3).item())  # a float32 value, as the kernel sees it
        want = torch.pow(x.double(), s)
        got = torch.pow(npu(x), s).cpu()
    else:
        e3 = e * 3
        want = torch.pow(10.0, e3.double())
        got = torch.pow(10.0, npu(e3)).cpu()
    want32 = want.float()
    fin = torch.isfinite(want32) & (want32.abs() >= 1.2e-38)
    assert torch.equal(torch.isfinite(got), torch.isfinite(want32))
    assert _ulps(got[fin], want32[fin]).max() <= 3


def test_pow_special_values_match_the_cpu():
    """C99's pow at zeros (signed), infinities, NaN, +-1 and negative bases (odd / even / non-integer
    powers), as the CPU: (-0) ** -1 = -inf, (-1) ** inf = 1, (-inf) ** 0.5 = inf, (-2) ** 0.5 = NaN."""
    inf, nan = float("inf"), float("nan")
    base = torch.tensor([0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, inf, -inf, nan, 1e-40, -1e-40, 3e38, 1.0000001])
    expo = torch.tensor([0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 3.0, -3.0, 0.5, -0.5, 2.5, inf, -inf, nan, 1e9, -1e9, 201.0])
    X, E = torch.meshgrid(base, expo, indexing="ij")
    torch.testing.assert_close(torch.pow(npu(X), npu(E)).cpu(), torch.pow(X, E), rtol=4e-7, atol=0, equal_nan=True)
    for s in (3.0, -3.0, 0.5, -0.5, 2.5, inf, -inf, 7.0):
        torch.testing.assert_close(torch.pow(npu(base), s).cpu(), torch.pow(base, s), rtol=6e-7, atol=0, equal_nan=True)
    assert torch.pow(npu(torch.tensor([-0.0])), -1.0).item() == -inf


def _assert_complex_close(got, want, rtol, atol=0.0):
    """|got - want| <= atol + rtol |want| for the finite values (a part that cancels is judged
    against the modulus, as a complex rounding error is), the same inf / NaN pattern elsewhere."""
    fin = torch.isfinite(want)
    assert torch.equal(torch.isfinite(got), fin), (got[~fin], want[~fin])
    rw, rg = torch.view_as_real(want[~fin]), torch.view_as_real(got[~fin])
    torch.testing.assert_close(rg, rw, rtol=rtol, atol=0, equal_nan=True)  # (the parts of inf / NaN values)
    err = (got[fin] - want[fin]).abs()
    bound = atol + rtol * want[fin].abs()
    assert (err <= bound).all(), (err / want[fin].abs().clamp_min(1e-38)).max()


def _complex_operands(n=300, seed=11):
    """complex64 values over many magnitudes (1e-12 .. 1e12), zeros, and both signs of each part."""
    g = torch.Generator().manual_seed(seed)
    z = torch.randn(n, dtype=torch.complex64, generator=g) * torch.exp(torch.randn(n, generator=g) * 6)
    z[:4] = torch.tensor([0, 1, -1j, -2 + 0j])
    return z


@pytest.mark.parametrize("case", ["complex", "broadcast", "real_divisor", "real_dividend", "scalar", "complex_scalar",
                                  "scalar_dividend", "conj", "in_place", "out", "zero_and_inf_divisors"])
def test_complex64_division_is_native(case):
    """complex64 / runs the CPU's algorithm (numpy's scaled division) on the float pairs: the CPU's
    values over 24 orders of magnitude, and its inf / NaN for zero and infinite divisors."""
    z, w = _complex_operands(seed=12), _complex_operands(seed=13)
    inf = float("inf")
    edge = torch.tensor([0, 0, inf, 1j * inf, 1e-30 + 1e-30j, 3e38 + 3e38j], dtype=torch.complex64)
    fn, args = {
        "complex": (lambda a, b: a / b, (z, w)),
        "broadcast": (lambda a, b: a / b, (z.view(30, 10), w[:10])),
        "real_divisor": (lambda a, b: a / b, (z, w.real)),
        "real_dividend": (lambda a, b: a / b, (z.real, w)),
        "scalar": (lambda a: a / 2.5, (z,)),
        "complex_scalar": (lambda a: a / (3 - 4j), (z,)),
        "scalar_dividend": (lambda a: (1 + 2j) / a, (w,)),
        "conj": (lambda a, b: a.conj() / b, (z, w)),
        "in_place": (lambda a, b: a.clone().div_(b), (z, w)),
        "out": (lambda a, b: torch.div(a, b, out=torch.empty(0, dtype=torch.complex64, device=a.device)), (z, w)),
        "zero_and_inf_divisors": (lambda a, b: a.view(-1, 1) / b, (z[:8], edge)),
    }[case]
    want = fn(*args)
    got = fn(*[npu(a) for a in args])
    assert got.dtype == want.dtype and got.shape == want.shape
    _assert_complex_close(got.cpu().resolve_conj(), want.resolve_conj(), 4e-7)


@pytest.mark.parametrize("op", ["exp", "log", "sqrt", "reciprocal", "sgn", "angle", "square", "pow_half", "pow_3"])
def test_complex64_unary_math_is_native(op):
    """exp / log / sqrt / reciprocal / sgn / angle / pow of complex64 on the float pairs, with the CPU's
    values (the vector unit's exp / log / sin / cos / atan to a few ulp) and its (C99) values at zeros,
    infinities and NaN; out= and in-place forms."""
    inf, nan = float("inf"), float("nan")
    special = torch.tensor([complex(x, y) for x in (0.0, -0.0, 1.0, -4.0, inf, -inf, nan)
                            for y in (0.0, -0.0, 2.0, -1.0, inf, nan)], dtype=torch.complex64)
    z = _complex_operands(seed=14)
    if op == "exp":
        z = z / z.abs().clamp_min(1) * 40  # |z| <= 40: exp stays finite
    fn = {"exp": torch.exp, "log": torch.log, "sqrt": torch.sqrt, "reciprocal": torch.reciprocal, "sgn": torch.sgn,
          "angle": torch.angle, "square": torch.square, "pow_half": lambda t: t ** 1.5,
          "pow_3": lambda t: torch.pow(t, 3)}[op]
    # the vector unit's transcendental functions: a few ulp; exact algebra (sqrt's roots, division): ~1
    tol = {"exp": 3e-6, "log": 2e-6, "pow_half": 4e-6, "pow_3": 4e-6, "angle": 4e-7}.get(op, 3e-7)
    for x in ([z, special] if op not in ("pow_half", "pow_3", "sgn") else [z]):
        want, got = fn(x), fn(npu(x)).cpu()
        assert got.dtype == want.dtype
        if want.is_complex():
            _assert_complex_close(got, want, tol)
        else:
            torch.testing.assert_close(got, want, rtol=tol, atol=0, equal_nan=True)
    if op in ("exp", "sqrt", "reciprocal", "log", "sgn"):
        out = torch.empty(0, dtype=torch.complex64, device="npu")
        getattr(torch, op)(npu(z), out=out)
        torch.testing.assert_close(out.cpu(), fn(z), rtol=tol, atol=1e-6, equal_nan=True)
        inplace = npu(z)
        getattr(inplace, op + "_")()
        torch.testing.assert_close(inplace.cpu(), fn(z), rtol=tol, atol=1e-6, equal_nan=True)
        with pytest.raises(RuntimeError, match="can't be cast to the desired output type Float"):
            getattr(torch, op)(npu(z), out=torch.empty(0, device="npu"))


def test_complex64_reductions_comparisons_where_and_randn_are_native():
    """sum / mean over dims, eq / ne / allclose, torch.where and randn of complex64 on the npu."""
    torch.manual_seed(15)
    z, w = torch.randn(6, 5, 4, dtype=torch.complex64), torch.randn(6, 5, 4, dtype=torch.complex64)
    d, e = npu(z), npu(w)
    for dims, keep in [((), False), ((1,), False), ((0, 2), True), ((-1,), False)]:
        torch.testing.assert_close(d.sum(dims, keepdim=keep).cpu(), z.sum(dims, keepdim=keep), rtol=1e-6, atol=1e-6)
        torch.testing.assert_close(d.mean(dims, keepdim=keep).cpu(), z.mean(dims, keepdim=keep), rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(d.conj().sum(0).cpu(), z.conj().sum(0), rtol=1e-6, atol=1e-6)
    z2 = z.clone()
    z2[0, 0, 0] = z[0, 0, 0].real  # only the real part equal
    z2[1, 0, 0] = 1j * z[1, 0, 0].imag
    z2[2] = z[2]
    for f in (lambda a, b: a == b, lambda a, b: a != b, lambda a, b: a == b.real, lambda a, b: a[0] == b[0, 0],
              lambda a, b: a == (1 + 2j), lambda a, b: a != 0, lambda a, b: torch.eq(a, a.conj())):
        assert torch.equal(f(npu(z2), d).cpu(), f(z2, z))
    assert torch.allclose(d, d.clone()) and not torch.allclose(d, e)
    cond = z.real > 0
    for f in (lambda c, a, b: torch.where(c, a, b), lambda c, a, b: torch.where(c, a, b.real),
              lambda c, a, b: torch.where(c, a, 0), lambda c, a, b: torch.where(c[0], 1j, b)):
        assert torch.equal(f(npu(cond), d, e).cpu(), f(cond, z, w))
    r = torch.randn(20000, dtype=torch.complex64, device="npu")
    assert r.dtype == torch.complex64 and r.device.type == "npu"
    parts = torch.view_as_real(r.cpu())
    # each part N(0, 1/2): E|z|^2 = 1, the parts uncorrelated
    assert abs(parts.var(0) - 0.5).max() < 0.03 and abs(parts.mean(0)).max() < 0.03
    assert abs((parts[:, 0] * parts[:, 1]).mean()) < 0.03
    g = torch.Generator(device="npu").manual_seed(3)
    a = torch.randn(8, dtype=torch.complex64, device="npu", generator=g)
    g.manual_seed(3)
    assert torch.equal(a.cpu(), torch.randn(8, dtype=torch.complex64, device="npu", generator=g).cpu())


@pytest.mark.parametrize("case", ["mm", "bmm", "matmul_batched", "linear", "addmm", "conj", "out", "empty_k",
                                  "empty_m", "empty_batch", "dot", "vdot", "vdot_real"])
def test_complex64_matmul_is_native(case):
    """complex64 mm / bmm / matmul / linear / addmm as one float GEMM of the stacked parts
    ([Ar | Ai] @ [[Br, Bi], [-Bi, Br]]), against the CPU's complex GEMM."""
    torch.manual_seed(16)
    a, b = torch.randn(7, 9, dtype=torch.complex64), torch.randn(9, 5, dtype=torch.complex64)
    x, y = torch.randn(3, 7, 9, dtype=torch.complex64), torch.randn(3, 9, 5, dtype=torch.complex64)
    bias = torch.randn(5, dtype=torch.complex64)
    fn, args = {
        "mm": (lambda p, q: p @ q, (a, b)),
        "bmm": (torch.bmm, (x, y)),
        "matmul_batched": (lambda p, q: p @ q, (x, b)),
        "linear": (lambda p, q, r: F.linear(p, q.t(), r), (x, b, bias)),
        "addmm": (lambda p, q, r: torch.addmm(r, p, q, beta=0.5j, alpha=2), (a, b, bias)),
        "conj": (lambda p, q: p.conj() @ q.conj().t().conj().t(), (a, b)),
        "out": (lambda p, q: torch.mm(p, q, out=torch.empty(0, dtype=torch.complex64, device=p.device)), (a, b)),
        "empty_k": (torch.mm, (a[:, :0], b[:0])),  # zeros (found by a complex parity fuzz: raised)
        "empty_m": (torch.mm, (a[:0], b)),
        "empty_batch": (torch.bmm, (x[:0], y[:0])),
        "dot": (torch.dot, (a[0], b[:, 1])),
        "vdot": (torch.vdot, (a[0], b[:, 1])),
        "vdot_real": (torch.vdot, (a[0].real, b[:, 1].real)),
    }[case]
    want = fn(*args)
    got = fn(*[npu(t) for t in args])
    assert got.dtype == want.dtype and got.shape == want.shape
    torch.testing.assert_close(got.cpu(), want, rtol=2e-6, atol=2e-6)


def test_complex64_bad_input_raises_clear_errors():
    d = npu(torch.randn(3, 4, dtype=torch.complex64))
    with pytest.raises(RuntimeError, match=r"mm: mat1 and mat2 shapes cannot be multiplied \(3x4 and 3x4\)"):
        torch.mm(d, d)
    with pytest.raises(RuntimeError, match="output with shape"):
        d[0].clone().div_(d)
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type Float"):
        torch.div(d, d, out=torch.empty(0, device="npu"))
    with pytest.raises(RuntimeError, match=r"expects std >= 0.0"):
        d.normal_(0, -1)
    with pytest.raises(NotImplementedError, match="Subtraction, the `-` operator, with a bool tensor"):
        d - True
    assert torch.isfinite((d / d).cpu()).all()  # the process keeps working


def test_complex64_division_trains():
    """autograd through complex division, exp and sum (the CPU's gradients)."""
    torch.manual_seed(17)
    z = torch.randn(5, 6, dtype=torch.complex64)
    w = torch.randn(6, dtype=torch.complex64)
    grads = []
    for dev in ("cpu", "npu"):
        a, b = z.to(dev).detach().requires_grad_(), w.to(dev).detach().requires_grad_()
        ((a / b).exp().sum(1).abs() ** 2).sum().backward()
        grads.append((a.grad.cpu(), b.grad.cpu()))
    torch.testing.assert_close(grads[1][0], grads[0][0], rtol=2e-5, atol=2e-5)
    torch.testing.assert_close(grads[1][1], grads[0][1], rtol=2e-5, atol=2e-5)


def test_rotary_embedding_runs_natively():
    """LLaMA-style rotary embeddings: view_as_complex(x) * freqs_cis, forward and backward."""
    def rope(xq, freqs):
        xc = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
        return torch.view_as_real(xc * freqs).flatten(3)

    torch.manual_seed(8)
    xq = torch.randn(2, 5, 4, 8, requires_grad=True)
    freqs = torch.polar(torch.ones(5, 4), torch.randn(5, 4))[None, :, None, :]
    out = rope(xq, freqs)
    out.pow(2).sum().backward()
    xd = npu(xq.detach()).requires_grad_()
    od = rope(xd, npu(freqs))
    od.pow(2).sum().backward()
    torch.testing.assert_close(od.detach().cpu(), out.detach(), rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(xd.grad.cpu(), xq.grad, rtol=1e-6, atol=2e-6)


def test_cast_transposed():
    a = rand((30, 40), seed=28)
    _C._reset_kernel_counters()
    r = npu(a).t().half()
    assert_same(r, a.t().half(), EXACT[torch.float16])
    assert "cast_kernel" in _C._kernel_counters()


# ---------------------------------------------------------------- autograd through the ops
def test_autograd_arithmetic():
    # same shapes: a broadcast operand's gradient needs a sum (the reduction family's op)
    a, b = rand((6, 7), seed=29), rand((6, 7), lo=0.5, hi=2, seed=30)
    xa, xb = a.clone().requires_grad_(), b.clone().requires_grad_()
    na, nb = npu(a).requires_grad_(), npu(b).requires_grad_()
    for x, y in [(xa, xb), (na, nb)]:
        out = ((x * y - y / x.abs().add(1)) ** 2).clamp(max=5).exp().lerp(x, 0.3)
        out.backward(torch.ones_like(out))
    torch.testing.assert_close(na.grad.cpu(), xa.grad, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(nb.grad.cpu(), xb.grad, rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------- optimizers (foreach path)
def _train(opt_cls, device, **kw):
    torch.manual_seed(0)
    params = [torch.randn(5, 4), torch.randn(4), torch.randn(3, 2, 2)]
    grads = [[torch.randn_like(p) for p in params] for _ in range(3)]
    ps = [p.clone().to(device).requires_grad_() for p in params]
    opt = opt_cls(ps, **kw)
    for gs in grads:
        for p, g in zip(ps, gs):
            p.grad = g.to(device)
        opt.step()
    return [p.detach().cpu() for p in ps]


@pytest.mark.parametrize("opt, kw", [
    (torch.optim.SGD, dict(lr=0.1, momentum=0.9, weight_decay=1e-4)),
    (torch.optim.SGD, dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-4)),
    (torch.optim.Adam, dict(lr=0.01)),
    (torch.optim.AdamW, dict(lr=0.01, weight_decay=1e-2)),
    (torch.optim.AdamW, dict(lr=0.01, weight_decay=1e-2, amsgrad=True)),
])
def test_optimizers_foreach_match_cpu(opt, kw):
    cpu = _train(opt, "cpu", foreach=True, **kw)
    dev = _train(opt, "npu", **kw)  # foreach is the default on npu
    for c, d in zip(cpu, dev):
        torch.testing.assert_close(d, c, rtol=1e-5, atol=1e-6)


def test_foreach_ops_match_cpu():
    """_foreach_* ops run as loops over the npu elementwise ops (PyTorch's composite kernels)."""
    g = torch.Generator().manual_seed(5)
    ps = [torch.rand(3, 4, generator=g) + 1, torch.rand(5, generator=g) + 1]
    qs = [torch.rand(3, 4, generator=g) + 1, torch.rand(5, generator=g) + 1]
    cases = [lambda P, Q: torch._foreach_add(P, Q, alpha=0.5), lambda P, Q: torch._foreach_add(P, 2.0),
             lambda P, Q: torch._foreach_mul(P, torch.tensor(2.0, device=P[0].device)),
             lambda P, Q: torch._foreach_div(P, Q), lambda P, Q: torch._foreach_addcmul(P, Q, Q, value=0.3),
             lambda P, Q: torch._foreach_addcdiv(P, Q, Q, [0.1, 0.2]), lambda P, Q: torch._foreach_lerp(P, Q, Q),
             lambda P, Q: torch._foreach_lerp(P, Q, 0.3), lambda P, Q: torch._foreach_sqrt(P),
             lambda P, Q: torch._foreach_maximum(P, Q), lambda P, Q: torch._foreach_clamp_min(P, 1.5),
             lambda P, Q: torch._foreach_pow(P, 2.0), lambda P, Q: torch._foreach_neg(P)]
    for fn in cases:
        want = fn([p.clone() for p in ps], [q.clone() for q in qs])
        got = fn([npu(p) for p in ps], [npu(q) for q in qs])
        for w, r in zip(want, got):
            assert_same(r, w, CLOSE[torch.float32])


def test_310p_without_datacopypad():
    """On Ascend310P3 (arch 2002, no DataCopyPad) sub-block tails and odd rows still work."""
    from conftest import run_python
    code = (
        "import torch, torch_ops_nn\n"
        "x = torch.randn(4, 3, 5, 7); b = torch.randn(3, 1, 1); m = x > 0\n"
        "d = x.to('npu')\n"
        "checks = [((d + b.to('npu')).cpu(), x + b), (torch.relu(d).cpu(), torch.relu(x)),\n"
        "          (d.half().cpu(), x.half()), ((d > 0).cpu(), m), (torch.sigmoid(d[:, :, :, 1:]).cpu(),\n"
        "          torch.sigmoid(x[:, :, :, 1:])), (d.masked_fill(m.to('npu'), 0).cpu(), x.masked_fill(m, 0)),\n"
        "          (d.int().cpu(), x.int()), ((d * 100).to(torch.int8).cpu(), (x * 100).to(torch.int8)),\n"
        "          (d.long().int().cpu(), x.long().int()), (m.to('npu').to(torch.uint8).float().cpu(), m.float())]\n"
        "assert all(torch.allclose(a.float(), e.float(), atol=1e-6) for a, e in checks)\n"
        "print('OK', torch.npu.get_device_properties().name)\n")
    r = run_python(code, {"TORCH_OPS_NN_SOC": "Ascend310P3", "TORCH_OPS_NN_FALLBACK": "error",
                          "TORCH_OPS_NN_BOUNDS_CHECK": "1"})
    assert r.returncode == 0 and "OK Ascend310P3" in r.stdout, r.stderr


# ---------------------------------------------------------------- bad input
def test_errors_shapes_devices_dtypes():
    a, b = npu(torch.ones(2, 3)), npu(torch.ones(4))
    with pytest.raises(RuntimeError, match=r"add: the shapes of 'self' and 'other' .* cannot be broadcast"):
        a + b
    with pytest.raises(RuntimeError, match=r"mul: argument 'other' is on cpu.*'self' on npu:0, 'other' on cpu"):
        a * torch.ones(2, 3)
    # float64 (no such vector dtype) is the CPU fallback's, which FALLBACK=error forbids
    with pytest.raises(NotImplementedError, match=r"'aten::sigmoid' has no native npu kernel for Double operands \(sigmoid: argument 'self' has dtype Double"):
        torch.sigmoid(npu(torch.ones(3, dtype=torch.float64)))
    with pytest.raises(RuntimeError, match=r"add_: result type Float can't be cast to the desired output type Int"):
        npu(torch.ones(3, dtype=torch.int32)).add_(1.5)
    with pytest.raises(RuntimeError, match=r"add_: output with shape \[3\] doesn't match the broadcast shape \[2, 3\]"):
        npu(torch.ones(3)).add_(a)
    with pytest.raises(RuntimeError, match=r"for integral input tensors, argument 'alpha'"):
        torch.add(npu(torch.ones(3, dtype=torch.int32)), npu(torch.ones(3, dtype=torch.int32)), alpha=0.5)
    with pytest.raises(RuntimeError, match=r"div: rounding_mode must be"):
        torch.div(a, a, rounding_mode="round")
    with pytest.raises(TypeError, match=r"where: argument 'condition' must be a bool tensor"):
        torch.where(a, a, a)
    with pytest.raises(TypeError, match=r"masked_fill_: argument 'mask' must be a bool tensor, got dtype Float"):
        a.masked_fill(a, 0)
    with pytest.raises(RuntimeError, match=r"clamp: at least one of 'min' or 'max' must not be None"):
        a.clamp()
    with pytest.raises(NotImplementedError, match=r"bitwise_and: argument 'self' has dtype Float, which is not "
                                                  r"supported; supported dtypes: Bool, Byte, Char, Short, Int, Long"):
        npu(torch.ones(3)) & npu(torch.ones(3, dtype=torch.int32))
    with pytest.raises(NotImplementedError, match=r"bitwise_left_shift: argument 'self' has dtype Bool"):
        npu(torch.ones(3, dtype=torch.bool)) << npu(torch.ones(3, dtype=torch.bool))  # (int << bool is fine)
    with pytest.raises(NotImplementedError, match=r"bitwise_left_shift: argument 'other' has dtype Float"):
        npu(torch.ones(3, dtype=torch.int32)) << npu(torch.ones(3))
    with pytest.raises(RuntimeError, match=r"single memory location|partial"):
        x = npu(torch.ones(10))
        x[1:].add_(x[:-1])
    if torch.npu.device_count() > 1:
        with pytest.raises(RuntimeError, match=r"add: argument 'other' is on npu:1 but 'self' is on npu:0"):
            a + a.to("npu:1")


def test_xlogy_and_kl_div():
    """xlogy: x * log(y), 0 where x == 0, NaN where y is NaN (also the scalar, in-place and out= forms);
    kl_div, which uses it, forward and backward."""
    a = torch.tensor([0.0, 0.0, 1.0, 2.0, -1.0, 0.0, 3.0, 0.5, 0.0])
    b = torch.tensor([0.0, float("nan"), 0.0, 3.0, 2.0, -1.0, float("inf"), float("nan"), float("inf")])
    assert _same_bits(torch.xlogy(npu(a), npu(b)), torch.xlogy(a, b)).all()
    assert _same_bits(torch.xlogy(npu(a), 2.5), torch.xlogy(a, 2.5)).all()
    assert _same_bits(torch.xlogy(3.0, npu(b)), torch.xlogy(3.0, b)).all()
    out = npu(torch.empty(0))
    torch.xlogy(npu(a), npu(b), out=out)
    assert _same_bits(out, torch.xlogy(a, b)).all()
    c = npu(a.clone())
    c.xlogy_(npu(b))
    assert _same_bits(c, torch.xlogy(a, b)).all()
    ai = torch.tensor([0, 1, 2, 3])
    assert _same_bits(torch.xlogy(npu(ai), npu(ai)), torch.xlogy(ai, ai)).all()  # ints promote to float
    g = torch.Generator().manual_seed(4)
    logp = torch.log_softmax(torch.randn(8, 5, generator=g), -1)
    q = torch.softmax(torch.randn(8, 5, generator=g), -1)
    ln, lc = npu(logp).requires_grad_(), logp.clone().requires_grad_()
    kn = torch.nn.functional.kl_div(ln, npu(q), reduction="batchmean")
    kc = torch.nn.functional.kl_div(lc, q, reduction="batchmean")
    torch.testing.assert_close(kn.cpu(), kc.detach(), rtol=1e-6, atol=1e-7)
    kn.backward()
    kc.backward()
    torch.testing.assert_close(ln.grad.cpu(), lc.grad, rtol=1e-6, atol=1e-7)


def test_xlogy_device_mismatch_is_a_clear_error():
    with pytest.raises(RuntimeError, match=r"xlogy: expected npu tensors or scalars, but 'other' is a CPU tensor"):
        torch.xlogy(npu(torch.ones(3)), torch.ones(3))
    assert torch.allclose(torch.xlogy(npu(torch.ones(3)), torch.tensor(2.0)).cpu(), torch.full((3,), 0.6931472))


@pytest.mark.parametrize("fn", [torch.sin, torch.cos], ids=["sin", "cos"])
def test_sin_cos(fn, monkeypatch):
    """sin / cos on npu: within 1.2e-7 of the CPU (absolute; relative for tiny sin arguments) for
    |x| < 8192, exact signed zeros, NaN for +-inf; half / bfloat16 equal to the CPU's rounding; the
    in-place, out= and backward forms. Larger finite arguments, up to float's max, are reduced exactly
    on the device (no CPU fallback, no read back: the op can be captured in an npu graph)."""
    g = torch.Generator().manual_seed(11)
    x = torch.cat([torch.randn(50000, generator=g) * 10, (torch.rand(50000, generator=g) - 0.5) * 16000,
                   torch.tensor([0.0, -0.0, math.pi, -math.pi, math.pi / 2, 8191.9, -8191.9,
                                 float("inf"), -float("inf"), float("nan")])])
    got, want = fn(npu(x)).cpu(), fn(x)
    assert torch.equal(got.isnan(), want.isnan())
    assert (got - want).abs().nan_to_num(0).max().item() <= 1.2e-7
    zeros = want == 0
    assert torch.equal(torch.signbit(got[zeros]), torch.signbit(want[zeros]))
    tiny = torch.randn(1000, generator=g) * 1e-4
    if fn is torch.sin:
        assert ((fn(npu(tiny)).cpu() - fn(tiny)).abs() / fn(tiny).abs()).max().item() <= 2e-7
    for dt in (torch.float16, torch.bfloat16):
        h = (torch.randn(5000, generator=g) * 5).to(dt)
        assert torch.equal(fn(npu(h)).cpu(), fn(h))
    y = npu(x[:100]).clone()
    getattr(y, fn.__name__ + "_")()
    assert torch.allclose(y.cpu(), fn(x[:100]), atol=1.2e-7, rtol=0)
    out = npu(torch.empty(0))
    fn(npu(x[:100]), out=out)
    assert torch.allclose(out.cpu(), fn(x[:100]), atol=1.2e-7, rtol=0)
    w = torch.randn(64, generator=g, requires_grad=True)
    wn = w.detach().npu().requires_grad_()
    fn(w).sum().backward()
    fn(wn).sum().backward()
    assert torch.allclose(wn.grad.cpu(), w.grad, atol=2e-7, rtol=0)
    # Every exponent from 2^13 to 2^127, both signs, mixed into tiles with small arguments; against
    # float64 (the CPU's float result is itself within 4e-8 of it).
    monkeypatch.setenv("TORCH_OPS_NN_FALLBACK", "error")
    e = torch.randint(13, 128, (60000,), generator=g).double()
    big = ((torch.rand(60000, generator=g).double() + 1) * torch.pow(2.0, e)).float()
    big = big * torch.where(torch.rand(60000, generator=g) < 0.5, -1.0, 1.0)
    big = torch.cat([big, torch.tensor([8192.0, -8192.0, 1e5, -2.5e4, 1e30, 3.4028235e38, -3.4028235e38,
                                        float("inf"), float("nan")]), torch.randn(3000, generator=g)])
    big = big[torch.randperm(big.numel(), generator=g)]
    got, want = fn(npu(big)).cpu().double(), fn(big.double())
    assert torch.equal(got.isnan(), want.isnan())
    assert (got - want).abs().nan_to_num(0).max().item() <= 1.5e-7
    for dt in (torch.float16, torch.bfloat16):  # 16-bit values up to 65504 / 3e38
        h = big.clamp(-60000, 60000).to(dt) if dt == torch.float16 else big.to(dt)
        got16, want16 = fn(npu(h)).cpu().double(), fn(h.double())
        assert (got16 - want16).abs().nan_to_num(0).max().item() <= torch.finfo(dt).eps
    graph, static = torch.npu.NPUGraph(), npu(big)
    with torch.npu.graph(graph):
        captured = fn(static)
    static.mul_(-1)
    graph.replay()
    assert (captured.cpu().double() - fn(-big.double())).abs().nan_to_num(0).max().item() <= 1.5e-7


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_nextafter_matches_cpu_bit_for_bit(dtype):
    # torch.nextafter took the CPU fallback; on the bits: zeros, subnormals, infinities, NaN, signs, equal
    info = torch.finfo(dtype)
    vals = torch.tensor([0.0, -0.0, 1.0, -1.0, 2.5, -3.75, info.max, -info.max, info.tiny, -info.tiny,
                         info.tiny / 4, float("inf"), float("-inf"), float("nan"), 1e-3, -7.0], dtype=dtype)
    a = vals.repeat_interleave(len(vals))
    b = vals.repeat(len(vals))
    ref = torch.nextafter(a, b)
    out = torch.nextafter(npu(a), npu(b)).cpu()
    same = (out.view(torch.int16 if dtype != torch.float32 else torch.int32) ==
            ref.view(torch.int16 if dtype != torch.float32 else torch.int32)) | (out.isnan() & ref.isnan())
    assert bool(same.all()), (a[~same], b[~same], out[~same], ref[~same])
    x = npu(torch.tensor([1.0, 2.0], dtype=dtype))
    x.nextafter_(npu(torch.tensor([2.0], dtype=dtype)))                      # in place, broadcast other
    assert torch.equal(x.cpu(), torch.nextafter(torch.tensor([1.0, 2.0], dtype=dtype), torch.tensor([2.0], dtype=dtype)))
    o = npu(torch.empty(0, dtype=dtype))
    torch.nextafter(npu(torch.ones(3, dtype=dtype)), npu(torch.zeros(3, dtype=dtype)), out=o)
    assert torch.equal(o.cpu(), torch.nextafter(torch.ones(3, dtype=dtype), torch.zeros(3, dtype=dtype)))
    with pytest.raises(TypeError, match="nextafter: expected floating inputs"):
        torch.nextafter(npu(torch.ones(2, dtype=torch.int32)), npu(torch.ones(2, dtype=torch.int32)))
    with pytest.raises(NotImplementedError, match=r"aten::nextafter.*TORCH_OPS_NN_FALLBACK=error"):  # float64
        torch.nextafter(npu(torch.ones(2, dtype=torch.float64)), npu(torch.zeros(2, dtype=torch.float64)))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_negative_zero_scalar_operands(dtype):
    """A scalar operand of -0.0 keeps its sign through the vector broadcast: x * -0.0, x + -0.0 and
    clamp / hardtanh bounds of -0.0 give the CPU's signed zeros bit for bit."""
    x = torch.tensor([1.0, -2.0, 0.0, -0.0, 3.5, float("inf"), -1e-30] * 50, dtype=dtype)
    bits = torch.int32 if dtype == torch.float32 else torch.int16
    for fn in (lambda t: t * -0.0, lambda t: t + -0.0, lambda t: t.clamp(min=-0.0), lambda t: t.clamp(max=-0.0),
               lambda t: F.hardtanh(t, -0.0, 0.5), lambda t: torch.mul(t, -0.0).add_(-0.0)):
        got, want = fn(x.npu()).cpu(), fn(x)
        assert torch.equal(got.isnan(), want.isnan())
        assert torch.equal(got[~got.isnan()].view(bits), want[~want.isnan()].view(bits))


@pytest.mark.parametrize("layout", ["flat", "misaligned", "pitched"])
def test_large_output_written_past_the_cache(layout):
    """Outputs of >= 32 MB that no input shares are written with streaming stores (the L2 cache hint
    off): the flat, 4-byte-misaligned and 2-D pitched (DataCopyPad rows) forms give the CPU's values
    and leave the bytes around the output alone."""
    rows, width = 2900, 3000  # 34.8 MB of float32
    a, b = rand((rows, width), seed=1), rand((rows, width), seed=2)
    want = torch.add(a, b, alpha=0.5)
    ad, bd = a.npu(), b.npu()
    if layout == "flat":
        buf = torch.full((rows * width + 16,), -7.0, device="npu")
        out = buf[:rows * width].view(rows, width)
    elif layout == "misaligned":
        buf = torch.full((rows * width + 16,), -7.0, device="npu")
        out = buf[1:1 + rows * width].view(rows, width)
    else:
        buf = torch.full((rows, width + 5), -7.0, device="npu")
        out = buf[:, 2:2 + width]
    lines = _launch_details(lambda: torch.add(ad, bd, alpha=0.5, out=out))
    assert any("out.no_l2=1" in ln for ln in lines), lines
    torch.testing.assert_close(out.cpu(), want, rtol=0, atol=0)
    rest = buf.cpu()
    if layout == "pitched":
        assert (rest[:, :2] == -7).all() and (rest[:, 2 + width:] == -7).all()
    else:
        off = 0 if layout == "flat" else 1
        assert (rest[:off] == -7).all() and (rest[off + rows * width:] == -7).all()


def test_in_place_and_small_outputs_keep_the_cache():
    """The streaming-store hint is only for large outputs no input shares: an in-place op's output
    lines are already cached by its own read, and small outputs are read back soon."""
    big = torch.ones(9_000_000, device="npu")
    other = torch.ones(9_000_000, device="npu")
    for fn in (lambda: big.add_(other), lambda: torch.add(other[:1000], 1)):
        lines = _launch_details(fn)
        assert lines and not any("out.no_l2=1" in ln for ln in lines), lines
    assert big[:3].tolist() == [2.0, 2.0, 2.0]
