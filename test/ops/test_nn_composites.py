"""Small ops composed of the native kernels (csrc/aten/nn_composites.cpp) against the CPU: eye,
bernoulli with a tensor of probabilities, exponential_, binary_cross_entropy (+ backward), glu (+
backward), prelu (+ backward), norm(p, dim) (pairwise_distance, triplet loss), and their errors."""
import pytest
import torch
import torch.nn.functional as F

pytestmark = pytest.mark.usefixtures("fallback_error")


def test_eye():
    for args in [(3, 5), (4,), (5, 2), (0, 3)]:
        assert torch.equal(torch.eye(*args, device="npu").cpu(), torch.eye(*args))
    assert torch.eye(3, dtype=torch.int64, device="npu").cpu().tolist() == torch.eye(3, dtype=torch.int64).tolist()


def test_bernoulli_tensor_and_exponential_laws():
    torch.manual_seed(0)
    p = torch.rand(200_000, device="npu")
    b = torch.bernoulli(p)
    assert b.dtype == torch.float32 and set(b.unique().cpu().tolist()) <= {0.0, 1.0}
    assert abs(b.mean().item() - p.mean().item()) < 0.01
    assert torch.bernoulli(torch.tensor([0.0, 1.0], device="npu")).cpu().tolist() == [0.0, 1.0]
    e = torch.empty(200_000, device="npu").exponential_(2.0)
    assert e.min().item() >= 0 and abs(e.mean().item() - 0.5) < 0.01 and abs(e.std().item() - 0.5) < 0.01
    with pytest.raises(RuntimeError, match=r"bernoulli_: expects p to be in \[0, 1\]"):
        torch.bernoulli(torch.tensor([1.5], device="npu"))
    with pytest.raises(RuntimeError, match=r"exponential_: expects lambda > 0.0, but found lambda=-1"):
        torch.empty(3, device="npu").exponential_(-1)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
def test_binary_cross_entropy_matches_cpu(reduction, weighted):
    g = torch.Generator().manual_seed(1)
    x = torch.rand(4, 5, generator=g).clamp(0.01, 0.99)
    x[0, 0], x[0, 1] = 0.0, 1.0  # log(0): clamped at -100 as on the CPU
    x.requires_grad_()
    t, w = torch.rand(4, 5, generator=g), torch.rand(4, 5, generator=g)
    xd = x.detach().npu().requires_grad_()
    loss = F.binary_cross_entropy(x, t, w if weighted else None, reduction=reduction)
    lossd = F.binary_cross_entropy(xd, t.npu(), w.npu() if weighted else None, reduction=reduction)
    torch.testing.assert_close(lossd.detach().cpu(), loss.detach())
    go = torch.rand(loss.shape, generator=g)
    loss.backward(go)
    lossd.backward(go.npu())
    torch.testing.assert_close(xd.grad.cpu(), x.grad)
    with pytest.raises(RuntimeError, match=r"all elements of input should be between 0 and 1"):
        F.binary_cross_entropy(torch.tensor([1.5], device="npu"), torch.tensor([1.0], device="npu"))
    # The target's dtype must be the input's, as on the CPU (which raises for this pair too).
    p, tb = torch.tensor([0.5]), torch.tensor([1.0], dtype=torch.bfloat16)
    with pytest.raises(RuntimeError):
        F.binary_cross_entropy(p, tb)
    with pytest.raises(TypeError, match=r"binary_cross_entropy: target has dtype BFloat16 but self has Float"):
        F.binary_cross_entropy(p.npu(), tb.npu())


def test_glu_and_prelu_with_gradients():
    y = torch.randn(4, 6, 2, requires_grad=True)
    yd = y.detach().npu().requires_grad_()
    for dim in (1, -1):
        y.grad, yd.grad = None, None
        F.glu(y, dim).pow(2).sum().backward()
        F.glu(yd, dim).pow(2).sum().backward()
        torch.testing.assert_close(F.glu(yd, dim).detach().cpu(), F.glu(y, dim).detach())
        torch.testing.assert_close(yd.grad.cpu(), y.grad)
    with pytest.raises(RuntimeError, match=r"glu: Halving dimension must be even, but dimension 1 is size 5"):
        F.glu(torch.randn(3, 5).npu())
    for n in (1, 3):
        z = torch.randn(2, 3, 4, requires_grad=True)
        w = torch.rand(n, requires_grad=True)
        zd, wd = z.detach().npu().requires_grad_(), w.detach().npu().requires_grad_()
        F.prelu(z, w).pow(2).sum().backward()
        F.prelu(zd, wd).pow(2).sum().backward()
        torch.testing.assert_close(zd.grad.cpu(), z.grad)
        torch.testing.assert_close(wd.grad.cpu(), w.grad)
    m = torch.nn.PReLU(3)
    x = torch.randn(2, 3, 5)
    torch.testing.assert_close(m.npu()(x.npu()).detach().cpu(), m.cpu()(x).detach())


def test_norm_p_dim_and_distances():
    g = torch.Generator().manual_seed(2)
    a, c = torch.randn(8, 16, generator=g), torch.randn(8, 16, generator=g)
    for p in (1, 2, 3, float("inf")):
        torch.testing.assert_close(torch.norm(a.npu(), p, 1).cpu(), torch.norm(a, p, 1))
    torch.testing.assert_close(torch.norm(a.npu(), 2, 1, keepdim=True).cpu(), torch.norm(a, 2, 1, keepdim=True))
    torch.testing.assert_close(F.pairwise_distance(a.npu(), c.npu()).cpu(), F.pairwise_distance(a, c))
    torch.testing.assert_close(F.triplet_margin_loss(a.npu(), c.npu(), 2 * a.npu()).cpu(),
                               F.triplet_margin_loss(a, c, 2 * a))


def _inputs():
    g = torch.Generator().manual_seed(5)
    x, y = torch.randn(5000, generator=g) * 3, torch.randn(5000, generator=g) * 3
    special_x = torch.tensor([0.0, -0.0, 1e-20, -1e-20, float("inf"), -float("inf"), float("nan"), 1e30, -1e30, 88.0])
    special_y = torch.tensor([0.0, 1.0, 1e-20, 3.0, float("inf"), -float("inf"), 1.0, 1e30, 2.0, 88.0])
    return torch.cat([x, special_x]), torch.cat([y, special_y])


@pytest.mark.parametrize("name", ["log2", "tan", "sinh", "hypot", "logaddexp", "heaviside", "signbit"])
def test_elementwise_math_matches_cpu(name):
    x, y = _inputs()
    fns = {
        "log2": lambda a, b: torch.log2(a.abs()),
        "tan": lambda a, b: torch.tan(a.clamp(-1000, 1000)),  # sin / cos: |x| < 8192 on the device
        "sinh": lambda a, b: torch.sinh(a),
        "hypot": torch.hypot,
        "logaddexp": torch.logaddexp,
        "heaviside": torch.heaviside,
        "signbit": lambda a, b: torch.signbit(a),
    }
    got, want = fns[name](x.npu(), y.npu()).cpu(), fns[name](x, y)
    if want.dtype == torch.bool:
        assert torch.equal(got, want)
    else:
        # a few ulp (logaddexp: absolute near a zero result, where the CPU's own exp / log1p differ too)
        torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-6, equal_nan=True)
    if name == "signbit":
        assert torch.equal(torch.signbit(x.half().npu()).cpu(), torch.signbit(x.half()))


_SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1e-30, -1e-30, 1e-3, 0.9999, -0.9999, 2.0, -2.0, 10.0, 100.0,
            -100.0, 88.5, 89.0, -89.0, 127.9, 128.5, -149.0, 1e20, -1e20, 3e38, float("inf"), -float("inf"),
            float("nan")]


@pytest.mark.parametrize("name", ["log10", "logit", "cosh", "asinh", "acosh", "atanh", "exp2", "atan", "asin",
                                  "acos", "erfc"])
def test_inverse_trig_hyperbolic_and_log10_match_cpu(name):
    """Compositions over the native kernels (erfc: an elementwise kernel op, relative in its tail),
    against the CPU at a few ulp over random values and
    the special ones (signed zeros, domain edges, overflow edges, infinities, NaN); float16 and
    integer inputs (promoted to float); the gradient through ATen's formulas."""
    g = torch.Generator().manual_seed(5)
    x = torch.cat([torch.tensor(_SPECIAL), torch.randn(3000, generator=g) * 3, torch.rand(2000, generator=g) * 2 - 1,
                   torch.randn(500, generator=g) * 100])
    f = getattr(torch, name)
    got, want = f(x.npu()).cpu(), f(x)
    torch.testing.assert_close(got, want, rtol=2e-6, atol=1e-37, equal_nan=True)
    z = ~want[:2].isnan()  # f(+-0): the sign of a zero result
    assert torch.equal(torch.signbit(got[:2][z]), torch.signbit(want[:2][z]))
    h = x.clamp(-60000, 60000).half()
    torch.testing.assert_close(f(h.npu()).cpu(), f(h), rtol=1e-3, atol=1e-3, equal_nan=True)
    i = torch.arange(-3, 4)
    torch.testing.assert_close(f(i.npu()).cpu(), f(i), rtol=2e-6, atol=1e-37, equal_nan=True)
    xg = (torch.rand(50, generator=g) * 0.8 + (1.1 if name == "acosh" else 0.1)).requires_grad_()  # in the domain
    xd = xg.detach().npu().requires_grad_()
    f(xd).sum().backward()
    f(xg).sum().backward()
    torch.testing.assert_close(xd.grad.cpu(), xg.grad, rtol=1e-5, atol=1e-6)


def test_atan2_quadrants_signed_zeros_and_infinities():
    sp = torch.tensor(_SPECIAL)
    yy, xx = torch.meshgrid(sp, sp, indexing="ij")
    g = torch.Generator().manual_seed(6)
    y = torch.cat([yy.flatten(), torch.randn(3000, generator=g)])
    x = torch.cat([xx.flatten(), torch.randn(3000, generator=g)])
    got, want = torch.atan2(y.npu(), x.npu()).cpu(), torch.atan2(y, x)
    torch.testing.assert_close(got, want, rtol=2e-6, atol=1e-37, equal_nan=True)
    assert torch.equal(torch.signbit(got[~want.isnan()]), torch.signbit(want[~want.isnan()]))
    torch.testing.assert_close(torch.atan2(y[:5].npu(), torch.tensor(2.0).npu()).cpu(), torch.atan2(y[:5], torch.tensor(2.0)))


def test_logit_eps_and_in_place():
    x = torch.tensor([0.0, 1e-8, 0.3, 0.999999, 1.0, 1.5, -0.1])
    # eps > 0.5 (x < eps -> eps first, then x > 1 - eps -> 1 - eps) and a negative eps (none), as the CPU
    for eps in (None, 1e-6, 0.1, 0.6, -0.1):
        torch.testing.assert_close(torch.logit(x.npu(), eps).cpu(), torch.logit(x, eps), rtol=2e-6, atol=0,
                                   equal_nan=True)
        xg = x.clone().requires_grad_()
        xng = x.npu().requires_grad_()
        torch.logit(xg, eps).backward(torch.ones(7))
        torch.logit(xng, eps).backward(torch.ones(7).npu())
        torch.testing.assert_close(xng.grad.cpu(), xg.grad, rtol=2e-6, atol=0, equal_nan=True)
    xd = x.npu()
    xd.logit_(1e-6)
    torch.testing.assert_close(xd.cpu(), torch.logit(x, 1e-6), rtol=2e-6, atol=0)


def test_randint_and_random_():
    torch.manual_seed(3)
    r = torch.randint(0, 10, (200_000,), device="npu")
    assert r.dtype == torch.int64 and r.min().item() == 0 and r.max().item() == 9
    freq = torch.bincount(r.cpu(), minlength=10).float() / 20_000
    assert (freq - 1).abs().max().item() < 0.05
    r = torch.randint(-5, 3, (1000,), device="npu", dtype=torch.int32)
    assert r.dtype == torch.int32 and r.min().item() == -5 and r.max().item() == 2
    f = torch.empty(1000, device="npu").random_(0, 7)
    assert f.min().item() == 0 and f.max().item() == 6 and torch.equal(f, f.round())
    torch.manual_seed(4)
    a = torch.randint(0, 100, (50,), device="npu").cpu()
    torch.manual_seed(4)
    assert torch.equal(torch.randint(0, 100, (50,), device="npu").cpu(), a)
    with pytest.raises(RuntimeError, match=r"random_ expects 'from' to be less than 'to', but got from=5 >= to=2"):
        torch.empty(3, device="npu", dtype=torch.long).random_(5, 2)


def test_equal():
    a = torch.randn(5, 4).npu()
    assert torch.equal(a, a.clone()) and not torch.equal(a, a + 1) and not torch.equal(a, a[:4])
    nan = torch.tensor([float("nan")]).npu()
    assert torch.equal(nan, nan) == torch.equal(nan.cpu(), nan.cpu())
    assert torch.equal(torch.empty(0).npu(), torch.empty(0).npu())
    assert torch.equal(torch.arange(5).npu(), torch.arange(5).npu())
    assert torch.equal(torch.tensor([True, False]).npu(), torch.tensor([True, False]).npu())


def test_take_and_masked_scatter():
    g = torch.Generator().manual_seed(6)
    x = torch.randn(4, 5, generator=g)
    i = torch.tensor([[0, -1], [7, 19]])
    assert torch.equal(torch.take(x.npu(), i.npu()).cpu(), torch.take(x, i))
    src = torch.randn(30, generator=g)
    for m in (torch.rand(4, 5, generator=g) > 0.5, torch.rand(5, generator=g) > 0.5):  # broadcast mask too
        assert torch.equal(x.npu().masked_scatter(m.npu(), src.npu()).cpu(), x.masked_scatter(m, src))
    m = torch.rand(4, 5, generator=g) > 0.5
    xt = x.t().contiguous().t()  # non-contiguous self, in place
    assert torch.equal(xt.npu().masked_scatter_(m.npu(), src.npu()).cpu(), xt.clone().masked_scatter_(m, src))
    a, s = torch.randn(4, 5, requires_grad=True), torch.randn(30, requires_grad=True)
    a.masked_scatter(m, s).pow(2).sum().backward()
    ad, sd = a.detach().npu().requires_grad_(), s.detach().npu().requires_grad_()
    ad.masked_scatter(m.npu(), sd).pow(2).sum().backward()
    torch.testing.assert_close(ad.grad.cpu(), a.grad)
    torch.testing.assert_close(sd.grad.cpu(), s.grad)
    with pytest.raises(RuntimeError, match=r"Number of elements of source < number of ones in mask \(2 < 3\)"):
        torch.zeros(3).npu().masked_scatter_(torch.tensor([True, True, True]).npu(), torch.ones(2).npu())
    with pytest.raises(RuntimeError, match=r"index 20 is out of range for dimension size 20"):
        torch.take(x.npu(), torch.tensor([20]).npu())
        torch.npu.synchronize()
    assert torch.take(x.npu(), torch.tensor([3]).npu()).item() == x.view(-1)[3].item()  # still usable


def test_copysign_sinc_xlog1py_entr_match_cpu():
    g = torch.Generator().manual_seed(7)
    a = torch.cat([torch.randn(5000, generator=g) * 10, torch.tensor([0.0, -0.0, float("inf"), float("-inf"),
                                                                     float("nan"), 1e-30])])
    b = torch.cat([torch.randn(5000, generator=g), torch.tensor([-0.0, 0.0, -1.0, 2.0, 3.0, -5.0])])
    for fn, args in [(torch.copysign, (a, b)), (torch.sinc, (a,)), (torch.special.xlog1py, (a, b.abs())),
                     (torch.special.entr, (a,))]:
        expected = fn(*args)
        got = fn(*[t.npu() for t in args]).cpu()
        torch.testing.assert_close(got, expected, rtol=2e-6, atol=1e-6, equal_nan=True)
    assert torch.equal(torch.copysign(a.npu(), b.npu()).cpu().signbit(), torch.copysign(a, b).signbit())
    i = torch.arange(-3, 4)
    torch.testing.assert_close(torch.copysign(i.npu(), -1.0).cpu(), torch.copysign(i, -1.0))  # ints promote


def test_trace_cross_isin_tri_indices_match_cpu():
    x = torch.randn(7, 5)
    torch.testing.assert_close(torch.trace(x.npu()).cpu(), torch.trace(x), rtol=1e-6, atol=1e-6)
    xi = torch.randint(-9, 9, (4, 6))
    assert torch.equal(torch.trace(xi.npu()).cpu(), torch.trace(xi))
    with pytest.raises(RuntimeError, match=r"trace: expected a matrix, but got tensor with dim 3"):
        torch.trace(torch.ones(2, 2, 2).npu())
    a, b = torch.randn(4, 3, 5), torch.randn(1, 3, 5)
    torch.testing.assert_close(torch.linalg.cross(a.npu(), b.npu(), dim=1).cpu(), torch.linalg.cross(a, b, dim=1),
                               rtol=1e-6, atol=1e-6)
    with pytest.raises(RuntimeError, match=r"linalg.cross: inputs dimension -1 must have length 3. Got 4 and 4"):
        torch.linalg.cross(torch.ones(2, 4).npu(), torch.ones(2, 4).npu())
    e = torch.randint(0, 500, (30, 40))
    for t in (torch.tensor([3, 7, 499]), torch.randint(0, 500, (300,)), torch.tensor([], dtype=torch.int64)):
        for invert in (False, True):
            assert torch.equal(torch.isin(e.npu(), t.npu(), invert=invert).cpu(), torch.isin(e, t, invert=invert))
    f = torch.tensor([1.0, float("nan"), 2.5])
    assert torch.equal(torch.isin(f.npu(), f.npu()).cpu(), torch.isin(f, f))
    for args in [(5, 5), (4, 7, 2), (6, 3, -1), (0, 3)]:
        assert torch.equal(torch.tril_indices(*args, device="npu").cpu(), torch.tril_indices(*args))
        assert torch.equal(torch.triu_indices(*args, device="npu").cpu(), torch.triu_indices(*args))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64, torch.int32, torch.uint8])
def test_cummax_cummin_match_cpu(dtype):
    g = torch.Generator().manual_seed(11)
    x = torch.randint(0, 20, (5, 37, 3), generator=g).to(dtype)  # many ties: the later index wins
    if dtype.is_floating_point:
        x[1, 4, 0] = float("nan")
        x[1, 9, 0] = float("nan")
        x[2, 0, 1] = float("-inf")
    for fn in (torch.cummax, torch.cummin):
        for dim in (0, 1, -1):
            v, i = fn(x, dim)
            vn, i_n = fn(x.npu(), dim)
            assert torch.equal(i_n.cpu(), i), (fn, dim)
            torch.testing.assert_close(vn.cpu(), v, equal_nan=True, rtol=0, atol=0)
    a = torch.randn(6, 50, generator=g).requires_grad_()
    b = a.detach().npu().requires_grad_()
    torch.cummax(a, 1)[0].sum().backward()
    torch.cummax(b, 1)[0].sum().backward()
    assert torch.equal(b.grad.cpu(), a.grad)


def test_logcumsumexp_matches_cpu():
    g = torch.Generator().manual_seed(12)
    x = torch.randn(4, 300, generator=g) * 10
    x[0, 5] = float("-inf")
    x[1, :3] = float("-inf")
    x[2, 7] = float("inf")
    for dim in (0, 1):
        torch.testing.assert_close(torch.logcumsumexp(x.npu(), dim).cpu(), torch.logcumsumexp(x, dim),
                                   rtol=1e-5, atol=1e-5)
    with pytest.raises(NotImplementedError, match=r"logcumsumexp: argument 'self' has dtype Long"):
        torch.logcumsumexp(torch.ones(3, dtype=torch.int64).npu(), 0)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_frexp_matches_cpu(dtype):
    g = torch.Generator().manual_seed(13)
    x = torch.cat([torch.randn(2000, generator=g) * 1e3, torch.randn(100, generator=g) * 1e-3,
                   torch.tensor([0.0, -0.0, 1.0, -3.5, 0.75, float("inf"), float("-inf"), float("nan")])])
    if dtype == torch.float32:
        x = torch.cat([x, torch.tensor([1e-40, -1e-42, 3e38, 1.4e-45])])  # subnormals, the largest exponent
    x = x.to(dtype)
    m, e = torch.frexp(x)
    mn, en = torch.frexp(x.npu())
    assert torch.equal(en.cpu(), e)
    torch.testing.assert_close(mn.cpu(), m, rtol=0, atol=0, equal_nan=True)
    ok = ~torch.isnan(m)  # (a NaN's sign differs between the CPU's own scalar and vector paths)
    assert torch.equal(mn.cpu().signbit()[ok], m.signbit()[ok])


def test_nonzero_static_and_combinations():
    x = torch.tensor([[0, 3, 0], [1, 0, 2]])
    for size in (0, 2, 3, 6):
        assert torch.equal(torch.nonzero_static(x.npu(), size=size).cpu(), torch.nonzero_static(x, size=size))
    assert torch.equal(torch.nonzero_static(x.npu(), size=5, fill_value=7).cpu(),
                       torch.nonzero_static(x, size=5, fill_value=7))
    v = torch.arange(5.0)
    for r, rep in ((2, False), (3, False), (2, True)):
        torch.testing.assert_close(torch.combinations(v.npu(), r, with_replacement=rep).cpu(),
                                   torch.combinations(v, r, with_replacement=rep))


# ---- ops that took the CPU fallback (a scan of PyTorch's OpInfo samples with the fallback warning on)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64])
def test_fmax_fmin_match_cpu(dtype):
    nan = float("nan")
    a = torch.tensor([[1.0, nan, 3.0, nan, -2.0]]) if dtype.is_floating_point else torch.tensor([[1, 5, 3, 0, -2]])
    b = torch.tensor([[nan], [2.0], [-7.0]]) if dtype.is_floating_point else torch.tensor([[4], [2], [-7]])
    a, b = a.to(dtype), b.to(dtype)
    for fn in (torch.fmax, torch.fmin):
        got = fn(a.to("npu"), b.to("npu"))
        assert got.dtype == dtype
        torch.testing.assert_close(got.cpu(), fn(a, b), equal_nan=True)
    got = torch.fmax(torch.tensor([1, 2], device="npu"), torch.tensor([1.5, nan], device="npu"))  # int, float
    torch.testing.assert_close(got.cpu(), torch.tensor([1.5, 2.0]))
    x = torch.tensor([1.0, nan, 3.0], requires_grad=True)
    xd = x.detach().to("npu").requires_grad_()
    torch.fmax(x, torch.tensor(2.0)).sum().backward()
    torch.fmax(xd, torch.tensor(2.0, device="npu")).sum().backward()
    torch.testing.assert_close(xd.grad.cpu(), x.grad)


def test_logaddexp2_and_round_decimals_match_cpu():
    g = torch.Generator().manual_seed(3)
    a, b = torch.randn(64, generator=g) * 10, torch.randn(64, generator=g) * 10
    inf = float("inf")
    a[:3], b[:3] = torch.tensor([inf, -inf, 1.0]), torch.tensor([inf, -inf, inf])
    torch.testing.assert_close(torch.logaddexp2(a.to("npu"), b.to("npu")).cpu(), torch.logaddexp2(a, b))
    x = torch.randn(200, generator=g) * 100
    for d in (-2, -1, 0, 1, 2, 4):
        torch.testing.assert_close(torch.round(x.to("npu"), decimals=d).cpu(), torch.round(x, decimals=d))
        y = x.to("npu")
        y.round_(decimals=d)
        torch.testing.assert_close(y.cpu(), torch.round(x, decimals=d))
    h = torch.tensor([0.25, 0.35, 1.45, -0.25, 2.5]).half()
    torch.testing.assert_close(torch.round(h.to("npu"), decimals=1).cpu(), torch.round(h, decimals=1))


def test_addbmm_matches_cpu_with_grads_and_errors(monkeypatch):
    g = torch.Generator().manual_seed(4)
    for self_shape in [(3, 5), (5,), (1, 1)]:
        s = torch.randn(self_shape, generator=g)
        b1, b2 = torch.randn(4, 3, 6, generator=g), torch.randn(4, 6, 5, generator=g)
        ts = [t.clone().requires_grad_() for t in (s, b1, b2)]
        td = [t.to("npu").requires_grad_() for t in (s, b1, b2)]
        want = torch.addbmm(*ts, beta=0.5, alpha=2)
        got = torch.addbmm(*td, beta=0.5, alpha=2)
        torch.testing.assert_close(got.cpu(), want.detach(), rtol=1e-4, atol=1e-4)
        go = torch.randn(want.shape, generator=g)
        want.backward(go)
        got.backward(go.to("npu"))
        for a, b in zip(td, ts):
            torch.testing.assert_close(a.grad.cpu(), b.grad, rtol=1e-4, atol=1e-4)
    s = torch.full((3, 5), float("nan"))
    torch.testing.assert_close(torch.addbmm(s.to("npu"), b1.to("npu"), b2.to("npu"), beta=0).cpu(),
                               torch.addbmm(s, b1, b2, beta=0), rtol=1e-4, atol=1e-4)  # beta=0 ignores NaN
    y = torch.zeros(3, 5, device="npu")
    y.addbmm_(b1.to("npu"), b2.to("npu"))
    torch.testing.assert_close(y.cpu(), torch.zeros(3, 5).addbmm_(b1, b2), rtol=1e-4, atol=1e-4)
    i1, i2, si = torch.randint(-9, 9, (5, 5, 5)), torch.randint(-9, 9, (5, 5, 10)), torch.randint(-9, 9, (5, 10))
    monkeypatch.setenv("TORCH_OPS_NN_FALLBACK", "warn")  # (an integer mm is the CPU fallback's)
    for beta, alpha in ((1, 1), (2, 3), (0.6, 0.2)):  # integers: beta / alpha truncated (0.6 -> 0), as the CPU
        assert torch.equal(torch.addbmm(si.to("npu"), i1.to("npu"), i2.to("npu"), beta=beta, alpha=alpha).cpu(),
                           torch.addbmm(si, i1, i2, beta=beta, alpha=alpha))
    with pytest.raises(RuntimeError, match="addbmm: batch1 and batch2 must have same number of batches, got 4 and 3"):
        torch.addbmm(y, b1.to("npu"), torch.randn(3, 6, 5, device="npu"))
    with pytest.raises(RuntimeError, match=r"addbmm: Incompatible matrix sizes for bmm \(3x6 and 5x5\)"):
        torch.addbmm(y, b1.to("npu"), torch.randn(4, 5, 5, device="npu"))
    with pytest.raises(RuntimeError, match="addbmm: batch1 must be a 3D tensor, got 2-D"):
        torch.addbmm(y, torch.randn(3, 6, device="npu"), b2.to("npu"))


def test_cauchy_log_normal_geometric_laws_and_errors():
    torch.manual_seed(0)
    c = torch.empty(100_000, device="npu").cauchy_(median=1.0, sigma=2.0).cpu()
    q1, q2, q3 = torch.quantile(c, torch.tensor([0.25, 0.5, 0.75])).tolist()
    assert abs(q2 - 1.0) < 0.05 and abs((q3 - q1) / 2 - 2.0) < 0.1  # median, and half the IQR = sigma
    ln = torch.empty(100_000, device="npu").log_normal_(mean=0.5, std=0.25).cpu()
    assert ln.min().item() > 0 and abs(ln.log().mean().item() - 0.5) < 0.01 and abs(ln.log().std().item() - 0.25) < 0.01
    for dtype in (torch.float32, torch.int32):
        ge = torch.empty(100_000, dtype=dtype, device="npu").geometric_(0.25).cpu().float()
        assert ge.min().item() >= 1 and abs(ge.mean().item() - 4.0) < 0.05  # trials to the first success: 1/p
        assert torch.equal(ge, ge.round())
    with pytest.raises(RuntimeError, match="cauchy_ expects sigma > 0.0, but found sigma=0"):
        torch.empty(3, device="npu").cauchy_(sigma=0)
    with pytest.raises(RuntimeError, match="log_normal_ expects std > 0.0, but found std=-1"):
        torch.empty(3, device="npu").log_normal_(std=-1)
    with pytest.raises(RuntimeError, match=r"geometric_ expects p to be in \(0, 1\), but got p=1.5"):
        torch.empty(3, device="npu").geometric_(1.5)
