"""upsample_nearest2d (+ backward) with integer factors: one device copy forward, a block sum backward;
results and layouts as the CPU's. Other ratios and nearest-exact: index_select gathers through the
CPU's index rule, index_add scatters backward.
upsample_bilinear2d and upsample_bicubic2d (+ backward) for any sizes and scales, align_corners either
way: index_select gathers and index_add scatters per dim (2 or 4 taps), against the CPU."""
import pytest
import torch
import torch.nn.functional as F

pytestmark = pytest.mark.usefixtures("fallback_error")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("shape,kw", [((2, 3, 5, 7), dict(scale_factor=2)), ((1, 4, 8, 8), dict(size=(24, 16))),
                                      ((2, 16, 7, 9), dict(scale_factor=(3, 1))), ((1, 1, 1, 1), dict(scale_factor=4))])
@pytest.mark.parametrize("channels_last", [False, True])
def test_upsample_nearest2d_integer_factors(dtype, shape, kw, channels_last):
    g = torch.Generator().manual_seed(2)
    x = torch.randn(shape, generator=g).to(dtype)
    if channels_last:
        x = x.contiguous(memory_format=torch.channels_last)
    xc, xn = x.clone().requires_grad_(), x.to("npu").requires_grad_()
    y, yn = F.interpolate(xc, mode="nearest", **kw), F.interpolate(xn, mode="nearest", **kw)
    assert torch.equal(yn.detach().cpu(), y.detach())
    assert yn.is_contiguous(memory_format=torch.channels_last) == y.is_contiguous(memory_format=torch.channels_last)
    go = torch.randn(y.shape, generator=g).to(dtype)
    y.backward(go)
    yn.backward(go.to("npu"))
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == torch.float32 else dict(rtol=1e-2, atol=1e-2)
    torch.testing.assert_close(xn.grad.cpu().float(), xc.grad.float(), **tol)


NEAREST_OTHER = [
    ((2, 3, 5, 7), dict(size=(11, 13))),
    ((1, 4, 16, 16), dict(scale_factor=0.5)),
    ((2, 3, 9, 4), dict(scale_factor=(1.7, 0.6))),
    ((2, 3, 9, 4), dict(scale_factor=3, recompute_scale_factor=True)),
    ((1, 2, 1, 1), dict(size=(3, 2))),
    ((1, 1, 5, 5), dict(size=(7, 7))),
]


@pytest.mark.parametrize("mode", ["nearest", "nearest-exact"])
@pytest.mark.parametrize("shape,kw", NEAREST_OTHER + [((2, 3, 5, 7), dict(scale_factor=2))])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_upsample_nearest2d_other_ratios_and_exact(mode, shape, kw, dtype):
    g = torch.Generator().manual_seed(5)
    x = torch.randn(shape, generator=g).to(dtype)
    xc, xn = x.clone().requires_grad_(), x.to("npu").requires_grad_()
    y, yn = F.interpolate(xc, mode=mode, **kw), F.interpolate(xn, mode=mode, **kw)
    assert torch.equal(yn.detach().cpu(), y.detach())  # a gather: exact
    go = torch.randn(y.shape, generator=g).to(dtype)
    y.backward(go)
    yn.backward(go.to("npu"))
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == torch.float32 else dict(rtol=1e-2, atol=1e-2)
    torch.testing.assert_close(xn.grad.cpu().float(), xc.grad.float(), **tol)


BILINEAR = [
    ((2, 3, 5, 7), dict(size=(11, 13))),
    ((1, 4, 16, 16), dict(scale_factor=2)),
    ((1, 4, 16, 16), dict(scale_factor=0.5)),           # downsampling
    ((2, 3, 9, 4), dict(scale_factor=(1.7, 0.6))),      # the scales themselves, not in / out
    ((2, 3, 9, 4), dict(scale_factor=3, recompute_scale_factor=True)),
    ((1, 2, 1, 1), dict(size=(4, 6))),                  # one pixel
    ((2, 3, 5, 7), dict(size=(5, 7))),                  # same size: a copy
    ((1, 2, 6, 6), dict(size=(1, 9))),                  # to one row
    ((1, 2, 5, 5), dict(scale_factor=1.1)),             # same size under a scale: bicubic applies it
]


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("shape,kw", BILINEAR)
def test_upsample_bilinear_bicubic_match_cpu(mode, shape, kw, align_corners):
    g = torch.Generator().manual_seed(3)
    x = torch.randn(shape, generator=g)
    xc, xn = x.clone().requires_grad_(), x.to("npu").requires_grad_()
    y = F.interpolate(xc, mode=mode, align_corners=align_corners, **kw)
    yn = F.interpolate(xn, mode=mode, align_corners=align_corners, **kw)
    assert yn.device.type == "npu" and yn.shape == y.shape
    # bicubic: the CPU sums the 16 taps with product weights, the npu one dim at a time
    tol = 1e-6 if mode == "bilinear" else 1e-5
    torch.testing.assert_close(yn.detach().cpu(), y.detach(), rtol=tol, atol=tol)
    go = torch.randn(y.shape, generator=g)
    y.backward(go)
    yn.backward(go.to("npu"))
    torch.testing.assert_close(xn.grad.cpu(), xc.grad, rtol=1e-5, atol=1e-5 if mode == "bilinear" else 5e-5)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_upsample_bilinear2d_half_and_channels_last(dtype):
    x = torch.randn(2, 8, 7, 9).to(dtype).contiguous(memory_format=torch.channels_last)
    y = F.interpolate(x.float(), scale_factor=2.5, mode="bilinear").to(dtype)
    yn = F.interpolate(x.to("npu"), scale_factor=2.5, mode="bilinear")
    assert yn.dtype == dtype and yn.is_contiguous(memory_format=torch.channels_last)
    torch.testing.assert_close(yn.cpu().float(), y.float(), rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("shape,kw", [
    ((8, 64, 14, 14), dict(scale_factor=2)),             # many planes: several tiles per core's range
    ((3, 300, 5, 6), dict(scale_factor=3)),              # a partial last tile of planes
    ((1, 2, 40, 30), dict(size=(97, 31))),               # few planes: output rows split into items
    ((2, 5, 33, 17), dict(scale_factor=0.4)),            # downsampling: the row cache misses every tap
    ((1, 3, 9, 2000), dict(size=(9, 4001))),             # long rows: few planes per tile
])
def test_upsample_interp_kernel_matches_cpu_and_the_composition(fallback_error, dtype, mode, shape, kw):
    """Contiguous NCHW inputs run interp2d_kernel (one launch); channels_last ones the per-dim composition
    (gathers and elementwise kernels). Both match the CPU. With an inf and a NaN in the input both npu
    paths give the same result, the inf / NaN spreading over the taps that read them (the CPU's kernels
    differ from each other there: where a dim keeps its size some multiply by weights of 0, so 0 * inf
    gives NaN on some CPU paths and inf on others)."""
    g = torch.Generator().manual_seed(5)
    x = torch.randn(shape, generator=g).to(dtype)
    ref = F.interpolate(x.float(), mode=mode, **kw).to(dtype)
    out = F.interpolate(x.to("npu"), mode=mode, **kw)
    assert out.dtype == dtype and out.is_contiguous()
    tol = {torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 1.6e-2}[dtype]
    torch.testing.assert_close(out.cpu().float(), ref.float(), rtol=tol, atol=tol)
    x[0, 0, 1, 1] = float("inf")
    x[-1, -1, 2, 0] = float("nan")
    out = F.interpolate(x.to("npu"), mode=mode, **kw).cpu()
    composed = F.interpolate(x.to("npu").contiguous(memory_format=torch.channels_last), mode=mode, **kw).cpu()
    torch.testing.assert_close(out.float(), composed.float(), rtol=tol, atol=tol, equal_nan=True)
    assert out.float().isnan().any() or kw.get("scale_factor") == 0.4  # (downsampling may skip the NaN)


def test_upsample_bilinear2d_bad_input():
    with pytest.raises(RuntimeError, match=r"[Ii]nput and output sizes should be greater than 0"):
        F.interpolate(torch.randn(1, 1, 1, 1).to("npu"), scale_factor=0.5, mode="bilinear")
    with pytest.raises(RuntimeError, match=r"upsample_bilinear2d: expected a 4-D input \(N, C, H, W\), got 3-D"):
        torch.ops.aten.upsample_bilinear2d(torch.randn(1, 4, 4).to("npu"), [8, 8], False)
    with pytest.raises(NotImplementedError, match=r"upsample_bilinear2d: argument 'self' has dtype Int"):
        torch.ops.aten.upsample_bilinear2d(torch.ones(1, 1, 4, 4, dtype=torch.int32).to("npu"), [8, 8], False)
    x = torch.randn(1, 2, 3, 3)
    torch.testing.assert_close(F.interpolate(x.to("npu"), size=(5, 5), mode="bilinear").cpu(),
                               F.interpolate(x, size=(5, 5), mode="bilinear"))


# ---------------------------------------------------------------- 3-D (trilinear, nearest, nearest-exact)
INTERP3D = [
    ((2, 3, 5, 6, 7), dict(size=(7, 9, 4))),
    ((1, 2, 4, 4, 4), dict(scale_factor=2)),
    ((2, 3, 5, 6, 7), dict(scale_factor=(1.5, 0.7, 2.3))),
    ((2, 3, 5, 6, 7), dict(scale_factor=1.1)),  # same sizes under a scale (the CPU's rules differ per mode)
    ((1, 2, 3, 4, 5), dict(size=(3, 4, 5))),
]


@pytest.mark.parametrize("mode", ["trilinear", "nearest", "nearest-exact"])
@pytest.mark.parametrize("shape,kw", INTERP3D)
def test_upsample_3d_match_cpu(fallback_error, mode, shape, kw):
    g = torch.Generator().manual_seed(4)
    x = torch.randn(shape, generator=g)
    for ac in ([False, True] if mode == "trilinear" else [None]):
        extra = {} if ac is None else dict(align_corners=ac)
        xc, xn = x.clone().requires_grad_(), x.to("npu").requires_grad_()
        y = F.interpolate(xc, mode=mode, **kw, **extra)
        yn = F.interpolate(xn, mode=mode, **kw, **extra)
        assert yn.shape == y.shape
        torch.testing.assert_close(yn.detach().cpu(), y.detach(), rtol=1e-5, atol=1e-6)
        go = torch.randn(y.shape, generator=g)
        y.backward(go)
        yn.backward(go.to("npu"))
        torch.testing.assert_close(xn.grad.cpu(), xc.grad, rtol=1e-5, atol=1e-5)


def test_upsample_3d_half_and_bad_input(fallback_error):
    x = torch.randn(1, 4, 3, 5, 6)
    y = F.interpolate(x.half().npu(), scale_factor=2, mode="trilinear")
    assert y.dtype == torch.float16
    torch.testing.assert_close(y.cpu().float(), F.interpolate(x.half().float(), scale_factor=2, mode="trilinear"),
                               rtol=2e-3, atol=2e-3)
    with pytest.raises(RuntimeError, match=r"upsample_trilinear3d: expected a 5-D input \(N, C, D, H, W\), got 4-D"):
        torch.ops.aten.upsample_trilinear3d(torch.randn(1, 4, 4, 4).npu(), [8, 8, 8], False)
    with pytest.raises(RuntimeError, match=r"upsample_nearest3d: input and output sizes should be greater than 0"):
        torch.ops.aten.upsample_nearest3d(x.npu(), [0, 4, 4])
    torch.testing.assert_close(F.interpolate(x.npu(), size=(4, 6, 7)).cpu(), F.interpolate(x, size=(4, 6, 7)))


@pytest.mark.parametrize("mode", ["linear", "nearest", "nearest-exact"])
@pytest.mark.parametrize("kw", [dict(scale_factor=1.1), dict(scale_factor=2), dict(size=8), dict(scale_factor=0.6)])
def test_upsample_1d_match_cpu(fallback_error, mode, kw):
    # scale_factor 1.1 keeps the size: the CPU's 1-D nearest forward still applies the scale
    x = torch.randn(2, 3, 5)
    xc, xn = x.clone().requires_grad_(), x.npu().requires_grad_()
    y, yn = F.interpolate(xc, mode=mode, **kw), F.interpolate(xn, mode=mode, **kw)
    torch.testing.assert_close(yn.detach().cpu(), y.detach(), rtol=1e-6, atol=1e-6)
    go = torch.randn(y.shape)
    y.backward(go)
    yn.backward(go.npu())
    torch.testing.assert_close(xn.grad.cpu(), xc.grad, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic"])
@pytest.mark.parametrize("shape,kw", [((2, 3, 10, 12), {"size": (5, 7)}), ((1, 2, 32, 30), {"size": (7, 9)}),
                                      ((2, 2, 8, 8), {"size": (20, 13)}), ((1, 3, 9, 9), {"size": (9, 4)}),
                                      ((2, 3, 17, 19), {"scale_factor": 0.3}), ((1, 2, 64, 80), {"size": (24, 31)}),
                                      ((2, 3, 10, 12), {"size": (5, 7), "align_corners": True})])
def test_antialiased_interpolation_matches_cpu(fallback_error, mode, shape, kw):
    # F.interpolate(antialias=True) / torchvision Resize(antialias=True): the CPU's weights as two matmuls.
    torch.manual_seed(11)
    x = torch.randn(shape)
    xr, xn = x.clone().requires_grad_(), x.to("npu").requires_grad_()
    ref = F.interpolate(xr, mode=mode, antialias=True, **kw)
    out = F.interpolate(xn, mode=mode, antialias=True, **kw)
    assert out.shape == ref.shape
    assert torch.allclose(out.cpu(), ref, atol=3e-6, rtol=1e-5)
    g = torch.randn(ref.shape)
    ref.backward(g)
    out.backward(g.to("npu"))
    assert torch.allclose(xn.grad.cpu(), xr.grad, atol=1e-5, rtol=1e-5)


def test_antialiased_interpolation_layouts_dtypes_and_errors(fallback_error):
    torch.manual_seed(12)
    x = torch.randn(2, 3, 40, 36)
    ref = F.interpolate(x, size=(15, 11), mode="bilinear", antialias=True)
    cl = F.interpolate(x.to("npu").contiguous(memory_format=torch.channels_last), size=(15, 11), mode="bilinear",
                       antialias=True)
    assert cl.is_contiguous(memory_format=torch.channels_last)  # as the CPU
    assert torch.allclose(cl.cpu(), ref, atol=3e-6)
    for dtype, tol in [(torch.float16, 5e-3), (torch.bfloat16, 3e-2)]:  # the CPU has no 16-bit kernel; CUDA does
        half = F.interpolate(x.to("npu", dtype), size=(15, 11), mode="bilinear", antialias=True)
        assert half.dtype == dtype and torch.allclose(half.float().cpu(), ref, atol=tol, rtol=tol)
    with pytest.raises(RuntimeError, match="Non-empty 4D data tensor expected"):
        torch.ops.aten._upsample_bilinear2d_aa(torch.randn(3, 8, 8).to("npu"), [4, 4], False)
    with pytest.raises(RuntimeError, match=r"Non-empty 4D data tensor expected but got a tensor with sizes \[1, 0, 4, 4\]"):
        F.interpolate(torch.randn(1, 0, 4, 4).to("npu"), size=(2, 2), mode="bilinear", antialias=True)
    assert F.interpolate(torch.randn(0, 2, 4, 4).to("npu"), size=(2, 2), mode="bilinear", antialias=True).shape == (0, 2, 2, 2)
    with pytest.raises(NotImplementedError, match="argument 'self' has dtype Int, which is not supported"):
        torch.ops.aten._upsample_bicubic2d_aa(torch.ones(1, 1, 8, 8, dtype=torch.int32).to("npu"), [4, 4], False)
