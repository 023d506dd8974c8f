"""F.grid_sample (grid_sampler_2d) on npu: bilinear, nearest and bicubic, zeros / border / reflection
padding, align_corners either way, forward and both gradients (input and grid) against the CPU;
float16; NaN coordinates; bad input. (Bicubic took the CPU fallback, and its result had no autograd
history: backward raised.)"""
import pytest
import torch
import torch.nn.functional as F

pytestmark = pytest.mark.usefixtures("fallback_error")


@pytest.mark.parametrize("mode", ["bilinear", "nearest", "bicubic"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("shape", [(2, 3, 5, 7, 4, 6), (1, 2, 1, 1, 3, 3), (1, 4, 8, 8, 8, 8)])
def test_matches_cpu(mode, padding_mode, align_corners, shape):
    n, c, h, w, ho, wo = shape
    g = torch.Generator().manual_seed(7)
    x = torch.randn(n, c, h, w, generator=g, requires_grad=True)
    grid = (torch.rand(n, ho, wo, 2, generator=g) * 2.6 - 1.3).requires_grad_()  # some points outside
    kw = dict(mode=mode, padding_mode=padding_mode, align_corners=align_corners)
    y = F.grid_sample(x, grid, **kw)
    go = torch.randn(y.shape, generator=g)
    y.backward(go)
    xd, gd = x.detach().npu().requires_grad_(), grid.detach().npu().requires_grad_()
    yd = F.grid_sample(xd, gd, **kw)
    yd.backward(go.npu())
    torch.testing.assert_close(yd.detach().cpu(), y.detach(), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(xd.grad.cpu(), x.grad, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(gd.grad.cpu(), grid.grad, rtol=1e-4, atol=1e-4)


def test_half_and_nan_coordinates():
    x = torch.randn(1, 3, 6, 6)
    grid = torch.rand(1, 4, 4, 2) * 2 - 1
    got = F.grid_sample(x.half().npu(), grid.half().npu(), align_corners=False)
    want = F.grid_sample(x.half().float(), grid.half().float(), align_corners=False)
    assert got.dtype == torch.float16
    torch.testing.assert_close(got.cpu().float(), want, rtol=1e-2, atol=1e-2)
    grid[0, 0, 0] = float("nan")  # a NaN point samples nothing: 0, as on the CPU with zeros padding
    torch.testing.assert_close(F.grid_sample(x.npu(), grid.npu(), align_corners=False).cpu(),
                               F.grid_sample(x, grid, align_corners=False), equal_nan=True)


def test_bad_input():
    x = torch.randn(2, 3, 4, 4).npu()
    with pytest.raises(RuntimeError, match=r"same batch size"):
        F.grid_sample(x, torch.zeros(1, 2, 2, 2).npu(), align_corners=False)
    with pytest.raises(RuntimeError, match=r"size 2 in last dimension"):
        F.grid_sample(x, torch.zeros(2, 2, 2, 3).npu(), align_corners=False)
    with pytest.raises(TypeError, match=r"same dtype"):
        F.grid_sample(x, torch.zeros(2, 2, 2, 2).half().npu(), align_corners=False)
    assert F.grid_sample(x, torch.zeros(2, 2, 2, 2).npu(), align_corners=False).shape == (2, 3, 2, 2)
