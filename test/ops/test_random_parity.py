"""Seeded random configurations against PyTorch's CPU: convolutions and pools (forward and both
gradients) and chains of differentiable ops (reductions over views: test_cpu_parity.py). Each draw is
a fixed function of its seed, so a failure names a reproducible case. These found a conv
grad_input bug (stride leaving rows after the last window, dilation > 1) that the hand-written
shape lists missed."""
import copy
import random

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F


def _conv_case(rng):
    g = rng.choice([1, 1, 1, 2, 4])
    cin, cout = g * rng.randint(1, 5), g * rng.randint(1, 5)
    kh, kw = rng.randint(1, 5), rng.randint(1, 5)
    sh, sw, dh, dw = rng.randint(1, 3), rng.randint(1, 3), rng.randint(1, 2), rng.randint(1, 2)
    h, w = rng.randint((kh - 1) * dh + 1, 14), rng.randint((kw - 1) * dw + 1, 14)
    ph, pw = rng.randint(0, kh // 2 + 1), rng.randint(0, kw // 2 + 1)
    kind = rng.choice(["conv", "conv", "conv_transpose", "max_pool", "avg_pool"])
    if kind == "conv":
        mode = rng.choice(["zeros", "zeros", "reflect", "replicate", "circular"])
        if mode != "zeros":
            ph, pw = min(ph, h - 1), min(pw, w - 1)
        m = nn.Conv2d(cin, cout, (kh, kw), (sh, sw), (ph, pw), (dh, dw), g, rng.random() < 0.5, mode)
    elif kind == "conv_transpose":
        oph = rng.randint(0, max(sh, dh) - 1)
        m = nn.ConvTranspose2d(cin, cout, (kh, kw), (sh, sw), (ph, pw), (oph, 0), g, rng.random() < 0.5, (dh, dw))
    elif kind == "max_pool":
        m = nn.MaxPool2d((kh, kw), (sh, sw), (min(ph, kh // 2), min(pw, kw // 2)), (dh, dw), ceil_mode=rng.random() < 0.5)
    else:
        m = nn.AvgPool2d((kh, kw), (sh, sw), (min(ph, kh // 2), min(pw, kw // 2)), ceil_mode=rng.random() < 0.5,
                         count_include_pad=rng.random() < 0.5)
    x = torch.randn(rng.randint(1, 3), cin, h, w)
    if rng.random() < 0.3:
        x = x.contiguous(memory_format=torch.channels_last)
    return m, x


@pytest.mark.parametrize("seed", range(12))
def test_random_conv_and_pool_configs_match_cpu(fallback_error, full_fp32_convs, seed):
    rng = random.Random(seed)
    torch.manual_seed(seed)
    checked = 0
    for case in range(30):
        m, x = _conv_case(rng)
        xc = x.clone().requires_grad_()
        try:
            yc = m(xc)
        except RuntimeError:  # an invalid draw (the output would be empty or negative): skip it
            continue
        gy = torch.randn(yc.shape)
        (yc * gy).sum().backward()
        md = copy.deepcopy(m).npu()
        xd = x.npu().requires_grad_()
        yd = md(xd)
        (yd * gy.npu()).sum().backward()
        what = f"seed {seed} case {case}: {m} x {tuple(x.shape)} channels_last {x.is_contiguous(memory_format=torch.channels_last)}"
        pairs = [(yd, yc, "output"), (xd.grad, xc.grad, "grad_input")]
        pairs += [(pd.grad, p.grad, "grad_" + n) for (n, p), (_, pd) in zip(m.named_parameters(), md.named_parameters())]
        for got, want, name in pairs:
            assert got.shape == want.shape, f"{name} shape, {what}"
            scale = max(want.abs().max().item(), 1e-3) if want.numel() else 1.0
            err = (got.detach().cpu() - want).abs().max().item() / scale if want.numel() else 0.0
            assert err <= 2e-4, f"{name} relative error {err:.2e}, {what}"
        checked += 1
    assert checked >= 18  # most draws are valid


_UNARY = [
    lambda x: x.exp().clamp(max=50), torch.tanh, torch.sigmoid, F.gelu, F.silu, lambda x: x.pow(2), torch.sin, F.softplus,
    F.elu, lambda x: F.leaky_relu(x, 0.2), lambda x: x.clamp(-0.5, 0.5), lambda x: (x.abs() + 1).log(),
    lambda x: (x.abs() + 1).rsqrt(), lambda x: x.softmax(-1), lambda x: x.log_softmax(0), lambda x: x.cumsum(-1),
    lambda x: x.flip(0), lambda x: x.transpose(0, -1), lambda x: x.sum(-1, keepdim=True) * x,
    lambda x: x.amax(-1, keepdim=True) + x, lambda x: F.normalize(x, dim=-1), lambda x: F.layer_norm(x, x.shape[-1:]),
    lambda x: torch.atan2(x, x.flip(-1) + 2), lambda x: x[..., ::2], lambda x: x.roll(1, -1), F.hardswish, F.mish,
    lambda x: x.logsumexp(-1, keepdim=True) + x, lambda x: x.cumprod(-1), torch.erf, lambda x: x.sort(-1).values,
    lambda x: torch.where(x > 0, x, x * 0.1), lambda x: x.unsqueeze(0).expand(2, *x.shape).sum(0),
    lambda x: x @ x.transpose(-1, -2) if x.dim() >= 2 else x * x, lambda x: x.prod(-1, keepdim=True) + x,
]


@pytest.mark.parametrize("seed", range(4))
def test_random_op_chains_match_cpu_with_grads(fallback_error, seed):
    rng = random.Random(seed)
    torch.manual_seed(seed)
    for case in range(80):
        shape = [rng.randint(1, 7) for _ in range(rng.randint(1, 3))]
        chain = [rng.randrange(len(_UNARY)) for _ in range(rng.randint(1, 3))]

        def f(t):
            for i in chain:
                t = _UNARY[i](t)
            return t

        x = torch.randn(shape)
        xc, xd = x.clone().requires_grad_(), x.npu().requires_grad_()
        yc = f(xc)
        g = torch.randn(yc.shape)
        (yc * g).sum().backward()
        yd = f(xd)
        (yd * g.npu()).sum().backward()
        what = f"seed {seed} case {case}: chain {chain} on shape {shape}"
        for got, want in ((yd, yc), (xd.grad, xc.grad)):
            tol = 2e-4 * max(1.0, want.abs().max().item())
            torch.testing.assert_close(got.detach().cpu(), want.detach(), rtol=2e-4, atol=tol, equal_nan=True, msg=what)
