"""Integer elementwise ops on npu against PyTorch's CPU results, bit for bit: uint8 / int8 / int16
arithmetic wrapping to their width, comparisons with wrapped scalars, bitwise and / or / xor / not,
shifts by scalars and by tensors (amounts outside [0, width) as the CPU treats them), sign, integer
pow, exact int64 mul / add with alpha / pow / shifts, in-place and out= forms, broadcasting,
strided inputs, and the bad-input errors.
"""
import pytest
import torch

import torch_ops_nn  # noqa: F401

pytestmark = pytest.mark.usefixtures("fallback_error")

LIMITS = {torch.uint8: (0, 256), torch.int8: (-128, 128), torch.int16: (-32768, 32768),
          torch.int32: (-2**31, 2**31 - 1), torch.int64: (-2**62, 2**62)}
INTS = list(LIMITS)


def rand(dtype, shape, seed=0):
    lo, hi = LIMITS[dtype]
    g = torch.Generator().manual_seed(seed)
    return torch.randint(lo, hi, shape, dtype=dtype, generator=g)


def same(fn, *args):
    expected = fn(*args)
    got = fn(*[a.npu() if isinstance(a, torch.Tensor) else a for a in args])
    assert got.device.type == "npu"
    got = got.cpu()
    assert got.dtype == expected.dtype and got.shape == expected.shape
    assert torch.equal(got, expected), (expected.flatten()[:8], got.flatten()[:8])


BINARY = {
    "add": lambda x, y: x + y, "sub": lambda x, y: x - y, "mul": lambda x, y: x * y,
    "maximum": torch.maximum, "minimum": torch.minimum, "lt": lambda x, y: x < y, "eq": lambda x, y: x == y,
    "ge": lambda x, y: x >= y, "and": lambda x, y: x & y, "or": lambda x, y: x | y, "xor": lambda x, y: x ^ y,
    "where": lambda x, y: torch.where(x > y, x, y), "add_alpha": lambda x, y: torch.add(x, y, alpha=-3),
}


@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("op", list(BINARY))
@pytest.mark.parametrize("shapes", [((3, 1000), (3, 1000)), ((5, 77), (77,)), ((4, 1, 33), (1, 6, 1)), ((7,), ())])
def test_binary(dtype, op, shapes):
    same(BINARY[op], rand(dtype, shapes[0], 1), rand(dtype, shapes[1], 2))


UNARY = {
    "neg": lambda x: -x, "abs": torch.abs, "not": lambda x: ~x, "sign": torch.sign, "relu": torch.relu,
    "square": lambda x: x ** 2, "cube": lambda x: x ** 3, "pow7": lambda x: x.pow(7), "pow0": lambda x: x ** 0,
    "add_wraps": lambda x: x + 300, "mul_neg": lambda x: x * -3, "lt_wrapped": lambda x: x < 300,
    "gt_wrapped": lambda x: x > -1, "clamp": lambda x: x.clamp(-5, 100), "clamp_min_wraps": lambda x: x.clamp(min=-5),
    "and_scalar": lambda x: x & 0x5A, "xor_scalar": lambda x: x ^ -1,
    "shl3": lambda x: x << 3, "shr3": lambda x: x >> 3, "shl9": lambda x: x << 9, "shr9": lambda x: x >> 9,
    "shl40": lambda x: x << 40, "shr40": lambda x: x >> 40, "shl_neg": lambda x: x << -1, "shr_neg": lambda x: x >> -1,
    "true_div": lambda x: x / 3, "floor_div": lambda x: x // 7, "remainder": lambda x: x % -7,
    "to_float": lambda x: x.float() * 1.5,
}


@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("op", list(UNARY))
def test_unary(dtype, op):
    x = rand(dtype, (3, 1001))
    if op in ("true_div", "floor_div", "remainder") and dtype in (torch.int32, torch.int64):
        x = x % 10**6  # the float path is exact within +-2^24; larger values take the CPU fallback
    same(UNARY[op], x)


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int8, torch.int16, torch.int32])
def test_shift_by_tensor(dtype):
    x = rand(dtype, (4, 500))
    amount = torch.randint(-3, 40, (4, 500), generator=torch.Generator().manual_seed(5)).to(dtype)
    same(lambda a, b: a << b, x, amount)
    same(lambda a, b: a >> b, x, amount)
    same(lambda a, b: torch.bitwise_left_shift(a, b[0]), x, amount)  # a broadcast row of amounts


def test_int64_exact_beyond_int32():
    a = torch.tensor([2**40 + 3, 3, -2**35 + 7, 2**62, -1, 2**31, 123456789123])
    b = torch.tensor([3, 2**33 - 1, 5, 4, -2**63, 2**31, -987654321])
    same(lambda x, y: x * y, a, b)
    same(lambda x: x * 1000003, a)
    same(lambda x, y: torch.add(x, y, alpha=7), a, b)
    same(lambda x, y: torch.sub(x, y, alpha=-65537), a, b)
    same(lambda x: x ** 3, a)
    same(lambda x: x << 33, a)
    same(lambda x: x >> 35, a)
    same(lambda x: x << 5, a)
    same(lambda x: x >> 5, a)
    same(lambda x, y: x & y, a, b)
    same(lambda x, y: x ^ y, a, b)
    same(lambda x: ~x, a)
    same(torch.sign, a)


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int8, torch.int16, torch.int64])
def test_in_place_out_and_strided(dtype):
    x, y = rand(dtype, (40, 30), 1), rand(dtype, (30, 40), 2)
    xd, yd = x.npu(), y.npu()
    xd.add_(yd.t())
    x.add_(y.t())
    assert torch.equal(xd.cpu(), x)
    xd.bitwise_xor_(yd.t())
    x.bitwise_xor_(y.t())
    assert torch.equal(xd.cpu(), x)
    xd <<= 2
    x <<= 2
    assert torch.equal(xd.cpu(), x)
    out = torch.empty(40, 30, dtype=dtype).npu()
    torch.bitwise_or(xd, yd.t(), out=out)
    assert torch.equal(out.cpu(), torch.bitwise_or(x, y.t()))
    torch.mul(xd[:, ::2], 3, out=out[:, :15])
    assert torch.equal(out[:, :15].cpu(), x[:, ::2] * 3)


def test_mixed_dtypes():
    a, b = rand(torch.uint8, (3, 100), 1), rand(torch.int8, (3, 100), 2)
    same(lambda x, y: x + y, a, b)          # uint8 + int8 -> int16
    same(lambda x, y: x & y, a, b)
    same(lambda x, y: x * y, a, rand(torch.int32, (3, 100), 3))
    same(lambda x, y: x | y, a, b > 0)       # bool promotes
    same(lambda x, y: x + y, b, torch.randn(3, 100))
    same(lambda x, y: x & y, b > 0, a > 9)   # bool & bool stays logical


def test_uint8_image_pipeline():
    img = rand(torch.uint8, (2, 3, 64, 64))
    same(lambda x: (x.float() / 255 - 0.5).clamp(-0.25, 0.25), img)
    same(lambda x: torch.where(x > 128, x - 128, x + 127), img)
    same(lambda x: 255 - x, img)
    same(lambda x: x.flip(-1) // 2 + x // 2, img)


def test_bad_input():
    x = torch.arange(6, dtype=torch.int32).npu()
    with pytest.raises(NotImplementedError, match=r"bitwise_or: argument 'other' has dtype Float"):
        x | torch.ones(6).npu()
    with pytest.raises(NotImplementedError, match=r"bitwise_right_shift: argument 'self' has dtype Float"):
        torch.ones(6).npu() >> 1
    with pytest.raises(RuntimeError, match=r"pow: integers to negative integer powers are not allowed \(exponent -2\)"):
        x ** -2
    with pytest.raises(RuntimeError, match=r"value cannot be converted to type uint8_t without overflow"):
        x.to(torch.uint8).clamp(max=300)
    with pytest.raises(RuntimeError, match=r"bitwise_and: the shapes of 'self' and 'other'"):
        x & torch.ones(4, dtype=torch.int32).npu()
    assert torch.equal((x & 3).cpu(), torch.arange(6, dtype=torch.int32) & 3)  # still works afterwards


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int8, torch.int16])
def test_scans_and_scatters_of_small_ints(dtype):
    # Computed in an int32 copy on the device; sums and products wrap to the width as on the CPU.
    a, src = rand(dtype, (40, 10), 1), rand(dtype, (40, 10), 2)
    g = torch.Generator().manual_seed(3)
    idx, rows = torch.randint(0, 10, (40, 10), generator=g), torch.randint(0, 40, (40,), generator=g)
    same(lambda x: x.cumsum(0), a)
    same(lambda x: x.cumprod(1), a)
    same(lambda x: x.prod(), a)
    same(lambda x, i, s: x.scatter_add(1, i, s), a, idx, src)
    for reduce in ("sum", "prod", "amax", "amin"):
        same(lambda x, i, s: x.scatter_reduce(1, i, s, reduce, include_self=reduce != "amax"), a, idx, src)
    same(lambda x, i, s: x.index_add(0, i, s), a, rows, src)
    same(lambda x, i, s: x.clone().index_put_((i,), s, accumulate=True), a, rows, src)


def test_scalars_beyond_the_dtype():
    # PyTorch converts an integer scalar to the tensor's dtype (wrapping) before the op; int64 clamp
    # bounds keep their 64 bits; an int32 clamp bound that overflows raises as on the CPU.
    a = torch.tensor([1, 5, -7], dtype=torch.int32)
    same(lambda x: x < 2**33, a)
    same(lambda x: x + (2**32 + 5), a)
    same(lambda x: x * (2**32 + 3), a)
    same(lambda x, y: torch.maximum(x, y), a, torch.tensor(2**33))
    with pytest.raises(RuntimeError, match=r"value cannot be converted to type int without overflow"):
        a.npu().clamp(min=2**32 + 2)
    b = torch.tensor([1, 5, -7, 2**50])
    same(lambda x: x.clamp(min=2**40), b)
    same(lambda x: x.clamp(max=-(2**40)), b)
    same(lambda x: x.clamp(min=-3, max=2**45), b)


def test_one_element_int64_operands():
    # a one-element broadcast (stride 0) int64 operand of the exact int64 paths
    c = torch.tensor([5])
    same(lambda x, y: x + y.expand(1), c, torch.tensor(3))
    same(lambda m: torch.where(m, 2**40, 0), torch.tensor([True]))
    same(lambda m: torch.where(m, 24, 0), torch.tensor([False]))


PROMOTE_DTYPES = [torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.bool, torch.float32]
PROMOTE_OPS = {"add": lambda a, b: a + b, "mul": lambda a, b: a * b, "and": lambda a, b: a & b,
               "lt": lambda a, b: a < b, "maximum": torch.maximum, "shl": lambda a, b: a << b,
               "where": lambda a, b: torch.where(a > 0 if a.dtype != torch.bool else a, a, b),
               "div": lambda a, b: a / b, "floordiv": lambda a, b: a // b, "rem": lambda a, b: a % b,
               "fmod": torch.fmod}


@pytest.mark.parametrize("op", list(PROMOTE_OPS))
def test_type_promotion_with_zero_dim_and_one_element_operands(op):
    # every pair of dtypes, 0-dim / one-element / empty / broadcast operands: PyTorch's result type
    # and its conversion of a 0-dim operand to it (a 0-dim int8 -5 beside uint8 is 251); bool
    # maximum / where compute as 0 / 1.
    fn = PROMOTE_OPS[op]
    g = torch.Generator().manual_seed(21)
    shapes = [(), (1,), (0,), (2, 3), (2, 1)]
    checked = 0
    for d1 in PROMOTE_DTYPES:
        for d2 in PROMOTE_DTYPES:
            for s1, s2 in [(a, b) for a in shapes for b in shapes]:
                def make(dt, sh):
                    if dt == torch.bool:
                        return torch.rand(sh, generator=g) > 0.5
                    return torch.randint(-5 if dt != torch.uint8 else 0, 9, sh, generator=g).to(dt)
                a, b = make(d1, s1), make(d2, s2)
                if op in ("div", "floordiv", "rem", "fmod") and b.dtype != torch.bool:
                    b = torch.where(b == 0, torch.ones_like(b), b)  # (integer division by zero raises)
                try:
                    expected = fn(a, b)
                except RuntimeError:
                    continue  # the CPU refuses this pair too
                if op == "shl" and expected.dtype == torch.int64:
                    continue  # int64 shifted by an int64 tensor: the CPU fallback (README)
                got = fn(a.npu(), b.npu()).cpu()
                assert got.dtype == expected.dtype and got.shape == expected.shape, (op, d1, d2, s1, s2)
                if expected.dtype.is_floating_point:
                    torch.testing.assert_close(got, expected, rtol=1e-6, atol=1e-6, equal_nan=True)
                else:
                    assert torch.equal(got, expected), (op, d1, d2, s1, s2, expected, got)
                checked += 1
    assert checked > 400


def test_bool_values():
    b, m = torch.tensor([True, False, True]), torch.tensor([False, True, True])
    same(lambda x, y: x.masked_fill(y, False), b, m)
    same(lambda x, y: torch.where(y, x, True), b, m)
    same(torch.maximum, b, m)
    same(torch.minimum, b, m)


UNARY_SWEEP = {
    "floor": torch.floor, "ceil": torch.ceil, "round": torch.round, "trunc": torch.trunc, "fix": torch.fix,
    "log2": torch.log2, "tan": torch.tan, "sinh": torch.sinh, "exp": torch.exp, "sqrt": torch.sqrt,
    "sigmoid": torch.sigmoid, "erfinv": lambda x: torch.erfinv(x / 10), "clamp_min_int": lambda x: x.clamp(min=1),
    "clamp_max_int": lambda x: x.clamp(max=1), "neg": torch.neg, "abs": torch.abs, "sign": torch.sign,
}


@pytest.mark.parametrize("op", list(UNARY_SWEEP))
def test_unary_on_every_dtype(op):
    # integer and bool inputs: identity for the rounding ops, float results for the math, the CPU's
    # result dtype (bool.clamp(min=1) is int64) — or the CPU's refusal, which the npu shares
    fn = UNARY_SWEEP[op]
    for dtype in list(LIMITS) + [torch.bool]:
        for shape in [(), (1,), (0,), (3, 5)]:
            x = torch.rand(shape) > 0.5 if dtype == torch.bool else torch.randint(0, 9, shape).to(dtype)
            try:
                expected = fn(x)
            except (RuntimeError, TypeError):
                continue
            got = fn(x.npu()).cpu()
            assert got.dtype == expected.dtype and got.shape == expected.shape, (op, dtype, shape)
            torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-5, equal_nan=True)


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int16, torch.int32, torch.int64])
def test_addcmul_integers(dtype):
    a, b, c = rand(dtype, (4, 33), 1), rand(dtype, (4, 33), 2), rand(dtype, (33,), 3)
    same(lambda x, y, z: torch.addcmul(x, y, z, value=3), a, b, c)
    same(lambda x, y, z: x.clone().addcmul_(y, z, value=-2), a, b, c)


def test_powers_with_integer_exponent_tensors(monkeypatch):
    e = torch.arange(6)
    for base in (2.0, -1.5):  # a float base: the powers in float, natively (exp / ln: within an ulp)
        got = (base ** e.npu()).cpu()
        assert got.dtype == torch.float32
        torch.testing.assert_close(got, base ** e, rtol=3e-7, atol=0)
    monkeypatch.delenv("TORCH_OPS_NN_FALLBACK")  # integer ** integer tensors: the CPU fallback, exact
    same(lambda x: 2 ** x, e)
    same(lambda x: x ** x, e.to(torch.int32))


@pytest.mark.parametrize("n", [1, 1000, 5000])
def test_int64_fused_kernel_full_range(n):
    """int64 add / sub / mul / compares / max / min run in one fused kernel (words split and joined
    in UB): bit-exact with the CPU (wrapping) over the whole int64 range, partial tiles, a scalar on
    either side, broadcasting, in place."""
    g = torch.Generator().manual_seed(n)
    a = torch.randint(-2**63, 2**63 - 1, (n,), generator=g, dtype=torch.int64)
    b = torch.randint(-2**63, 2**63 - 1, (n,), generator=g, dtype=torch.int64)
    edge = torch.tensor([0, 1, -1, 2**31 - 1, -2**31, 2**32 - 1, 2**32, 65535, 65536, 2**63 - 1, -2**63])
    if n >= 1000:
        a[:121] = edge.repeat_interleave(11)
        b[:121] = edge.repeat(11)
        b[200:400] = a[200:400]  # equal values
    an, bn = a.npu(), b.npu()
    torch.npu.reset_kernel_counters()
    cases = [lambda x, y: x + y, lambda x, y: x - y, lambda x, y: x * y, torch.eq, torch.ne, torch.lt, torch.le,
             torch.gt, torch.ge, torch.maximum, torch.minimum, lambda x, y: x + 2**40, lambda x, y: -3 - x,
             lambda x, y: x * 1000003, lambda x, y: 5 < x, lambda x, y: torch.clamp(x, max=y),
             lambda x, y: x[:min(n, 9)].view(-1, 1) * y[:3].view(1, -1) if n >= 3 else x * y]
    for f in cases:
        got, want = f(an, bn), f(a, b)
        assert got.dtype == want.dtype and torch.equal(got.cpu(), want)
    x = an.clone()
    x.mul_(bn)
    x.add_(an)
    assert torch.equal(x.cpu(), a * b + a)
    torch.npu.synchronize()
    assert torch.npu.kernel_counters()["int64_binary_kernel"]["launches"] >= len(cases)


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int16, torch.int32, torch.int64])
def test_integer_division_by_zero_raises_as_on_the_cpu(dtype):
    """The float path would turn a zero divisor into a silently wrong quotient: floor / trunc division,
    remainder and fmod raise ZeroDivisionError like the CPU (the check shares the read back that
    decides whether the values fit float); the process keeps working."""
    a, b = torch.tensor([5, 7, 3], dtype=dtype), torch.tensor([1, 0, 2], dtype=dtype)
    for f in (lambda x, y: x // y, lambda x, y: x % y, torch.fmod, lambda x, y: torch.div(x, y, rounding_mode="trunc"),
              lambda x, y: x % 0, lambda x, y: torch.fmod(x, torch.tensor(0, dtype=dtype))):
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            f(a, b)
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            f(a.npu(), b.npu())
    good = torch.tensor([2, 3, 1], dtype=dtype)
    assert torch.equal((a.npu() // good.npu()).cpu(), a // good)
    assert torch.equal((a.npu() % good.npu()).cpu(), a % good)


@pytest.mark.parametrize("dtype", [torch.int8, torch.int16, torch.int32, torch.int64])
def test_shift_of_a_0dim_tensor_by_a_python_int(dtype):
    # the Python int is a wrapped number: the result keeps the tensor's dtype (it used to promote an
    # int16 0-dim tensor to int64, and a 0-dim int64 shift raised in its word split)
    x = torch.tensor(-77, dtype=dtype)
    for k in (0, 1, 3, True):
        for f in (lambda a: a << k, lambda a: a >> k):
            got, want = f(x.to("npu")), f(x)
            assert got.dtype == want.dtype and got.dim() == 0 and got.item() == want.item()
    y = x.to("npu")
    y <<= 2
    assert y.dtype == dtype and y.item() == (x << 2).item()
