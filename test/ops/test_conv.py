"""2-D convolution on npu (cube kernel: Load3D img2col + Mmad + Fixpipe epilogue) vs PyTorch CPU:
forward over strides / padding / dilation / groups / depthwise / channels_last / bias, backward
(grad input, weight, bias) through autograd, and bad inputs."""
import pytest
import torch
import torch.nn.functional as F

import torch_ops_nn
from conftest import assert_matches_cpu_with_grads

TOL = {torch.float32: 1e-4, torch.float16: 4e-3, torch.bfloat16: 3e-2}
DTYPES = [torch.float32, torch.float16, torch.bfloat16]


def assert_close(got, want, dtype):
    assert got.device.type == "npu"
    assert got.shape == want.shape, (got.shape, want.shape)
    g, w = got.cpu().float(), want.float()
    scale = max(w.abs().max().item(), 1e-3) if w.numel() else 1.0
    err = (g - w).abs().max().item() / scale if w.numel() else 0.0
    assert err <= TOL[dtype], f"max relative error {err:.3g} > {TOL[dtype]}"


# (N, C, H, W, Cout, k, stride, padding, dilation, groups)
CASES = [
    (2, 3, 9, 11, 5, 3, 1, 1, 1, 1),      # odd spatial sizes, C not a multiple of C0
    (1, 16, 8, 8, 16, 1, 1, 0, 1, 1),     # 1x1
    (2, 8, 13, 7, 12, 3, 2, 1, 1, 2),     # stride 2, groups
    (1, 6, 10, 10, 6, 3, 1, 2, 2, 6),     # depthwise, dilation 2
    (1, 3, 23, 23, 8, 7, 2, 3, 1, 1),     # stem-like 7x7 s2
    (2, 4, 6, 6, 4, 3, 2, 0, 1, 1),       # stride leaves a remainder
    (1, 5, 7, 9, 3, (2, 3), (1, 2), (1, 0), (1, 2), 1),  # rectangular everything
    (1, 20, 5, 5, 40, 3, 1, 1, 1, 1),     # more channels than one C0 block
    (2, 8, 9, 9, 12, 1, 2, 0, 1, 1),      # 1x1 stride 2 (ResNet downsample)
    (2, 2, 12, 19, 6, (5, 7), (2, 3), (2, 3), 1, 1),  # few channels: kernel width unfolded into channels
    (1, 2, 8, 8, 4, 5, 1, 2, 1, 1),       # two input channels, 5x5, unfolded
]


def conv_args(case):
    n, c, h, w, co, k, s, p, d, g = case
    k = k if isinstance(k, tuple) else (k, k)
    return n, c, h, w, co, k, s, p, d, g


@pytest.fixture(params=["hf32", "fp32"])
def conv_precision(request):
    """Runs a float32 test with both conv precisions (torch.npu.conv.allow_hf32 True / False): on
    AMX hosts they are different cube paths (bf16x3 on AMX, the FMA micro-kernel)."""
    old = torch.npu.conv.allow_hf32
    torch.npu.conv.allow_hf32 = request.param == "hf32"
    yield request.param
    torch.npu.conv.allow_hf32 = old


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("channels_last", [False, True])
@pytest.mark.parametrize("bias", [True, False])
def test_conv2d_forward(fallback_error, conv_precision, dtype, case, channels_last, bias):
    n, c, h, w, co, k, s, p, d, g = conv_args(case)
    torch.manual_seed(1)
    x = torch.randn(n, c, h, w).to(dtype)
    wt = torch.randn(co, c // g, *k).to(dtype)
    b = torch.randn(co).to(dtype) if bias else None
    want = F.conv2d(x.float(), wt.float(), b.float() if bias else None, s, p, d, g)
    xn = x.npu()
    if channels_last:
        xn = xn.contiguous(memory_format=torch.channels_last)
    got = F.conv2d(xn, wt.npu(), b.npu() if bias else None, s, p, d, g)
    assert got.dtype == dtype
    assert got.is_contiguous(memory_format=torch.channels_last) == channels_last
    assert_close(got, want.to(dtype), dtype)


def test_conv2d_module_and_resnet_shapes(fallback_error):
    torch.manual_seed(0)
    for (c, co, k, s, p, hw) in [(64, 256, 1, 1, 0, 14), (128, 128, 3, 2, 1, 15), (3, 64, 7, 2, 3, 32)]:
        m = torch.nn.Conv2d(c, co, k, s, p, bias=False)
        x = torch.randn(2, c, hw, hw)
        mn = torch.nn.Conv2d(c, co, k, s, p, bias=False)
        mn.load_state_dict(m.state_dict())
        assert_close(mn.npu()(x.npu()), m(x).detach(), torch.float32)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("channels_last", [False, True])
def test_conv2d_backward(fallback_error, conv_precision, dtype, case, channels_last):
    n, c, h, w, co, k, s, p, d, g = conv_args(case)
    torch.manual_seed(2)
    x = torch.randn(n, c, h, w)
    wt = torch.randn(co, c // g, *k)
    b = torch.randn(co)
    xr, wr, br = (t.clone().requires_grad_() for t in (x, wt, b))
    ref = F.conv2d(xr, wr, br, s, p, d, g)
    go = torch.randn_like(ref)
    ref.backward(go)
    xn = x.to(dtype).npu()
    if channels_last:
        xn = xn.contiguous(memory_format=torch.channels_last)
    xn.requires_grad_()
    wn = wt.to(dtype).npu().requires_grad_()
    bn = b.to(dtype).npu().requires_grad_()
    y = F.conv2d(xn, wn, bn, s, p, d, g)
    y.backward(go.to(dtype).npu())
    # 16-bit: inputs rounded to half before the op; compare with a looser bound.
    tol_dtype = dtype if dtype == torch.float32 else torch.bfloat16
    assert_close(xn.grad, xr.grad, tol_dtype)
    assert_close(wn.grad, wr.grad, tol_dtype)
    assert_close(bn.grad, br.grad, tol_dtype)


def test_conv2d_no_bias_backward_bf16(fallback_error):
    x = torch.randn(2, 8, 10, 10)
    wt = torch.randn(16, 8, 3, 3)
    xr, wr = x.clone().requires_grad_(), wt.clone().requires_grad_()
    F.conv2d(xr, wr, None, 1, 1).sum().backward()
    xn = x.bfloat16().npu().requires_grad_()
    wn = wt.bfloat16().npu().requires_grad_()
    F.conv2d(xn, wn, None, 1, 1).backward(torch.ones(2, 16, 10, 10, dtype=torch.bfloat16).npu())
    assert_close(xn.grad, xr.grad, torch.bfloat16)
    assert_close(wn.grad, wr.grad, torch.bfloat16)


def test_conv2d_empty_batch():
    # ATen handles an empty batch before reaching the backend (with a mul), so no fallback_error.
    y = F.conv2d(torch.randn(0, 3, 8, 8).npu(), torch.randn(4, 3, 3, 3).npu())
    assert y.shape == (0, 4, 6, 6)


# ---- bad inputs ------------------------------------------------------------------------------
def test_channel_mismatch(fallback_error):
    # ATen checks this before dispatching to the backend, with the numbers.
    with pytest.raises(RuntimeError, match=r"groups=1, weight of size \[4, 3, 3, 3\].*input\[1, 5, 8, 8\] to have 3 channels"):
        F.conv2d(torch.randn(1, 5, 8, 8).npu(), torch.randn(4, 3, 3, 3).npu())


def test_output_not_positive(fallback_error):
    with pytest.raises(RuntimeError, match=r"padded input size per channel: \(2 x 8\). Kernel size: \(3 x 3\)"):
        F.conv2d(torch.randn(1, 3, 2, 8).npu(), torch.randn(4, 3, 3, 3).npu())


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("k,padding,dilation,stride", [((1, 1), (1, 1), (1, 1), 1), ((3, 1), (3, 2), (1, 1), 2),
                                                       ((2, 2), (2, 3), (2, 1), 1), ((3, 3), (300, 1), (1, 1), 1)])
def test_padding_of_the_kernel_size_or_more(fallback_error, full_fp32_convs, transposed, k, padding, dilation, stride):
    # PyTorch allows it (a 1x1 conv with padding 1 has a border of bias-only pixels); the cube's Load3D pads
    # less than the kernel, so the excess becomes explicit zeros (or a crop of a transposed conv's output).
    torch.manual_seed(0)
    x = torch.randn(2, 4, 5, 6)
    w = torch.randn(*((4, 3) if transposed else (3, 4)), *k)
    b = torch.randn(3)
    conv = F.conv_transpose2d if transposed else F.conv2d
    args = dict(stride=stride, padding=padding, dilation=dilation)
    if transposed and padding[0] == 300:  # the output height would be negative: both refuse
        with pytest.raises(RuntimeError):
            conv(x, w, b, **args)
        with pytest.raises(RuntimeError, match=r"conv_transpose2d: output height -593 \(padding 300\) is negative"):
            conv(x.npu(), w.npu(), b.npu(), **args)
        return
    assert_matches_cpu_with_grads(lambda x, w, b: conv(x, w, b, **args), x, w, b)


@pytest.mark.parametrize("channels_last", [False, True])
@pytest.mark.parametrize("hw,k,stride,dilation,cin,groups", [
    ((9, 17), (1, 2), (3, 1), (1, 2), 2, 1), ((9, 17), (2, 1), (3, 1), (1, 2), 2, 1),
    ((13, 13), (3, 1), (3, 3), (2, 2), 2, 1), ((9, 17), (3, 3), (3, 1), (2, 1), 16, 2),
    ((11, 9), (2, 2), (3, 3), (2, 1), 12, 1)])
def test_grad_input_rows_after_the_last_window(fallback_error, full_fp32_convs, channels_last, hw, k, stride, dilation,
                                               cin, groups):
    # Input rows past the last window (stride > what the windows cover) get no gradient. grad_input's
    # convolution then pads by the dilated kernel's size or more on that side: those rows were wrong
    # (some configs tripped Load3D's row-count rule instead) until the excess became explicit zeros.
    torch.manual_seed(0)
    x = torch.randn(2, cin, *hw)
    if channels_last:
        x = x.contiguous(memory_format=torch.channels_last)
    w = torch.randn(6, cin // groups, *k)
    assert_matches_cpu_with_grads(lambda x, w: F.conv2d(x, w, None, stride, 0, dilation, groups), x, w)


def test_conv_transpose_empty_output(fallback_error):
    # Padding that eats the whole output height: an empty result (and zero gradients), as on the CPU.
    torch.manual_seed(0)
    x, w, b = torch.randn(3, 5, 2, 7), torch.randn(5, 2, 1, 3), torch.randn(2)
    args = dict(stride=1, padding=(1, 0), dilation=(1, 2))
    assert F.conv_transpose2d(x, w, b, **args).shape == (3, 2, 0, 11)
    assert_matches_cpu_with_grads(lambda x, w, b: F.conv_transpose2d(x, w, b, **args), x, w, b)


def test_wrong_dims(fallback_error):
    # conv1d reaches the backend as a 2-D convolution of height 1 (ATen reshapes it): supported.
    x, w = torch.randn(1, 3, 8), torch.randn(4, 3, 3)
    assert_close(F.conv1d(x.npu(), w.npu(), padding=1), F.conv1d(x, w, padding=1), torch.float32)
    with pytest.raises(RuntimeError, match=r"conv2d: expected a 4-D input .* got a 6-D tensor"):
        torch.ops.aten.convolution(torch.randn(1, 3, 2, 4, 4, 4).npu(), torch.randn(4, 3, 1, 3, 3, 3).npu(), None,
                                   [1, 1, 1, 1], [0, 0, 0, 0], [1, 1, 1, 1], False, [0, 0, 0, 0], 1)


# ---------------------------------------------------------------- 3-D convolution (a composition of 2-D taps)
CONV3D_CASES = [
    # (n, c, d, h, w), (cout, kd, kh, kw), stride, padding, dilation, groups
    ((2, 3, 6, 10, 9), (5, 3, 3, 3), 1, 1, 1, 1),
    ((1, 4, 7, 8, 8), (6, 3, 1, 1), (2, 1, 1), (1, 0, 0), 1, 1),        # r3d's (2+1)D temporal conv
    ((1, 4, 5, 12, 11), (4, 1, 3, 3), (1, 2, 2), (0, 1, 1), 1, 2),     # spatial only, groups
    ((2, 2, 9, 7, 7), (3, 2, 2, 3), (2, 2, 1), (1, 0, 2), (2, 1, 2), 1),
    ((1, 3, 4, 6, 6), (2, 4, 3, 3), 1, 0, 1, 1),                         # kd == depth: one output frame
]


@pytest.mark.parametrize("case", CONV3D_CASES, ids=[str(i) for i in range(len(CONV3D_CASES))])
def test_conv3d_forward_backward(fallback_error, case):
    xs, (co, kd, kh, kw), stride, padding, dilation, groups = case
    torch.manual_seed(1)
    x = torch.randn(*xs, requires_grad=True)
    w = torch.randn(co, xs[1] // groups, kd, kh, kw, requires_grad=True)
    b = torch.randn(co, requires_grad=True)
    y = F.conv3d(x, w, b, stride, padding, dilation, groups)
    xn, wn, bn = (t.detach().npu().requires_grad_() for t in (x, w, b))
    yn = F.conv3d(xn, wn, bn, stride, padding, dilation, groups)
    assert yn.shape == y.shape
    assert_close(yn, y, torch.float32)
    g = torch.randn_like(y)
    y.backward(g)
    yn.backward(g.npu())
    for a, e in ((xn.grad, x.grad), (wn.grad, w.grad), (bn.grad, b.grad)):
        assert_close(a, e, torch.float32)


def test_conv3d_module_half_and_no_bias(fallback_error):
    torch.manual_seed(2)
    m = torch.nn.Conv3d(3, 8, (3, 5, 5), stride=(1, 2, 2), padding=(1, 2, 2), bias=False)
    x = torch.randn(2, 3, 5, 16, 16)
    want = m(x)
    w_half = m.weight.detach().half()
    assert_close(m.npu()(x.npu()), want, torch.float32)
    got_half = F.conv3d(x.half().npu(), w_half.npu(), None, (1, 2, 2), (1, 2, 2))
    assert got_half.dtype == torch.float16
    assert_close(got_half, F.conv3d(x, w_half.float(), None, (1, 2, 2), (1, 2, 2)).half(), torch.float16)


def test_conv3d_bad_input(fallback_error):
    x = torch.randn(1, 3, 4, 8, 8).npu()
    with pytest.raises(RuntimeError, match=r"conv3d: input has 3 channels but weight of shape .* expects 4"):
        torch.ops.aten.convolution_overrideable(x, torch.randn(2, 4, 1, 3, 3).npu(), None, [1, 1, 1], [0, 0, 0],
                                                [1, 1, 1], False, [0, 0, 0], 1)
    with pytest.raises(RuntimeError, match=r"conv3d: the padded input depth 4 is smaller than the dilated kernel "
                                           r"depth 5"):
        torch.ops.aten.convolution_overrideable(x, torch.randn(2, 3, 5, 3, 3).npu(), None, [1, 1, 1], [0, 0, 0],
                                                [1, 1, 1], False, [0, 0, 0], 1)
    assert_close(F.conv3d(x, torch.ones(1, 3, 1, 1, 1).npu()), F.conv3d(x.cpu(), torch.ones(1, 3, 1, 1, 1)),
                 torch.float32)  # the process keeps working


def test_bad_stride(fallback_error):
    with pytest.raises(RuntimeError, match=r"conv2d: stride 64 \(height\) must be in \[1, 63\]"):
        F.conv2d(torch.randn(1, 3, 100, 8).npu(), torch.randn(4, 3, 1, 1).npu(), stride=(64, 1))


def test_mixed_devices_and_dtypes(fallback_error):
    with pytest.raises(RuntimeError, match=r"conv2d: argument 'weight' is on cpu"):
        F.conv2d(torch.randn(1, 3, 8, 8).npu(), torch.randn(4, 3, 3, 3))
    with pytest.raises(TypeError, match=r"conv2d: input dtype Float and weight dtype Half differ"):
        F.conv2d(torch.randn(1, 3, 8, 8).npu(), torch.randn(4, 3, 3, 3).half().npu())
    # float64 has no cube dtype: the CPU fallback, which FALLBACK=error forbids.
    with pytest.raises(NotImplementedError, match=r"'aten::convolution' has no native npu kernel for Double operands"):
        F.conv2d(torch.randn(1, 3, 8, 8).double().npu(), torch.randn(4, 3, 3, 3).double().npu())


# ---- ConvForward's fusion epilogue (C++ API for the fused Conv+BN(+Add)+ReLU ops) -------------
EPI = torch.ops.torch_ops_nn_conv_testing.conv2d_epilogue


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("channels_last", [False, True])
@pytest.mark.parametrize("k,s,p", [(3, 1, 1), (1, 1, 0), (1, 2, 0), (3, 2, 1)])
def test_conv_epilogue_bn_residual_relu(fallback_error, conv_precision, dtype, channels_last, k, s, p):
    torch.manual_seed(3)
    x = torch.randn(2, 12, 9, 9).to(dtype)
    w = torch.randn(20, 12, k, k).to(dtype)
    scale, shift = torch.rand(20) + 0.5, torch.randn(20)
    conv = F.conv2d(x.float(), w.float(), None, s, p)
    res = torch.randn(conv.shape).to(dtype)
    want = torch.relu(conv * scale.view(1, -1, 1, 1) + shift.view(1, -1, 1, 1) + res.float()).to(dtype)
    xn = x.npu()
    if channels_last:
        xn = xn.contiguous(memory_format=torch.channels_last)
    got = EPI(xn, w.npu(), None, scale.npu(), shift.npu(), res.npu(), True, [s, s], [p, p], [1, 1], 1)
    assert got.is_contiguous(memory_format=torch.channels_last) == channels_last
    assert_close(got, want, dtype)
    # bias only, no relu
    b = torch.randn(20).to(dtype)
    got = EPI(xn, w.npu(), b.npu(), None, None, None, False, [s, s], [p, p], [1, 1], 1)
    assert_close(got, F.conv2d(x.float(), w.float(), b.float(), s, p).to(dtype), dtype)


def test_conv_epilogue_bad_args(fallback_error):
    x, w = torch.randn(1, 3, 8, 8).npu(), torch.randn(4, 3, 3, 3).npu()
    with pytest.raises(RuntimeError, match=r"conv2d: scale must have shape \[4\]"):
        EPI(x, w, None, torch.ones(5).npu(), None, None, False, [1, 1], [0, 0], [1, 1], 1)
    with pytest.raises(RuntimeError, match=r"conv2d: residual of shape \[1, 4, 5, 5\] must have the output shape \[1, 4, 6, 6\]"):
        EPI(x, w, None, None, None, torch.ones(1, 4, 5, 5).npu(), False, [1, 1], [0, 0], [1, 1], 1)
    with pytest.raises(RuntimeError, match=r"conv2d: pass either bias or scale/shift"):
        EPI(x, w, torch.ones(4).npu(), torch.ones(4).npu(), None, None, False, [1, 1], [0, 0], [1, 1], 1)


@pytest.fixture
def conv_hf32():
    """Restores torch.npu.conv.allow_hf32 after a test that changes it."""
    old = torch.npu.conv.allow_hf32
    yield
    torch.npu.conv.allow_hf32 = old


def _conv_fwd_bwd(x, w, stride, padding):
    xn, wn = x.npu().requires_grad_(), w.npu().requires_grad_()
    y = F.conv2d(xn, wn, None, stride, padding)
    (y * y).sum().backward()
    return [t.detach().cpu().double() for t in (y, xn.grad, wn.grad)]


@pytest.mark.parametrize("k,stride,padding", [(3, 1, 1), (1, 1, 0), (7, 2, 3)])
def test_conv_allow_hf32(k, stride, padding, conv_hf32, fallback_error):
    """torch.npu.conv.allow_hf32 (default True, as torch_npu): HF32 forward and both gradients within
    1e-4 of float64; False gives full float32 (within 2e-6). On AMX hosts the two modes must differ
    (so the switch is shown to reach the cube), and the matmul ops do not follow the conv switch."""
    assert torch.npu.conv.allow_hf32 is True and torch.npu.matmul.allow_hf32 is False
    torch.manual_seed(0)
    cin = 3 if k == 7 else 20
    x, w = torch.randn(2, cin, 15, 15), torch.randn(24, cin, k, k)
    xc, wc = x.double().requires_grad_(), w.double().requires_grad_()
    yc = F.conv2d(xc, wc, None, stride, padding)
    (yc * yc).sum().backward()
    want = [yc.detach(), xc.grad, wc.grad]
    hf32 = _conv_fwd_bwd(x, w, stride, padding)
    torch.npu.conv.allow_hf32 = False
    assert torch.npu.conv.allow_hf32 is False
    fp32 = _conv_fwd_bwd(x, w, stride, padding)
    for h, f, ref in zip(hf32, fp32, want):
        scale = ref.abs().max().item()
        assert (h - ref).abs().max().item() / scale <= 1e-4
        assert (f - ref).abs().max().item() / scale <= 2e-6
    if torch_ops_nn._C._build_info()["cube"] == "amx":
        assert any(not torch.equal(h, f) for h, f in zip(hf32, fp32))
    # The conv switch leaves matmul ops alone (full float32 either way).
    a, b = torch.randn(40, 300), torch.randn(300, 50)
    torch.npu.conv.allow_hf32 = True
    m1 = (a.npu() @ b.npu()).cpu()
    torch.npu.conv.allow_hf32 = False
    assert torch.equal(m1, (a.npu() @ b.npu()).cpu())


def test_hf32_kept_off_where_it_does_not_pay(conv_hf32, fallback_error):
    """HF32 is a permission: a GEMM with at most 16 rows, a conv with fewer than 16 output pixels per
    image and a grad_weight over at most 64 pixels run full float32 even when allowed (bitwise what
    allow_hf32 = False gives); one size up, HF32 reaches the cube (on AMX hosts the results differ)."""
    amx = torch_ops_nn._C._build_info()["cube"] == "amx"
    torch.manual_seed(0)

    def both(x, w, g):
        out = []
        for allow in (True, False):
            torch.npu.conv.allow_hf32 = allow
            xn, wn = x.npu().requires_grad_(), w.npu().requires_grad_()
            y = F.conv2d(xn, wn, None, 1, 1)
            y.backward(g.npu())
            out.append([t.detach().cpu() for t in (y, xn.grad, wn.grad)])
        return out

    # 2x2 maps (4 pixels per image, 16 pixels summed by grad_weight): forward and both gradients,
    # full float32 against float64.
    x, w, g = torch.randn(4, 32, 2, 2), torch.randn(48, 32, 3, 3), torch.randn(4, 48, 2, 2)
    h, f = both(x, w, g)
    xc, wc = x.double().requires_grad_(), w.double().requires_grad_()
    yc = F.conv2d(xc, wc, None, 1, 1)
    yc.backward(g.double())
    for a, b, ref in zip(h, f, (yc.detach(), xc.grad, wc.grad)):
        assert torch.equal(a, b)
        assert (b.double() - ref).abs().max().item() <= 2e-6 * ref.abs().max().item()
    # 4x4 maps: 16 pixels per image and 64 pixels summed: HF32 forward and grad_input only.
    h, f = both(torch.randn(4, 32, 4, 4), w, torch.randn(4, 48, 4, 4))
    assert torch.equal(h[2], f[2])
    if amx:
        assert not torch.equal(h[0], f[0]) and not torch.equal(h[1], f[1])
    # matmul ops under "high": 16 rows (or 16 columns) stay float32, 40 x 50 does not.
    old = torch.get_float32_matmul_precision()
    try:
        for (m, n), same in [((16, 50), True), ((40, 16), True), ((40, 50), False)]:
            a, b = torch.randn(m, 300), torch.randn(300, n)
            torch.set_float32_matmul_precision("high")
            mh = (a.npu() @ b.npu()).cpu()
            torch.set_float32_matmul_precision("highest")
            mf = (a.npu() @ b.npu()).cpu()
            assert torch.equal(mh, mf) == (same or not amx), (m, n)
    finally:
        torch.set_float32_matmul_precision(old)


def _assert_same_specials(got, want):
    """Same NaN / +-inf positions and signs as the CPU, finite values within HF32's error."""
    got = got.cpu()
    assert torch.equal(got.isnan(), want.isnan())
    assert torch.equal(got.isinf(), want.isinf())
    assert torch.equal(got[got.isinf()], want[want.isinf()])
    fin = want.isfinite()
    if fin.any():
        assert (got[fin] - want[fin]).abs().max() <= 1e-4 * want[fin].abs().max()


@pytest.mark.parametrize("channels_last", [False, True])
@pytest.mark.parametrize("k,stride,padding,cin", [(3, 1, 1, 16), (7, 2, 3, 3), (1, 1, 0, 16)])
def test_conv_hf32_infinities_match_cpu(conv_hf32, fallback_error, channels_last, k, stride, padding, cin):
    """HF32 convs (bf16x3 on AMX hosts: x = hi + lo) with +-inf / NaN inputs: inf * w must be +-inf as on
    the CPU, not NaN from the inf * lo(w) and inf - inf terms; both gradients too."""
    torch.npu.conv.allow_hf32 = True
    torch.manual_seed(0)
    x, w = torch.randn(2, cin, 12, 12), torch.randn(24, cin, k, k) * 0.1
    x[0, 1, 5, 5], x[1, 2, 7, 3], x[1, 0, 2, 9] = float("inf"), float("-inf"), float("nan")
    xm = x.contiguous(memory_format=torch.channels_last) if channels_last else x
    _assert_same_specials(F.conv2d(xm.npu(), w.npu(), None, stride, padding), F.conv2d(xm, w, None, stride, padding))
    # An infinite weight (without padding: the img2col multiplies padding zeros by it, NaN, as the
    # cube does, where the CPU skips the padding).
    w2 = w.clone()
    w2[3, 0, 0, 0] = float("-inf")
    xf = torch.randn(2, cin, 12, 12)
    _assert_same_specials(F.conv2d(xf.npu(), w2.npu(), None, stride), F.conv2d(xf, w2, None, stride))
    # Gradients: an infinite upstream gradient reaches grad_input and grad_weight as inf, not NaN.
    xn, wn = xf.npu().requires_grad_(), w.npu().requires_grad_()
    xc, wc = xf.clone().requires_grad_(), w.clone().requires_grad_()
    g = torch.randn(F.conv2d(xf, w, None, stride, padding).shape)
    g[1, 4, 2, 2] = float("inf")
    F.conv2d(xn, wn, None, stride, padding).backward(g.npu())
    F.conv2d(xc, wc, None, stride, padding).backward(g)
    _assert_same_specials(xn.grad, xc.grad)
    _assert_same_specials(wn.grad, wc.grad)
    # A finite block of the same process after an infinite one keeps the bf16x3 path's accuracy.
    assert (F.conv2d(xf.npu(), w.npu(), None, stride, padding).cpu() - F.conv2d(xf, w, None, stride, padding)).abs().max() < 1e-4


def test_matmul_hf32_infinities_match_cpu():
    """matmul with torch.npu.matmul.allow_hf32 = True (bf16x3 on AMX) keeps inf * b = +-inf; GEMV too."""
    old = torch.npu.matmul.allow_hf32
    torch.npu.matmul.allow_hf32 = True
    try:
        torch.manual_seed(0)
        a, b = torch.randn(100, 70), torch.randn(70, 90)
        a[5, 7], b[3, 8] = float("inf"), float("-inf")
        _assert_same_specials(a.npu() @ b.npu(), a @ b)
        af = torch.randn(100, 70)
        v = torch.randn(70)
        v[4] = float("inf")
        af[:, 4] = torch.rand(100) + 0.5  # inf * positive: every output +inf
        _assert_same_specials(af.npu() @ v.npu(), af @ v)
    finally:
        torch.npu.matmul.allow_hf32 = old


def test_conv_float32_precision_high_does_not_touch_convs(conv_hf32, fallback_error):
    """torch.set_float32_matmul_precision governs matmul ops only (torch.npu.matmul.allow_hf32 is its
    view); with conv HF32 off, a conv stays full float32 under "high"."""
    x, w = torch.randn(2, 20, 9, 9), torch.randn(24, 20, 3, 3)
    torch.npu.conv.allow_hf32 = False
    y0 = F.conv2d(x.npu(), w.npu(), None, 1, 1).cpu()
    old = torch.get_float32_matmul_precision()
    torch.npu.matmul.allow_hf32 = True
    try:
        assert torch.get_float32_matmul_precision() == "high"
        y1 = F.conv2d(x.npu(), w.npu(), None, 1, 1).cpu()
    finally:
        torch.set_float32_matmul_precision(old)
    assert torch.npu.matmul.allow_hf32 is (old != "highest")
    assert torch.equal(y0, y1)


@pytest.mark.parametrize("cin,k,stride,pad", [(8, 3, 1, 1), (3, 7, 2, 3)], ids=["3x3", "stem_width_unfolded"])
def test_cached_channels_last_weight_follows_updates(fallback_error, cin, k, stride, pad):
    # For weights autograd does not track, the channels_last and fractal-order copies are cached per weight version:
    # in-place updates (load_state_dict, no_grad writes) must be seen by the next call. The stem's 3-channel 7x7
    # weight is cached in its width-unfolded fractal order. (Tolerance: HF32 sums of up to 147 products; a stale
    # copy is off by O(1).)
    torch.manual_seed(3)
    x, w = torch.randn(2, cin, 19, 19), torch.randn(16, cin, k, k)  # (grad mode on: w does not require grad)
    xn, wn = x.npu(), w.npu()
    for step in range(3):
        y = F.conv2d(xn, wn, stride=stride, padding=pad)
        torch.testing.assert_close(y.cpu(), F.conv2d(x, w, stride=stride, padding=pad), rtol=1e-3, atol=1e-3)
        w.mul_(-0.5).add_(0.25)
        wn.mul_(-0.5).add_(0.25)
    wn.copy_(w.flip(0).npu())
    torch.testing.assert_close(F.conv2d(xn, wn, stride=stride, padding=pad).cpu(),
                               F.conv2d(x, w.flip(0), stride=stride, padding=pad), rtol=1e-3, atol=1e-3)
    # The same weight in a conv the width unfold does not apply to (dilation), then unfolded again.
    for dil in (2, 1):
        torch.testing.assert_close(F.conv2d(xn, wn, stride=stride, padding=pad, dilation=dil).cpu(),
                                   F.conv2d(x, w.flip(0), stride=stride, padding=pad, dilation=dil),
                                   rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("cin,cout,stride", [(20, 24, 1), (20, 24, 2), (600, 300, 1)],
                         ids=["k20_n24", "k20_n24_stride2", "k600_n300"])
def test_1x1_channels_last_packed_weight_follows_updates(fallback_error, dtype, cin, cout, stride):
    # A channels_last 1x1 conv is a GEMM whose B is the weights' cached fractal copy, read panel by panel
    # (K not a multiple of C0, N not of 16; 600 x 300: several k panels and two column tiles, so panel
    # offsets in both directions). In-place weight updates must reach the next call.
    torch.manual_seed(5)
    x = torch.randn(2, cin, 9, 9).to(memory_format=torch.channels_last)
    w = torch.randn(cout, cin, 1, 1) / cin ** 0.5
    xn, wn = x.to("npu", dtype), w.to("npu", dtype)
    tol = dict(rtol=2e-2, atol=2e-2) if dtype != torch.float32 else dict(rtol=2e-3, atol=2e-3)
    for _ in range(2):
        y = F.conv2d(xn, wn, stride=stride)
        ref = F.conv2d(x.to(dtype).float(), w.to(dtype).float(), stride=stride)
        torch.testing.assert_close(y.float().cpu(), ref, **tol)
        w.mul_(-0.5).add_(0.25)
        wn.mul_(-0.5).add_(0.25)


@torch.no_grad()
def test_cached_weight_memory_is_released(fallback_error):
    # 16 channels: enough that the conv reads the weights as they are (no width-unfolded copy per call).
    x = torch.randn(1, 16, 6, 6).npu()
    w_1x1 = torch.randn(8, 16, 1, 1).npu()  # a 1x1 weight is read in place: never copied
    F.conv2d(x, w_1x1)
    torch.npu.synchronize()  # blocks used by queued kernels are freed when the stream gets there
    torch.npu.empty_cache()
    base = torch.npu.memory_allocated()
    w = torch.randn(8, 16, 3, 3).npu()
    y = F.conv2d(x, w)
    del w, y
    torch.npu.synchronize()
    torch.npu.empty_cache()  # drops the cached copy
    assert torch.npu.memory_allocated() == base
    w = torch.randn(8, 16, 3, 3).npu()
    F.conv2d(x, w)
    assert torch.npu.memory_allocated() > base + w.nbytes  # the cached copy
    del w
    torch.npu.synchronize()  # queued kernels hold their tensors until they run
    F.conv2d(x, w_1x1)  # the next call drops the freed weight's copy
    torch.npu.synchronize()
    assert torch.npu.memory_allocated() == base


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("channels_last", [False, True])
@pytest.mark.parametrize("fused", [False, True])
def test_conv2d_large_output_streams_past_cache(fallback_error, dtype, channels_last, fused):
    """Outputs of >= 4 MiB are written with the L2 cache hint off (streaming stores in the model):
    the same numbers, with rows that start on and off 64 B boundaries (28 channels)."""
    import torch_ops_nn
    x = torch.randn(4, 12, 100, 100).to(dtype)
    w = (torch.randn(28, 12, 3, 3) * 0.1).to(dtype)
    fmt = torch.channels_last if channels_last else torch.contiguous_format
    dx, dw = x.to("npu").to(memory_format=fmt), w.to("npu")
    want = F.conv2d(x.float(), w.float(), None, 1, 1)
    if fused:
        got = torch_ops_nn.fused_conv_bn_relu(dx, dw, stride=(1, 1), padding=(1, 1))
        want = torch.relu(want)
    else:
        got = F.conv2d(dx, dw, None, 1, 1)
    assert got.numel() * got.element_size() >= (4 << 20) or dtype != torch.float32
    assert_close(got, want.to(dtype), dtype)


# (N, C, H, W, k, stride, padding): few input channels, kernel width folded into the channels.
FOLD_CASES = [
    (1, 3, 224, 224, 7, 2, 3),                 # the ResNet stem
    (2, 3, 17, 29, (3, 5), (1, 2), (1, 2)),    # odd sizes, rectangular kernel and strides
    (3, 2, 10, 13, 5, 1, 0),                   # no padding, stride 1
    (1, 1, 9, 33, (2, 7), 3, (0, 3)),          # one channel, stride 3
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", FOLD_CASES)
@pytest.mark.parametrize("channels_last", [False, True])
def test_few_channel_conv_folds_into_5hd(fallback_error, dtype, case, channels_last):
    """The width fold is written in 5HD by conv_fold_kernel (vector cores; zero W padding and zero
    lanes past C*kw) and the conv reads it with plain DataCopy: one fold launch, results as CPU's,
    for NCHW and NHWC inputs."""
    n, c, h, w, k, s, p = case
    k = k if isinstance(k, tuple) else (k, k)
    torch.manual_seed(5)
    x, wt, b = torch.randn(n, c, h, w).to(dtype), torch.randn(6, c, *k).to(dtype), torch.randn(6).to(dtype)
    xn = x.npu()
    if channels_last:
        xn = xn.contiguous(memory_format=torch.channels_last)
    torch.npu.reset_kernel_counters()
    got = F.conv2d(xn, wt.npu(), b.npu(), s, p)
    torch.npu.synchronize()
    assert torch.npu.kernel_counters()["conv_fold_kernel"]["launches"] == 1
    assert_close(got, F.conv2d(x.float(), wt.float(), b.float(), s, p).to(dtype), dtype)


def test_few_channel_conv_too_wide_for_the_fold_uses_copies(fallback_error):
    """Rows of more than 65535 output pixels per plane exceed the fold's DataCopy strides: the fold is
    made by device copies instead, with the same results."""
    torch.manual_seed(6)
    x, wt = torch.randn(1, 3, 150, 460), torch.randn(4, 3, 7, 7)
    torch.npu.reset_kernel_counters()
    got = F.conv2d(x.npu(), wt.npu(), None, 1, 3)
    torch.npu.synchronize()
    assert "conv_fold_kernel" not in torch.npu.kernel_counters()
    assert_close(got, F.conv2d(x, wt, None, 1, 3), torch.float32)


def _conv_grads(case, cout, seed, dtype, which):
    """A conv of `case` (n, c, h, w, k, s, p) with cout outputs: its grad_input (which = 0) or
    grad_weight (1) on npu in `dtype`, with the kernel counters of that call, and in float64 on CPU."""
    n, c, h, w, k, s, p = case
    k = k if isinstance(k, tuple) else (k, k)
    pair = lambda v: list(v) if isinstance(v, tuple) else [v, v]  # noqa: E731
    torch.manual_seed(seed)
    x, wt = torch.randn(n, c, h, w), torch.randn(cout, c, *k)
    go = torch.randn_like(F.conv2d(x, wt, None, s, p))
    mask = [which == 0, which == 1, False]

    def grad(*t):
        return torch.ops.aten.convolution_backward(*t[:3], None, pair(s), pair(p), [1, 1], False, [0, 0], 1,
                                                   mask)[which]

    want = grad(go.double(), x.double(), wt.double()).float()
    torch.npu.reset_kernel_counters()
    got = grad(go.to(dtype).npu(), x.to(dtype).npu(), wt.to(dtype).npu())
    torch.npu.synchronize()
    return got, want, torch.npu.kernel_counters(), go.shape, wt.shape, x.shape


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", FOLD_CASES)
def test_few_channel_grad_weight_folds_and_splits(fallback_error, conv_precision, dtype, case):
    """grad_weight of a few-channel conv (a first layer) folds the kernel width into the channels as
    the forward does (one conv_fold_kernel launch; K = C*kw*kh padded once per row of taps, not
    C0*kh*kw) and, its one channel tile leaving cores idle, splits the sum over images x pixels into
    float partials added by one reduction; results as the float64 CPU gradient's."""
    got, want, counters, go_shape, w_shape, _ = _conv_grads(case, 6, 7, dtype, which=1)
    n = case[0]
    assert counters["conv_fold_kernel"]["launches"] == 1
    assert counters["conv2d_dw_kernel"]["launches"] == 1
    # The split partials' sum: two or more chunks of at most 2048 pixels to split (one image of
    # few pixels is one chunk, summed by one core).
    split = n >= 2 or go_shape[2] * go_shape[3] > 2048
    assert counters.get("reduce_kernel", {}).get("launches", 0) == (1 if split else 0)
    assert got.dtype == dtype and got.shape == w_shape
    assert_close(got, want, dtype if dtype == torch.float32 else torch.bfloat16)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_grad_weight_split_k_with_few_tiles(fallback_error, dtype):
    """Many channels but few (channel, out-channel) tiles: the reduction is split across cores as float
    partials (an unsplit half workspace would round every split's sum), then added in float."""
    got, want, counters, _, _, _ = _conv_grads((3, 16, 20, 20, 3, 1, 1), 16, 8, dtype, which=1)
    assert counters["conv2d_dw_kernel"]["launches"] == 1 and counters["reduce_kernel"]["launches"] == 1
    assert_close(got, want, dtype if dtype == torch.float32 else torch.bfloat16)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("case", [
    (2, 3, 30, 30, 7, 2, 3),           # the ResNet stem: stride phases
    (2, 3, 17, 29, (3, 5), (1, 2), (1, 2)),
    (1, 2, 12, 12, 3, 1, 1),           # stride 1
    (2, 4, 6, 6, 3, 2, 0),             # a padding past the last block's reach
])
def test_few_channel_grad_input_is_one_gemm(fallback_error, conv_precision, dtype, case):
    """grad_input of a conv with few input channels (its own output channels) runs as one GEMM per
    stride phase, cols = W^T . grad_output, and a col2im of shifted adds - not as a conv whose 3
    output channels the cube pads to 16: no conv2d_kernel launch, results as the float64 CPU's."""
    got, want, counters, _, _, x_shape = _conv_grads(case, 16, 10, dtype, which=0)
    assert "conv2d_kernel" not in counters
    assert counters["matmul_kernel"]["launches"] >= 1
    assert got.dtype == dtype and got.shape == x_shape
    assert_close(got, want, dtype if dtype == torch.float32 else torch.bfloat16)


def test_few_channel_grad_weight_too_wide_for_the_fold(fallback_error):
    """A fold that does not fit its DataCopy strides leaves grad_weight to the unfolded kernel."""
    got, want, counters, _, _, _ = _conv_grads((1, 3, 150, 460, 7, 1, 3), 4, 9, torch.float32, which=1)
    assert "conv_fold_kernel" not in counters
    assert_close(got, want, torch.float32)


@pytest.mark.parametrize("shape", [(4, 512, 7, 7), (1, 256, 14, 14)])
def test_weight_heavy_tiles_share_weights(fallback_error, shape):
    """Few pixels and many channels: tiles of one channel tile are computed together so their weights
    cross GM -> L1 once per group, not once per tile (without grouping these convs stream 4x / 4x
    the weight bytes); results as CPU's."""
    torch.manual_seed(11)
    n, c, h, w_ = shape
    x, w = torch.randn(shape), torch.randn(c, c, 3, 3) * 0.05
    torch.npu.reset_kernel_counters()
    got = F.conv2d(x.npu(), w.npu(), padding=1)
    torch.npu.synchronize()
    moved = torch.npu.kernel_counters()["conv2d_kernel"]["gm_to_local_bytes"]
    torch.testing.assert_close(got.cpu(), F.conv2d(x, w, padding=1), rtol=1e-4, atol=1e-4)
    assert moved <= 2.5 * w.numel() * 4, f"{moved} bytes moved for {w.numel() * 4} bytes of weights"


def test_cached_weight_copy_follows_groups(fallback_error):
    """One weight tensor used with two groupings (cin 16, groups 1 and cin 32, groups 2): its cached
    copy is laid out per grouping, so the second call must not reuse the first's."""
    torch.manual_seed(12)
    w = torch.randn(16, 16, 3, 3)
    wn = w.npu()
    for cin, groups in [(16, 1), (32, 2), (16, 1)]:
        x = torch.randn(2, cin, 7, 7)
        torch.testing.assert_close(F.conv2d(x.npu(), wn, padding=1, groups=groups).cpu(),
                                   F.conv2d(x, w, padding=1, groups=groups), rtol=1e-4, atol=1e-4)


# The Fixpipe epilogue into float32 / float16 / bfloat16 (the vector paths per host ISA, scalar for
# partial 16-bit column blocks): scale/shift per channel (channels_last: along a row; NCHW: per row of
# the transposed tile), a residual in the output dtype, ReLU, NaN and fp16 overflow. 24 output
# channels: one full 16-channel block and one partial; 84 output rows: 16-row bands and a short one.
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("channels_last", [False, True])
@pytest.mark.parametrize("residual", [False, True])
def test_epilogue_matches_rounded_float(fallback_error, dtype, channels_last, residual):
    from torch_ops_nn.fused import reference
    g = torch.Generator().manual_seed(7)
    x = torch.randn(2, 8, 6, 7, generator=g).to(dtype)
    x[0, 0, 2, 3] = float("nan")                        # spreads over a 3x3 window of every channel
    w = (torch.randn(24, 8, 3, 3, generator=g) * 0.2).to(dtype)
    gamma, mean, var = torch.rand(24, generator=g) + 0.5, torch.randn(24, generator=g) * 0.1, torch.rand(24, generator=g) + 0.5
    beta = torch.randn(24, generator=g) * 0.2
    beta[5], beta[20] = 1e6, -1e6                       # float16 overflows to +inf (kept) / -inf (ReLU: 0)
    res = torch.randn(2, 24, 6, 7, generator=g).to(dtype) if residual else None
    bn = (gamma, beta, mean, var)
    ref = reference(x.float(), w.float(), None, *bn, None if res is None else res.float(), 1e-5,
                    [1, 1], [1, 1], [1, 1], 1, "relu").to(dtype)
    fmt = torch.channels_last if channels_last else torch.contiguous_format
    dx = x.to("npu").contiguous(memory_format=fmt)
    dres = None if res is None else res.to("npu").contiguous(memory_format=fmt)
    out = torch.ops.torch_ops_nn.conv_bn_act(dx, w.to("npu"), None, *(t.to("npu") for t in bn), dres, 1e-5,
                                              [1, 1], [1, 1], [1, 1], 1, "relu")
    assert out.dtype == dtype
    got = out.cpu()
    assert torch.equal(got.isnan(), ref.isnan())
    assert torch.equal(got.isinf(), ref.isinf())
    clean = ~got[:, 5].isnan()                          # (outside the NaN window)
    assert bool((got[:, 5][clean].isinf() == (dtype == torch.float16)).all()) and bool((got[:, 20][clean] == 0).all())
    finite = ref.isfinite()
    torch.testing.assert_close(got[finite].float(), ref[finite].float(), rtol=TOL[dtype], atol=TOL[dtype])


@pytest.mark.parametrize("isa", ["avx2", "scalar"])
def test_epilogue_on_other_host_isas(isa):
    """The same checks with the cube's data paths forced to another host ISA (what an AVX2-only or a
    non-x86 host runs), in a fresh process since the choice is made once."""
    import os
    import subprocess
    import sys
    env = dict(os.environ, TORCH_OPS_NN_CUBE_ISA=isa)
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", __file__, "-k",
                        "test_epilogue_matches_rounded_float"], capture_output=True, text=True,
                       env=env, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert "12 passed" in r.stdout


# (N, C, H, W, k, stride, padding, dilation): depthwise convs take the vector-core kernel
# (conv_depthwise.h): one plane per unit or row chunks of a large one, top / bottom rows of zeros;
# stride 1: left padding by DataCopyPad, the right by zero columns; strided: row phases and tap
# columns gathered from the loaded rows (stride 2, 3, unequal strides, with dilation).
DEPTHWISE = [
    (2, 16, 28, 28, 3, 1, 1, 1),
    (2, 24, 30, 17, 5, 1, 2, 1),
    (1, 8, 9, 7, 7, 1, 3, 1),
    (2, 16, 20, 20, 3, 1, 2, 2),
    (1, 4, 5, 5, 3, 1, 0, 1),
    (2, 3, 150, 150, 3, 1, 1, 1),  # row chunks
    (1, 2, 14, 40, 5, 1, 0, 3),
    (2, 16, 28, 28, 3, 2, 1, 1),
    (2, 24, 30, 17, 5, 2, 2, 1),
    (1, 8, 9, 7, 7, 2, 3, 1),
    (2, 16, 20, 21, 3, (2, 1), 2, 2),
    (1, 3, 11, 13, 3, (1, 2), 1, 1),
    (1, 4, 5, 5, 3, 3, 0, 1),
    (1, 2, 301, 160, 3, 2, 1, 1),  # strided row chunks
    (1, 3, 8, 8, 3, 1, 9, 5),      # stride 1, padding past DataCopyPad's 32 B: the cube
]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("case", DEPTHWISE)
@pytest.mark.parametrize("bias", [False, True])
def test_depthwise_vector_kernel(fallback_error, dtype, case, bias):
    n, c, h, w, k, s, p, d = case
    g = torch.Generator().manual_seed(n * c * h * w + k)
    x = torch.randn(n, c, h, w, generator=g).to(dtype)
    wt = torch.randn(c, 1, k, k, generator=g).to(dtype)
    b = torch.randn(c, generator=g).to(dtype) if bias else None
    kw = dict(stride=s, padding=p, dilation=d, groups=c)
    want = F.conv2d(x.float(), wt.float(), None if b is None else b.float(), **kw)
    got = F.conv2d(x.npu(), wt.npu(), None if b is None else b.npu(), **kw)
    assert got.dtype == dtype and got.shape == want.shape
    tol = {torch.float32: 1e-5, torch.float16: 4e-3, torch.bfloat16: 3e-2}[dtype]
    torch.testing.assert_close(got.float().cpu(), want, rtol=tol, atol=tol * want.abs().max().item())


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("case", DEPTHWISE)
def test_depthwise_backward_vector_kernel(fallback_error, dtype, case):
    """grad_input (the flipped kernel over grad_output, zeros inserted for a stride) and grad_weight
    (per-unit partial sums) of depthwise convs against the CPU."""
    n, c, h, w, k, s, p, d = case
    g = torch.Generator().manual_seed(n * c * h * w + k + 1)
    x = torch.randn(n, c, h, w, generator=g).to(dtype)
    wt = torch.randn(c, 1, k, k, generator=g).to(dtype)
    kw = dict(stride=s, padding=p, dilation=d, groups=c)
    xc, wc = x.float().clone().requires_grad_(), wt.float().clone().requires_grad_()
    y = F.conv2d(xc, wc, **kw)
    go = torch.randn(y.shape, generator=g).to(dtype)
    y.backward(go.float())
    xd, wd = x.npu().requires_grad_(), wt.npu().requires_grad_()
    F.conv2d(xd, wd, **kw).backward(go.npu())
    assert xd.grad.dtype == dtype and wd.grad.dtype == dtype
    tol = 1e-5 if dtype == torch.float32 else 2e-3
    torch.testing.assert_close(xd.grad.float().cpu(), xc.grad, rtol=tol, atol=tol * xc.grad.abs().max().item())
    torch.testing.assert_close(wd.grad.float().cpu(), wc.grad, rtol=tol, atol=tol * wc.grad.abs().max().item())


def test_depthwise_fused_bn_relu_and_backward(fallback_error):
    """The depthwise kernel with a folded BN and ReLU (the fused op and the FX pass use it), and the
    gradients of a depthwise conv (the cube's backward) against the CPU."""
    import torch_ops_nn
    g = torch.Generator().manual_seed(3)
    x = torch.randn(2, 12, 15, 15, generator=g)
    w = torch.randn(12, 1, 3, 3, generator=g)
    bn = [torch.rand(12, generator=g) + 0.5, torch.randn(12, generator=g), torch.randn(12, generator=g),
          torch.rand(12, generator=g) + 0.5]
    want = torch.relu(F.batch_norm(F.conv2d(x, w, padding=1, groups=12), bn[2], bn[3], bn[0], bn[1], False))
    got = torch_ops_nn.fused_conv_bn_relu(x.npu(), w.npu(), bn_weight=bn[0].npu(), bn_bias=bn[1].npu(),
                                          running_mean=bn[2].npu(), running_var=bn[3].npu(), padding=(1, 1),
                                          groups=12)
    torch.testing.assert_close(got.cpu(), want, rtol=1e-5, atol=1e-5)
    xc, wc = x.clone().requires_grad_(), w.clone().requires_grad_()
    xd, wd = x.npu().requires_grad_(), w.npu().requires_grad_()
    F.conv2d(xc, wc, padding=2, dilation=2, groups=12).square().sum().backward()
    F.conv2d(xd, wd, padding=2, dilation=2, groups=12).square().sum().backward()
    torch.testing.assert_close(xd.grad.cpu(), xc.grad, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(wd.grad.cpu(), wc.grad, rtol=1e-4, atol=1e-3)


def test_depthwise_channels_last(fallback_error):
    """channels_last in, channels_last out (and gradients), through the NCHW depthwise kernel."""
    g = torch.Generator().manual_seed(9)
    x = torch.randn(2, 10, 13, 12, generator=g).contiguous(memory_format=torch.channels_last)
    w = torch.randn(10, 1, 5, 5, generator=g)
    xc, wc = x.clone().requires_grad_(), w.clone().requires_grad_()
    y = F.conv2d(xc, wc, stride=2, padding=2, groups=10)
    go = torch.randn(y.shape, generator=g)
    y.backward(go)
    xd, wd = x.npu().requires_grad_(), w.npu().requires_grad_()
    yd = F.conv2d(xd, wd, stride=2, padding=2, groups=10)
    yd.backward(go.npu())
    assert yd.is_contiguous(memory_format=torch.channels_last)
    torch.testing.assert_close(yd.detach().cpu(), y.detach(), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(xd.grad.cpu(), xc.grad, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(wd.grad.cpu(), wc.grad, rtol=1e-5, atol=1e-4)
