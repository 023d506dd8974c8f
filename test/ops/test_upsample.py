"""upsample_nearest2d (+ backward) with integer factors: one device copy forward, a block sum backward;
results and layouts as the CPU's. Other ratios take the CPU fallback (an error under fallback_error)."""
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


def test_upsample_nearest2d_other_ratios_take_the_fallback():
    with pytest.raises(NotImplementedError, match="upsample_nearest2d"):
        F.interpolate(torch.randn(1, 1, 5, 5).to("npu"), size=(7, 7))
