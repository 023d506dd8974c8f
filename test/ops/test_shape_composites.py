"""1-D interpolation (linear / nearest / nearest-exact, + backward) through the 2-D kernels,
adaptive_max_pool2d (+ backward) when the output divides the input, repeat_interleave with a tensor
of repeats, unfold_backward: against the CPU, with bad input."""
import pytest
import torch
import torch.nn.functional as F

import torch_ops_nn

pytestmark = pytest.mark.usefixtures("fallback_error")


@pytest.mark.parametrize("mode,align", [("linear", False), ("linear", True), ("nearest", None),
                                        ("nearest-exact", None)])
@pytest.mark.parametrize("size,scale", [(37, None), (8, None), (None, 2.5), (None, 0.4)])
def test_interpolate_1d(mode, align, size, scale):
    g = torch.Generator().manual_seed(3)
    x = torch.randn(2, 3, 20, generator=g, requires_grad=True)
    kw = dict(size=size, scale_factor=scale, mode=mode)
    if align is not None:
        kw["align_corners"] = align
    y = F.interpolate(x, **kw)
    go = torch.randn(y.shape, generator=g)
    y.backward(go)
    xd = x.detach().npu().requires_grad_()
    yd = F.interpolate(xd, **kw)
    yd.backward(go.npu())
    torch.testing.assert_close(yd.detach().cpu(), y.detach(), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(xd.grad.cpu(), x.grad, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shape,out", [((2, 3, 8, 12), (1, 1)), ((2, 3, 8, 12), (4, 3)), ((3, 9, 6), (3, 2)),
                                       ((1, 2, 7, 7), (7, 7))])
def test_adaptive_max_pool2d(shape, out):
    g = torch.Generator().manual_seed(4)
    x = torch.randn(shape, generator=g)
    x.view(-1)[::5] = 0.5  # ties: the first maximum's index, as the CPU
    xc = x.clone().requires_grad_()
    y, idx = F.adaptive_max_pool2d(xc, out, return_indices=True)
    y.backward(torch.ones_like(y))
    xd = x.npu().requires_grad_()
    yd, idxd = F.adaptive_max_pool2d(xd, out, return_indices=True)
    yd.backward(torch.ones_like(yd))
    torch.testing.assert_close(yd.detach().cpu(), y.detach())
    assert torch.equal(idxd.cpu(), idx)
    torch.testing.assert_close(xd.grad.cpu(), xc.grad)


def test_adaptive_max_pool2d_uneven_regions_are_native():
    # (they took the CPU fallback; test_pool.py covers them against the CPU in depth)
    x = torch.randn(1, 2, 7, 5)
    y, i = F.adaptive_max_pool2d(x.npu(), (3, 2), return_indices=True)
    want, wi = F.adaptive_max_pool2d(x, (3, 2), return_indices=True)
    assert torch.equal(y.cpu(), want) and torch.equal(i.cpu(), wi)


def test_repeat_interleave_tensor_repeats():
    g = torch.Generator().manual_seed(5)
    x = torch.randn(6, 4, generator=g)
    r = torch.tensor([0, 3, 1, 0, 2, 5])
    for dim in (0, None):
        got = torch.repeat_interleave(x.npu(), r.npu() if dim == 0 else r.repeat(4)[:24].npu(), dim=dim)
        want = torch.repeat_interleave(x, r if dim == 0 else r.repeat(4)[:24], dim=dim)
        assert torch.equal(got.cpu(), want)
    assert torch.equal(torch.repeat_interleave(r.npu()).cpu(), torch.repeat_interleave(r))
    assert torch.equal(torch.repeat_interleave(x.npu(), r.npu(), dim=0, output_size=11).cpu(),
                       torch.repeat_interleave(x, r, dim=0))
    assert torch.repeat_interleave(torch.zeros(0, dtype=torch.long).npu()).numel() == 0
    with pytest.raises(RuntimeError, match="repeats can not be negative"):
        torch.repeat_interleave(torch.tensor([1, -1]).npu())
    with pytest.raises(RuntimeError, match="allocated size does not match required size"):
        torch.repeat_interleave(x.npu(), r.npu(), dim=0, output_size=5)


@pytest.mark.parametrize("p", [0.0, 0.5, 1.0, 2.0, 3.0, float("inf")])
@pytest.mark.parametrize("shapes", [((10, 5), (7, 5)), ((2, 6, 4), (2, 3, 4)), ((1, 4), (5, 4))])
def test_cdist_direct_path_and_gradients(p, shapes):
    """torch.cdist's direct path (_cdist_forward, _cdist_backward) against the CPU, with repeated
    points (zero distances: the gradient is 0 there, not NaN) and ties for p = inf."""
    g = torch.Generator().manual_seed(int(min(p, 9.0) * 10) + len(shapes[0]))
    a = torch.randn(shapes[0], generator=g)
    b = torch.randn(shapes[1], generator=g)
    b[..., 0, :] = a[..., 0, :]  # a zero distance
    a[..., -1, 1] = a[..., -1, 0]  # ties inside a row
    ac, bc = a.clone().requires_grad_(), b.clone().requires_grad_()
    ad, bd = a.npu().requires_grad_(), b.npu().requires_grad_()
    want = torch.cdist(ac, bc, p=p)
    got = torch.cdist(ad, bd, p=p)
    torch.testing.assert_close(got.detach().cpu(), want.detach(), rtol=1e-5, atol=1e-5)
    go = torch.randn(want.shape, generator=g)
    want.backward(go)
    got.backward(go.npu())
    torch.testing.assert_close(ad.grad.cpu(), ac.grad, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(bd.grad.cpu(), bc.grad, rtol=1e-4, atol=1e-5)
    with pytest.raises(RuntimeError, match="must have the same number of columns"):
        torch.cdist(ad, torch.randn(3, 9).npu())


@pytest.mark.parametrize("shape,dim,size,step", [((10,), 0, 3, 1), ((4, 11), 1, 4, 2), ((4, 11), 1, 3, 5),
                                                 ((3, 9, 2), 1, 9, 1), ((5, 6, 7), 0, 2, 3), ((2, 7), -1, 7, 3),
                                                 ((5, 5), 1, 0, 2)])  # (windows of size 0: the CPU allows them)
def test_unfold_backward_matches_cpu(shape, dim, size, step, fallback_error):
    # the gradient of Tensor.unfold (overlapping, strided, whole-length and no windows)
    torch.manual_seed(5)
    x = torch.randn(shape)
    xr, xn = x.clone().requires_grad_(), x.to("npu").requires_grad_()
    ref, out = xr.unfold(dim, size, step), xn.unfold(dim, size, step)
    g = torch.randn(ref.shape)
    ref.backward(g)
    out.backward(g.to("npu"))
    assert torch.allclose(xn.grad.cpu(), xr.grad, atol=1e-6)


def test_istft_overlap_add_stays_on_the_device(monkeypatch):
    monkeypatch.setenv("TORCH_OPS_NN_FALLBACK", "silent")  # the FFTs and complex math are CPU fallbacks
    torch.manual_seed(6)
    x, w = torch.randn(2, 3000), torch.hann_window(256)
    spec = torch.stft(x, 256, window=w, return_complex=True)
    ref = torch.istft(spec, 256, window=w, length=3000)
    out = torch.istft(spec.to("npu"), 256, window=w.to("npu"), length=3000)
    assert torch.allclose(out.cpu(), ref, atol=1e-5)
    assert "aten::unfold_backward" not in torch_ops_nn.fallback_ops()
