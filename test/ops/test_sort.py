"""sort / argsort / msort (the sort kernel: float dtypes, any dim, stable) against the CPU's stable sort:
values and indices exactly — ties included — for rows sorted in one UB batch, in one tile, and in tiles
merged over one to three passes; NaN ranked above +inf as on the CPU; integers (the radix sort over
16-bit digits; long 1-D int32 / int64 by an LSD radix sort over the bytes of their range); out=,
autograd, edge shapes, bad input and the float64 fallback."""
import pytest
import torch

pytestmark = pytest.mark.usefixtures("fallback_error")

SHAPES = [((7, 100), -1), ((3, 33), 1), ((1000,), 0), ((5, 4096), 1), ((4, 6, 9), 1), ((5, 3, 4), 0),
          ((200, 5), 1), ((2, 5000), 1), ((1, 20000), 1)]


def _data(shape, dtype, ties, seed=7):
    g = torch.Generator().manual_seed(seed)
    if ties:  # few distinct values: the order of equal values is what a stable sort fixes
        return torch.randint(-4, 5, shape, generator=g).to(dtype)
    return torch.randn(shape, generator=g).to(dtype)


def _check(x, dim, descending, **kw):
    want_v, want_i = torch.sort(x, dim=dim, descending=descending, stable=True)
    got_v, got_i = torch.sort(x.to("npu"), dim=dim, descending=descending, **kw)
    assert got_v.dtype == x.dtype and got_i.dtype == torch.int64 and got_v.shape == x.shape
    torch.testing.assert_close(got_v.cpu(), want_v, rtol=0, atol=0, equal_nan=True)
    assert torch.equal(got_i.cpu(), want_i)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("shape,dim", SHAPES)
@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("ties", [False, True])
def test_sort_matches_cpu_stable(dtype, shape, dim, descending, ties):
    _check(_data(shape, dtype, ties), dim, descending)


@pytest.mark.parametrize("n", [70000, 300000])
@pytest.mark.parametrize("descending", [False, True])
def test_sort_long_rows_three_and_four_merge_passes(n, descending):
    # 70000: 18 tiles -> passes of 4096 -> 16384 -> 65536 (final); 300000 adds one more pass.
    _check(_data((n,), torch.float32, ties=n == 70000, seed=n), 0, descending, stable=True)


def _special_row(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randint(-3, 4, (n,), generator=g).float()
    pick = torch.randperm(n, generator=g)
    k = max(1, n // 10)
    x[pick[:k]] = float("nan")
    x[pick[k:2 * k]] = float("inf")
    x[pick[2 * k:3 * k]] = -float("inf")
    x[pick[3 * k:4 * k]] = -0.0
    return x


@pytest.mark.parametrize("n", [6, 50, 3000, 4096, 9000, 20000])
@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_sort_nan_inf_and_signed_zero(n, descending, dtype):
    # NaN ranks above +inf (last ascending, first descending), each class in index order; -0.0 == 0.0.
    x = torch.stack([_special_row(n, 1), _special_row(n, 2)]).to(dtype)
    x[1, :] = torch.where(torch.arange(n) % 7 == 0, float("nan"), x[1])
    _check(x, 1, descending)
    want_v = torch.sort(x, dim=1, descending=descending, stable=True)[0]
    got_v = torch.sort(x.to("npu"), dim=1, descending=descending)[0].cpu()
    assert torch.equal(torch.signbit(got_v), torch.signbit(want_v))  # -0.0 stays -0.0


def test_sort_all_nan_and_all_inf_rows():
    x = torch.full((3, 100), float("nan"))
    x[1] = float("inf")
    x[2, ::2] = float("inf")
    for descending in (False, True):
        _check(x, 1, descending)


def test_argsort_msort_method_and_noncontiguous():
    x = _data((64, 48), torch.float32, ties=True)
    xn = x.to("npu")
    assert torch.equal(torch.argsort(xn, dim=0, stable=True).cpu(), torch.argsort(x, dim=0, stable=True))
    assert torch.equal(torch.argsort(xn, descending=True).cpu(), torch.sort(x, descending=True, stable=True)[1])
    assert torch.equal(torch.msort(xn).cpu(), torch.msort(x))
    t = x.t()  # sorting a transposed view along either dim
    for dim in (0, 1):
        v, i = xn.t().sort(dim=dim)
        wv, wi = t.sort(dim=dim, stable=True)
        assert torch.equal(v.cpu(), wv) and torch.equal(i.cpu(), wi) and v.is_contiguous()


def test_sort_out_edge_shapes_and_errors():
    x = torch.randn(10)
    v, i = torch.empty(0, device="npu"), torch.empty(0, dtype=torch.long, device="npu")
    torch.sort(x.to("npu"), out=(v, i))
    assert torch.equal(v.cpu(), torch.sort(x)[0]) and torch.equal(i.cpu(), torch.sort(x)[1])
    for shape in [(), (0,), (4, 0), (5, 1)]:
        y = torch.randn(shape)
        gv, gi = torch.sort(y.to("npu"), dim=-1)
        wv, wi = torch.sort(y, dim=-1)
        assert gv.shape == wv.shape and torch.equal(gv.cpu(), wv) and torch.equal(gi.cpu(), wi)
    with pytest.raises(IndexError, match=r"sort: Dimension out of range \(expected to be in range of \[-2, 1\], but "
                                         r"got 2\)"):
        torch.sort(torch.randn(3, 4, device="npu"), dim=2)
    assert torch.equal(torch.sort(torch.tensor([2.0, 1.0], device="npu"))[0].cpu(), torch.tensor([1.0, 2.0]))


def test_sort_backward_matches_cpu():
    x = torch.randn(6, 30)
    xc = x.clone().requires_grad_()
    xn = x.to("npu").requires_grad_()
    w = torch.randn(6, 30)
    (torch.sort(xc, dim=1, descending=True)[0] * w).sum().backward()
    (torch.sort(xn, dim=1, descending=True)[0] * w.to("npu")).sum().backward()
    assert torch.equal(xn.grad.cpu(), xc.grad)


def _int_data(shape, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return torch.rand(shape, generator=g) < 0.5
    info = torch.iinfo(dtype)
    x = torch.randint(info.min, info.max, shape, generator=g, dtype=dtype)
    if dtype in (torch.int32, torch.int64):  # small values (ties, equal high digits) among the full range
        x.view(-1)[::3] = torch.randint(-5, 5, x.view(-1)[::3].shape, generator=g, dtype=dtype)
        x.view(-1)[:4] = torch.tensor([info.min, info.max, 0, -1], dtype=dtype)
    return x


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.int16, torch.int8, torch.uint8, torch.bool])
@pytest.mark.parametrize("shape,dim", [((7, 3000), 1), ((40, 9), 0), ((9000,), 0)])
@pytest.mark.parametrize("descending", [False, True])
def test_integer_sort_radix_over_digits_matches_cpu(dtype, shape, dim, descending):
    # int32 / int64: 16-bit digits, least significant first, each pass a stable float sort; smaller
    # integers and bool: their exact float values.
    _check(_int_data(shape, dtype, seed=shape[0]), dim, descending)


def _radix_used(fn):
    from torch_ops_nn import _C
    _C._reset_kernel_counters()
    out = fn()
    torch.npu.synchronize()
    return out, _C._kernel_counters().get("radix_place_kernel", {}).get("launches", 0)


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64])
@pytest.mark.parametrize("lo,hi,passes", [(None, None, None), (-1000, 1000, 2), (0, 1 << 20, 3), (7, 8, 0),
                                          (-(1 << 30), 5, 4)])
@pytest.mark.parametrize("descending", [False, True])
def test_long_1d_integer_sort_is_a_radix_sort_over_the_range(dtype, lo, hi, passes, descending):
    """The passes cover the bytes of max - min only (none when all values are equal); the extremes of the
    dtype, ties and a span that wraps the dtype's signed range included; stable in both directions."""
    if lo is None:  # the dtype's full range: every byte differs
        x = _int_data((70000,), dtype, seed=3)
        passes = 8 if dtype == torch.int64 else 4
    else:
        x = torch.randint(lo, hi, (70000,), generator=torch.Generator().manual_seed(4), dtype=dtype)
    (got_v, got_i), launches = _radix_used(lambda: torch.sort(x.to("npu"), descending=descending, stable=True))
    want_v, want_i = torch.sort(x, descending=descending, stable=True)
    assert launches == passes
    assert got_v.dtype == dtype and got_i.dtype == torch.int64
    assert torch.equal(got_v.cpu(), want_v) and torch.equal(got_i.cpu(), want_i)


def test_radix_sort_through_argsort_unique_and_views():
    g = torch.Generator().manual_seed(5)
    x = torch.randint(-50, 50, (3, 40000), generator=g)
    col = x.to("npu")[1]  # a row view; and a strided view
    assert torch.equal(torch.argsort(col, stable=True).cpu(), torch.argsort(x[1], stable=True))
    assert torch.equal(torch.sort(x.to("npu")[:, ::2].reshape(-1), stable=True)[1].cpu(),
                       torch.sort(x[:, ::2].reshape(-1), stable=True)[1])
    u, c = torch.unique(x.to("npu").view(-1), return_counts=True)
    wu, wc = torch.unique(x.view(-1), return_counts=True)
    assert torch.equal(u.cpu(), wu) and torch.equal(c.cpu(), wc)
    v, i = torch.empty(0, dtype=torch.int64, device="npu"), torch.empty(0, dtype=torch.int64, device="npu")
    torch.sort(x.to("npu")[2], stable=True, out=(v, i))
    assert torch.equal(v.cpu(), torch.sort(x[2], stable=True)[0])


def test_float64_sort_is_a_cpu_fallback():
    with pytest.raises(NotImplementedError, match="sort"):
        torch.sort(torch.randn(5, dtype=torch.float64).to("npu"))
