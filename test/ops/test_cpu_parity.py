"""Inputs PyTorch rejects, or accepts only at an edge, behave on npu as on the CPU: the same exception
class (with the rule in the message) or the same result.

The cases come from a differential fuzz of the npu against the CPU (random shapes, dtypes, strides,
empty dims, bad arguments): before, npu computed neg / abs / relu / floor of bool tensors, lerp of mixed
dtypes and argmax / topk of bool, refused addcmul of integers with a float value, raised for an
adaptive pool to size 0 and for a bool loss target, gave huber_loss a promoted dtype, and
index_select of an empty result skipped the index check the CPU makes. A seeded sweep of that fuzz
over the element-wise ops runs here too."""
import random

import pytest
import torch
import torch.nn.functional as F


def outcome(fn, args):
    try:
        return fn(*args), None
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return None, e


def assert_same_outcome(fn, *args, check_dtype=True):
    want, want_err = outcome(fn, args)
    got, got_err = outcome(fn, [a.npu() if isinstance(a, torch.Tensor) else a for a in args])
    if want_err is not None:
        assert got_err is not None, f"CPU raised {want_err!r}, npu returned a result"
        assert isinstance(got_err, type(want_err)), f"CPU raised {want_err!r}, npu {got_err!r}"
        return got_err
    assert got_err is None, f"CPU returned a result, npu raised {got_err!r}"
    torch.npu.synchronize()
    wants = want if isinstance(want, (tuple, list)) else [want]
    gots = got if isinstance(got, (tuple, list)) else [got]
    for w, g in zip(wants, gots):
        assert g.device.type == "npu"
        torch.testing.assert_close(g.cpu(), w, check_dtype=check_dtype, equal_nan=True, atol=2e-2, rtol=2e-2)
    return None


BOOL = torch.tensor([[True, False, True], [False, False, True]])


@pytest.mark.parametrize("name,fn", [
    ("neg", torch.neg), ("abs", torch.abs), ("relu", torch.relu), ("floor", torch.floor), ("ceil", torch.ceil),
    ("trunc", torch.trunc), ("round", torch.round), ("fix", torch.fix), ("hardtanh", F.hardtanh),
    ("relu6", F.relu6), ("argmax", torch.argmax), ("argmin", lambda x: torch.argmin(x, 1)),
    ("topk", lambda x: torch.topk(x, 1)),
    ("neg_", lambda x: x.clone().neg_()), ("abs.out", lambda x: torch.abs(x, out=torch.empty_like(x))),
])
def test_bool_input_refused_as_on_cpu(name, fn):
    err = assert_same_outcome(fn, BOOL)
    assert err is not None
    # the process keeps working and the same ops still run on other dtypes
    assert_same_outcome(fn, BOOL.float() - 0.5)


def test_bool_refusal_names_the_rule():
    with pytest.raises(NotImplementedError, match="Negation, the `-` operator, on a bool tensor"):
        -BOOL.npu()
    with pytest.raises(NotImplementedError, match="Boolean inputs not supported for relu"):
        torch.relu(BOOL.npu())
    with pytest.raises(RuntimeError, match=r"argmax\(\): does not support bool input"):
        torch.argmax(BOOL.npu())


@pytest.mark.parametrize("fn", [torch.logical_not, torch.sign, lambda x: torch.clamp(x, 0, 1), torch.max,
                                lambda x: torch.cumsum(x, 0), lambda x: x * x, torch.sum])
def test_bool_input_still_accepted_where_cpu_accepts(fn):
    assert assert_same_outcome(fn, BOOL) is None


def test_hardtanh_unsigned_negative_limit():
    x = torch.tensor([0, 3, 200], dtype=torch.uint8)
    err = assert_same_outcome(lambda t: F.hardtanh(t, -1.0, 5.0), x)
    assert "unsigned type with negative limits" in str(err)
    assert assert_same_outcome(lambda t: F.hardtanh(t, 1.0, 5.0), x) is None
    assert assert_same_outcome(lambda t: F.hardtanh(t, -0.5, 5.0), x) is None  # truncated to 0, as the CPU


@pytest.mark.parametrize("a,b", [(torch.float32, torch.int64), (torch.bfloat16, torch.float32),
                                 (torch.float16, torch.bfloat16), (torch.float32, torch.bool)])
def test_lerp_mixed_dtypes_refused(a, b):
    x, y = torch.randn(3, 4).to(a), torch.randn(3, 4).to(b)
    err = assert_same_outcome(lambda s, e: torch.lerp(s, e, 0.3), x, y)
    assert "for `end`" in str(err)
    w = torch.rand(3, 4).to(b)
    err = assert_same_outcome(lambda s, e, w: torch.lerp(s, e, w), x, x.clone(), w)
    assert "for `weight`" in str(err)
    assert assert_same_outcome(lambda s, e: torch.lerp(s, e, 0.3), x, x * 2) is None


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.uint8])
@pytest.mark.parametrize("value", [0.5, -2.7, 3.0, 2])
def test_addcmul_integers_float_value_truncated_as_cpu(dtype, value):
    s = torch.randint(0, 20, (4, 5)).to(dtype)
    t1, t2 = torch.randint(0, 5, (4, 5)).to(dtype), torch.randint(0, 5, (1, 5)).to(dtype)
    # uint8 refuses a negative float value (PyTorch's overflow check); every other case computes
    refused = dtype == torch.uint8 and isinstance(value, float) and value < 0
    err = assert_same_outcome(lambda a, b, c: torch.addcmul(a, b, c, value=value), s, t1, t2)
    assert (err is not None) == refused
    err = assert_same_outcome(lambda a, b, c: a.clone().addcmul_(b, c, value=value), s, t1, t2)
    assert (err is not None) == refused


def test_addcmul_integer_value_overflow_is_an_error():
    s = torch.ones(3, dtype=torch.int64).npu()
    with pytest.raises(RuntimeError, match="cannot be converted to type"):
        torch.addcmul(s, s, s, value=float("inf"))


@pytest.mark.parametrize("op", ["avg", "max"])
@pytest.mark.parametrize("size", [0, (0, 2), (3, 0)])
def test_adaptive_pool_to_size_zero_is_empty(op, size):
    fn = (lambda x: F.adaptive_avg_pool2d(x, size)) if op == "avg" else \
        (lambda x: F.adaptive_max_pool2d(x, size, return_indices=True))
    assert assert_same_outcome(fn, torch.randn(2, 3, 5, 7)) is None
    assert assert_same_outcome(fn, torch.randn(3, 5, 7)) is None


@pytest.mark.parametrize("op", ["avg", "max"])
def test_adaptive_pool_negative_size_refused(op):
    fn = F.adaptive_avg_pool2d if op == "avg" else F.adaptive_max_pool2d
    with pytest.raises(RuntimeError, match="greater than or equal to 0"):
        fn(torch.randn(1, 2, 4, 4).npu(), (-1, 2))


def test_adaptive_max_pool_empty_input_dim_refused_before_size_zero():
    err = assert_same_outcome(lambda x: F.adaptive_max_pool2d(x, 0), torch.randn(2, 3, 0, 7))
    assert err is not None and "non-zero size" in str(err)


@pytest.mark.parametrize("out", [1, 2, (1, 3)])
def test_adaptive_pools_accept_an_empty_leading_dim(out):
    # (0, H, W): no channels of a 3-D input; (0, C, H, W): an empty batch.
    for shape in ((0, 2, 6), (0, 3, 4, 6)):
        for fn in (F.adaptive_max_pool2d, F.adaptive_avg_pool2d):
            assert assert_same_outcome(lambda x: fn(x, out), torch.randn(shape)) is None


@pytest.mark.parametrize("loss", [F.mse_loss, F.l1_loss, F.smooth_l1_loss, F.huber_loss])
@pytest.mark.parametrize("reduction", ["none", "mean"])
def test_loss_with_bool_target(loss, reduction):
    x = torch.randn(4, 6, dtype=torch.float16)
    t = torch.rand(4, 6) > 0.5
    err = assert_same_outcome(lambda a, b: loss(a, b, reduction=reduction), x, t)
    # l1_loss is PyTorch's composite of a subtraction, which refuses bool (NotImplementedError) there too
    assert (err is not None) == (loss is F.l1_loss)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_huber_loss_keeps_self_dtype(reduction):
    x = torch.randn(3, 5, dtype=torch.bfloat16)
    t = torch.randn(3, 5, dtype=torch.float16)
    got = F.huber_loss(x.npu(), t.npu(), reduction=reduction)
    assert got.dtype == F.huber_loss(x, t, reduction=reduction).dtype == torch.bfloat16
    assert assert_same_outcome(lambda a, b: F.huber_loss(a, b, reduction=reduction), x, t) is None


@pytest.mark.parametrize("shape,dim,index", [((0, 3), 1, [5]), ((0, 3), 1, [-1]), ((4, 0), 0, [7]),
                                             ((0, 3), 1, [2, 0]), ((4, 0), 0, [3])])
def test_index_select_empty_result_checks_indices(shape, dim, index):
    x, i = torch.randn(shape), torch.tensor(index)
    err = assert_same_outcome(lambda a, b: torch.index_select(a, dim, b), x, i)
    in_range = all(0 <= v < shape[dim] for v in index)
    assert (err is None) == in_range
    if err is not None:
        assert "index out of range" in str(err)
    # embedding (an index_select of the weight's rows) the same way
    w = torch.randn(shape[dim], 0)
    assert (assert_same_outcome(F.embedding, i, w) is None) == in_range


def test_advanced_index_empty_result_does_not_check_range_as_cpu():
    x = torch.randn(2, 0)
    assert assert_same_outcome(lambda a, b: a[b], x, torch.tensor([5, 1])) is None
    err = assert_same_outcome(lambda a, b: a[b], torch.randn(0, 3), torch.tensor([1]))
    assert err is not None


@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put_into_size_zero_dim_refused(accumulate):
    x, i = torch.zeros(0, 5), torch.tensor([1])
    err = assert_same_outcome(lambda a, b, v: a.clone().index_put_((b,), v, accumulate), x, i, torch.ones(1, 5))
    assert isinstance(err, IndexError)
    # an empty target along another dim is not range-checked (nothing is written), as on the CPU
    x, i = torch.zeros(2, 0), torch.tensor([5])
    assert assert_same_outcome(lambda a, b, v: a.clone().index_put_((b,), v, accumulate), x, i,
                               torch.ones(1, 0)) is None


# ---- a seeded differential sweep of the element-wise ops (what found the cases above)

UNARY = ["abs", "neg", "exp", "log", "sqrt", "sigmoid", "tanh", "relu", "floor", "ceil", "round", "trunc", "sign",
         "reciprocal", "rsqrt", "log1p", "expm1", "erf", "logical_not", "bitwise_not", "isnan", "square", "frac",
         "nan_to_num", "signbit", "argmax", "sum", "mean", "amax", "prod", "any", "all"]
BINARY = ["add", "sub", "mul", "div", "maximum", "minimum", "eq", "lt", "ge", "pow", "remainder", "fmod",
          "floor_divide", "atan2", "bitwise_and", "logical_or", "hypot", "copysign", "fmax", "xlogy"]
DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.int32, torch.int64, torch.bool, torch.uint8]


def random_tensor(rng, shape, dtype):
    if dtype.is_floating_point:
        t = torch.randn(shape) * rng.choice([1.0, 100.0, 1e-3])
    elif dtype == torch.bool:
        t = torch.rand(shape) > 0.5
    elif dtype == torch.uint8:
        t = torch.randint(0, 255, shape)
    else:
        t = torch.randint(-50, 50, shape)
    t = t.to(dtype)
    if t.dim() >= 2 and rng.random() < 0.3:  # a non-contiguous operand
        t = t.transpose(0, -1).contiguous().transpose(0, -1)
    return t


@pytest.mark.parametrize("seed", range(4))
def test_elementwise_sweep_matches_cpu(seed):
    rng = random.Random(seed)
    torch.manual_seed(seed)
    for _ in range(60):
        shape = [rng.choice([0, 1, 2, 3, 7, 33]) for _ in range(rng.choice([0, 1, 2, 3]))]
        a = random_tensor(rng, shape, rng.choice(DTYPES))
        if rng.random() < 0.5:
            op = rng.choice(UNARY)
            args = (a,)
            fn = getattr(torch, op)
        else:
            op = rng.choice(BINARY)
            bshape = [1 if rng.random() < 0.3 else s for s in shape]
            args = (a, random_tensor(rng, bshape, rng.choice(DTYPES)))
            fn = getattr(torch, op)
        want, want_err = outcome(fn, args)
        got, got_err = outcome(fn, [t.npu() for t in args])
        what = f"{op}{tuple((tuple(t.shape), t.dtype) for t in args)}"
        assert (want_err is None) == (got_err is None), f"{what}: CPU {want_err!r}, npu {got_err!r}"
        if want_err is None:
            tol = {torch.float16: 2e-2, torch.bfloat16: 5e-2}.get(want.dtype, 1e-4)
            torch.testing.assert_close(got.cpu(), want, atol=tol, rtol=tol, equal_nan=True, msg=what)


# ---- dtype= / out= semantics (a second fuzz over scalars, out=, in-place and dtype= arguments)

@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.int16])
def test_scan_with_integer_dtype_casts_the_input_first(op, dtype):
    x = torch.tensor([[-1.7, -2.6, 0.9, -5.5, 3.99], [2.5, 1.5, -0.5, 1.9, -3.2]], dtype=torch.float16)
    assert assert_same_outcome(lambda t: getattr(torch, op)(t, 1, dtype=dtype), x) is None
    assert assert_same_outcome(lambda t: getattr(torch, op)(t, 0, dtype=dtype), x) is None
    out = torch.empty(0, dtype=dtype)
    assert assert_same_outcome(lambda t, o: getattr(torch, op)(t, 1, dtype=dtype, out=o), x, out) is None


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.float16])
def test_prod_with_dtype_casts_the_input_first(dtype):
    x = torch.tensor([[-1.7, -2.6, 0.9], [-5.5, 1.2, 2.9]])
    assert assert_same_outcome(lambda t: torch.prod(t, dtype=dtype), x) is None
    assert assert_same_outcome(lambda t: torch.prod(t, 1, dtype=dtype), x) is None


@pytest.mark.parametrize("op", ["add", "mul", "sub", "div", "pow"])
@pytest.mark.parametrize("half", [torch.float16, torch.bfloat16])
def test_half_result_into_float_out_is_rounded_as_cpu(op, half):
    # the common dtype is float16 / bfloat16: PyTorch computes there and casts to the float32 out
    a = (torch.rand(64) * 900 + 100).to(half)
    b = (torch.rand(64) * 3 + 0.5).to(half) if op != "add" else torch.randint(0, 255, (64,), dtype=torch.uint8)
    want = getattr(torch, op)(a, b, out=torch.empty(0))
    got = getattr(torch, op)(a.npu(), b.npu(), out=torch.empty(0, device="npu"))
    assert got.dtype == torch.float32
    assert torch.equal(got.cpu().to(half).float(), got.cpu()), "not rounded through the common dtype"
    torch.testing.assert_close(got.cpu(), want, atol=0, rtol=2 ** -7)


@pytest.mark.parametrize("dtype,value", [(torch.uint8, -1.25), (torch.uint8, 300), (torch.float16, 1e10),
                                         (torch.int8, 200), (torch.uint8, -1), (torch.float16, float("inf"))])
def test_masked_fill_value_conversion_as_cpu(dtype, value):
    x = torch.tensor([1, 2, 3]).to(dtype)
    err = assert_same_outcome(lambda t: t.masked_fill(t > 1, value), x)
    fits = value in (-1, float("inf"))  # -1 wraps to 255 for uint8 as on the CPU; inf is a float16
    assert (err is None) == fits
    if err is not None:
        assert "without overflow" in str(err)


@pytest.mark.parametrize("lo,hi", [(True, 1e10), (1e10, None), (None, -1e10), (-1.0, 1e3)])
def test_clamp_float16_bound_conversion_as_cpu(lo, hi):
    x = torch.tensor([1.0, 2.0, -3.0], dtype=torch.float16)
    err = assert_same_outcome(lambda t: torch.clamp(t, lo, hi), x)
    assert (err is None) == ((lo, hi) == (-1.0, 1e3))


def test_clamp_of_bool_with_bool_bounds_refused():
    err = assert_same_outcome(lambda t: torch.clamp(t, False, True), BOOL)
    assert isinstance(err, NotImplementedError)
    assert assert_same_outcome(lambda t: torch.clamp(t, 0, 1), BOOL) is None  # int bounds promote


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32])
@pytest.mark.parametrize("s", [0.1, 7.7, 1e10])
def test_remainder_fmod_python_scalar_rounded_to_dtype(dtype, s):
    # the CPU converts the scalar to the tensor's dtype first (float16's 0.1 is 0.0999755859375)
    t = (torch.randn(4096) * 10).to(dtype)
    for fn in (lambda a: torch.remainder(a, s), lambda a: torch.remainder(s, a), lambda a: torch.fmod(a, s)):
        want, got = fn(t), fn(t.npu()).cpu()
        assert torch.equal(want.isnan(), got.isnan())
        assert torch.equal(want.nan_to_num(0), got.nan_to_num(0))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("e", [0.1, 1.7, 2.5, 1.3333, -0.7])
def test_pow_python_exponent_rounded_to_dtype(dtype, e):
    t = (torch.rand(4096) * 10 + 0.01).to(dtype)
    want, got = torch.pow(t, e), torch.pow(t.npu(), e).cpu()
    torch.testing.assert_close(got, want, atol=0, rtol=2 ** -8 if dtype == torch.float16 else 2 ** -7)
    # the exponent the CPU uses is the dtype's: npu's result is that power, not the exact one's
    exact = torch.pow(t.double(), e).to(dtype)
    rounded = torch.pow(t.double(), float(torch.tensor(e).to(dtype))).to(dtype)
    if not torch.equal(exact, rounded):
        assert (got.double() - rounded.double()).abs().sum() < (got.double() - exact.double()).abs().sum()


def test_pow_python_base_rounded_to_dtype():
    t = torch.tensor([0.5, 2.0, -1.0, 0.0], dtype=torch.float16)
    assert assert_same_outcome(lambda a: torch.pow(1e10, a), t) is None  # float16's inf ** t
    assert assert_same_outcome(lambda a: torch.pow(3.3, a), t) is None


# ---- found by scripts/parity_fuzz.py

@pytest.mark.parametrize("dtype", [torch.int32, torch.uint8, torch.bool, torch.int64])
def test_mean_of_integers_with_float_dtype(dtype):
    x = torch.randint(0, 9, (6, 5)).to(dtype)
    assert assert_same_outcome(lambda t: torch.mean(t, dtype=torch.float32), x) is None
    assert assert_same_outcome(lambda t: torch.mean(t, 1, dtype=torch.float16), x) is None
    assert assert_same_outcome(lambda t: torch.mean(t), x) is not None  # no dtype: refused as on the CPU


@pytest.mark.parametrize("fn", [torch.atan2, torch.hypot, torch.nextafter, torch.logaddexp, torch.copysign,
                                lambda a, b: torch.heaviside(a, b.to(a.dtype) if b.dim() == 0 else b)])
def test_cpu_zero_dim_operand_is_a_scalar(fn):
    t = torch.tensor([1.0, -2.0, 0.0, 3.5], dtype=torch.float16)
    s = torch.tensor(0.5, dtype=torch.float16)
    assert assert_same_outcome(lambda x: fn(s, x), t) is None
    assert assert_same_outcome(lambda x: fn(x, s), t) is None


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_hypot_logaddexp_half_rounded_once(dtype):
    a, b = (torch.randn(4096) * 10).to(dtype), (torch.randn(4096) * 10).to(dtype)
    for fn in (torch.hypot, torch.logaddexp):
        want, got = fn(a, b), fn(a.npu(), b.npu()).cpu()
        assert (want != got).sum().item() <= 4  # float32 math rounded once, as the CPU (was ~1/3 off by an ulp)


@pytest.mark.parametrize("dtype,out_dtype", [(torch.int8, torch.int64), (torch.uint8, torch.int32),
                                             (torch.int16, torch.int64), (torch.int32, torch.int64)])
def test_small_integer_result_wraps_before_a_wider_out(dtype, out_dtype):
    info = torch.iinfo(dtype)
    a = torch.tensor([info.max, info.min, 3, 100 % (info.max + 1)], dtype=dtype)
    b = torch.tensor([7, 3, info.max, 2], dtype=dtype)
    for op in ("mul", "add", "sub"):
        assert assert_same_outcome(lambda x, y: getattr(torch, op)(x, y, out=torch.empty(0, dtype=out_dtype,
                                                                                      device=x.device)), a, b) is None


def test_pow_exponent_overflowing_half_refused():
    t = torch.tensor([1.0, 2.0], dtype=torch.float16)
    err = assert_same_outcome(lambda x: torch.pow(x, 1e10), t)
    assert err is not None and "without overflow" in str(err)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("s", [0.1, 7.7, 1e-3])
def test_host_scalar_position_rules(dtype, s):
    # PyTorch keeps a host scalar in float only as the second operand of mul / div / floor and trunc
    # division (their CPU kernels special-case it); as the first operand it is converted to the dtype.
    # trunc with a scalar divisor truncates the float quotient (tensor divisors: the rounded quotient).
    t = (torch.randn(4096) * 10).to(dtype)
    sc = torch.tensor(s)
    cases = [lambda x: torch.mul(sc, x), lambda x: torch.div(sc, x), lambda x: x * s, lambda x: x / s,
             lambda x: torch.div(x, s, rounding_mode="trunc"), lambda x: torch.div(sc, x, rounding_mode="trunc"),
             lambda x: torch.floor_divide(x, s), lambda x: s - x, lambda x: s * x]
    for fn in cases:
        want, got = fn(t), fn(t.npu()).cpu()
        assert torch.equal(want.isnan(), got.isnan())
        assert torch.equal(want.nan_to_num(0), got.nan_to_num(0))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_of_an_empty_batch_without_classes(reduction):
    # (0, 0) logits: the CPU returns the empty reduction (NaN / 0 / []); with samples, no classes is an error
    x, t = torch.zeros(0, 0), torch.zeros(0, dtype=torch.long)
    assert assert_same_outcome(lambda a, b: F.cross_entropy(a, b, reduction=reduction), x, t) is None
    with pytest.raises(RuntimeError, match="no classes"):
        F.nll_loss(torch.zeros(2, 0).npu(), torch.zeros(2, dtype=torch.long).npu())


@pytest.mark.parametrize("shape", [(1, 0, 4, 4), (0, 3, 4, 4), (0, 5, 5)])
def test_adaptive_avg_pool_with_no_channels_is_empty(shape):
    # The forward checks only H and W: no channels (or no batch) gives an empty result. The backward
    # refuses an empty channel dim in grad_output (ATen's check on every backend), so as the CPU.
    x = torch.randn(shape)
    assert assert_same_outcome(lambda t: F.adaptive_avg_pool2d(t, (2, 3)), x) is None
    for overlap in ((2, 3), (6, 7)):  # windows inside / larger than the input (the matmul backward)
        def backward(t):
            t = t.detach().requires_grad_()
            F.adaptive_avg_pool2d(t, overlap).sum().backward()
            return t.grad
        assert_same_outcome(backward, x)  # (both raise for shape (1, 0, 4, 4), else the same gradient)


@pytest.mark.parametrize("fn", [
    lambda t: F.interpolate(t, scale_factor=2), lambda t: F.interpolate(t, size=(5, 3)),
    lambda t: F.interpolate(t, scale_factor=2, mode="nearest-exact"),
    lambda t: F.interpolate(t, scale_factor=2, mode="bilinear"), lambda t: F.interpolate(t, scale_factor=2, mode="bicubic"),
    lambda t: F.interpolate(t, scale_factor=2, mode="bilinear", antialias=True)])
def test_upsample_of_no_channels_refused_as_cpu(fn):
    # Only the batch may be empty ("Non-empty 4D data tensor expected"); npu returned an empty result.
    err = assert_same_outcome(fn, torch.randn(1, 0, 4, 4))
    assert err is not None and "Non-empty 4D data tensor" in str(err)
    assert assert_same_outcome(fn, torch.randn(0, 2, 4, 4)) is None


@pytest.mark.parametrize("mode", ["nearest", "trilinear"])
def test_upsample_3d_of_no_channels_refused_as_cpu(mode):
    err = assert_same_outcome(lambda t: F.interpolate(t, scale_factor=2, mode=mode), torch.randn(1, 0, 2, 3, 4))
    assert err is not None and "Non-empty 5D data tensor" in str(err)


@pytest.mark.parametrize("int_dtype", [torch.int64, torch.int32, torch.int16, torch.uint8])
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_integer_operand_takes_the_half_dtype_first(int_dtype, dtype):
    # An integer tensor beside a float16 / bfloat16 one is converted to that dtype before the op, as
    # PyTorch computes on the common dtype's values (28864 is 28928 in bfloat16): the kernel read it
    # exactly into float, and a quarter of int64 x bfloat16 products were an ulp off.
    g = torch.Generator().manual_seed(3)
    lo, hi = (0, 255) if int_dtype == torch.uint8 else (-30000, 30000)
    a = torch.randint(lo, hi, (4096,), generator=g).to(int_dtype)
    b = (torch.randn(4096, generator=g) * 3).to(dtype)
    for fn in (torch.add, torch.sub, torch.mul, torch.div, lambda x, y: torch.mul(y, x)):
        want, got = fn(a, b), fn(a.npu(), b.npu()).cpu()
        assert got.dtype == want.dtype
        assert torch.equal(got, want)


def test_complex_family_of_the_parity_fuzz_finds_nothing():
    """scripts/parity_fuzz.py --family complex, 400 cases: complex64 math, products and scalars beside
    real and complex128 operands and conjugate views give the CPU's outcome (value, dtype, shape or
    error). It found the empty complex matmul and complex - bool cases when first run."""
    import importlib.util
    import pathlib
    path = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "parity_fuzz.py"
    spec = importlib.util.spec_from_file_location("parity_fuzz", path)
    fuzz = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fuzz)
    fz = fuzz.Fuzz(29)
    found = [m for m in (fuzz.run_case(*fz.complex(), with_grad=False) for _ in range(400)) if m]
    assert not found, found[:5]


_REDUCTIONS = [
    ("sum", lambda t, d, k: t.sum(d, keepdim=k)), ("prod", lambda t, d, k: t.prod(d, keepdim=k)),
    ("amax", lambda t, d, k: t.amax(d, keepdim=k)), ("amin", lambda t, d, k: t.amin(d, keepdim=k)),
    ("max", lambda t, d, k: t.max(d, keepdim=k)), ("argmin", lambda t, d, k: t.argmin(d, keepdim=k)),
    ("mean", lambda t, d, k: t.float().mean(d, keepdim=k)), ("std", lambda t, d, k: t.float().std(d, keepdim=k)),
    ("any", lambda t, d, k: t.any(d, keepdim=k)), ("all", lambda t, d, k: t.all(d, keepdim=k)),
    ("count_nonzero", lambda t, d, k: t.count_nonzero(d)), ("cumsum", lambda t, d, k: t.cumsum(d)),
    ("cummax", lambda t, d, k: t.cummax(d)), ("logcumsumexp", lambda t, d, k: t.float().logcumsumexp(d)),
    ("softmax", lambda t, d, k: t.float().softmax(d)), ("sort", lambda t, d, k: t.sort(dim=d, stable=True)),
    ("sort_descending", lambda t, d, k: t.sort(dim=d, descending=True, stable=True)),
    ("argsort", lambda t, d, k: t.argsort(dim=d, stable=True)), ("flip", lambda t, d, k: t.flip(d)),
    ("roll", lambda t, d, k: t.roll(3, d)), ("norm", lambda t, d, k: t.float().norm(dim=d, keepdim=k)),
    ("logsumexp", lambda t, d, k: t.float().logsumexp(d, keepdim=k)), ("diff", lambda t, d, k: t.diff(dim=d)),
    ("repeat_interleave", lambda t, d, k: t.repeat_interleave(2, d)), ("tril", lambda t, d, k: t.tril(1)),
    ("where", lambda t, d, k: torch.where(t > 0, t, t * 0)), ("nonzero", lambda t, d, k: t.nonzero()),
    ("masked_select", lambda t, d, k: t[t > 0]), ("unique", lambda t, d, k: torch.unique(t, sorted=True)),
    ("quantile", lambda t, d, k: t.float().quantile(0.3, d) if t.dim() else t.float()),
    ("index_select", lambda t, d, k: t.index_select(d, torch.tensor([0], device=t.device))),
    ("gather", lambda t, d, k: t.gather(d, torch.zeros_like(t, dtype=torch.long))),
]


def _random_view(rng, dtype):
    t = random_tensor(rng, [rng.choice([1, 2, 3, 5, 7, 16, 33]) for _ in range(rng.randint(0, 4))], dtype)
    r = rng.random()
    if t.dim() >= 2 and r < 0.25:
        return t.transpose(0, -1)
    if t.dim() >= 1 and r < 0.4 and t.shape[0] > 1:
        return t[::2]
    if t.dim() == 4 and r < 0.55:
        return t.contiguous(memory_format=torch.channels_last)
    return t


@pytest.mark.parametrize("seed", range(4))
def test_reductions_over_views_sweep_matches_cpu(seed):
    # Dim reductions, scans and sorts over transposed / strided / channels_last views. (Expanded
    # inputs are left out: the CPU's median / sort over a stride-0 dim give wrong values.)
    rng = random.Random(seed)
    torch.manual_seed(seed)
    for case in range(120):
        name, fn = rng.choice(_REDUCTIONS)
        dtype = rng.choice(DTYPES + [torch.int8])
        t = _random_view(rng, dtype)
        d = rng.randint(-t.dim(), t.dim() - 1) if t.dim() else 0
        keep = rng.random() < 0.5
        what = f"seed {seed} case {case}: {name} {dtype} shape {tuple(t.shape)} stride {t.stride()} dim {d} keepdim {keep}"
        try:
            want = fn(t, d, keep)
        except (RuntimeError, IndexError, NotImplementedError) as e:
            with pytest.raises((RuntimeError, IndexError, NotImplementedError)):
                fn(t.npu(), d, keep)
                torch.npu.synchronize()
            continue
        got = fn(t.npu(), d, keep)
        wants = want if isinstance(want, (tuple, list)) else (want,)
        gots = got if isinstance(got, (tuple, list)) else (got,)
        for g, w in zip(gots, wants):
            g = g.cpu()
            assert g.shape == w.shape and g.dtype == w.dtype, what
            if w.dtype.is_floating_point:
                tol = {torch.float16: 1e-2, torch.bfloat16: 5e-2}.get(w.dtype, 1e-4)
                torch.testing.assert_close(g, w, rtol=tol, atol=tol, equal_nan=True, msg=what)
            else:
                assert torch.equal(g, w), what


def test_empty_edges_from_the_bad_argument_fuzz():
    """Found by a fuzz of random (often invalid) arguments against the CPU: roll of an empty tensor
    returns it before any dim check, and one_hot of an empty tensor needs num_classes > 0."""
    for shape, shift, dim in [((0, 2), 7, 4), ((0,), 1, -4), ((2, 0), -3, 1)]:
        x = torch.randn(shape)
        assert torch.roll(x.npu(), shift, dim).shape == torch.roll(x, shift, dim).shape
    e = torch.zeros(2, 0, dtype=torch.long)
    for n in (0, -1):
        with pytest.raises(RuntimeError, match="Can not infer total number of classes from empty tensor"):
            F.one_hot(e.npu(), n)
    assert F.one_hot(e.npu(), 3).shape == F.one_hot(e, 3).shape


def test_integer_operands_of_float_only_ops_behave_as_on_cpu():
    """cdist with an integer X2 and embedding_bag with an integer table computed on npu where the CPU
    refuses; they now take the dtype gate (the CPU fallback: the CPU's own error)."""
    x1, x2 = torch.randn(1, 3), torch.randint(0, 3, (2, 5, 3), dtype=torch.int32)
    with pytest.raises(RuntimeError, match="cdist only supports floating-point dtypes, X2 got: Int"):
        torch.cdist(x1.npu(), x2.npu())
    with pytest.raises(RuntimeError, match="'weight' to have one of the following scalar types"):
        F.embedding_bag(torch.tensor([0, 1]).npu(), torch.ones(5, 2, dtype=torch.long).npu(), torch.tensor([0]).npu())


@pytest.mark.parametrize("shape,pad,mode", [((0, 5, 5), [1, 1, 1, 1], "reflect"), ((0, 2, 5, 5), [1, 1, 1, 1], "reflect"),
                                            ((2, 0, 5, 5), [1, 1, 1, 1], "replicate"), ((0, 3, 4), [1, 1], "replicate"),
                                            ((3, 0, 4), [1, 1], "reflect")])
def test_pad_of_empty_channel_dims_as_cpu(shape, pad, mode):
    """Reflect / replicate padding allow an empty batch dim only (an empty channel dim padded to empty)."""
    want, werr = outcome(lambda x: F.pad(x, pad, mode=mode), [torch.randn(shape)])
    got, gerr = outcome(lambda x: F.pad(x, pad, mode=mode), [torch.randn(shape).npu()])
    assert type(gerr) is type(werr)
    if werr is None:
        assert got.shape == want.shape


@pytest.mark.parametrize("pool", [F.adaptive_max_pool2d, F.adaptive_avg_pool2d])
def test_adaptive_pool_backward_of_an_empty_output_refused_as_cpu(pool):
    """ATen's adaptive-pool backward refuses a grad_output with an empty non-batch dim (the forward to
    a size-0 output is fine); npu returned zeros."""
    x = torch.randn(5, 3, 5, requires_grad=True)
    xd = x.detach().npu().requires_grad_()
    for t in (x, xd):
        y = pool(t, [2, 0])
        y = y[0] if isinstance(y, tuple) else y
        assert y.shape == (5, 2, 0)
        with pytest.raises(RuntimeError, match="Expected grad_output to have non-zero size for non-batch dimensions"):
            y.sum().backward()
