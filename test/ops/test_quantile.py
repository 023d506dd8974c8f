"""quantile / nanquantile on npu (sort, gather and lerp on the device; ranks in double on the host, as
the CPU computes them) against the CPU: every interpolation, scalar / 0-D / 1-D q, dims and keepdim,
NaN handling, autograd, and bad input."""
import pytest
import torch

pytestmark = pytest.mark.usefixtures("fallback_error")

X = torch.randn(5, 7, 9, generator=torch.Generator().manual_seed(0))
XN = X.clone()
XN[0, 1, 3] = float("nan")
XN[2, :, 4] = float("nan")
XN[1, 1, :] = float("nan")
QS = [0.0, 0.3, 0.5, 1.0, torch.tensor(0.25), torch.tensor([0.1, 0.5, 0.99])]
DIMS = [(None, False), (None, True), (1, False), (2, True), (-1, False), (0, True)]


@pytest.mark.parametrize("fn", [torch.quantile, torch.nanquantile])
@pytest.mark.parametrize("with_nan", [False, True])
@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
def test_matches_cpu(fn, with_nan, interpolation):
    src = XN if with_nan else X
    for q in QS:
        qd = q.npu() if isinstance(q, torch.Tensor) else q
        for dim, keepdim in DIMS:
            want = fn(src, q, dim=dim, keepdim=keepdim, interpolation=interpolation)
            got = fn(src.npu(), qd, dim=dim, keepdim=keepdim, interpolation=interpolation)
            assert got.device.type == "npu" and got.shape == want.shape, (q, dim, keepdim)
            torch.testing.assert_close(got.cpu(), want, rtol=1e-6, atol=1e-6, equal_nan=True)


def test_rank_on_a_half_and_an_integer():
    # q * (k - 1) in float32 would be exactly 0.5 / 7.0 here; in double (the CPU's) it is not.
    x = torch.arange(6.0)
    for q, interp in [(torch.tensor([0.1]), "nearest"), (torch.tensor([0.7]), "lower")]:
        want = torch.quantile(x, q, interpolation=interp)
        assert torch.equal(torch.quantile(x.npu(), q.npu(), interpolation=interp).cpu(), want)
    x = torch.arange(11.0)
    assert torch.equal(torch.quantile(x.npu(), torch.tensor([0.7]).npu(), interpolation="lower").cpu(),
                       torch.quantile(x, torch.tensor([0.7]), interpolation="lower"))


def test_autograd_matches_cpu():
    a = torch.randn(4, 10, requires_grad=True)
    torch.quantile(a, 0.3, dim=1).sum().backward()
    ad = a.detach().npu().requires_grad_()
    torch.quantile(ad, 0.3, dim=1).sum().backward()
    torch.testing.assert_close(ad.grad.cpu(), a.grad)
    a.grad = None
    torch.nanquantile(a, torch.tensor([0.2, 0.7]), dim=0).sum().backward()
    ad.grad = None
    torch.nanquantile(ad, torch.tensor([0.2, 0.7]).npu(), dim=0).sum().backward()
    torch.testing.assert_close(ad.grad.cpu(), a.grad)


def test_bad_input():
    x = X.npu()
    with pytest.raises(RuntimeError, match=r"q must be in the range \[0, 1\] but got 1.5"):
        torch.quantile(x, 1.5)
    with pytest.raises(RuntimeError, match=r"q values must be in the range \[0, 1\]"):
        torch.quantile(x, torch.tensor([0.5, 2.0]).npu())
    with pytest.raises(RuntimeError, match=r"interpolation must be one of linear, lower, higher, midpoint or nearest"):
        torch.quantile(x, 0.5, interpolation="cubic")
    with pytest.raises(RuntimeError, match=r"input tensor must be non-empty"):
        torch.quantile(torch.empty(0).npu(), 0.5)
    # FALLBACK=error: the fallback's error, quoting the kernel's (the CPU has no float16 quantile either)
    with pytest.raises(NotImplementedError, match=r"must be either float or double dtype"):
        torch.quantile(x.half(), 0.5)
    with pytest.raises(RuntimeError, match=r"q must be a scalar or 1D tensor"):
        torch.quantile(x, torch.rand(2, 2).npu())
    assert torch.quantile(x, 0.5).item() == pytest.approx(torch.quantile(X, 0.5).item())  # still usable


@pytest.mark.parametrize("dim", [None, 0, -1])
@pytest.mark.parametrize("keepdim", [False, True])
def test_zero_dim_input_keeps_no_dim(dim, keepdim):
    x = torch.tensor(3.5)
    for q in (0.5, torch.tensor([0.25, 0.5])):
        want = torch.quantile(x, q, dim=dim, keepdim=keepdim)
        got = torch.quantile(x.npu(), q.npu() if isinstance(q, torch.Tensor) else q, dim=dim, keepdim=keepdim)
        assert got.shape == want.shape
        torch.testing.assert_close(got.cpu(), want)
