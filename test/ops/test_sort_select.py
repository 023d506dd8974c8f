"""kthvalue / median / nanmedian and unique / unique_consecutive on npu (compositions over the npu sort)
against the CPU: values exactly, indices that point at the values (and equal to the CPU's where values
are distinct), NaN handling (median propagates NaN, nanmedian skips it, unique keeps each NaN apart),
every return flag, out=, autograd, bad input and the fallbacks."""
import pytest
import torch

pytestmark = pytest.mark.usefixtures("fallback_error")


def _rows(shape, dtype, seed, ties):
    g = torch.Generator().manual_seed(seed)
    if ties:
        return torch.randint(-3, 4, shape, generator=g).to(dtype)
    return torch.randperm(torch.Size(shape).numel(), generator=g).reshape(shape).to(dtype) - 50


def _check_select(got, want, x, dim, keepdim):
    gv, gi = got
    wv, wi = want
    assert gv.shape == wv.shape and gi.shape == wi.shape and gi.dtype == torch.int64
    torch.testing.assert_close(gv.cpu(), wv, rtol=0, atol=0, equal_nan=True)
    idx = gi.cpu() if keepdim else gi.cpu().unsqueeze(dim)
    picked = torch.gather(x, dim, idx)
    torch.testing.assert_close(picked if keepdim else picked.squeeze(dim), wv, rtol=0, atol=0, equal_nan=True)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.int32, torch.int64])
@pytest.mark.parametrize("shape,dim", [((6, 41), 1), ((40, 5), 0), ((3, 4, 10), -1), ((5000,), 0)])
@pytest.mark.parametrize("keepdim", [False, True])
@pytest.mark.parametrize("ties", [False, True])
def test_median_kthvalue_nanmedian_match_cpu(dtype, shape, dim, keepdim, ties):
    x = _rows(shape, dtype, seed=len(shape), ties=ties)
    distinct = torch.unique(x.float()).numel() == x.numel()  # (16-bit floats round large integers together)
    xn = x.to("npu")
    n = x.shape[dim]
    for k in (1, (n + 1) // 2, n):
        got = torch.kthvalue(xn, k, dim, keepdim)
        _check_select(got, torch.kthvalue(x, k, dim, keepdim), x, dim, keepdim)
        if distinct:
            assert torch.equal(got[1].cpu(), torch.kthvalue(x, k, dim, keepdim)[1])
    _check_select(torch.median(xn, dim, keepdim), torch.median(x, dim, keepdim), x, dim, keepdim)
    if dtype.is_floating_point:
        _check_select(torch.nanmedian(xn, dim, keepdim), torch.nanmedian(x, dim, keepdim), x, dim, keepdim)
    assert torch.equal(torch.median(xn).cpu(), torch.median(x))


def test_median_nan_rows():
    x = torch.tensor([[1.0, float("nan"), 3.0, float("nan")], [2.0, 1.0, 2.0, 5.0],
                      [float("nan")] * 4, [4.0, float("nan"), -1.0, 0.5]])
    xn = x.to("npu")
    for fn in (torch.median, torch.nanmedian):
        gv, gi = fn(xn, 1)
        wv, wi = fn(x, 1)
        torch.testing.assert_close(gv.cpu(), wv, equal_nan=True)
        # Rows 0, 1, 3: the first NaN (median) or a distinct value; row 2 (all NaN): the CPU's index
        # is an implementation detail (torch documents median's index as not necessarily the first),
        # ours is the first NaN — either way it points at a NaN.
        assert torch.equal(gi.cpu()[[0, 1, 3]], wi[[0, 1, 3]]) and torch.isnan(x[2, gi[2].item()])
        torch.testing.assert_close(fn(xn).cpu(), fn(x), equal_nan=True)
    kv, ki = torch.kthvalue(xn, 4, 1)  # NaN ranks last
    torch.testing.assert_close(kv.cpu(), torch.kthvalue(x, 4, 1)[0], equal_nan=True)


def test_select_out_autograd_and_errors():
    x = torch.randn(4, 9)
    v, i = torch.empty(0, device="npu"), torch.empty(0, dtype=torch.long, device="npu")
    torch.median(x.to("npu"), 1, out=(v, i))
    assert torch.equal(v.cpu(), torch.median(x, 1)[0]) and torch.equal(i.cpu(), torch.median(x, 1)[1])
    v, i = torch.empty(0, device="npu"), torch.empty(0, dtype=torch.long, device="npu")
    torch.kthvalue(x.to("npu"), 2, 0, out=(v, i))
    assert torch.equal(v.cpu(), torch.kthvalue(x, 2, 0)[0])
    xc = x.clone().requires_grad_()
    xn = x.to("npu").requires_grad_()
    torch.median(xc, 1)[0].sum().backward()
    torch.median(xn, 1)[0].sum().backward()
    assert torch.equal(xn.grad.cpu(), xc.grad)
    with pytest.raises(IndexError, match="kthvalue\\(\\): selected number k out of range for dimension 1"):
        torch.kthvalue(x.to("npu"), 10, 1)
    with pytest.raises(IndexError, match="median\\(\\): Expected reduction dim 1 to have non-zero size"):
        torch.median(torch.empty(3, 0, device="npu"), 1)
    assert torch.isnan(torch.median(torch.empty(0, device="npu"))).item()  # NaN, as on the CPU
    with pytest.raises(NotImplementedError, match="median"):  # float64: the CPU fallback
        torch.median(torch.randn(5, dtype=torch.float64).to("npu"), 0)


def _check_unique(x, **kw):
    want = torch.unique(x, **kw)
    got = torch.unique(x.to("npu"), **kw)
    want = want if isinstance(want, tuple) else (want,)
    got = got if isinstance(got, tuple) else (got,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        torch.testing.assert_close(g.cpu(), w, rtol=0, atol=0, equal_nan=True)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int32, torch.int64, torch.uint8, torch.bool])
@pytest.mark.parametrize("shape", [(1000,), (7, 33), (2, 3, 4), (0,)])
def test_unique_matches_cpu(dtype, shape):
    g = torch.Generator().manual_seed(1)
    x = torch.randint(0, 2 if dtype == torch.bool else 20, shape, generator=g).to(dtype)
    for inv in (False, True):
        for cnt in (False, True):
            _check_unique(x, sorted=True, return_inverse=inv, return_counts=cnt)
    _check_unique(x, sorted=False)


def test_unique_nan_signed_zero_and_consecutive():
    x = torch.tensor([3.0, float("nan"), 1.0, float("nan"), 3.0, -0.0, 0.0])
    _check_unique(x, return_inverse=True, return_counts=True)  # each NaN apart; -0.0 and 0.0 one group
    y = torch.tensor([[1, 1, 2], [2, 2, 1]])
    for inv in (False, True):
        for cnt in (False, True):
            want = torch.unique_consecutive(y, return_inverse=inv, return_counts=cnt)
            got = torch.unique_consecutive(y.to("npu"), return_inverse=inv, return_counts=cnt)
            want = want if isinstance(want, tuple) else (want,)
            got = got if isinstance(got, tuple) else (got,)
            for gg, w in zip(got, want):
                assert torch.equal(gg.cpu(), w)
    with pytest.raises(NotImplementedError, match="unique_dim"):  # unique with dim=: the CPU fallback
        torch.unique(y.to("npu"), dim=0)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int32, torch.int64, torch.uint8])
@pytest.mark.parametrize("shape,dim", [((6, 9), 1), ((12, 5), 0), ((3, 4, 10), -1), ((3000,), 0)])
@pytest.mark.parametrize("keepdim", [False, True])
def test_mode_matches_cpu(dtype, shape, dim, keepdim):
    # the most frequent value, the smallest among equally frequent ones (the CPU's rule)
    x = torch.randint(0, 6, shape, generator=torch.Generator().manual_seed(len(shape))).to(dtype)
    got = torch.mode(x.to("npu"), dim, keepdim)
    want = torch.mode(x, dim, keepdim)
    _check_select(got, want, x, dim, keepdim)
    if x.shape[dim] <= 16:  # a short row: the CPU's index is the value's last occurrence, as ours
        assert torch.equal(got[1].cpu(), want[1])
    values = torch.empty(0, dtype=dtype, device="npu")
    indices = torch.empty(0, dtype=torch.long, device="npu")
    r = torch.mode(x.to("npu"), dim, keepdim, out=(values, indices))
    assert r[0] is values and r[1] is indices
    torch.testing.assert_close(values.cpu(), want[0], rtol=0, atol=0)


def test_mode_edges_and_errors():
    x = torch.tensor(3.0)
    v, i = torch.mode(x.to("npu"), 0)
    assert v.item() == 3.0 and i.item() == 0 and v.dim() == 0
    with pytest.raises(IndexError, match=r"mode\(\): Expected reduction dim 1 to have non-zero size"):
        torch.mode(torch.empty(2, 0, device="npu"), 1)
    with pytest.raises(RuntimeError, match="mode: expected out tensor to have dtype Float, but got Half"):
        torch.mode(torch.ones(3, device="npu"), 0, out=(torch.empty(0, dtype=torch.half, device="npu"),
                                                        torch.empty(0, dtype=torch.long, device="npu")))
