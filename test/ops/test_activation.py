"""Activations and their backward ops on npu against PyTorch's CPU results, for float32 / float16 /
bfloat16, directly (the ATen backward ops) and through autograd.

Tolerances: float32 1e-6 relative for piecewise-linear ops, 1e-5 relative / 1e-6 absolute for the
composed transcendentals (PyTorch's own CPU results lose relative precision in the tails, e.g.
gelu(x) = 0.5 x (1 + erf(x/sqrt2)) for x << 0); float16 2e-3; bfloat16 1.6e-2.
"""
import pytest
import torch
import torch.nn.functional as F

import torch_ops_nn  # noqa: F401

pytestmark = pytest.mark.usefixtures("fallback_error")

FLOATS = [torch.float32, torch.float16, torch.bfloat16]
LINEAR = {torch.float32: dict(rtol=1e-6, atol=1e-7), torch.float16: dict(rtol=1e-3, atol=1e-3),
          torch.bfloat16: dict(rtol=1e-2, atol=1e-2)}
TRANS = {torch.float32: dict(rtol=1e-5, atol=1e-6), torch.float16: dict(rtol=2e-3, atol=2e-3),
         torch.bfloat16: dict(rtol=1.6e-2, atol=1.6e-2)}
SHAPES = [(0,), (1,), (7,), (33,), (1000,), (100003,), (2, 3, 5, 7), (4, 16, 9, 9)]


def rand(shape, dtype=torch.float32, lo=-6.0, hi=6.0, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(shape, generator=g) * (hi - lo) + lo).to(dtype)


def assert_same(actual, expected, tol):
    assert actual.device.type == "npu", actual.device
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    torch.testing.assert_close(actual.cpu().float(), expected.float(), equal_nan=True, **tol)


ACTS = {
    "relu": (torch.relu, LINEAR), "relu6": (F.relu6, LINEAR), "hardtanh": (lambda x: F.hardtanh(x, -2.0, 1.5), LINEAR),
    "leaky_relu": (lambda x: F.leaky_relu(x, 0.1), LINEAR), "leaky_relu_neg": (lambda x: F.leaky_relu(x, -0.3), LINEAR),
    "sigmoid": (torch.sigmoid, TRANS), "tanh": (torch.tanh, TRANS), "gelu": (F.gelu, TRANS),
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"), TRANS), "silu": (F.silu, TRANS),
    "hardswish": (F.hardswish, LINEAR), "hardsigmoid": (F.hardsigmoid, LINEAR),
    "threshold": (lambda x: F.threshold(x, 0.5, -2.0), LINEAR),
    "elu": (F.elu, TRANS), "elu_alpha": (lambda x: F.elu(x, 0.4), TRANS), "selu": (F.selu, TRANS),
    "celu": (lambda x: F.celu(x, 1.7), TRANS), "softplus": (F.softplus, TRANS),
    "softplus_beta": (lambda x: F.softplus(x, 2.5, 4.0), TRANS), "mish": (F.mish, TRANS),
    "hardshrink": (lambda x: F.hardshrink(x, 0.6), LINEAR), "softshrink": (lambda x: F.softshrink(x, 0.6), LINEAR),
}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("act", list(ACTS))
def test_activation_forward(act, dtype):
    fn, tol = ACTS[act]
    for shape in SHAPES:
        x = rand(shape, dtype, seed=1)
        assert_same(fn(x.to("npu")), fn(x), tol[dtype])
    x = rand((12, 10), dtype, seed=2)
    assert_same(fn(x.to("npu").t()), fn(x.t()), tol[dtype])  # non-contiguous


@pytest.mark.parametrize("dtype", FLOATS)
def test_activation_inplace_and_out(dtype):
    x = rand((4, 16, 9, 9), dtype, seed=3)
    for fn in [lambda t: torch.relu_(t), lambda t: F.relu6(t, inplace=True), lambda t: F.leaky_relu(t, 0.2, True),
               lambda t: F.hardtanh(t, -1, 1, True), lambda t: F.silu(t, inplace=True),
               lambda t: F.hardswish(t, inplace=True), lambda t: F.hardsigmoid(t, inplace=True),
               lambda t: torch.sigmoid_(t), lambda t: torch.tanh_(t), lambda t: F.threshold(t, 0.1, 20, True)]:
        c, d = x.clone(), x.to("npu")
        r = fn(d)
        fn(c)
        assert r.data_ptr() == d.data_ptr()
        assert_same(d, c, TRANS[dtype])
    d = x.to("npu")[:, ::2]  # in-place on a view
    c = x.clone()[:, ::2]
    torch.relu_(d)
    torch.relu_(c)
    assert_same(d, c, LINEAR[dtype])
    for name in ["sigmoid", "tanh"]:
        out = torch.empty(0, dtype=dtype, device="npu")
        getattr(torch, name)(x.to("npu"), out=out)
        assert_same(out, getattr(torch, name)(x), TRANS[dtype])


@pytest.mark.parametrize("dtype", FLOATS)
def test_nan_and_inf_propagate(dtype):
    x = torch.tensor([float("nan"), float("inf"), -float("inf"), -0.0, 0.0, 1.0, -1.0] * 5, dtype=dtype)
    for fn in [torch.relu, F.relu6, lambda t: F.hardtanh(t, -0.5, 0.5), torch.sigmoid, torch.tanh, F.silu,
               lambda t: t.clamp(min=0), F.hardsigmoid, F.elu, F.softplus, F.mish, F.hardshrink, F.softshrink]:
        assert_same(fn(x.to("npu")), fn(x), TRANS[dtype])
        assert_same(fn(x.to("npu")[::2]), fn(x[::2]), TRANS[dtype])  # the elementwise-kernel path


@pytest.mark.parametrize("dtype", FLOATS)
def test_relu_is_bit_exact(dtype):
    """relu keeps NaN and the sign of zero as the CPU does (x < 0 ? 0 : x), bit for bit."""
    x = torch.tensor([float("nan"), float("inf"), -float("inf"), -0.0, 0.0, 1e-40, -1e-40, 3.5, -3.5] * 30)
    x = x.to(dtype)
    bits = torch.int32 if dtype == torch.float32 else torch.int16
    assert torch.equal(torch.relu(x.to("npu")).cpu().view(bits), torch.relu(x).view(bits))


def test_relu_int_and_gelu_bad_approximate():
    i = torch.arange(-5, 5, dtype=torch.int32)
    assert_same(torch.relu(i.to("npu")), torch.relu(i), LINEAR[torch.float32])
    with pytest.raises(RuntimeError, match=r"gelu: argument 'approximate' must be 'none' or 'tanh', got 'fast'"):
        F.gelu(torch.ones(3, device="npu"), approximate="fast")
    with pytest.raises(NotImplementedError, match=r"silu: argument 'self' has dtype Int"):
        F.silu(i.to("npu"))
    x = torch.ones(3, device="npu")
    with pytest.raises(RuntimeError, match=r"leaky_relu_backward: in-place leaky_relu backward with a negative slope"):
        torch.ops.aten.leaky_relu_backward(x, x, -0.1, True)
    with pytest.raises(RuntimeError, match=r"sigmoid_backward: argument 'output' is on cpu.*'grad_output' on npu:0"):
        torch.ops.aten.sigmoid_backward(x, torch.ones(3))


# ---------------------------------------------------------------- backward ops
BACKWARD = {
    "threshold_backward": (lambda g, x: torch.ops.aten.threshold_backward(g, x, 0.25), LINEAR),
    "sigmoid_backward": (lambda g, x: torch.ops.aten.sigmoid_backward(g, torch.sigmoid(x)), TRANS),
    "tanh_backward": (lambda g, x: torch.ops.aten.tanh_backward(g, torch.tanh(x)), TRANS),
    "gelu_backward": (lambda g, x: torch.ops.aten.gelu_backward(g, x), TRANS),
    # PyTorch's CPU formula cancels in 1 - tanh^2 and 1 + tanh (absolute error ~2e-6 near |x| = 5, where
    # it returns 0 for a true -1.6e-6); the kernel avoids both, so float32 gets the reference's own error.
    "gelu_backward_tanh": (lambda g, x: torch.ops.aten.gelu_backward(g, x, approximate="tanh"),
                           {**TRANS, torch.float32: dict(rtol=1e-5, atol=5e-6)}),
    "silu_backward": (lambda g, x: torch.ops.aten.silu_backward(g, x), TRANS),
    "hardtanh_backward": (lambda g, x: torch.ops.aten.hardtanh_backward(g, x, -1.0, 2.0), LINEAR),
    "leaky_relu_backward": (lambda g, x: torch.ops.aten.leaky_relu_backward(g, x, 0.05, False), LINEAR),
    "hardswish_backward": (lambda g, x: torch.ops.aten.hardswish_backward(g, x), TRANS),
    "hardsigmoid_backward": (lambda g, x: torch.ops.aten.hardsigmoid_backward(g, x), LINEAR),
    "elu_backward": (lambda g, x: torch.ops.aten.elu_backward(g, 1.3, 1.05, 0.9, False, x), TRANS),
    "elu_backward_result": (lambda g, x: torch.ops.aten.elu_backward(g, 1.3, 1.05, 0.9, True,
                                                                     torch.ops.aten.elu(x, 1.3, 1.05, 0.9)), TRANS),
    "softplus_backward": (lambda g, x: torch.ops.aten.softplus_backward(g, x, 1.5, 3.0), TRANS),
    "hardshrink_backward": (lambda g, x: torch.ops.aten.hardshrink_backward(g, x, 0.25), LINEAR),
    "softshrink_backward": (lambda g, x: torch.ops.aten.softshrink_backward(g, x, 0.25), LINEAR),
}


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("op", list(BACKWARD))
def test_backward_ops(op, dtype):
    fn, tol = BACKWARD[op]
    for shape in [(0,), (7,), (1000,), (100003,), (4, 16, 9, 9)]:
        x, g = rand(shape, dtype, seed=4), rand(shape, dtype, -2, 2, seed=5)
        x.view(-1)[::97] = 0.25 if x.numel() else 0  # hit the boundary points of the piecewise ops
        assert_same(fn(g.to("npu"), x.to("npu")), fn(g, x), tol[dtype])


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_autograd_through_activations(dtype):
    x = rand((8, 33), dtype, seed=6)
    for act, _ in [("relu", 0), ("sigmoid", 0), ("tanh", 0), ("gelu", 0), ("gelu_tanh", 0), ("silu", 0),
                   ("hardtanh", 0), ("leaky_relu", 0), ("hardswish", 0), ("hardsigmoid", 0), ("relu6", 0)]:
        fn, tol = ACTS[act]
        xc = x.clone().requires_grad_()
        xn = x.to("npu").requires_grad_()
        yc, yn = fn(xc), fn(xn)
        g = rand(yc.shape, dtype, seed=7)
        yc.backward(g)
        yn.backward(g.to("npu"))
        tol = dict(rtol=1e-5, atol=5e-6) if act == "gelu_tanh" and dtype == torch.float32 else TRANS[dtype]
        assert_same(xn.grad, xc.grad, tol)


def test_module_forward_backward_matches_cpu():
    torch.manual_seed(0)
    x = torch.randn(16, 20)
    layers = [torch.nn.ReLU(), torch.nn.GELU(), torch.nn.SiLU(), torch.nn.Tanh(), torch.nn.Sigmoid(),
              torch.nn.LeakyReLU(0.2), torch.nn.Hardswish(), torch.nn.ReLU6()]
    for layer in layers:
        xc, xn = x.clone().requires_grad_(), x.to("npu").requires_grad_()
        yc, yn = layer(xc), layer(xn)
        yc.backward(torch.ones_like(yc))
        yn.backward(torch.ones_like(yn))
        assert_same(yn.detach(), yc.detach(), TRANS[torch.float32])
        assert_same(xn.grad, xc.grad, TRANS[torch.float32])


@pytest.mark.parametrize("dtype", FLOATS)
def test_signed_zeros_of_clamp_like_activations(dtype):
    """relu6 / hardtanh / clamp keep -0.0 where it is inside the range, as the CPU's x < lo ? lo : x."""
    x = torch.tensor([-0.0, 0.0, -1e-30, 2.0, -3.0, float("nan")] * 20, dtype=dtype)
    bits = torch.int32 if dtype == torch.float32 else torch.int16
    for fn in [F.relu6, lambda t: F.hardtanh(t, -0.0, 1.0), lambda t: t.clamp(min=0.0), lambda t: t.clamp(-1.0, 0.0)]:
        got, want = fn(x.to("npu")).cpu(), fn(x)
        assert torch.equal(got.isnan(), want.isnan())  # (NaN payloads differ between CPU code paths)
        assert torch.equal(got[~got.isnan()].view(bits), want[~want.isnan()].view(bits))


def test_new_activations_train_through_autograd():
    """elu / selu / softplus / shrink in a model: gradients through autograd match the CPU's."""
    torch.manual_seed(3)
    for act in [F.elu, F.selu, lambda t: F.celu(t, 0.5), lambda t: F.softplus(t, 2.0), F.hardshrink,
                F.softshrink, lambda t: F.elu(t.clone(), inplace=True)]:
        a = (torch.randn(300) * 2).requires_grad_()
        b = a.detach().to("npu").requires_grad_()
        g = torch.randn(300)
        act(a).backward(g)
        act(b).backward(g.to("npu"))
        torch.testing.assert_close(b.grad.cpu(), a.grad, rtol=1e-5, atol=1e-6)


def test_log_sigmoid_and_bce_with_logits(fallback_error):
    """logsigmoid forward / backward and BCEWithLogits (which reaches log_sigmoid_forward) match the CPU."""
    torch.manual_seed(0)
    x = torch.randn(4000) * 30
    x[:4] = torch.tensor([0.0, -0.0, 88.0, -104.0])
    xn = x.npu().requires_grad_()
    xc = x.clone().requires_grad_()
    y, yc = torch.nn.functional.logsigmoid(xn), torch.nn.functional.logsigmoid(xc)
    torch.testing.assert_close(y.cpu(), yc.detach(), rtol=1e-5, atol=2e-6)
    g = torch.randn(4000)
    y.backward(g.npu())
    yc.backward(g)
    torch.testing.assert_close(xn.grad.cpu(), xc.grad, rtol=1e-5, atol=1e-6)
    logits, target = torch.randn(16, 10), torch.rand(16, 10)
    ln = logits.npu().requires_grad_()
    lc = logits.clone().requires_grad_()
    pw = torch.rand(10) + 0.5
    loss = torch.nn.functional.binary_cross_entropy_with_logits(ln, target.npu(), pos_weight=pw.npu())
    ref = torch.nn.functional.binary_cross_entropy_with_logits(lc, target, pos_weight=pw)
    torch.testing.assert_close(loss.cpu(), ref.detach(), rtol=1e-5, atol=1e-6)
    loss.backward()
    ref.backward()
    torch.testing.assert_close(ln.grad.cpu(), lc.grad, rtol=1e-5, atol=1e-7)


def test_rrelu(fallback_error):
    x = torch.randn(2000)
    x[:5] = 0.0
    # eval: the mean slope, as a leaky_relu
    assert torch.allclose(F.rrelu(x.npu(), 0.1, 0.3, training=False).cpu(), F.rrelu(x, 0.1, 0.3, training=False))
    # training: each element <= 0 gets its own slope in [lower, upper); autograd's gradient is that slope
    xn = x.npu().requires_grad_()
    y = F.rrelu(xn, 0.1, 0.3, training=True)
    y.sum().backward()
    neg, slope = x < 0, xn.grad.cpu()
    assert torch.equal(y.detach().cpu()[x > 0], x[x > 0]) and torch.all(slope[x > 0] == 1)
    assert torch.all((slope[neg] >= 0.1) & (slope[neg] < 0.3))
    torch.testing.assert_close(y.detach().cpu()[neg], x[neg] * slope[neg])
    assert 0.18 < slope[neg].mean().item() < 0.22 and slope[neg].std().item() > 0.04  # uniform on [0.1, 0.3)
    assert torch.equal(y.detach().cpu()[:5], torch.zeros(5))
    torch.manual_seed(3)
    a = F.rrelu(x.npu(), training=True)
    torch.manual_seed(3)
    assert torch.equal(a.cpu(), F.rrelu(x.npu(), training=True).cpu())  # the device generator's seed
    w = x.npu()
    F.rrelu_(w, training=True)
    assert torch.equal(w.cpu()[x > 0], x[x > 0])
    with pytest.raises(RuntimeError, match=r"rrelu_with_noise: lower bound must be less than or equal to upper"):
        torch.ops.aten.rrelu_with_noise(x.npu(), torch.empty(2000).npu(), 0.5, 0.1, True)


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.int16, torch.int8])
def test_hardtanh_relu6_of_integers(dtype, fallback_error):
    """Integer tensors clamp to the bounds converted to their dtype (int64 gave zeros: its 64-bit
    bounds were never set)."""
    x = torch.randint(-9, 10, (64,), dtype=dtype)
    for lo, hi in ((-1.0, 1.0), (-2.7, 3.9), (0, 6), (-5, -2)):
        assert torch.equal(F.hardtanh(x.npu(), lo, hi).cpu(), F.hardtanh(x, lo, hi))
    assert torch.equal(F.relu6(x.npu()).cpu(), F.relu6(x))


def test_bool_add_with_a_false_alpha(fallback_error):
    a, b = torch.tensor([True, False, True, False]), torch.tensor([[True], [False]])
    for alpha in (True, False):
        assert torch.equal(torch.add(a.npu(), b.npu(), alpha=alpha).cpu(), torch.add(a, b, alpha=alpha))
        assert torch.equal(a.npu().add_(b[0].npu(), alpha=alpha).cpu(), a.clone().add_(b[0], alpha=alpha))
        out = torch.empty(2, 4, dtype=torch.bool).npu()
        torch.add(a.npu(), b.npu(), alpha=alpha, out=out)
        assert torch.equal(out.cpu(), torch.add(a, b, alpha=alpha))
