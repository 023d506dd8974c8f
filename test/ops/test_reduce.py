"""Reductions on npu against PyTorch's CPU results: sum, mean, amax/amin, max/min (full and .dim),
argmax/argmin, var/std (+ _mean), linalg.vector_norm, any/all, integer sums.

Tolerances (output vs CPU):
  float32  sums/means/norms rtol 1e-5, atol 1e-5 * sqrt(R); var/std rtol 1e-4; max/min/arg exact
  float16  the CPU result in float32 rounded to half: rtol 2e-3, atol 2e-3 * sqrt(R)   (one half ulp + sums)
  bfloat16 the same in bfloat16:                      rtol 1.6e-2, atol 1.6e-2 * sqrt(R)
  integers exact (int64 wraparound included)
Every test runs with TORCH_OPS_NN_FALLBACK=error (fallback_error), so a missing kernel fails.
"""
import itertools
import math

import pytest
import torch

pytestmark = pytest.mark.usefixtures("fallback_error")

FLOATS = [torch.float32, torch.float16, torch.bfloat16]
RTOL = {torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 1.6e-2}


def npu(t):
    return t.to("npu")


def reduced_count(x, dim):
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        return max(x.numel(), 1)
    dims = [dim] if isinstance(dim, int) else dim
    return max(math.prod(x.shape[d] for d in dims) if x.dim() else 1, 1)


def check_float(out, ref, dtype, R=1, rtol=None):
    """out: npu result in `dtype`; ref: CPU result computed in float32."""
    assert out.device.type == "npu"
    assert out.dtype == dtype, (out.dtype, dtype)
    r = RTOL[dtype] if rtol is None else rtol
    torch.testing.assert_close(out.cpu().float(), ref.to(dtype).float(), rtol=r, atol=r * math.sqrt(R), equal_nan=True)


def sample(shape, dtype=torch.float32, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=g).to(dtype)


def all_dim_lists(ndim):
    for k in range(1, ndim + 1):
        yield from itertools.combinations(range(ndim), k)


# ------------------------------------------------------------------------------------------ sum / mean
@pytest.mark.parametrize("n", [1, 2, 7, 8, 9, 15, 16, 17, 31, 63, 64, 65, 100, 127, 255, 256, 1000, 4097, 16385,
                               100003])
def test_1d_all_ops(n):
    x = sample((n,), seed=n)
    d = npu(x)
    check_float(d.sum(), x.sum(), torch.float32, n)
    check_float(d.mean(), x.mean(), torch.float32, 1)
    assert d.amax().cpu() == x.amax() and d.amin().cpu() == x.amin()
    assert d.max().cpu() == x.max() and d.min().cpu() == x.min()
    assert d.argmax().cpu() == x.argmax() and d.argmin().cpu() == x.argmin()
    v, i = d.max(0)
    assert v.cpu() == x.max(0).values and i.cpu() == x.max(0).indices
    if n > 1:
        check_float(d.var(), x.var(), torch.float32, rtol=1e-4)
        check_float(d.std(), x.std(), torch.float32, rtol=1e-4)
    check_float(torch.linalg.vector_norm(d), torch.linalg.vector_norm(x), torch.float32)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(3, 5), (37, 129), (64, 1), (1, 64), (7, 300, 5), (2, 3, 4, 5), (8, 16, 7, 9)])
def test_sum_mean_every_dim_list(shape, dtype):
    x = sample(shape, dtype, seed=len(shape))
    d = npu(x)
    xf = x.float()
    for dims in all_dim_lists(len(shape)):
        R = reduced_count(x, dims)
        for keepdim in (False, True):
            check_float(d.sum(dims, keepdim=keepdim), xf.sum(dims, keepdim=keepdim), dtype, R)
            check_float(d.mean(dims, keepdim=keepdim), xf.mean(dims, keepdim=keepdim), dtype, 1)
    for dim in range(-len(shape), len(shape)):  # negative dims, int dim
        check_float(d.sum(dim), xf.sum(dim), dtype, shape[dim])


@pytest.mark.parametrize("dtype", FLOATS)
def test_sum_full_and_dtype_argument(dtype):
    x = sample((33, 65), dtype)
    d = npu(x)
    check_float(d.sum(), x.float().sum(), dtype, x.numel())
    check_float(d.sum(dtype=torch.float32), x.float().sum(), torch.float32, x.numel())
    check_float(d.sum(1, dtype=torch.float32), x.float().sum(1), torch.float32, 65)
    check_float(d.mean(0, dtype=torch.float32), x.float().mean(0), torch.float32)
    check_float(npu(x.float()).sum(0, dtype=dtype), x.float().sum(0), dtype, 33)


def test_resnet_training_reductions():
    """What a ResNet training step reduces: bias-style grads over N,H,W, means over H,W, a scalar loss."""
    x = sample((8, 64, 14, 14))
    d = npu(x)
    check_float(d.sum((0, 2, 3)), x.sum((0, 2, 3)), torch.float32, 8 * 14 * 14)
    check_float(d.mean((2, 3)), x.mean((2, 3)), torch.float32)
    check_float(d.mean((2, 3), keepdim=True), x.mean((2, 3), keepdim=True), torch.float32)
    check_float(d.sum(), x.sum(), torch.float32, x.numel())
    loss = sample((128,)).abs()
    check_float(npu(loss).mean(), loss.mean(), torch.float32)


def test_large_sums_are_accurate_and_split_over_cores():
    x = sample((1 << 20,), seed=3) + 0.5  # non-zero mean: the sum grows like n
    torch.testing.assert_close(npu(x).sum().cpu(), x.double().sum().float(), rtol=1e-5, atol=0)
    y = sample((1 << 22,), seed=4)
    torch.testing.assert_close(npu(y).sum().cpu(), y.double().sum().float(), rtol=1e-5, atol=1e-2)
    z = sample((3, 1 << 20), seed=5)  # few rows, long: segmented partials + a second pass
    torch.testing.assert_close(npu(z).sum(1).cpu(), z.double().sum(1).float(), rtol=1e-5, atol=1e-2)
    torch.testing.assert_close(npu(z).var(1).cpu(), z.var(1), rtol=1e-5, atol=1e-5)
    c = sample((1 << 16, 3), seed=6)  # a long strided axis
    torch.testing.assert_close(npu(c).sum(0).cpu(), c.double().sum(0).float(), rtol=1e-5, atol=1e-3)


def test_sum_of_many_short_rows():
    x = sample((20000, 5))
    d = npu(x)
    check_float(d.sum(1), x.sum(1), torch.float32, 5)
    check_float(d.amax(1), x.amax(1), torch.float32)
    assert torch.equal(d.argmax(1).cpu(), x.argmax(1))
    check_float(d.var(1), x.var(1), torch.float32, rtol=1e-4)


VIEWS = [
    lambda t: t.t(),
    lambda t: t[::2, 1::3],
    lambda t: t[:, :1].expand(24, 10),
    lambda t: t.view(4, 6, 36).permute(2, 0, 1),
]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("view", range(len(VIEWS)))
def test_non_contiguous_inputs(view, dtype):
    base = sample((24, 36), dtype)
    x = VIEWS[view](base)
    dv = VIEWS[view](npu(base))
    assert not dv.is_contiguous()
    xf = x.float()
    check_float(dv.sum(0), xf.sum(0), dtype, x.shape[0])
    check_float(dv.sum(), xf.sum(), dtype, x.numel())
    check_float(dv.mean(-1), xf.mean(-1), dtype)
    assert torch.equal(dv.amax(0).cpu(), x.amax(0))
    assert torch.equal(dv.argmax(-1).cpu(), x.argmax(-1))
    check_float(dv.var(0), xf.var(0), dtype, rtol=1e-4 if dtype == torch.float32 else None)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_channels_last_inputs_every_dim_list(dtype):
    # Dense inputs in another dim order are reduced in their memory order (no copy); the kept elements
    # must still come back in logical order, also when the kept dims' memory order differs (over N of
    # NHWC: kept H, W, C in memory, C, H, W logically).
    x = sample((3, 5, 4, 6), dtype).contiguous(memory_format=torch.channels_last)
    d = npu(x)
    assert d.is_contiguous(memory_format=torch.channels_last) and not d.is_contiguous()
    xf = x.float()
    for dims in all_dim_lists(4):
        R = reduced_count(x, dims)
        check_float(d.sum(dims), xf.sum(dims), dtype, R)
        check_float(d.mean(dims, keepdim=True), xf.mean(dims, keepdim=True), dtype, R)
        assert torch.equal(d.amax(dims).cpu(), x.amax(dims))
        check_float(torch.linalg.vector_norm(d, 2, dims), torch.linalg.vector_norm(xf, 2, dims), dtype, R)


def test_zero_dim_tensor():
    x = torch.tensor(3.5)
    d = npu(x)
    for f in (lambda t: t.sum(), lambda t: t.sum(0), lambda t: t.mean(-1), lambda t: t.amax(),
              lambda t: t.max(), lambda t: t.argmax(), lambda t: t.argmax(0)):
        torch.testing.assert_close(f(d).cpu(), f(x))
    v, i = d.max(0)
    assert v.cpu() == 3.5 and i.cpu() == 0 and v.dim() == 0


# ------------------------------------------------------------------------------------------ amax / max / arg
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(5,), (3, 5), (37, 129), (7, 300, 5), (2, 3, 4, 5)])
def test_extremes_every_dim(shape, dtype):
    x = sample(shape, dtype, seed=7)
    d = npu(x)
    assert torch.equal(d.amax().cpu(), x.amax()) and torch.equal(d.amin().cpu(), x.amin())
    for dims in all_dim_lists(len(shape)):
        for keepdim in (False, True):
            assert torch.equal(d.amax(dims, keepdim).cpu(), x.amax(dims, keepdim))
            assert torch.equal(d.amin(dims, keepdim).cpu(), x.amin(dims, keepdim))
    for dim in range(-len(shape), len(shape)):
        for keepdim in (False, True):
            for f in ("max", "min"):
                v, i = getattr(d, f)(dim, keepdim)
                rv, ri = getattr(x, f)(dim, keepdim)
                assert v.dtype == dtype and i.dtype == torch.int64
                assert torch.equal(v.cpu(), rv) and torch.equal(i.cpu(), ri)
            assert torch.equal(d.argmax(dim, keepdim).cpu(), x.argmax(dim, keepdim))
            assert torch.equal(d.argmin(dim, keepdim).cpu(), x.argmin(dim, keepdim))
    assert torch.equal(d.argmax().cpu(), x.argmax())
    assert torch.equal(d.argmin(keepdim=True).cpu(), x.argmin(keepdim=True))


def test_ties_give_the_lowest_index_like_cpu():
    x = torch.tensor([[1.0, 3.0, 3.0, 1.0], [2.0, 2.0, 2.0, 2.0], [0.0, -1.0, 5.0, 5.0]])
    d = npu(x)
    for dim in (0, 1):
        assert torch.equal(d.argmax(dim).cpu(), x.argmax(dim))
        assert torch.equal(d.argmin(dim).cpu(), x.argmin(dim))
        assert torch.equal(d.max(dim).indices.cpu(), x.max(dim).indices)
        assert torch.equal(d.min(dim).indices.cpu(), x.min(dim).indices)
    assert d.argmax().cpu() == x.argmax()
    # long rows with the maximum repeated in different tiles and segments
    y = torch.zeros(3, 200000)
    y[:, 70000] = 1.0
    y[:, 150000] = 1.0
    y[1, 5] = 1.0
    assert torch.equal(npu(y).argmax(1).cpu(), y.argmax(1))
    flat = torch.zeros(1 << 20)
    flat[[123457, 900000]] = 2.0
    assert npu(flat).argmax().cpu() == 123457
    cols = torch.zeros(5000, 7)
    cols[[100, 4000], 3] = 1.0
    assert torch.equal(npu(cols).argmax(0).cpu(), cols.argmax(0))


def test_large_arg_reductions():
    x = sample((1 << 21,), seed=11)
    d = npu(x)
    assert d.argmax().cpu() == x.argmax() and d.argmin().cpu() == x.argmin()
    assert d.max().cpu() == x.max()
    y = sample((4, 300000), seed=12)
    v, i = npu(y).max(1)
    assert torch.equal(v.cpu(), y.max(1).values) and torch.equal(i.cpu(), y.max(1).indices)


# ------------------------------------------------------------------------------------------ var / std / norm
@pytest.mark.filterwarnings("ignore:.*degrees of freedom is <= 0")
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape", [(9,), (37, 129), (7, 30, 5), (2, 3, 4, 5)])
def test_var_std(shape, dtype):
    x = sample(shape, dtype, seed=13) * 3 + 1
    d = npu(x)
    xf = x.float()
    rt = 1e-4 if dtype == torch.float32 else RTOL[dtype]
    check_float(d.var(), xf.var(), dtype, rtol=rt)
    check_float(d.std(unbiased=False), xf.std(unbiased=False), dtype, rtol=rt)
    for dims in all_dim_lists(len(shape)):
        for correction in (0, 1, 2):
            check_float(torch.var(d, dims, correction=correction), torch.var(xf, dims, correction=correction),
                        dtype, rtol=rt)
        check_float(torch.std(d, dims, keepdim=True), torch.std(xf, dims, keepdim=True), dtype, rtol=rt)
    v, m = torch.var_mean(d, 0)
    rv, rm = torch.var_mean(xf, 0)
    check_float(v, rv, dtype, rtol=rt)
    check_float(m, rm, dtype)
    s, m = torch.std_mean(d, -1, correction=0, keepdim=True)
    rs, rm = torch.std_mean(xf, -1, correction=0, keepdim=True)
    check_float(s, rs, dtype, rtol=rt)
    check_float(m, rm, dtype)


@pytest.mark.filterwarnings("ignore:.*degrees of freedom is <= 0")
def test_var_edge_cases():
    one = npu(torch.tensor([2.0]))
    assert torch.isnan(one.var().cpu())  # correction 1 on one element: 0 / 0
    assert one.var(correction=0).cpu() == 0
    x = torch.tensor([1.0, 2.0])
    assert torch.isinf(npu(x).var(correction=5).cpu()) == torch.isinf(x.var(correction=5))


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("ord", [2, 1, float("inf"), float("-inf"), 0, 3, 0.5, "fro"])
def test_vector_norm(ord, dtype):
    x = sample((6, 40, 7), dtype, seed=17)
    x[0, 0, 0] = 0
    d = npu(x)
    xf = x.float()
    rt = {torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 1.6e-2}[dtype] * (10 if ord in (3, 0.5) else 1)
    if ord == "fro":
        check_float(torch.norm(d), torch.norm(xf), dtype, rtol=rt)
        check_float(torch.norm(d, dim=(0, 2)), torch.norm(xf, dim=(0, 2)), dtype, rtol=rt)
        return
    check_float(torch.linalg.vector_norm(d, ord), torch.linalg.vector_norm(xf, ord), dtype, rtol=rt)
    for dim in (0, 1, -1, (0, 2), (1, 2)):
        for keepdim in (False, True):
            check_float(torch.linalg.vector_norm(d, ord, dim, keepdim), torch.linalg.vector_norm(xf, ord, dim, keepdim),
                        dtype, rtol=rt)
    check_float(d.norm(p=ord, dim=1), xf.norm(p=ord, dim=1), dtype, rtol=rt)


@pytest.mark.parametrize("ord", [3, 0.5, 1, float("inf")])
def test_vector_norm_split_over_cores(ord):
    """Long reductions run as per-core partials plus a second pass: the pre-op order must reach pass 1."""
    for shape, dim in (((1 << 16, 3), 0), ((1 << 16,), 0), ((2, 1 << 16), 1)):
        x = sample(shape, seed=23) * 2 + 5
        torch.testing.assert_close(torch.linalg.vector_norm(npu(x), ord, dim=dim).cpu(),
                                   torch.linalg.vector_norm(x, ord, dim=dim), rtol=1e-4, atol=1e-4)


def test_vector_norm_dtype_argument():
    x = sample((10, 20), torch.float16)
    out = torch.linalg.vector_norm(npu(x), 2, dim=1, dtype=torch.float32)
    check_float(out, torch.linalg.vector_norm(x.float(), 2, dim=1), torch.float32, rtol=1e-5)


@pytest.mark.parametrize("dtype", FLOATS)
def test_nansum_aminmax(dtype):
    x = sample((6, 70, 5), dtype, seed=19)
    x[x > 1.5] = float("nan")
    d = npu(x)
    xf = x.float()
    check_float(torch.nansum(d), torch.nansum(xf), dtype, x.numel())
    for dims in (0, 1, (0, 2)):
        check_float(torch.nansum(d, dims), torch.nansum(xf, dims), dtype, reduced_count(x, dims))
    y = sample((6, 70, 5), dtype, seed=20)
    for dim in (None, 0, 1, -1):
        for keepdim in (False, True):
            mn, mx = torch.aminmax(npu(y), dim=dim, keepdim=keepdim)
            rmn, rmx = torch.aminmax(y, dim=dim, keepdim=keepdim)
            assert torch.equal(mn.cpu(), rmn) and torch.equal(mx.cpu(), rmx)


NAN_OPS = {
    "amax": lambda t, d: t.amax(d) if d is not None else t.amax(),
    "amin": lambda t, d: t.amin(d) if d is not None else t.amin(),
    "max": lambda t, d: t.max(d) if d is not None else t.max(),
    "min": lambda t, d: t.min(d) if d is not None else t.min(),
    "argmax": lambda t, d: t.argmax(d),
    "argmin": lambda t, d: t.argmin(d, keepdim=True) if d is not None else t.argmin(),
    "aminmax": lambda t, d: torch.aminmax(t, dim=d),
    "norm_inf": lambda t, d: torch.linalg.vector_norm(t, float("inf"), d),
    "norm_-inf": lambda t, d: torch.linalg.vector_norm(t, float("-inf"), d),
}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", sorted(NAN_OPS))
@pytest.mark.parametrize("shape,dim", [((6, 70, 5), 1), ((6, 70, 5), None), ((3, 4100), -1), ((2500, 3), 0), ((7,), 0)])
def test_max_like_reductions_propagate_nan(dtype, op, shape, dim):
    """max/min-like reductions return NaN for a slice holding one (arg reductions: the first NaN's
    index), as on the CPU: the vector Max/Min skip NaN; amax/amin put it back with a second pass, the
    arg-reduce kernel finds it in its one pass. Rows with and without NaN, and all-NaN rows."""
    x = sample(shape, dtype, seed=23)
    mask = torch.rand(shape, generator=torch.Generator().manual_seed(24)) < 0.03
    x[mask] = float("nan")
    if x.dim() > 1:
        x[0] = float("nan")  # an all-NaN slice
        x[-1] = x[-1].nan_to_num(0.0)  # and a NaN-free one
    else:
        x[2] = float("nan")
    got, want = NAN_OPS[op](npu(x), dim), NAN_OPS[op](x, dim)
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        assert torch.isnan(w).any() if w.is_floating_point() else True
        torch.testing.assert_close(g.cpu(), w, rtol=0, atol=0, equal_nan=True)


@pytest.mark.parametrize("op", sorted(NAN_OPS))
@pytest.mark.parametrize("shape,dim", [((2, 300001), -1), ((5, 9000), 1), ((40, 1000), -1), ((9000, 70), 0),
                                       ((3, 5000, 7), 1), ((1, 700000), None)])
def test_max_like_reductions_nan_screen(op, shape, dim):
    """The kernels' per-tile NaN screen: a lone NaN late in a long (streamed, segmented) row, in a
    later tile of a column, NaN-free slices holding both infinities (the screen fires, the exact
    search finds nothing), and NaN before and after +-inf."""
    for case in range(3):
        x = sample(shape, torch.float32, seed=31 + case)
        flat = x.view(-1)
        n = flat.numel()
        if case == 0:  # one NaN near the end, one in the middle
            flat[n - 3] = float("nan")
            flat[n // 2 + 1] = float("nan")
        elif case == 1:  # infinities only
            flat[n // 3] = float("inf")
            flat[n // 3 + 5] = float("-inf")
            flat[n - 1] = float("inf")
        else:  # infinities and NaN in the same slices
            flat[::997] = float("inf")
            flat[5::1013] = float("-inf")
            flat[7::4099] = float("nan")
        got, want = NAN_OPS[op](npu(x), dim), NAN_OPS[op](x, dim)
        got = got if isinstance(got, tuple) else (got,)
        want = want if isinstance(want, tuple) else (want,)
        for g, w in zip(got, want):
            torch.testing.assert_close(g.cpu(), w, rtol=0, atol=0, equal_nan=True)


def test_count_nonzero():
    x = sample((6, 70, 5), seed=21)
    x = x * (x > 0.5)
    x[0, 0, 0] = float("nan")
    d = npu(x)
    assert torch.equal(torch.count_nonzero(d).cpu(), torch.count_nonzero(x))
    for dims in (0, (0, 2), (1, 2)):
        assert torch.equal(torch.count_nonzero(d, dims).cpu(), torch.count_nonzero(x, dims))


# ------------------------------------------------------------------------------------------ integers / bool
INTS = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64]


def int_sample(shape, dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return torch.rand(shape, generator=g) > 0.5
    info = torch.iinfo(dtype)
    return torch.randint(info.min, info.max, shape, generator=g, dtype=dtype)


@pytest.mark.parametrize("dtype", INTS)
def test_integer_sums_are_exact(dtype):
    x = int_sample((13, 50, 3), dtype, seed=1)
    d = npu(x)
    out = d.sum()
    assert out.dtype == torch.int64 and torch.equal(out.cpu(), x.sum())
    for dims in all_dim_lists(3):
        for keepdim in (False, True):
            assert torch.equal(d.sum(dims, keepdim=keepdim).cpu(), x.sum(dims, keepdim=keepdim)), dims


def test_integer_sum_overflow_and_large():
    big = torch.randint(-2**62, 2**62, (100003,), dtype=torch.int64)  # wraps around like CPU int64
    assert torch.equal(npu(big).sum().cpu(), big.sum())
    i32 = torch.randint(-2**31, 2**31 - 1, (5000, 7), dtype=torch.int32)  # sums beyond int32
    assert torch.equal(npu(i32).sum(0).cpu(), i32.sum(0))
    assert torch.equal(npu(i32).sum(1).cpu(), i32.sum(1))
    b = torch.rand(1 << 20) > 0.3  # accuracy-style count
    assert torch.equal(npu(b).sum().cpu(), b.sum())
    pred = torch.randint(0, 10, (256,))
    target = torch.randint(0, 10, (256,))
    assert torch.equal(npu(pred == target).sum().cpu(), (pred == target).sum())


def test_integer_sum_dtype_argument():
    i32 = torch.randint(-1000, 1000, (40, 9), dtype=torch.int32)
    assert torch.equal(npu(i32).sum(0, dtype=torch.int32).cpu(), i32.sum(0, dtype=torch.int32))
    torch.testing.assert_close(npu(i32).sum(0, dtype=torch.float32).cpu(), i32.sum(0, dtype=torch.float32))
    f = sample((10, 10)) * 100
    assert torch.equal(npu(f).sum(1, dtype=torch.int64).cpu(), f.sum(1, dtype=torch.int64))


@pytest.mark.parametrize("dtype", [torch.bool, torch.uint8, torch.int64, torch.float32, torch.float16])
def test_any_all(dtype):
    g = torch.Generator().manual_seed(2)
    x = (torch.rand((5, 7, 9), generator=g) > 0.85).to(dtype) if dtype != torch.float32 else \
        sample((5, 7, 9)) * (torch.rand((5, 7, 9), generator=g) > 0.85)
    d = npu(x)
    for f in ("any", "all"):
        assert torch.equal(getattr(d, f)().cpu(), getattr(x, f)())
        for dim in (0, 1, 2, -1):
            assert torch.equal(getattr(d, f)(dim).cpu(), getattr(x, f)(dim))
        assert torch.equal(getattr(torch, f)(d, dim=(0, 2), keepdim=True).cpu(),
                           getattr(torch, f)(x, dim=(0, 2), keepdim=True))
    ones = npu(torch.ones(4, 3, dtype=dtype))
    assert ones.all().cpu() and ones.any().cpu()
    assert npu(torch.tensor([0.0, float("nan")])).any().cpu()


# ------------------------------------------------------------------------------------------ empty tensors
def test_empty_tensors_follow_aten_rules():
    e = torch.empty(0, 3)
    d = npu(e)
    assert torch.equal(d.sum().cpu(), torch.tensor(0.0))
    assert torch.equal(d.sum(0).cpu(), torch.zeros(3))
    assert d.sum(1).shape == (0,)
    assert torch.isnan(d.mean().cpu())
    assert torch.isnan(d.var(0).cpu()).all()
    assert d.amax(1).shape == (0,)
    assert torch.equal(torch.linalg.vector_norm(d).cpu(), torch.tensor(0.0))
    assert d.argmax(1).shape == (0,) and d.max(1).values.shape == (0,)
    assert torch.equal(npu(torch.empty(0, dtype=torch.bool)).sum().cpu(), torch.tensor(0))
    assert not npu(torch.empty(0)).any().cpu() and npu(torch.empty(0)).all().cpu()
    with pytest.raises(RuntimeError, match=r"amax\(\): Expected reduction dim to be specified"):
        d.amax()
    with pytest.raises(IndexError, match=r"amax\(\): Expected reduction dim 0 to have non-zero size"):
        d.amax(0)
    with pytest.raises(RuntimeError, match=r"max\(\): Expected reduction dim to be specified"):
        d.max()
    with pytest.raises(IndexError, match=r"max\(\): Expected reduction dim 0 to have non-zero size"):
        d.max(0)
    with pytest.raises(IndexError, match=r"argmax\(\): Expected reduction dim to be specified"):
        d.argmax()
    with pytest.raises(RuntimeError, match="inf norm on an empty tensor"):
        torch.linalg.vector_norm(d, float("inf"))


# ------------------------------------------------------------------------------------------ out= variants
def test_out_variants():
    x = sample((6, 10))
    d = npu(x)

    def empty(dtype=torch.float32):
        return npu(torch.empty(0, dtype=dtype))

    out = empty()
    assert torch.sum(d, 1, out=out) is out
    torch.testing.assert_close(out.cpu(), x.sum(1))
    out = empty()
    torch.mean(d, 0, keepdim=True, out=out)
    torch.testing.assert_close(out.cpu(), x.mean(0, keepdim=True))
    out = empty()
    torch.amax(d, 1, out=out)
    assert torch.equal(out.cpu(), x.amax(1))
    v, i = empty(), empty(torch.int64)
    torch.max(d, 1, out=(v, i))
    assert torch.equal(v.cpu(), x.max(1).values) and torch.equal(i.cpu(), x.max(1).indices)
    i = empty(torch.int64)
    torch.argmax(d, 0, out=i)
    assert torch.equal(i.cpu(), x.argmax(0))
    out = empty()
    torch.var(d, 1, out=out)
    torch.testing.assert_close(out.cpu(), x.var(1))
    out = empty()
    torch.linalg.vector_norm(d, 2, 1, out=out)
    torch.testing.assert_close(out.cpu(), torch.linalg.vector_norm(x, 2, 1))
    b = empty(torch.bool)
    torch.any(npu(x > 0), 1, out=b)
    assert torch.equal(b.cpu(), (x > 0).any(1))
    s = empty(torch.int64)
    torch.sum(npu(x > 0), 0, out=s)
    assert torch.equal(s.cpu(), (x > 0).sum(0))
    out = npu(torch.empty(6, dtype=torch.float64))  # out's dtype decides the result dtype, as on CPU
    torch.sum(d, 1, out=out)
    torch.testing.assert_close(out.cpu(), x.double().sum(1), rtol=1e-6, atol=1e-5)


# ------------------------------------------------------------------------------------------ bad input
def test_errors_name_the_op_and_the_rule():
    d = npu(sample((3, 4)))
    with pytest.raises(IndexError, match=r"sum: Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)"):
        d.sum(2)
    with pytest.raises(IndexError, match=r"amax: Dimension out of range .* but got -3"):
        d.amax(-3)
    with pytest.raises(IndexError, match=r"argmax: Dimension out of range"):
        d.argmax(5)
    with pytest.raises(IndexError, match=r"var: Dimension out of range"):
        d.var(7)
    with pytest.raises(RuntimeError, match="sum: dim 0 appears multiple times in the list of dims"):
        d.sum((0, 0))
    with pytest.raises(RuntimeError, match=r"mean\(\): could not infer output dtype.*Long"):
        npu(torch.ones(3, dtype=torch.long)).mean()
    with pytest.raises(RuntimeError, match="var: std and var only support floating point"):
        npu(torch.ones(3, dtype=torch.long)).var()
    with pytest.raises(RuntimeError, match="linalg.vector_norm: Expected a floating point or complex tensor"):
        torch.linalg.vector_norm(npu(torch.ones(3, dtype=torch.long)))
    # dtypes without a kernel (integers beyond 2^24 for max-like ops, float64) take the CPU fallback:
    # an error here
    with pytest.raises(NotImplementedError, match="'aten::amax' has no native npu kernel"):
        npu(torch.tensor([2**30, 1], dtype=torch.long)).amax()
    with pytest.raises(NotImplementedError, match="'aten::sum.dim_IntList' has no native npu kernel"):
        npu(torch.ones(3, dtype=torch.float64)).sum()


def test_other_dtypes_take_the_cpu_fallback(monkeypatch):
    monkeypatch.setenv("TORCH_OPS_NN_FALLBACK", "silent")
    labels = torch.randint(0, 10, (100,))
    d = npu(labels)
    assert d.max().cpu() == labels.max() and torch.equal(d.argmax().cpu(), labels.argmax())
    v, i = d.view(10, 10).max(1)
    assert torch.equal(v.cpu(), labels.view(10, 10).max(1).values) and v.device.type == "npu"
    x = torch.randn(5, 6, dtype=torch.float64)
    torch.testing.assert_close(npu(x).sum(1).cpu(), x.sum(1))
    torch.testing.assert_close(torch.softmax(npu(x), 1).cpu(), torch.softmax(x, 1))


def test_mixed_devices_are_refused():
    d = npu(sample((3, 4)))
    with pytest.raises(RuntimeError, match=r"sum: argument 'out' is on cpu, but npu tensors are expected"):
        torch.sum(d, 0, out=torch.empty(4))
    with pytest.raises(RuntimeError, match=r"amax: argument 'out' is on cpu"):
        torch.amax(d, 0, out=torch.empty(4))
    with pytest.raises(RuntimeError, match=r"max: argument 'out' is on cpu"):
        torch.max(d, 0, out=(torch.empty(4), torch.empty(4, dtype=torch.long)))


def test_second_device():
    if torch.npu.device_count() < 2:
        pytest.skip("one device")
    x = sample((50, 70))
    d = x.to("npu:1")
    out = d.sum(0)
    assert out.device == torch.device("npu:1")
    torch.testing.assert_close(out.cpu(), x.sum(0))


def test_results_do_not_depend_on_host_threads():
    """Bit-identical results with 1 and 3 host threads (partials are combined in a fixed order)."""
    from conftest import run_python

    code = ("import torch, torch_ops_nn; torch.manual_seed(0); x = torch.randn(1 << 22).to('npu'); "
            "y = torch.randn(4, 300000).to('npu'); z = torch.randn(64, 4096).to('npu'); "
            "r = [x.sum(), x.var(), y.sum(1), y.amax(1), y.argmax(1).float(), torch.softmax(z, 1).sum(1), "
            "torch.linalg.vector_norm(x)]; print([t.cpu().double().tolist() for t in r])")
    runs = [run_python(code, {"TORCH_OPS_NN_HOST_THREADS": n}) for n in ("1", "3")]
    for r in runs:
        assert r.returncode == 0, r.stderr
    assert runs[0].stdout == runs[1].stdout


# ---- max / min / argmax / aminmax of integer and bool tensors: the float kernels on a float copy
# when every value is exact in float32 (|v| < 2^24), results cast back; larger values take the CPU
# fallback (an error under fallback_error).
@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8])
def test_integer_extremes_match_cpu(dtype):
    g = torch.Generator().manual_seed(4)
    lo, hi = (0, 255) if dtype == torch.uint8 else (-100, 100)
    x = torch.randint(lo, hi, (6, 7, 5), generator=g, dtype=dtype)
    x[0, 0, 0] = x.max()  # a tie: the first index wins, as on the CPU
    if dtype in (torch.int64, torch.int32):
        x[1, 2, 3] = 2**24 - 1
        x[2, 3, 4] = -(2**24 - 1)
    xd = x.npu()
    pairs = [
        (xd.max(), x.max()), (xd.min(), x.min()), (xd.amax((0, 2)), x.amax((0, 2))),
        (xd.amin(1, keepdim=True), x.amin(1, keepdim=True)), (xd.max(1).values, x.max(1).values),
        (xd.max(1).indices, x.max(1).indices), (xd.min(2).values, x.min(2).values), (xd.min(2).indices, x.min(2).indices),
        (xd.argmax(), x.argmax()), (xd.argmin(1), x.argmin(1)), (torch.aminmax(xd)[0], torch.aminmax(x)[0]),
        (torch.aminmax(xd, dim=0)[1], torch.aminmax(x, dim=0)[1]),
    ]
    for got, want in pairs:
        assert got.device.type == "npu" and got.dtype == want.dtype
        assert torch.equal(got.cpu(), want)


def test_bool_extremes_and_large_integers():
    x = torch.rand(5, 9) > 0.5
    assert torch.equal(x.npu().amax(1).cpu(), x.amax(1)) and x.npu().max().dtype == torch.bool
    big = torch.tensor([2**40, -5, 3], device="npu")
    with pytest.raises(NotImplementedError, match=r"aten::argmax"):  # per-element beyond 2^24: the CPU's
        big.argmax()
    # whole-tensor max / min: exact over the full range (the radix sort's range kernel)
    wide = torch.tensor([2**62 + 1, -(2**62) - 3, 2**62, 5, -(2**63)])
    for t in (wide, wide.to(torch.int32) * 0 + torch.tensor([2**31 - 1, -(2**31), 3, 2**30, 7], dtype=torch.int32)):
        assert torch.equal(t.npu().max().cpu(), t.max()) and torch.equal(t.npu().min().cpu(), t.min())
        assert t.npu().max().dtype == t.dtype
    assert torch.tensor([7, -2], device="npu").max().item() == 7  # still usable
