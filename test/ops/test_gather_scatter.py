"""gather, scatter (src and value), scatter_add, scatter_reduce, index_add and index_copy on npu (the gather
and scatter kernels) against PyTorch's CPU results: every dim, index smaller than self, non-contiguous operands and
destinations, sizes that span several tiles and cores, repeated indices (scatter_add / index_add add
them in index order, deterministically), several dtypes, and bad input (out-of-range indices raise at
the next synchronization; shape and dtype errors at the call; the device keeps working)."""
import pytest
import torch

pytestmark = pytest.mark.usefixtures("fallback_error")

COPY_DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.int32, torch.int16, torch.uint8,
               torch.bool, torch.float64]
ADD_DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.int32, torch.int64]


def _data(shape, dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(shape, generator=g) * 10).to(dtype)


def _index(shape, high, seed=1, unique_along=None):
    g = torch.Generator().manual_seed(seed)
    if unique_along is None:
        return torch.randint(0, high, shape, generator=g)
    # distinct indices along `unique_along` (scatter's result is then defined)
    return torch.rand(shape[:unique_along] + (high,) + shape[unique_along + 1:], generator=g).argsort(
        dim=unique_along).narrow(unique_along, 0, shape[unique_along])


CASES = [  # self shape, dim, index shape
    ((5,), 0, (3,)), ((8, 6), 0, (5, 6)), ((8, 6), 1, (8, 4)), ((8, 6), -1, (3, 2)), ((4, 5, 6), 1, (4, 3, 6)),
    ((4, 5, 6), 0, (2, 5, 3)), ((4, 5, 6), 2, (3, 4, 6)), ((3, 20000), 1, (3, 9000)), ((3000, 40), 0, (2500, 40)),
    ((2, 1, 7), 2, (2, 1, 5)), ((100000,), 0, (30000,)), ((5000, 3), 0, (4500, 3)),  # several UB windows
]


@pytest.mark.parametrize("shape,dim,ishape", CASES, ids=str)
@pytest.mark.parametrize("dtype", COPY_DTYPES)
def test_gather(shape, dim, ishape, dtype):
    x = _data(shape, dtype)
    i = _index(ishape, shape[dim])
    got = torch.gather(x.to("npu"), dim, i.to("npu"))
    assert got.shape == i.shape and torch.equal(got.cpu(), torch.gather(x, dim, i))


@pytest.mark.parametrize("shape,dim,ishape", CASES, ids=str)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64, torch.uint8, torch.bool])
def test_scatter_src_and_value(shape, dim, ishape, dtype):
    x = _data(shape, dtype)
    i = _index(ishape, shape[dim], unique_along=dim % len(shape))
    src = _data(tuple(s + 1 for s in ishape), dtype, seed=5)  # src may be larger than index
    got = x.to("npu").scatter_(dim, i.to("npu"), src.to("npu"))
    assert torch.equal(got.cpu(), x.clone().scatter_(dim, i, src))
    got = torch.scatter(x.to("npu"), dim, i.to("npu"), 3)
    assert torch.equal(got.cpu(), torch.scatter(x, dim, i, 3))


@pytest.mark.parametrize("shape,dim,ishape", CASES, ids=str)
@pytest.mark.parametrize("dtype", ADD_DTYPES)
def test_scatter_add_with_repeated_indices(shape, dim, ishape, dtype):
    x = _data(shape, dtype)
    i = _index(ishape, max(1, shape[dim] // 2))  # many repeats
    src = _data(ishape, dtype, seed=5)
    got = x.to("npu").scatter_add(dim, i.to("npu"), src.to("npu"))
    want = x.clone().scatter_add(dim, i, src)
    if dtype in (torch.float16, torch.bfloat16):
        # Each add rounds to the dtype, and the CPU may order or widen its adds differently, so both are
        # held to the rounding bound around the exact float64 sum: (adds + 1) * eps/2 * (|x| + sum |src|).
        exact = x.double().scatter_add(dim, i, src.double())
        adds = torch.zeros(shape, dtype=torch.float64).scatter_add(dim, i, torch.ones(ishape, dtype=torch.float64))
        bound = (adds + 1) * x.double().abs().scatter_add(dim, i, src.double().abs()) * torch.finfo(dtype).eps / 2
        assert ((got.cpu().double() - exact).abs() <= bound).all()
        assert ((want.double() - exact).abs() <= bound).all()
    else:
        torch.testing.assert_close(got.cpu(), want)
    again = x.to("npu").scatter_add(dim, i.to("npu"), src.to("npu"))
    assert torch.equal(again.cpu(), got.cpu())  # deterministic


def test_noncontiguous_operands_and_destinations():
    x = _data((9, 12), torch.float32)
    src = _data((10, 12), torch.float32, 3).t()  # (12, 10), non-contiguous
    for f in [lambda t: t.t(), lambda t: t[:, ::2], lambda t: t[1:, 2:]]:
        rows, cols = f(x).shape
        i0 = _index((rows - 1, min(cols, 8)), rows, unique_along=0)
        i1 = _index((rows, 3), cols)  # repeats
        i0_nc = i0.t().contiguous().t()  # the same values, non-contiguous
        got_base, want_base = x.to("npu"), x.clone()
        f(got_base).scatter_(0, i0_nc.to("npu"), src.to("npu"))
        f(want_base).scatter_(0, i0_nc, src)
        assert torch.equal(got_base.cpu(), want_base)  # written through the view into the base
        f(got_base).scatter_add_(1, i1.to("npu"), src.to("npu"))
        f(want_base).scatter_add_(1, i1, src)
        torch.testing.assert_close(got_base.cpu(), want_base)
        got = torch.gather(f(got_base), 0, i0_nc.to("npu"))
        assert torch.equal(got.cpu(), torch.gather(f(want_base), 0, i0_nc))


@pytest.mark.parametrize("dtype", ADD_DTYPES)
@pytest.mark.parametrize("shape,dim", [((7,), 0), ((6, 5), 0), ((6, 5), 1), ((3, 4, 5), 1), ((3, 4, 5), -1)])
def test_index_add_and_index_copy(dtype, shape, dim):
    x = _data(shape, dtype)
    n = 4
    i = torch.tensor([1, 0, 1, shape[dim] - 1])  # a repeat
    sshape = list(shape)
    sshape[dim] = n
    s = _data(sshape, dtype, 2)
    got = x.to("npu").index_add_(dim, i.to("npu"), s.to("npu"))
    torch.testing.assert_close(got.cpu(), x.clone().index_add_(dim, i, s))
    got = torch.index_add(x.to("npu"), dim, i.to(torch.int32).to("npu"), s.to("npu"), alpha=2)
    torch.testing.assert_close(got.cpu(), torch.index_add(x, dim, i.to(torch.int32), s, alpha=2))
    u = torch.tensor([2, 0, shape[dim] - 1])
    sshape[dim] = 3
    s = _data(sshape, dtype, 3)
    got = x.to("npu").index_copy_(dim, u.to("npu"), s.to("npu"))
    assert torch.equal(got.cpu(), x.clone().index_copy_(dim, u, s))


def test_index_put_accumulate_is_native(fallback_error):
    x = torch.randn(6, 5)
    i, v = torch.tensor([0, 2, 2, -1]), torch.randn(4, 5)
    got = x.to("npu").index_put_((i.to("npu"),), v.to("npu"), accumulate=True)
    torch.testing.assert_close(got.cpu(), x.clone().index_put_((i,), v, accumulate=True))
    m = torch.rand(6, 5) < 0.5
    got = x.to("npu").index_put_((m.to("npu"),), torch.tensor(1.5, device="npu"), accumulate=True)
    torch.testing.assert_close(got.cpu(), x.clone().index_put_((m,), torch.tensor(1.5), accumulate=True))
    got = x.to("npu")
    got[:, torch.tensor([1, 1, 3], device="npu")] += 0  # read-modify-write: no accumulate
    assert torch.equal(got.cpu(), x)


def test_scatter_add_backward_of_gather():
    x = torch.randn(5, 7, requires_grad=True)
    i = torch.randint(0, 7, (5, 9))
    xd = x.detach().to("npu").requires_grad_()
    torch.gather(xd, 1, i.to("npu")).pow(2).sum().backward()
    torch.gather(x, 1, i).pow(2).sum().backward()
    torch.testing.assert_close(xd.grad.cpu(), x.grad)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int32])
@pytest.mark.parametrize("shape,j", [((3, 5000), 4500), ((2, 7, 3136), 3136), ((4, 9), 1), ((50, 700), 31),
                                     ((50, 700), 32)])
def test_gather_last_dim_rows(dtype, shape, j):
    # The row path (>= 32 indices per row): self rows in UB, indices to offsets with vector ops, one
    # vector Gather per chunk (chunks of 2048 indices; an expanded index too); fewer: scalar reads.
    g = torch.Generator().manual_seed(11)
    x = (torch.randn(shape, generator=g) * 100).to(dtype)
    idx = torch.randint(0, shape[-1], (*shape[:-1], j), generator=g)
    assert torch.equal(torch.gather(x.npu(), -1, idx.npu()).cpu(), torch.gather(x, -1, idx))
    e = idx[..., :1, :] if len(shape) == 3 else idx[:1]
    e = e.expand(idx.shape)
    assert torch.equal(torch.gather(x.npu(), -1, e.npu()).cpu(), torch.gather(x, -1, e))


def test_gather_last_dim_rows_bad_index():
    x = torch.zeros(3, 3000, device="npu")
    for bad in [3000, -1, 2**32 + 1]:  # past the end, negative, a nonzero high word
        idx = torch.zeros(3, 2500, dtype=torch.long)
        idx[2, 2100] = bad
        with pytest.raises(RuntimeError, match=rf"index {bad} is out of bounds for dimension with size 3000"):
            torch.gather(x, 1, idx.npu())
            torch.npu.synchronize()
    assert torch.gather(x + 1, 1, torch.zeros(3, 2, dtype=torch.long, device="npu")).sum().item() == 6


def test_bad_input_is_a_clear_error_and_the_device_keeps_working():
    x = torch.zeros(4, 5, device="npu")
    with pytest.raises(RuntimeError, match=r"gather_kernel: .*index 5 is out of bounds for dimension with size 5"):
        torch.gather(x, 1, torch.tensor([[0, 5]], device="npu"))
        torch.npu.synchronize()
    with pytest.raises(RuntimeError, match=r"scatter_kernel: .*index -1 is out of bounds for dimension with size 4"):
        x.scatter_(0, torch.tensor([[-1]], device="npu"), 1.0)
        torch.npu.synchronize()
    with pytest.raises(RuntimeError, match=r"scatter_add_kernel: .*index 9 is out of bounds"):
        x.scatter_add_(0, torch.tensor([[9]], device="npu"), torch.ones(1, 1, device="npu"))
        torch.npu.synchronize()
    for dim, idx in [(0, [1, 4]), (1, [-1])]:  # whole rows (dim 0) and tiles
        with pytest.raises(RuntimeError, match=rf"index {idx[-1]} is out of bounds for dimension with size {x.shape[dim]}"):
            x.index_add_(dim, torch.tensor(idx, device="npu"), torch.ones(4, 5, device="npu").narrow(dim, 0, len(idx)))
            torch.npu.synchronize()
    x.zero_()
    with pytest.raises(TypeError, match=r"gather\(\): Expected dtype int32/int64 for index, got Short"):
        torch.gather(x, 1, torch.tensor([[0]], dtype=torch.int16, device="npu"))
    with pytest.raises(IndexError, match=r"gather\(\): Index tensor must have the same number of dimensions"):
        torch.gather(x, 1, torch.tensor([0], device="npu"))
    with pytest.raises(RuntimeError, match=r"gather\(\): Expected index \[5, 1\] to be no larger than self \[4, 5\] "
                                           r"apart from dimension 1"):
        torch.gather(x, 1, torch.zeros(5, 1, dtype=torch.long, device="npu"))
    with pytest.raises(TypeError, match=r"scatter\(\): Expected self.dtype to be equal to src.dtype"):
        x.scatter_(0, torch.zeros(1, 1, dtype=torch.long, device="npu"), torch.ones(1, 1, device="npu",
                                                                                    dtype=torch.half))
    with pytest.raises(RuntimeError, match=r"scatter_add\(\): Expected index \[2, 2\] to be no larger than self "
                                           r"\[4, 5\] apart from dimension 0 and to be no larger size than src \[1, 1\]"):
        x.scatter_add_(0, torch.zeros(2, 2, dtype=torch.long, device="npu"), torch.ones(1, 1, device="npu"))
    with pytest.raises(IndexError, match=r"index_add_\(\): Number of indices \(2\) should be equal to "
                                         r"source.size\(dim\) \(3\)"):
        x.index_add_(0, torch.tensor([0, 1], device="npu"), torch.ones(3, 5, device="npu"))
    with pytest.raises(RuntimeError, match=r"gather.*index.*cpu"):
        torch.gather(x, 1, torch.tensor([[0]]))
    x.scatter_(1, torch.tensor([[4]], device="npu"), 2.0)  # still usable
    want = torch.zeros(4, 5)
    want[0, 4] = 2.0
    assert torch.equal(x.cpu(), want)


REDUCE_CASES = [((8, 6), 0, (12, 6)), ((8, 6), 1, (8, 15)), ((4, 5, 6), 1, (4, 9, 6)), ((3000, 40), 0, (5000, 40)),
                ((100000,), 0, (30000,))]


@pytest.mark.parametrize("shape,dim,ishape", REDUCE_CASES, ids=str)
@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dtype", ADD_DTYPES)
def test_scatter_reduce(shape, dim, ishape, reduce, include_self, dtype):
    """Repeated indices combine in index order; without include_self only src values meet at a position;
    mean divides by the count (floor division for integers); untouched positions keep self."""
    scale = 1.0 if reduce == "prod" else 10.0  # (prod of ~4 values of |x| < 2: no int overflow)
    g = torch.Generator().manual_seed(5)
    x = (torch.randn(shape, generator=g) * scale).to(dtype)
    src = (torch.randn(ishape, generator=g) * scale).to(dtype)
    i = _index(ishape, shape[dim], seed=6)
    got = x.to("npu").scatter_reduce(dim, i.to("npu"), src.to("npu"), reduce, include_self=include_self)
    want = x.scatter_reduce(dim, i, src, reduce, include_self=include_self)
    if dtype in (torch.float16, torch.bfloat16):
        # rounded after every update here; the CPU's sum accumulates a run of updates in float
        torch.testing.assert_close(got.cpu().float(), want.float(), rtol=2e-2, atol=0.3)
    else:
        torch.testing.assert_close(got.cpu(), want)


def test_scatter_reduce_nan_inplace_out_and_bad_input():
    x = torch.tensor([1.0, 2.0, float("nan"), 4.0])
    i, s = torch.tensor([0, 0, 1, 2, 3]), torch.tensor([float("nan"), 5.0, 7.0, 1.0, -1.0])
    for red in ["amax", "amin"]:  # NaN from src or from self wins, as on the CPU
        torch.testing.assert_close(x.to("npu").scatter_reduce(0, i.to("npu"), s.to("npu"), red).cpu(),
                                   x.scatter_reduce(0, i, s, red), equal_nan=True)
    d = x.to("npu")
    d.scatter_reduce_(0, i.to("npu"), s.to("npu"), "sum", include_self=False)
    out = torch.empty(0, device="npu")
    torch.scatter_reduce(x.to("npu"), 0, i.to("npu"), s.to("npu"), "prod", out=out)
    torch.testing.assert_close(d.cpu(), x.clone().scatter_reduce_(0, i, s, "sum", include_self=False), equal_nan=True)
    torch.testing.assert_close(out.cpu(), x.scatter_reduce(0, i, s, "prod"), equal_nan=True)
    with pytest.raises(RuntimeError, match=r"scatter_reduce\(\): reduce argument must be either sum, prod, mean, "
                                           r"amax or amin, got max"):
        d.scatter_reduce(0, i.to("npu"), s.to("npu"), "max")
    with pytest.raises(TypeError, match=r"scatter_reduce\(\): Expected self.dtype to be equal to src.dtype"):
        d.scatter_reduce(0, i.to("npu"), s.double().to("npu"), "sum")
    with pytest.raises(RuntimeError, match=r"scatter_max_kernel: .*index 9 is out of bounds for dimension with size 4"):
        d.scatter_reduce(0, torch.tensor([9], device="npu"), s[:1].to("npu"), "amax")
        torch.npu.synchronize()
    torch.testing.assert_close(d.scatter_reduce(0, i.to("npu"), s.to("npu"), "mean").cpu(),  # still usable
                               d.cpu().scatter_reduce(0, i, s, "mean"), equal_nan=True)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64])
@pytest.mark.filterwarnings("ignore:The reduce argument of torch.scatter")
def test_scatter_with_reduce_argument(dtype):
    x, s = _data((6, 5), dtype), _data((9, 5), dtype, seed=2)
    i = _index((9, 5), 6, seed=3)
    for red in ["add", "multiply"]:
        got = x.to("npu").scatter(0, i.to("npu"), s.to("npu"), reduce=red)
        torch.testing.assert_close(got.cpu(), x.scatter(0, i, s, reduce=red))
        d = x.to("npu")
        d.scatter_(1, i[:, :3].narrow(0, 0, 6).to("npu") % 5, 3, reduce=red)
        torch.testing.assert_close(d.cpu(), x.clone().scatter_(1, i[:, :3].narrow(0, 0, 6) % 5, 3, reduce=red))
    with pytest.raises(RuntimeError, match=r"reduce argument must be either add or multiply, got sum"):
        x.to("npu").scatter_(0, i.to("npu"), 1, reduce="sum")


def test_wide_dtypes_take_the_fallback(monkeypatch):
    monkeypatch.delenv("TORCH_OPS_NN_FALLBACK", raising=False)
    x, i, s = torch.rand(4, 5) + 1, torch.randint(0, 4, (3, 5)), torch.rand(3, 5) + 1
    got = x.double().to("npu").scatter_reduce(0, i.to("npu"), s.double().to("npu"), "prod")
    torch.testing.assert_close(got.cpu(), x.double().scatter_reduce(0, i, s.double(), "prod"))
    xd = x.double()
    got = xd.to("npu").scatter_add(0, i.to("npu"), s.double().to("npu"))
    torch.testing.assert_close(got.cpu(), xd.scatter_add(0, i, s.double()))


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.uint8])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("minlength", [0, 80])
def test_bincount(dtype, weighted, minlength):
    g = torch.Generator().manual_seed(7)
    x = torch.randint(0, 50, (5000,), generator=g).to(dtype)
    w = torch.rand(5000, generator=g) if weighted else None
    got = torch.bincount(x.to("npu"), None if w is None else w.to("npu"), minlength)
    want = torch.bincount(x, w, minlength)
    assert got.dtype == want.dtype
    torch.testing.assert_close(got.cpu(), want)
    assert torch.equal(torch.bincount(torch.empty(0, dtype=torch.long, device="npu"), minlength=3).cpu(),
                       torch.zeros(3, dtype=torch.long))


def test_bincount_bad_input():
    d = torch.tensor([0, 3, 1], device="npu")
    with pytest.raises(RuntimeError, match=r"bincount only supports 1-d non-negative integral inputs"):
        torch.bincount(torch.tensor([0, -1, 2], device="npu"))
    with pytest.raises(RuntimeError, match=r"bincount only supports 1-d non-negative integral inputs"):
        torch.bincount(d.view(1, 3))
    with pytest.raises(RuntimeError, match=r"weights should be 1-d and have the same length as input"):
        torch.bincount(d, torch.ones(2, device="npu"))
    with pytest.raises(RuntimeError, match=r"minlength should be >= 0"):
        torch.bincount(d, minlength=-1)
    assert torch.equal(torch.bincount(d).cpu(), torch.tensor([1, 1, 0, 1]))  # still usable


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("bins,lo,hi", [(100, 0, 0), (7, -1, 2), (13, -2.5, 2.5), (1000, -3, 3), (1, 0, 0)])
@pytest.mark.parametrize("nan", [False, True])
def test_histc(dtype, bins, lo, hi, nan):
    """The CPU's bins (trunc((x - lo) * bins / (hi - lo)) in the input dtype, x == hi in the last bin,
    values outside the range and NaN not counted); the range from the data when min == max."""
    if nan and lo == hi:
        pytest.skip("the data's range is NaN: an error on both sides (see test_histc_counts_past_float16_precision_and_bad_input)")
    g = torch.Generator().manual_seed(8)
    x = (torch.randn(3000, generator=g) * 3).to(dtype)
    x[7] = hi if hi else x[7]  # a value on the right edge
    if nan:
        x[5] = float("nan")
    got = torch.histc(x.to("npu"), bins, lo, hi)
    # PyTorch's own bfloat16 histc writes outside its result (heap corruption, wrong bins): the reference
    # there is the documented rule with the CPU's bfloat16 arithmetic.
    want = torch.histc(x, bins, lo, hi) if dtype != torch.bfloat16 else _histc_reference(x, bins, lo, hi)
    assert got.dtype == want.dtype and torch.equal(got.cpu(), want)


def _histc_reference(x, bins, lo, hi):
    if lo == hi:
        lo, hi = x.min().item(), x.max().item()
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    lo_t, hi_t = torch.tensor(lo, dtype=x.dtype), torch.tensor(hi, dtype=x.dtype)
    inside = (x >= lo_t) & (x <= hi_t)
    pos = ((x[inside] - lo_t) * bins) / (hi_t - lo_t)
    return torch.bincount(pos.to(torch.long).clamp(0, bins - 1), minlength=bins).to(x.dtype)


def test_histc_counts_past_float16_precision_and_bad_input():
    x = torch.rand(5000, generator=torch.Generator().manual_seed(9)).half()
    got = torch.histc(x.to("npu"), 1, 0, 1)  # counted in float: 5000 (a float16 running count stops at 2048)
    assert got.item() == 5000
    with pytest.raises(RuntimeError, match=r"bins must be > 0, but got 0"):
        torch.histc(x.to("npu"), 0)
    with pytest.raises(RuntimeError, match=r"torch.histc: max must be larger than min"):
        torch.histc(x.to("npu"), 5, 3, 1)
    with pytest.raises(RuntimeError, match=r"torch.histc: range of \[1, inf\] is not finite"):
        torch.histc(x.to("npu"), 5, 1, float("inf"))
    y = torch.tensor([1.0, float("nan")], device="npu")
    with pytest.raises(RuntimeError, match=r"torch.histc: range of \[.*nan, .*nan\] is not finite"):
        torch.histc(y, 5)
    assert torch.equal(torch.histc(y, 2, 0, 2).cpu(), torch.tensor([0.0, 1.0]))  # still usable


def test_int32_and_empty_indices_as_on_the_cpu():
    x = torch.randn(6, 5)
    i32 = torch.randint(0, 6, (4, 5), dtype=torch.int32)
    torch.testing.assert_close(torch.gather(x.npu(), 0, i32.npu()).cpu(), torch.gather(x, 0, i32))
    src = torch.randn(4, 5)
    for fn in (lambda t, i, s: t.scatter(0, i, s), lambda t, i, s: t.scatter_add(0, i, s),
               lambda t, i, s: t.scatter(0, i, 2.5), lambda t, i, s: t.scatter_reduce(0, i, s, "amax"),
               lambda t, i, s: t.scatter(0, i, s, reduce="multiply")):
        idx = torch.stack([torch.randperm(6)[:4] for _ in range(5)], 1).to(torch.int32)  # no repeats per column
        torch.testing.assert_close(fn(x.npu(), idx.npu(), src.npu()).cpu(), fn(x, idx, src))
    empty = torch.empty(0, dtype=torch.uint8)
    assert torch.gather(torch.randn(5).npu(), 0, empty.npu()).shape == (0,)
    with pytest.raises(TypeError, match=r"gather\(\): Expected dtype int32/int64 for index, got Byte"):
        torch.gather(torch.randn(5).npu(), 0, torch.zeros(2, dtype=torch.uint8).npu())
