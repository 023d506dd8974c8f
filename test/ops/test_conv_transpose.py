"""conv_transpose2d on npu (the input gradient of the convolution it transposes, on the cube kernel)
vs PyTorch CPU: forward over stride / padding / output_padding / dilation / groups / bias /
channels_last / dtypes, backward (grad input, weight, bias) through autograd, nn.ConvTranspose2d,
and bad inputs."""
import copy

import pytest
import torch
import torch.nn.functional as F

import torch_ops_nn
from conftest import assert_matches_cpu_with_grads

TOL = {torch.float32: 1e-4, torch.float16: 4e-3, torch.bfloat16: 3e-2}


def rel_err(got, want):
    g, w = got.cpu().float(), want.float()
    return (g - w).abs().max().item() / max(w.abs().max().item(), 1e-3)


# (N, Cin, H, W, Cout, k, stride, padding, output_padding, dilation, groups)
CASES = [
    (2, 8, 7, 5, 6, 3, 1, 0, 0, 1, 1),                    # stride 1: a full convolution
    (2, 8, 7, 5, 6, 3, 2, 1, 1, 1, 1),                    # the usual x2 upsampler
    (1, 16, 9, 9, 8, 4, 2, 1, 0, 1, 1),                   # 4x4, stride 2 (DCGAN)
    (1, 6, 5, 6, 4, (3, 2), (3, 2), (2, 0), (2, 1), 1, 2),  # rectangular, groups, stride 3
    (2, 4, 6, 6, 4, 3, 1, 1, 0, 2, 1),                    # dilation
    (1, 4, 5, 5, 6, 3, (2, 1), (0, 2), (1, 0), (2, 1), 1),  # stride and dilation per dim
    (1, 64, 14, 14, 32, 2, 2, 0, 0, 1, 1),                # UNet up-conv
    (1, 8, 4, 4, 8, 1, 2, 0, 1, 1, 8),                    # 1x1 depthwise, stride 2
    (3, 3, 1, 1, 5, 5, 1, 0, 0, 1, 1),                    # 1x1 input -> 5x5 (generator head)
]


def make(case, dtype, requires_grad=False):
    n, ci, h, w, co, k, s, p, op, d, g = case
    k = k if isinstance(k, tuple) else (k, k)
    x = torch.randn(n, ci, h, w).to(dtype).requires_grad_(requires_grad)
    wt = (torch.randn(ci, co // g, *k) * 0.3).to(dtype).requires_grad_(requires_grad)
    b = torch.randn(co).to(dtype).requires_grad_(requires_grad)
    return x, wt, b, dict(stride=s, padding=p, output_padding=op, dilation=d, groups=g)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_forward_matches_cpu(fallback_error, case, dtype):
    x, wt, b, kw = make(case, dtype)
    want = F.conv_transpose2d(x.float(), wt.float(), b.float(), **kw)
    got = F.conv_transpose2d(x.npu(), wt.npu(), b.npu(), **kw)
    assert got.device.type == "npu" and got.dtype == dtype and got.shape == want.shape
    assert rel_err(got, want) <= TOL[dtype]


@pytest.mark.parametrize("case", CASES)
def test_backward_matches_cpu(fallback_error, case):
    x, wt, b, kw = make(case, torch.float32, requires_grad=True)
    y = F.conv_transpose2d(x, wt, b, **kw)
    gy = torch.randn_like(y)
    y.backward(gy)
    xd, wd, bd = (t.detach().npu().requires_grad_() for t in (x, wt, b))
    F.conv_transpose2d(xd, wd, bd, **kw).backward(gy.npu())
    for got, want in ((xd.grad, x.grad), (wd.grad, wt.grad), (bd.grad, b.grad)):
        assert got.shape == want.shape
        assert rel_err(got, want) <= 1e-4


def test_channels_last_and_no_bias(fallback_error):
    x, wt, _, kw = make(CASES[1], torch.float32)
    want = F.conv_transpose2d(x, wt, None, **kw)
    got = F.conv_transpose2d(x.npu().contiguous(memory_format=torch.channels_last), wt.npu(), None, **kw)
    assert got.is_contiguous(memory_format=torch.channels_last)
    assert rel_err(got, want) <= 1e-4


def test_module_trains_like_cpu(fallback_error):
    torch.manual_seed(0)
    cpu = torch.nn.Sequential(torch.nn.ConvTranspose2d(8, 4, 4, stride=2, padding=1), torch.nn.ReLU(),
                              torch.nn.ConvTranspose2d(4, 3, 3, stride=2, padding=1, output_padding=1))
    dev = copy.deepcopy(cpu).npu()
    x = torch.randn(2, 8, 5, 5)
    losses = []
    for model, xx in ((cpu, x), (dev, x.npu())):
        opt = torch.optim.SGD(model.parameters(), lr=0.05)
        run = []
        for _ in range(3):
            opt.zero_grad()
            loss = model(xx).square().mean()
            loss.backward()
            opt.step()
            run.append(loss.item())
        losses.append(run)
    assert losses[0] == pytest.approx(losses[1], rel=1e-4)


def test_empty_batch(fallback_error):
    x = torch.randn(0, 4, 5, 5).npu()
    y = F.conv_transpose2d(x, torch.randn(4, 3, 3, 3).npu(), stride=2)
    assert y.shape == (0, 3, 11, 11)


def test_bad_input(fallback_error):
    x, w = torch.randn(1, 4, 5, 5).npu(), torch.randn(4, 3, 3, 3).npu()
    with pytest.raises(RuntimeError, match=r"expected input\[1, 5, 5, 5\] to have 4 channels"):
        F.conv_transpose2d(torch.randn(1, 5, 5, 5).npu(), w)
    # PyTorch's rule: output_padding below the stride or below the dilation.
    with pytest.raises(RuntimeError, match=r"conv_transpose2d: output_padding 2 \(height\) must be non-negative and "
                                           r"smaller than either stride 1 or dilation 2"):
        F.conv_transpose2d(x, w, output_padding=2, dilation=2)
    with pytest.raises(RuntimeError, match=r"conv_transpose2d: output height \(1 - 1\)\*1 - 2\*2 \+ 1\*\(3 - 1\) \+ 0 \+ 1 = -1 is not positive"):
        F.conv_transpose2d(torch.randn(1, 4, 1, 1).npu(), w, padding=2)
    with pytest.raises(TypeError, match=r"conv_transpose2d: input dtype Half and weight dtype Float differ"):
        F.conv_transpose2d(x.half(), w)
    with pytest.raises(RuntimeError, match=r"conv_transpose2d: argument 'weight' is on cpu"):
        F.conv_transpose2d(x, w.cpu())
    # The device keeps working.
    assert rel_err(F.conv_transpose2d(x, w, stride=2), F.conv_transpose2d(x.cpu(), w.cpu(), stride=2)) <= 1e-4


@pytest.mark.parametrize("stride,dilation,output_padding", [((3, 2), (4, 4), (2, 3)), ((1, 1), (3, 2), (2, 1)),
                                                            ((2, 1), (1, 3), (1, 2))])
def test_output_padding_below_the_dilation(full_fp32_convs, stride, dilation, output_padding):
    """PyTorch allows output_padding < stride or < dilation; the rows past the stride's are computed too."""
    torch.manual_seed(0)
    x = torch.randn(2, 4, 5, 4, requires_grad=True)
    w = torch.randn(4, 3, 3, 2, requires_grad=True)
    b = torch.randn(6, requires_grad=True)
    kw = dict(stride=stride, padding=(1, 2), output_padding=output_padding, groups=2, dilation=dilation)
    want = F.conv_transpose2d(x, w, b, **kw)
    xn, wn, bn = (t.detach().npu().requires_grad_() for t in (x, w, b))
    got = F.conv_transpose2d(xn, wn, bn, **kw)
    torch.testing.assert_close(got.detach().cpu(), want.detach(), atol=1e-4, rtol=1e-4)
    g = torch.randn(want.shape)
    want.backward(g)
    got.backward(g.npu())
    for a, t in ((xn, x), (wn, w), (bn, b)):
        torch.testing.assert_close(a.grad.cpu(), t.grad, atol=1e-4, rtol=1e-4)


def test_output_padding_not_below_stride_or_dilation():
    with pytest.raises(RuntimeError, match=r"output_padding 2 \(height\) must be non-negative and smaller than either "
                                           r"stride 2 or dilation 1"):
        F.conv_transpose2d(torch.randn(1, 2, 4, 4).npu(), torch.randn(2, 2, 3, 3).npu(), stride=2, output_padding=2)


# (N, Cin, D, H, W, Cout, k, stride, padding, output_padding, dilation, groups, bias)
CASES_3D = [
    (1, 3, 4, 4, 4, 2, (2, 3, 3), 2, 1, 0, 1, 1, False),            # x2 upsampler, padding crops
    (2, 4, 3, 5, 4, 6, 3, (2, 1, 2), (1, 0, 1), (1, 0, 1), 1, 2, True),  # groups, output_padding, bias
    (1, 2, 3, 3, 3, 4, (3, 2, 2), 1, 0, 0, (2, 1, 1), 1, True),     # depth dilation, stride 1
    (1, 4, 2, 6, 6, 4, (1, 3, 3), (1, 2, 2), (0, 1, 1), (0, 1, 1), 1, 4, False),  # depthwise, kd = 1
    (1, 2, 3, 4, 4, 2, 2, (3, 2, 2), 0, (2, 0, 1), (1, 1, 1), 1, True),  # depth output_padding 2 < stride 3
]


@pytest.mark.parametrize("case", CASES_3D)
def test_conv_transpose3d_matches_cpu_with_gradients(case, fallback_error, full_fp32_convs):
    n, cin, d, h, w, cout, k, stride, padding, opad, dil, groups, bias = case
    kd, kh, kw = (k, k, k) if isinstance(k, int) else k
    torch.manual_seed(0)
    x = torch.randn(n, cin, d, h, w)
    wt = torch.randn(cin, cout // groups, kd, kh, kw)
    b = torch.randn(cout) if bias else None
    args = dict(stride=stride, padding=padding, output_padding=opad, dilation=dil, groups=groups)
    assert_matches_cpu_with_grads(lambda x, wt, b: F.conv_transpose3d(x, wt, b, **args), x, wt, b)


def test_conv_transpose3d_module_half_precision(fallback_error):
    torch.manual_seed(0)
    m = torch.nn.ConvTranspose3d(4, 3, 3, stride=2, padding=1, output_padding=1)
    x = torch.randn(2, 4, 3, 5, 5)
    want = m(x)
    got = copy.deepcopy(m).npu().half()(x.npu().half())
    assert got.dtype == torch.float16 and got.shape == want.shape
    assert rel_err(got, want.detach()) < 4e-3


def test_conv_transpose3d_bad_output_padding(fallback_error):
    with pytest.raises(RuntimeError, match=r"conv_transpose3d: depth output_padding 2 must be smaller than either the "
                                           r"stride 2 or the dilation 1"):
        F.conv_transpose3d(torch.randn(1, 2, 3, 3, 3).npu(), torch.randn(2, 2, 3, 3, 3).npu(), stride=2,
                           output_padding=(2, 0, 0))
    # the process keeps working
    assert F.conv_transpose3d(torch.ones(1, 1, 1, 1, 1).npu(), torch.ones(1, 1, 1, 1, 1).npu()).item() == 1.0
