"""Pooling on npu (max_pool2d with indices, avg_pool2d, adaptive_avg_pool2d; forward and backward) vs CPU.

Max pooling returns inputs and PyTorch's indices exactly (any dtype). Average pooling and gradients:
float32 1e-5, float16 1e-2, bfloat16 5e-2 relative to the largest value (sums run in float32).
"""
import pytest
import torch
import torch.nn.functional as F

DTYPES = [torch.float32, torch.float16, torch.bfloat16]
TOL = {torch.float32: 1e-5, torch.float16: 1e-2, torch.bfloat16: 5e-2}


def close(npu, ref, tol):
    npu = npu.cpu().float()
    ref = ref.float()
    assert npu.shape == ref.shape
    scale = max(1.0, ref.abs().max().item())
    err = (npu - ref).abs().max().item()
    assert err <= tol * scale, f"max abs error {err} > {tol * scale}"


def layout(x, kind):
    if kind == "channels_last":
        return x.contiguous(memory_format=torch.channels_last)
    if kind == "strided":
        return x.transpose(-1, -2).contiguous().transpose(-1, -2)
    return x


# (shape, kernel, stride, padding, dilation, ceil_mode)
MAX_CASES = [
    ((2, 3, 8, 8), 3, 2, 1, 1, False),
    ((1, 2, 7, 7), 2, 2, 0, 1, True),
    ((2, 5, 13, 11), 3, 2, 1, 2, False),
    ((1, 1, 6, 6), 3, 2, 0, 1, True),      # ceil_mode: last window starts inside, ends past the edge
    ((1, 3, 56, 56), 3, 2, 1, 1, False),   # ResNet stem geometry
    ((2, 3, 9, 10), (3, 2), (2, 1), (1, 0), 1, True),
    ((3, 8, 8), 2, 1, 0, 1, False),        # unbatched
    ((1, 4, 5, 5), 5, 1, 2, 1, False),     # window as large as the input
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", MAX_CASES, ids=lambda c: f"{c[0]}k{c[1]}s{c[2]}p{c[3]}d{c[4]}c{int(c[5])}")
@pytest.mark.parametrize("kind", ["contiguous", "channels_last", "strided"])
def test_max_pool2d(fallback_error, dtype, case, kind):
    shape, k, s, p, d, ceil = case
    if len(shape) != 4 and kind == "channels_last":
        pytest.skip("channels_last needs 4-D")
    torch.manual_seed(0)
    x = torch.randn(shape).to(dtype)
    y, idx = F.max_pool2d(x.float(), k, s, p, d, ceil, return_indices=True)
    yn, idxn = F.max_pool2d(layout(x.to("npu"), kind), k, s, p, d, ceil, return_indices=True)
    assert yn.dtype == dtype and idxn.dtype == torch.int64
    assert torch.equal(yn.cpu().float(), y)
    assert torch.equal(idxn.cpu(), idx)
    xr = x.float().clone().requires_grad_()
    xn = layout(x.to("npu"), kind).detach().requires_grad_()
    g = torch.randn(y.shape).to(dtype)
    F.max_pool2d(xr, k, s, p, d, ceil).backward(g.float())
    F.max_pool2d(xn, k, s, p, d, ceil).backward(g.to("npu"))
    close(xn.grad, xr.grad, TOL[dtype])


def test_max_pool2d_autograd_graph_as_cpu(fallback_error):
    """F.max_pool2d with a gradient to compute records max_pool2d_with_indices, as the CPU does, so the
    backward uses the forward's indices (no recomputation); without one it stays values-only. Forward-mode
    AD and vmap(grad) go through the same routing."""
    import torch.autograd.forward_ad as fwAD
    from torch.func import grad, vmap

    x = torch.randn(2, 3, 9, 9)
    xc, xd = x.clone().requires_grad_(), x.npu().requires_grad_()
    yc, yd = F.max_pool2d(xc, 3, 2, 1), F.max_pool2d(xd, 3, 2, 1)
    assert type(yd.grad_fn).__name__ == type(yc.grad_fn).__name__ == "MaxPool2DWithIndicesBackward0"
    g = torch.randn_like(yc)
    yc.backward(g)
    yd.backward(g.npu())
    torch.testing.assert_close(xd.grad.cpu(), xc.grad)  # overlapping windows add in another order
    with torch.no_grad():
        assert F.max_pool2d(xd, 3, 2, 1).grad_fn is None
    with fwAD.dual_level():
        t = torch.randn_like(x)
        tan = fwAD.unpack_dual(F.max_pool2d(fwAD.make_dual(x.npu(), t.npu()), 3, 2, 1)).tangent
        assert torch.equal(tan.cpu(), fwAD.unpack_dual(F.max_pool2d(fwAD.make_dual(x, t), 3, 2, 1)).tangent)
    f = lambda v: F.max_pool2d(v, 2).sum()  # noqa: E731
    assert torch.equal(vmap(grad(f))(x.npu()[:, :1]).cpu(), vmap(grad(f))(x[:, :1]))


def test_max_pool2d_all_minus_inf_window_keeps_first_valid_index(fallback_error):
    x = torch.full((1, 1, 4, 4), float("-inf"))
    x[0, 0, 3, 3] = 1.0
    y, idx = F.max_pool2d(x, 3, 2, 1, return_indices=True)
    yn, idxn = F.max_pool2d(x.npu(), 3, 2, 1, return_indices=True)
    assert torch.equal(yn.cpu(), y) and torch.equal(idxn.cpu(), idx)


# (shape, kernel, stride, padding, ceil_mode)
AVG_CASES = [
    ((2, 3, 8, 8), 3, 2, 1, False),
    ((1, 2, 7, 7), 2, 2, 0, True),
    ((2, 5, 13, 11), 3, 1, 1, False),
    ((1, 1, 6, 6), 3, 2, 1, True),
    ((2, 3, 9, 10), (3, 2), (2, 1), (1, 0), True),
    ((3, 8, 8), 2, 2, 0, False),
    ((1, 3, 56, 56), 2, 2, 0, False),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", AVG_CASES, ids=lambda c: f"{c[0]}k{c[1]}s{c[2]}p{c[3]}c{int(c[4])}")
@pytest.mark.parametrize("count_include_pad,divisor", [(True, None), (False, None), (True, 5)])
def test_avg_pool2d(fallback_error, dtype, case, count_include_pad, divisor):
    shape, k, s, p, ceil = case
    torch.manual_seed(1)
    x = torch.randn(shape).to(dtype)
    y = F.avg_pool2d(x.float(), k, s, p, ceil, count_include_pad, divisor)
    yn = F.avg_pool2d(x.to("npu"), k, s, p, ceil, count_include_pad, divisor)
    assert yn.dtype == dtype
    close(yn, y, TOL[dtype])
    xr = x.float().clone().requires_grad_()
    xn = x.to("npu").detach().requires_grad_()
    g = torch.randn(y.shape).to(dtype)
    F.avg_pool2d(xr, k, s, p, ceil, count_include_pad, divisor).backward(g.float())
    F.avg_pool2d(xn, k, s, p, ceil, count_include_pad, divisor).backward(g.to("npu"))
    close(xn.grad, xr.grad, TOL[dtype])


def test_avg_pool2d_channels_last(fallback_error):
    x = torch.randn(2, 6, 9, 9)
    y = F.avg_pool2d(x, 3, 2, 1)
    yn = F.avg_pool2d(x.npu().contiguous(memory_format=torch.channels_last), 3, 2, 1)
    assert yn.is_contiguous(memory_format=torch.channels_last)
    close(yn, y, 1e-5)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,out", [((2, 3, 7, 7), (1, 1)), ((2, 3, 9, 9), (3, 3)), ((1, 2, 10, 7), (4, 3)),
                                       ((2, 2048, 7, 7), (1, 1)), ((2, 3, 13, 17), (1, 1)), ((5, 11, 11), (2, 5))])
def test_adaptive_avg_pool2d(fallback_error, dtype, shape, out):
    torch.manual_seed(2)
    x = torch.randn(shape).to(dtype)
    y = torch._adaptive_avg_pool2d(x.float(), out)
    yn = torch._adaptive_avg_pool2d(x.to("npu"), out)
    close(yn, y, TOL[dtype])
    g = torch.randn(y.shape).to(dtype)
    gx = torch.ops.aten._adaptive_avg_pool2d_backward(g.float(), x.float())
    gxn = torch.ops.aten._adaptive_avg_pool2d_backward(g.to("npu"), x.to("npu"))
    close(gxn, gx, TOL[dtype])


def test_adaptive_avg_pool2d_autograd_general(fallback_error):
    x = torch.randn(2, 3, 10, 9)
    xr, xn = x.clone().requires_grad_(), x.npu().requires_grad_()
    g = torch.randn(2, 3, 4, 4)
    F.adaptive_avg_pool2d(xr, (4, 4)).backward(g)
    F.adaptive_avg_pool2d(xn, (4, 4)).backward(g.npu())
    close(xn.grad, xr.grad, 1e-5)


def test_pool_errors(fallback_error):
    x = torch.randn(1, 2, 4, 4).npu()
    with pytest.raises(RuntimeError, match=r"max_pool2d: output height \(H \+ 2\*padding - dilation\*\(kernel-1\) - 1\)"
                                           r"/stride \+ 1 = \(4 \+ 2\*0 - 1\*\(5-1\) - 1\)/1 \+ 1 = 0 is not positive"):
        F.max_pool2d(x, 5, 1, 0)
    with pytest.raises(RuntimeError, match=r"avg_pool2d: output width .* = \(4 \+ 2\*0 - 1\*\(6-1\) - 1\)/1 \+ 1 = -1 is not positive"):
        F.avg_pool2d(torch.randn(1, 1, 8, 4).npu(), (1, 6), 1, 0)
    with pytest.raises(RuntimeError, match=r"padding \(2, 2\) must be at most half of the effective kernel size"):
        F.max_pool2d(x, 3, 1, 2)
    with pytest.raises(RuntimeError, match="stride must be positive"):
        torch.ops.aten.max_pool2d_with_indices(x, [2, 2], [0, 0], [0, 0], [1, 1], False)
    with pytest.raises(RuntimeError, match=r"input must be 3-D \(C, H, W\) or 4-D"):
        F.max_pool2d(torch.randn(4, 4).npu(), 2)
    with pytest.raises(NotImplementedError, match="has dtype Long"):
        torch.ops.aten.max_pool2d_with_indices(torch.ones(1, 1, 4, 4, dtype=torch.long).npu(), [2, 2], [], [0, 0],
                                               [1, 1], False)
    y, idx = torch.ops.aten.max_pool2d_with_indices(x, [2, 2], [2, 2], [0, 0], [1, 1], False)
    with pytest.raises(RuntimeError, match=r"'indices' is on cpu, but npu tensors are expected"):
        torch.ops.aten.max_pool2d_with_indices_backward(y, x, [2, 2], [2, 2], [0, 0], [1, 1], False, idx.cpu())
    with pytest.raises(RuntimeError, match="divisor_override must not be zero"):
        F.avg_pool2d(x, 2, divisor_override=0)


def test_zero_batch(fallback_error):
    x = torch.randn(0, 3, 6, 6).npu().requires_grad_()
    y = F.max_pool2d(x, 2)
    assert y.shape == (0, 3, 3, 3)
    y.backward(torch.randn(0, 3, 3, 3).npu())
    assert x.grad.shape == x.shape
    assert F.avg_pool2d(x.detach(), 3, 1, 1).shape == (0, 3, 6, 6)
    assert torch._adaptive_avg_pool2d(x.detach(), (1, 1)).shape == (0, 3, 1, 1)


@pytest.mark.parametrize("k,s,p", [(3, 2, 1), (5, 3, 2)])
def test_large_planes_use_several_bands(fallback_error, k, s, p):
    """224x224 planes do not fit one UB band: the kernels walk bands of output rows (and carry the
    overlapping input rows of the backward accumulator from band to band)."""
    torch.manual_seed(5)
    x = torch.randn(1, 2, 224, 224)
    y, idx = F.max_pool2d(x, k, s, p, return_indices=True)
    yn, idxn = F.max_pool2d(x.npu(), k, s, p, return_indices=True)
    assert torch.equal(yn.cpu(), y) and torch.equal(idxn.cpu(), idx)
    g = torch.randn(y.shape)
    for fn in (lambda t: F.max_pool2d(t, k, s, p), lambda t: F.avg_pool2d(t, k, s, p)):
        xr, xn = x.clone().requires_grad_(), x.npu().requires_grad_()
        ref, out = fn(xr), fn(xn)
        close(out, ref, 1e-5)
        ref.backward(g)
        out.backward(g.npu())
        close(xn.grad, xr.grad, 1e-5)


def test_max_pool2d_nan_propagates_like_cpu(fallback_error):
    """A NaN wins its window (value NaN, index of the last NaN in scan order), as on the CPU."""
    x = torch.randn(2, 3, 9, 9)
    x[0, 0, 2, 3] = float("nan")
    x[1, 2, 4, 4] = x[1, 2, 4, 5] = float("nan")
    x[0, 1, 0, 0] = float("inf")
    for k, s, p in [(3, 2, 1), (2, 2, 0), (3, 1, 1)]:
        y, idx = F.max_pool2d(x, k, s, p, return_indices=True)
        yn, idxn = F.max_pool2d(x.npu(), k, s, p, return_indices=True)
        assert torch.equal(torch.nan_to_num(yn.cpu(), 7.0), torch.nan_to_num(y, 7.0))
        assert torch.equal(idxn.cpu(), idx)


# ---------------------------------------------------------------- 3-D max pooling (composition over frames)
MAXPOOL3D_CASES = [
    # shape, kernel, stride, padding, dilation, ceil_mode
    ((2, 3, 6, 9, 8), 2, None, 0, 1, False),
    ((1, 2, 7, 10, 10), (3, 3, 3), (2, 2, 2), 1, 1, True),
    ((2, 2, 9, 7, 7), (2, 3, 2), (1, 2, 1), (1, 1, 0), (2, 1, 1), False),
    ((3, 5, 6, 6), 3, 2, 1, 1, True),  # unbatched [C, D, H, W]
    ((1, 4, 4, 4, 4), (1, 2, 2), (1, 2, 2), 0, 1, False),  # r3d-style spatial-only pooling
]


@pytest.mark.parametrize("case", MAXPOOL3D_CASES, ids=[str(i) for i in range(len(MAXPOOL3D_CASES))])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_max_pool3d(fallback_error, case, dtype):
    shape, k, s, p, d, ceil = case
    torch.manual_seed(5)
    x = torch.randn(*shape).round(decimals=1)  # ties: the first maximum in (d, h, w) order wins
    x.view(-1)[::7] = float("-inf")
    x.view(-1)[5] = float("nan")
    x = x.to(dtype)
    y, i = F.max_pool3d(x.float(), k, s, p, d, ceil, return_indices=True)
    xn = x.npu().requires_grad_()
    yn, i_n = F.max_pool3d(xn, k, s, p, d, ceil, return_indices=True)
    assert yn.dtype == dtype and i_n.dtype == torch.int64
    assert torch.equal(yn.cpu().float().nan_to_num(), y.to(dtype).float().nan_to_num())
    assert torch.equal(i_n.cpu(), i)
    # the gradient lands on the chosen elements; overlapping windows add up (the CPU's backward)
    g = torch.randn(y.shape).to(dtype)
    yn.backward(g.npu())
    xr = x.float().requires_grad_()
    F.max_pool3d(xr, k, s, p, d, ceil).backward(g.float())
    torch.testing.assert_close(xn.grad.cpu().float(), xr.grad.to(dtype).float(), rtol=2e-3, atol=2e-3)


def test_max_pool3d_several_nans_take_the_last(fallback_error):
    x = torch.randn(1, 2, 4, 4, 4)
    x[0, 0, 0, 1, 1] = x[0, 0, 1, 0, 0] = x[0, 0, 1, 1, 0] = float("nan")  # one window, three NaN
    y, i = F.max_pool3d(x, 2, return_indices=True)
    yn, i_n = F.max_pool3d(x.npu(), 2, return_indices=True)
    assert torch.equal(i_n.cpu(), i) and i[0, 0, 0, 0, 0] == 20
    assert torch.equal(yn.cpu().isnan(), y.isnan())


def test_max_pool3d_module_and_errors(fallback_error):
    m = torch.nn.MaxPool3d((1, 3, 3), stride=(1, 2, 2), padding=(0, 1, 1))
    x = torch.randn(2, 4, 3, 11, 11)
    torch.testing.assert_close(m(x.npu()).cpu(), m(x), rtol=0, atol=0)
    with pytest.raises(RuntimeError, match=r"pad should be at most half of effective kernel size"):
        F.max_pool3d(x.npu(), 2, padding=2)
    with pytest.raises(RuntimeError, match=r"max_pool3d: Expected 4D or 5D tensor for input"):
        F.max_pool3d(torch.randn(4, 4, 4).npu(), 2)
    with pytest.raises(RuntimeError, match=r"max_pool3d: kernel_size must be a single int or a tuple of three"):
        torch.ops.aten.max_pool3d_with_indices(x.npu(), [2, 2], [], [0], [1], False)
    torch.testing.assert_close(F.max_pool3d(x.npu(), 2).cpu(), F.max_pool3d(x, 2))  # still working


AVGPOOL3D_CASES = [
    # shape, kernel, stride, padding, ceil_mode
    ((2, 3, 6, 9, 8), 2, None, 0, False),
    ((1, 2, 7, 10, 10), (3, 3, 3), (2, 2, 2), 1, True),
    ((2, 2, 9, 7, 7), (2, 3, 2), (1, 2, 1), (1, 1, 0), False),
    ((3, 5, 6, 6), 3, 2, 1, True),  # unbatched [C, D, H, W]
    ((1, 3, 5, 6, 6), (3, 1, 1), 1, (1, 0, 0), False),  # local_response_norm's window over channels
]


@pytest.mark.parametrize("case", AVGPOOL3D_CASES, ids=[str(i) for i in range(len(AVGPOOL3D_CASES))])
@pytest.mark.parametrize("count_include_pad", [True, False])
@pytest.mark.parametrize("divisor", [None, 5])
def test_avg_pool3d(fallback_error, case, count_include_pad, divisor):
    shape, k, s, p, ceil = case
    torch.manual_seed(6)
    x = torch.randn(*shape)
    xr = x.clone().requires_grad_()
    y = F.avg_pool3d(xr, k, s, p, ceil, count_include_pad, divisor)
    xn = x.npu().requires_grad_()
    yn = F.avg_pool3d(xn, k, s, p, ceil, count_include_pad, divisor)
    assert yn.shape == y.shape
    torch.testing.assert_close(yn.cpu(), y, rtol=1e-5, atol=1e-6)
    g = torch.randn(y.shape)
    y.backward(g)
    yn.backward(g.npu())
    torch.testing.assert_close(xn.grad.cpu(), xr.grad, rtol=1e-5, atol=1e-6)


def test_avg_pool3d_half_lrn_and_errors(fallback_error):
    x = torch.randn(2, 4, 5, 8, 8)
    torch.testing.assert_close(F.avg_pool3d(x.half().npu(), 2).cpu().float(), F.avg_pool3d(x, 2).half().float(),
                               rtol=2e-3, atol=2e-3)
    z = torch.randn(2, 8, 6, 6)
    torch.testing.assert_close(F.local_response_norm(z.npu(), 3).cpu(), F.local_response_norm(z, 3),
                               rtol=1e-5, atol=1e-6)
    with pytest.raises(RuntimeError, match=r"pad should be at most half of effective kernel size"):
        F.avg_pool3d(x.npu(), 2, padding=2)
    with pytest.raises(RuntimeError, match=r"avg_pool3d: divisor must be not zero"):
        F.avg_pool3d(x.npu(), 2, divisor_override=0)
    with pytest.raises(RuntimeError, match=r"avg_pool3d: Expected 4D or 5D tensor for input"):
        F.avg_pool3d(torch.randn(4, 4, 4).npu(), 2)
    torch.testing.assert_close(F.avg_pool3d(x.npu(), 2).cpu(), F.avg_pool3d(x, 2))  # still working


@pytest.mark.parametrize("shape", [(2, 3, 9, 11), (3, 10, 7)])
@pytest.mark.parametrize("out", [(3, 4), (4, 5), (5, 7), (2, 1), (7, 3), (9, 11)])
def test_adaptive_max_pool2d_any_size(fallback_error, shape, out):
    # overlapping windows of varying size; ties, -inf and several NaN per window as the CPU scans them
    torch.manual_seed(7)
    x = torch.randn(shape).round(decimals=1)
    x.view(-1)[::13] = float("nan")
    x.view(-1)[::17] = float("-inf")
    xr, xn = x.clone().requires_grad_(), x.npu().requires_grad_()
    y, i = F.adaptive_max_pool2d(xr, out, return_indices=True)
    yn, i_n = F.adaptive_max_pool2d(xn, out, return_indices=True)
    assert torch.equal(yn.detach().cpu().nan_to_num(), y.detach().nan_to_num())
    assert torch.equal(i_n.cpu(), i)
    g = torch.randn(y.shape)
    y.backward(g)
    yn.backward(g.npu())
    torch.testing.assert_close(xn.grad.cpu(), xr.grad)


def test_channel_shuffle_and_adaptive_max_errors(fallback_error):
    x = torch.randn(2, 8, 3, 3)
    assert torch.equal(F.channel_shuffle(x.npu(), 4).cpu(), F.channel_shuffle(x, 4))
    assert torch.equal(torch.nn.ChannelShuffle(2)(x.npu()).cpu(), torch.nn.ChannelShuffle(2)(x))
    with pytest.raises(RuntimeError, match=r"Number of channels must be divisible by groups. Got 8 channels and 3"):
        F.channel_shuffle(x.npu(), 3)
    with pytest.raises(RuntimeError, match=r"Expected input to have non-zero size for non-batch dimensions"):
        F.adaptive_max_pool2d(torch.randn(1, 2, 0, 4).npu(), (3, 3))


@pytest.mark.parametrize("out", [(5, 3), (1, 7), (9, 9), (6, 2)])
def test_adaptive_avg_pool_backward_with_overlapping_windows(out, fallback_error):
    """An output larger than the input (windows overlap): the gradient through two matmuls."""
    x = torch.randn(2, 3, 4, 5, requires_grad=True)
    want = F.adaptive_avg_pool2d(x, out)
    xn = x.detach().npu().requires_grad_()
    got = F.adaptive_avg_pool2d(xn, out)
    torch.testing.assert_close(got.detach().cpu(), want.detach())
    g = torch.randn(want.shape)
    want.backward(g)
    got.backward(g.npu())
    torch.testing.assert_close(xn.grad.cpu(), x.grad, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("shape,out", [((2, 3, 4, 5, 6), (2, 3, 4)), ((1, 2, 7, 9, 5), (3, 4, 5)),
                                       ((3, 5, 6, 7), (2, 2, 2)), ((2, 3, 4, 5, 6), (8, 7, 9)),
                                       ((2, 3, 4, 5, 6), (4, 5, 6)), ((0, 3, 4, 5, 6), (2, 2, 2))])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_adaptive_avg_pool3d_matches_cpu(shape, out, dtype, fallback_error):
    """F.adaptive_avg_pool3d to any size (+ backward) natively (it took the CPU fallback unless the
    output was 1x1x1): the separable 2-D adaptive pools over (H, W), then over depth."""
    x = torch.randn(shape, generator=torch.Generator().manual_seed(2)).to(dtype)
    xc, xd = x.float().clone().requires_grad_(), x.to("npu").requires_grad_()
    yc, yd = F.adaptive_avg_pool3d(xc, out), F.adaptive_avg_pool3d(xd, out)
    assert yd.dtype == dtype and yd.shape == yc.shape
    g = torch.randn(yc.shape, generator=torch.Generator().manual_seed(3)).to(dtype)
    yc.backward(g.float())
    yd.backward(g.to("npu"))
    tol = 1e-5 if dtype == torch.float32 else 3e-2
    torch.testing.assert_close(yd.float().cpu(), yc, atol=tol, rtol=tol)
    torch.testing.assert_close(xd.grad.float().cpu(), xc.grad, atol=tol, rtol=tol)
    with pytest.raises(RuntimeError, match="Expected input to have non-zero size for non-batch dimensions"):
        F.adaptive_avg_pool3d(torch.randn(2, 3, 0, 5, 6, device="npu"), out)
