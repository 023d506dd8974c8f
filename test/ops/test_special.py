"""erfinv, lgamma and digamma on npu (the elementwise kernel's special-function sequences) against
float64 references computed by PyTorch on the CPU, the CPU's own float results for the special
values (poles, +-inf, NaN, +-0, +-1), half / bfloat16 and integer inputs, out= / in-place forms and
the gradients autograd builds from them.
"""
import math

import pytest
import torch

import torch_ops_nn  # noqa: F401

pytestmark = pytest.mark.usefixtures("fallback_error")


def close_to_float64(fn, x, rtol, atol):
    ref = fn(x.double())
    got = fn(x.npu())
    assert got.device.type == "npu" and got.dtype == torch.float32
    got = got.cpu().double()
    finite = torch.isfinite(ref.float())
    err = (got - ref).abs()[finite]
    bound = atol + rtol * ref.abs()[finite]
    worst = (err - bound).argmax()
    assert bool((err <= bound).all()), (x[finite][worst].item(), got[finite][worst].item(), ref[finite][worst].item())


def test_erfinv():
    g = torch.Generator().manual_seed(0)
    x = torch.cat([torch.rand(200000, generator=g) * 2 - 1, 1 - torch.rand(1000, generator=g) * 1e-6,
                   torch.tensor([0.0, 1e-30, 0.5, -0.5, 0.999, -0.9999999])])
    close_to_float64(torch.erfinv, x, rtol=5e-7, atol=1e-30)


def test_lgamma():
    g = torch.Generator().manual_seed(1)
    x = torch.cat([torch.randn(100000, generator=g) * 20, torch.rand(20000, generator=g) * 4,
                   torch.rand(1000, generator=g) * 1e6, -torch.rand(2000, generator=g) * 50,
                   torch.arange(1, 60, dtype=torch.float32), torch.tensor([1e-30, 1e-45, 0.5, 1.0000001, 0.9999999])])
    # absolute error within a few ulp of ln(pi / |sin(pi x)|) and lgamma(1 - x) where they cancel
    close_to_float64(torch.lgamma, x, rtol=2e-6, atol=1e-6)
    n = torch.arange(1, 35, dtype=torch.float32)  # log-factorials: lgamma(n + 1) = ln(n!)
    close_to_float64(lambda t: torch.lgamma(t + 1), n, rtol=2e-7, atol=0)


def test_digamma():
    g = torch.Generator().manual_seed(2)
    x = torch.cat([torch.rand(20000, generator=g) * 40, torch.rand(5000, generator=g) * 1e6,
                   torch.tensor([1e-30, 1.0, 2.0, 0.5, 1.4616321])])
    close_to_float64(torch.digamma, x, rtol=2e-6, atol=5e-7)
    neg = -torch.rand(20000, generator=g) * 30
    close_to_float64(torch.digamma, neg, rtol=1e-4, atol=1e-5)  # the CPU's float result is as far off


def _math_api_inputs(seed):
    g = torch.Generator().manual_seed(seed)
    return torch.cat([torch.linspace(-12, 12, 200001), torch.randn(100000, generator=g) * 3,
                      torch.tensor([0.0, 1e-30, -1e-30, 1e-40, 0.3, -0.3, 0.29999998, 0.5, -0.5, 0.49999997, 10.5])])


@pytest.mark.parametrize("name", ["tanh", "erf", "erfc", "sigmoid"])
def test_math_api_ops_against_float64(name):
    """tanh / erf / erfc / sigmoid run the advanced math APIs (csrc/ascendc/kernel_math.h): relative
    accuracy over [-12, 12], including erfc's tail down to its underflow, and -0.0 / tiny inputs kept
    exact."""
    fn = getattr(torch, name)
    x = _math_api_inputs(3)
    close_to_float64(fn, x, rtol={"tanh": 3e-7, "erf": 4e-7, "erfc": 6e-7, "sigmoid": 3e-7}[name], atol=3e-45)
    z = fn(torch.tensor([-0.0, float("inf"), float("-inf"), float("nan")]).npu()).cpu()
    assert torch.equal(z[1:3], fn(torch.tensor([float("inf"), float("-inf")]))) and torch.isnan(z[3])
    if name in ("tanh", "erf"):
        assert z[0].item() == 0.0 and math.copysign(1, z[0].item()) == -1  # odd functions keep -0.0


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_sign_special_values(dtype):
    """sign / sgn run the advanced Sign API: NaN and -0.0 give +0.0 as on the CPU, subnormals keep their sign."""
    x = torch.tensor([float("nan"), -0.0, 0.0, float("inf"), float("-inf"), 1e-45, -1e-45, 3.0, -3.0, 65504.0]).to(dtype)
    x = torch.cat([x, torch.randn(10000).to(dtype)])
    for fn in (torch.sign, torch.sgn):
        got, want = fn(x.npu()).cpu(), fn(x)
        assert torch.equal(got, want) and torch.equal(got.signbit(), want.signbit())


def test_gelu_negative_tail_relative():
    """gelu = 0.5 x erfc(-x / sqrt2) keeps relative precision where PyTorch's CPU formula
    0.5 x (1 + erf(x / sqrt2)) cancels (x < -5). Against float64: erfc's error plus the rounding of
    z = -x / sqrt2 (2 half-ulps), which erfc magnifies by ~2 z^2 = x^2; the gradient likewise."""
    x = torch.cat([torch.linspace(-12, -3, 100001), _math_api_inputs(4)])
    xd = x.double()
    rtol = 6e-7 + xd ** 2 * 2.0 ** -23
    cdf = 0.5 * torch.special.erfc(-xd / math.sqrt(2))
    ref = xd * cdf
    got = torch.nn.functional.gelu(x.npu()).cpu().double()
    assert bool(((got - ref).abs() <= 3e-45 + rtol * ref.abs()).all())
    cpu = torch.nn.functional.gelu(x).double()
    assert ((cpu - ref).abs() > ref.abs() * 0.5).any()  # the CPU's own result is far off there
    xpdf = xd * torch.exp(-xd ** 2 / 2) / math.sqrt(2 * math.pi)
    dref = cdf + xpdf
    dgot = torch.ops.aten.gelu_backward(torch.ones_like(x).npu(), x.npu()).cpu().double()
    # cdf + x pdf cancels (at x = -0.75 to 7.7e-4 of 0.23): float roundings of the terms, plus rtol;
    # below 1.2e-38 a few subnormal steps
    assert bool(((dgot - dref).abs() <= 2e-44 + 4e-7 * (cdf + xpdf.abs()) + rtol * (cdf + xpdf.abs())).all())


SPECIAL = torch.tensor([0.0, -0.0, 1.0, -1.0, 2.0, -2.0, -3.0, 1.5, -2.5, float("inf"), float("-inf"), float("nan"),
                        3e38, -3e38, -1e7, 1e-45])


@pytest.mark.parametrize("fn", [torch.erfinv, torch.lgamma, torch.digamma], ids=["erfinv", "lgamma", "digamma"])
def test_special_values(fn):
    expected = fn(SPECIAL)
    got = fn(SPECIAL.npu()).cpu()
    assert torch.equal(torch.isnan(got), torch.isnan(expected)), (expected, got)
    inf = torch.isinf(expected)
    assert torch.equal(got[inf], expected[inf]), (expected, got)
    fin = torch.isfinite(expected)
    torch.testing.assert_close(got[fin], expected[fin], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.int32, torch.uint8])
def test_dtypes(dtype):
    x = torch.linspace(0.05, 9, 500)
    inputs = {torch.float16: x.half(), torch.bfloat16: x.bfloat16(), torch.int32: torch.arange(1, 200, dtype=dtype),
              torch.uint8: torch.arange(1, 200, dtype=dtype)}[dtype]
    for fn in (torch.lgamma, torch.digamma):
        expected, got = fn(inputs), fn(inputs.npu()).cpu()
        assert got.dtype == expected.dtype
        tol = 1e-5 if dtype in (torch.int32, torch.uint8) else (2e-3 if dtype == torch.float16 else 1.6e-2)
        torch.testing.assert_close(got, expected, rtol=tol, atol=tol)
    p = (torch.rand(300) * 1.8 - 0.9).to(dtype if dtype.is_floating_point else torch.float32)
    torch.testing.assert_close(torch.erfinv(p.npu()).cpu(), torch.erfinv(p), rtol=2e-3 if dtype.is_floating_point
                               and dtype != torch.float32 else 1e-6, atol=1.6e-2 if dtype == torch.bfloat16 else 2e-3)


def test_out_in_place_and_autograd():
    x = torch.rand(64, 33) * 5 + 0.1
    out = torch.empty(64, 33).npu()
    torch.lgamma(x.npu(), out=out)
    torch.testing.assert_close(out.cpu(), torch.lgamma(x), rtol=2e-6, atol=1e-6)
    y = x.npu()
    y.digamma_()
    torch.testing.assert_close(y.cpu(), torch.digamma(x), rtol=2e-6, atol=1e-6)
    # d lgamma = digamma, d erfinv = sqrt(pi)/2 exp(erfinv^2): both natively
    for fn, inp in ((torch.lgamma, x), (torch.erfinv, torch.rand(50) * 1.6 - 0.8)):
        a = inp.clone().requires_grad_()
        b = inp.npu().requires_grad_()
        fn(a).sum().backward()
        fn(b).sum().backward()
        torch.testing.assert_close(b.grad.cpu(), a.grad, rtol=1e-5, atol=1e-6)


def test_trunc_normal_init_on_npu():
    # nn.init.trunc_normal_ draws through erfinv_: on an npu parameter it now stays on the device.
    torch.manual_seed(0)
    w = torch.empty(256, 256, device="npu")
    torch.nn.init.trunc_normal_(w, std=0.02, a=-0.04, b=0.04)
    wc = w.cpu()
    assert wc.abs().max() <= 0.04 + 1e-7
    assert math.isclose(wc.std().item(), 0.02 * 0.8796, rel_tol=0.05)  # the std of N(0, 1) cut at +-2


@pytest.mark.parametrize("n", [1, 2, 3, 6])
def test_polygamma(n):
    g = torch.Generator().manual_seed(n)
    x = torch.cat([torch.rand(5000, generator=g) * 30 + 1e-3, torch.tensor([0.01, 0.5, 1.0, 2.0, 100.0, 1e4])])
    close_to_float64(lambda t: torch.polygamma(n, t), x, rtol=2e-6, atol=1e-30)
    # digamma's gradient is polygamma(1, x): natively on npu
    a = x[:50].clone().requires_grad_()
    b = x[:50].npu().requires_grad_()
    torch.digamma(a).sum().backward()
    torch.digamma(b).sum().backward()
    torch.testing.assert_close(b.grad.cpu(), a.grad, rtol=2e-6, atol=0)


def test_polygamma_nonpositive_and_bad_n(monkeypatch):
    x = torch.tensor([-1.5, -2.0, 0.0, 3.0])
    with pytest.raises(NotImplementedError, match="aten::polygamma"):  # x <= 0: the CPU fallback
        torch.polygamma(1, x.npu())
    monkeypatch.delenv("TORCH_OPS_NN_FALLBACK")
    got = torch.polygamma(1, x.npu()).cpu()
    torch.testing.assert_close(got, torch.polygamma(1, x), equal_nan=True)
    with pytest.raises(RuntimeError, match=r"polygamma\(n, x\) does not support negative n"):
        torch.polygamma(-1, x.npu())
