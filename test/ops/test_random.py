"""Random numbers on npu: Philox-4x32-10 (known answer), distributions checked statistically (moments and a
Kolmogorov-Smirnov distance; a different generator than the CPU's, so no bit equality), reproducibility
with torch.manual_seed, independence from the host threads, dropout, and the argument errors.
"""
import math
import os
import subprocess
import sys

import pytest
import torch
import torch.nn.functional as F

DTYPES = [torch.float32, torch.float16, torch.bfloat16]
N = 200_000
KS_BOUND = 1.63 / math.sqrt(N) * 1.5  # well above the 1% critical value of the KS statistic


def ks_distance(samples, cdf):
    x, _ = torch.sort(samples.double())
    n = x.numel()
    f = cdf(x)
    i = torch.arange(1, n + 1, dtype=torch.float64)
    return max((i / n - f).max().item(), (f - (i - 1) / n).max().item())


def normal_cdf(x):
    return 0.5 * (1 + torch.erf(x / math.sqrt(2)))


def test_philox_known_answer(fallback_error):
    """Random123's Philox-4x32-10 test vector: counter 0, key 0 -> 6627e8d5 e169c58d bc57ac4c 9b00dbd8.
    With seed 0 and offset 0, elements 0, 2048, 4096, 6144 take those four words (24 high bits)."""
    g = torch.Generator(device="npu")
    g.manual_seed(0)
    u = torch.rand(8192, device="npu", generator=g).cpu()
    words = [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]
    assert [u[k * 2048].item() for k in range(4)] == [(w >> 8) / 2**24 for w in words]


@pytest.mark.parametrize("dtype", DTYPES)
def test_rand_uniform(fallback_error, dtype):
    torch.manual_seed(0)
    u = torch.rand(N, device="npu", dtype=dtype).cpu().double()
    assert u.min() >= 0 and u.max() <= 1
    assert abs(u.mean().item() - 0.5) < 0.005
    assert abs(u.var().item() - 1 / 12) < 0.002
    if dtype == torch.float32:
        assert u.max() < 1
        assert ks_distance(u, lambda x: x.clamp(0, 1)) < KS_BOUND
    a = torch.empty(1000, 3, device="npu", dtype=dtype).uniform_(-2.0, 5.0).cpu().float()
    assert a.min() >= -2 and a.max() <= 5 and abs(a.mean().item() - 1.5) < 0.25


@pytest.mark.parametrize("dtype", DTYPES)
def test_randn_normal(fallback_error, dtype):
    torch.manual_seed(1)
    z = torch.randn(N + 3, device="npu", dtype=dtype).cpu().double()
    assert abs(z.mean().item()) < 0.01
    assert abs(z.std().item() - 1) < 0.01
    assert abs(((z - z.mean()) ** 3).mean().item()) < 0.05
    assert abs(((z - z.mean()) ** 4).mean().item() - 3) < 0.1
    if dtype == torch.float32:
        assert ks_distance(z, normal_cdf) < KS_BOUND
    y = torch.empty(50_000, device="npu", dtype=dtype).normal_(2.0, 3.0).cpu().double()
    assert abs(y.mean().item() - 2) < 0.06 and abs(y.std().item() - 3) < 0.06


def test_reproducible_with_manual_seed(fallback_error):
    torch.manual_seed(5)
    a = torch.randn(3000, device="npu").cpu()
    b = torch.rand(100, device="npu").cpu()
    torch.manual_seed(5)
    assert torch.equal(torch.randn(3000, device="npu").cpu(), a)
    assert torch.equal(torch.rand(100, device="npu").cpu(), b)
    assert not torch.equal(torch.randn(3000, device="npu").cpu(), a)  # the offset advanced
    g1, g2 = torch.Generator(device="npu"), torch.Generator(device="npu")
    g1.manual_seed(9)
    g2.manual_seed(9)
    assert torch.equal(torch.rand(77, device="npu", generator=g1).cpu(), torch.rand(77, device="npu", generator=g2).cpu())


def test_independent_of_host_threads():
    code = ("import torch, torch_ops_nn; torch.manual_seed(3); "
            "x = torch.randn(70000, device='npu'); y, m = torch.ops.aten.native_dropout(x, 0.3, True); "
            "print(float(x.cpu().sum()), float(y.cpu().sum()), int(m.cpu().sum()))")
    outs = []
    for threads in ("1", "2"):
        env = dict(os.environ, TORCH_OPS_NN_HOST_THREADS=threads)
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
        assert r.returncode == 0, r.stderr
        outs.append(r.stdout.strip().splitlines()[-1])
    assert outs[0] == outs[1]


def test_non_contiguous_and_sizes(fallback_error):
    t = torch.empty(37, 41, device="npu").t()
    t.uniform_(-1, 1)
    c = t.cpu()
    assert c.min() >= -1 and c.max() <= 1 and c.std() > 0.4
    for n in (0, 1, 7, 2047, 2049, 8193):
        x = torch.randn(n, device="npu").cpu()
        assert x.shape == (n,) and torch.isfinite(x).all()


@pytest.mark.parametrize("dtype", DTYPES)
def test_bernoulli(fallback_error, dtype):
    torch.manual_seed(2)
    for p in (0.0, 0.3, 1.0):
        b = torch.empty(N, device="npu", dtype=dtype).bernoulli_(p).cpu().double()
        assert set(b.unique().tolist()) <= {0.0, 1.0}
        assert abs(b.mean().item() - p) < 0.005


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("p", [0.2, 0.5, 0.9])  # 0 and 1 take ATen's unfused path (mul)
def test_dropout(fallback_error, dtype, p):
    torch.manual_seed(3)
    x = torch.randn(64, 1000).to(dtype)
    xn = x.to("npu").requires_grad_()
    y = F.dropout(xn, p, True)
    mask = (y.detach().cpu() != 0) | (x == 0)
    keep = mask.double().mean().item()
    assert abs(keep - (1 - p)) < 0.01
    if p < 1:
        ref = torch.where(mask, x.float() / (1 - p), torch.zeros(()))
        tol = 1e-6 if dtype == torch.float32 else 1e-2  # x * (1/(1-p)) vs x / (1-p): one rounding apart
        assert (y.detach().cpu().float() - ref.to(dtype).float()).abs().max().item() <= tol * ref.abs().max().item() + 1e-6
    g = torch.randn(64, 1000).to(dtype)
    y.backward(g.to("npu"))
    expected = torch.where(mask, g.float() / (1 - p) if p < 1 else torch.zeros(()), torch.zeros(()))
    assert (xn.grad.cpu().float() - expected.to(dtype).float()).abs().max().item() <= 2e-2 * expected.abs().max().item() + 1e-6


def test_native_dropout_mask_and_eval(fallback_error):
    x = torch.randn(5000).npu()
    y, m = torch.ops.aten.native_dropout(x, 0.25, True)
    assert m.dtype == torch.bool
    ref = torch.where(m.cpu(), x.cpu() / 0.75, torch.zeros(()))
    assert (y.cpu() - ref).abs().max().item() <= 1e-6 * ref.abs().max().item()
    gx = torch.ops.aten.native_dropout_backward(torch.ones(5000).npu(), m, 1 / 0.75)
    assert torch.allclose(gx.cpu(), m.cpu().float() / 0.75)
    for p in (0.0, 1.0):
        y, m = torch.ops.aten.native_dropout(x, p, True)
        assert m.cpu().all() if p == 0 else not m.cpu().any()
        assert torch.equal(y.cpu(), x.cpu() if p == 0 else torch.zeros(5000))
    y, m = torch.ops.aten.native_dropout(x, 0.25, False)
    assert torch.equal(y.cpu(), x.cpu()) and m.cpu().all()
    d = torch.nn.Dropout(0.5).eval()
    assert torch.equal(d(x).cpu(), x.cpu())


def test_random_errors(fallback_error):
    x = torch.empty(10, device="npu")
    with pytest.raises(RuntimeError, match=r"normal_: expects std >= 0.0, but got std=-1"):
        x.normal_(0, -1)
    with pytest.raises(RuntimeError, match=r"uniform_: expects from <= to, but got from=2 and to=1"):
        x.uniform_(2, 1)
    with pytest.raises(RuntimeError, match=r"bernoulli_: expects p to be in \[0, 1\], but got p=1.5"):
        x.bernoulli_(1.5)
    with pytest.raises(RuntimeError, match=r"dropout probability has to be between 0 and 1, but got 1.5"):
        torch.ops.aten.native_dropout(x, 1.5, True)
    with pytest.raises(NotImplementedError, match="has dtype Int"):
        torch.empty(4, dtype=torch.int32, device="npu").normal_()
    with pytest.raises(RuntimeError, match=r"grad_output shape \[10\] does not match mask shape \[9\]"):
        torch.ops.aten.native_dropout_backward(x, torch.ones(9, dtype=torch.bool, device="npu"), 2.0)
