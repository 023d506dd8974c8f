"""Matmul family on npu (cube kernel): mm, addmm, bmm, baddbmm, matmul, linear, vs PyTorch CPU."""
import warnings
import pytest
import torch
import torch.nn.functional as F

DTYPES = [torch.float32, torch.float16, torch.bfloat16]
# Relative to the output's max magnitude. 16-bit operands are exact products accumulated in
# float; the difference is the final rounding (and CPU's own 16-bit rounding of intermediates).
TOL = {torch.float32: 1e-4, torch.float16: 4e-3, torch.bfloat16: 2e-2}


def assert_close(got, want, dtype):
    assert got.device.type == "npu"
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    g, w = got.cpu().float(), want.float()
    scale = max(w.abs().max().item(), 1e-3) if w.numel() else 1.0
    err = (g - w).abs().max().item() / scale if w.numel() else 0.0
    assert err <= TOL[dtype], f"max relative error {err:.3g} > {TOL[dtype]}"


def rand(*shape, dtype=torch.float32):
    return torch.randn(shape).to(dtype)


SHAPES = [(1, 1, 1), (15, 17, 1), (17, 15, 100), (100, 257, 15), (257, 1, 17), (1, 100, 257), (64, 48, 300)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("m,n,k", SHAPES)
def test_mm(fallback_error, dtype, m, n, k):
    a, b = rand(m, k, dtype=dtype), rand(k, n, dtype=dtype)
    assert_close(torch.mm(a.npu(), b.npu()), torch.mm(a, b), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("ta,tb", [(True, False), (False, True), (True, True)])
@pytest.mark.parametrize("m,n,k", [(17, 15, 100), (33, 70, 257), (1, 20, 9)])
def test_mm_transposed_views(fallback_error, dtype, ta, tb, m, n, k):
    a = rand(k, m, dtype=dtype).t() if ta else rand(m, k, dtype=dtype)
    b = rand(n, k, dtype=dtype).t() if tb else rand(k, n, dtype=dtype)
    an, bn = (a.t().npu().t() if ta else a.npu()), (b.t().npu().t() if tb else b.npu())
    assert an.stride() == a.stride() and bn.stride() == b.stride()
    assert_close(torch.mm(an, bn), torch.mm(a, b), dtype)


def test_mm_non_contiguous_and_sliced(fallback_error):
    a = rand(40, 64)[::2, 3:50]          # row stride 128, not contiguous
    b = rand(47, 30, 2)[:, :, 1]          # column stride 2: made contiguous first
    an = rand(40, 64).npu()
    an.copy_(torch.zeros(40, 64))
    big = torch.randn(40, 64)
    a = big[::2, 3:50]
    an = big.npu()[::2, 3:50]
    bb = torch.randn(47, 30, 2)
    b = bb[:, :, 1]
    bn = bb.npu()[:, :, 1]
    assert_close(torch.mm(an, bn), torch.mm(a, b), torch.float32)


def test_mm_empty(fallback_error):
    a, b = rand(5, 0), rand(0, 7)
    out = torch.mm(a.npu(), b.npu())
    assert out.shape == (5, 7) and bool((out.cpu() == 0).all())
    assert torch.mm(rand(0, 4).npu(), rand(4, 3).npu()).shape == (0, 3)
    assert torch.mm(rand(4, 3).npu(), rand(3, 0).npu()).shape == (4, 0)


@pytest.mark.parametrize("dtype", DTYPES)
def test_mm_out(fallback_error, dtype):
    a, b = rand(20, 30, dtype=dtype), rand(30, 10, dtype=dtype)
    out = torch.empty(0, dtype=dtype).npu()
    r = torch.mm(a.npu(), b.npu(), out=out)
    assert r is out
    assert_close(out, torch.mm(a, b), dtype)
    out2 = torch.empty(10, 20, dtype=dtype).npu().t()  # non-contiguous out
    torch.mm(a.npu(), b.npu(), out=out2)
    assert_close(out2, torch.mm(a, b), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("self_shape", [(17,), (1, 17), (15, 17), (15, 1), ()])
@pytest.mark.parametrize("beta,alpha", [(1, 1), (0.5, 2.0), (0, 1.5)])
def test_addmm(fallback_error, dtype, self_shape, beta, alpha):
    s, a, b = rand(*self_shape, dtype=dtype), rand(15, 33, dtype=dtype), rand(33, 17, dtype=dtype)
    got = torch.addmm(s.npu(), a.npu(), b.npu(), beta=beta, alpha=alpha)
    assert_close(got, torch.addmm(s, a, b, beta=beta, alpha=alpha), dtype)


def test_addmm_beta_zero_ignores_nan(fallback_error):
    s = torch.full((4, 5), float("nan"))
    a, b = rand(4, 3), rand(3, 5)
    got = torch.addmm(s.npu(), a.npu(), b.npu(), beta=0)
    assert_close(got, torch.mm(a, b), torch.float32)


@pytest.mark.parametrize("dtype", DTYPES)
def test_addmm_inplace_and_out_and_empty_k(fallback_error, dtype):
    s, a, b = rand(9, 11, dtype=dtype), rand(9, 20, dtype=dtype), rand(20, 11, dtype=dtype)
    sn = s.npu()
    r = sn.addmm_(a.npu(), b.npu(), beta=0.5, alpha=-1)
    assert r is sn
    assert_close(sn, s.clone().addmm_(a, b, beta=0.5, alpha=-1), dtype)
    out = torch.empty(0, dtype=dtype).npu()
    torch.addmm(s.npu(), a.npu(), b.npu(), out=out)
    assert_close(out, torch.addmm(s, a, b), dtype)
    # empty k: the result is beta * self
    a0, b0 = rand(9, 0, dtype=dtype), rand(0, 11, dtype=dtype)
    assert_close(torch.addmm(s.npu(), a0.npu(), b0.npu(), beta=2), torch.addmm(s, a0, b0, beta=2), dtype)
    assert_close(torch.addmm(s[0].npu(), a0.npu(), b0.npu()), torch.addmm(s[0], a0, b0), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("b,m,n,k", [(3, 17, 15, 33), (1, 1, 1, 1), (4, 100, 20, 257)])
def test_bmm(fallback_error, dtype, b, m, n, k):
    x, y = rand(b, m, k, dtype=dtype), rand(b, k, n, dtype=dtype)
    assert_close(torch.bmm(x.npu(), y.npu()), torch.bmm(x, y), dtype)
    # transposed batches and a broadcast (stride 0) batch
    xt, yt = rand(b, k, m, dtype=dtype), rand(b, n, k, dtype=dtype)
    assert_close(torch.bmm(xt.npu().transpose(1, 2), yt.npu().transpose(1, 2)),
                 torch.bmm(xt.transpose(1, 2), yt.transpose(1, 2)), dtype)
    y1 = rand(1, k, n, dtype=dtype)
    assert_close(torch.bmm(x.npu(), y1.npu().expand(b, k, n)), torch.bmm(x, y1.expand(b, k, n)), dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("b,m,n,k,bcast", [
    (1, 3000, 64, 200, None),    # many m-tiles, one n-tile: the B panel stays in L1 (m fastest)
    (1, 700, 600, 100, None),    # several tiles each way, K in one panel
    (1, 150, 1000, 64, None),    # few m-tiles, many n-tiles: the A panel stays in L1 (n fastest)
    (9, 400, 300, 64, "b"),      # batched with a broadcast B: its panels are shared across batches
    (9, 400, 300, 64, "a"),      # (more tiles than cores, so a core's tiles cross batches)
    (9, 100, 700, 64, None),     # one m-tile per batch matrix: the A panel changes with the batch only
    (9, 1000, 100, 64, None),    # one n-tile per batch matrix: likewise the B panel
    (2, 300, 300, 700, None),    # K over several panels: nothing resident
    (3, 700, 600, 700, None),    # deep K, m fastest (B's panel is the bigger), a core's tiles cross batches
    (1, 1100, 1000, 50, None),   # a 4.4 MB output: written past the cache, rows on and off 64 B
])
def test_bmm_resident_panels(fallback_error, dtype, b, m, n, k, bcast):
    """Tile orders and L1 panels kept across tiles: every output tile still sees its own operands."""
    x, y = rand(b, m, k, dtype=dtype), rand(b, k, n, dtype=dtype)
    if bcast == "a":
        x = rand(1, m, k, dtype=dtype).expand(b, m, k)
    if bcast == "b":
        y = rand(1, k, n, dtype=dtype).expand(b, k, n)
    assert_close(torch.matmul(x.to("npu"), y.to("npu")), torch.matmul(x.float(), y.float()).to(dtype), dtype)
    yt = y.transpose(1, 2).contiguous().transpose(1, 2)  # B^T stored: the conv-as-GEMM weight layout
    assert_close(torch.matmul(x.to("npu"), yt.to("npu")), torch.matmul(x.float(), y.float()).to(dtype), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_baddbmm(fallback_error, dtype):
    s, x, y = rand(3, 7, 9, dtype=dtype), rand(3, 7, 20, dtype=dtype), rand(3, 20, 9, dtype=dtype)
    assert_close(torch.baddbmm(s.npu(), x.npu(), y.npu(), beta=0.5, alpha=2),
                 torch.baddbmm(s, x, y, beta=0.5, alpha=2), dtype)
    s1 = rand(9, dtype=dtype)
    assert_close(torch.baddbmm(s1.npu(), x.npu(), y.npu()), torch.baddbmm(s1, x, y), dtype)
    sn = s.npu()
    sn.baddbmm_(x.npu(), y.npu(), alpha=3)
    assert_close(sn, torch.baddbmm(s, x, y, alpha=3), dtype)
    out = torch.empty(0, dtype=dtype).npu()
    torch.bmm(x.npu(), y.npu(), out=out)
    assert_close(out, torch.bmm(x, y), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_matmul_shapes(fallback_error, dtype):
    w = rand(20, 30, dtype=dtype)
    for x in [rand(5, 20, dtype=dtype), rand(2, 5, 20, dtype=dtype), rand(20, dtype=dtype).reshape(1, 20)]:
        assert_close(torch.matmul(x.npu(), w.npu()), torch.matmul(x, w), dtype)
    a, b = rand(2, 3, 4, 5, dtype=dtype), rand(2, 3, 5, 6, dtype=dtype)
    assert_close(torch.matmul(a.npu(), b.npu()), torch.matmul(a, b), dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_linear_forward_backward(fallback_error, dtype):
    torch.manual_seed(0)
    lin = torch.nn.Linear(33, 17, bias=False).to(dtype)
    x = rand(6, 33, dtype=dtype).requires_grad_()
    lin_n = torch.nn.Linear(33, 17, bias=False).to(dtype)
    lin_n.load_state_dict(lin.state_dict())
    lin_n = lin_n.npu()
    xn = x.detach().npu().requires_grad_()
    y, yn = lin(x), lin_n(xn)
    assert_close(yn, y.detach(), dtype)
    g = rand(6, 17, dtype=dtype)
    y.backward(g)
    yn.backward(g.npu())
    assert_close(xn.grad, x.grad, dtype)
    assert_close(lin_n.weight.grad, lin.weight.grad, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_linear_with_bias_forward(fallback_error, dtype):
    w, b, x = rand(17, 33, dtype=dtype), rand(17, dtype=dtype), rand(2, 6, 33, dtype=dtype)
    assert_close(F.linear(x.npu(), w.npu(), b.npu()), F.linear(x, w, b), dtype)


def test_linear_bias_backward():
    # The bias gradient is a sum over the batch (another family's op): runs here with the default
    # fallback mode; the matmul parts are native.
    lin = torch.nn.Linear(10, 4)
    lin_n = torch.nn.Linear(10, 4)
    lin_n.load_state_dict(lin.state_dict())
    lin_n = lin_n.npu()
    x = rand(5, 10)
    lin(x).sum().backward()
    lin_n(x.npu()).backward(torch.ones(5, 4).npu())
    assert_close(lin_n.bias.grad, lin.bias.grad, torch.float32)
    assert_close(lin_n.weight.grad, lin.weight.grad, torch.float32)


def test_large_resnet_fc(fallback_error):
    x, w, b = rand(8, 2048), rand(1000, 2048), rand(1000)
    assert_close(F.linear(x.npu(), w.npu(), b.npu()), F.linear(x, w, b), torch.float32)


# ---- bad inputs ------------------------------------------------------------------------------
def test_mm_shape_mismatch_message(fallback_error):
    with pytest.raises(RuntimeError, match=r"mm: self and mat2 shapes cannot be multiplied \(4x5 and 6x7\)"):
        torch.mm(rand(4, 5).npu(), rand(6, 7).npu())


def test_bmm_batch_mismatch_message(fallback_error):
    with pytest.raises(RuntimeError, match=r"bmm: batch sizes differ: 'self' has 2 .* 'mat2' has 3"):
        torch.bmm(rand(2, 4, 5).npu(), rand(3, 5, 6).npu())


def test_wrong_dims(fallback_error):
    with pytest.raises(RuntimeError, match=r"mm: argument 'self' must be a 2-D tensor, got 3-D"):
        torch.ops.aten.mm(rand(2, 4, 5).npu(), rand(5, 6).npu())
    with pytest.raises(RuntimeError, match=r"bmm: argument 'mat2' must be a 3-D tensor, got 2-D"):
        torch.ops.aten.bmm(rand(2, 4, 5).npu(), rand(5, 6).npu())


def test_addmm_self_not_broadcastable(fallback_error):
    with pytest.raises(RuntimeError, match=r"addmm: 'self' of shape \[3\] cannot be broadcast to the result shape \[4, 6\]"):
        torch.addmm(rand(3).npu(), rand(4, 5).npu(), rand(5, 6).npu())


def test_mixed_devices(fallback_error):
    with pytest.raises(RuntimeError, match=r"mm: argument 'mat2' is on cpu"):
        torch.mm(rand(4, 5).npu(), rand(5, 6))


def test_mixed_and_unsupported_dtypes(fallback_error):
    with pytest.raises(TypeError, match=r"mm: expected 'self' and 'mat2' to have the same dtype, but got Float and Half"):
        torch.mm(rand(4, 5).npu(), rand(5, 6, dtype=torch.float16).npu())
    # the cube has no int32 / int64 GEMM: the CPU fallback, which FALLBACK=error forbids
    with pytest.raises(NotImplementedError, match=r"'aten::mm' has no native npu kernel"):
        torch.mm(torch.ones(4, 5, dtype=torch.int32).npu(), torch.ones(5, 6, dtype=torch.int32).npu())


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.uint8])
def test_integer_matmuls_match_the_cpu(monkeypatch, dtype):
    monkeypatch.delenv("TORCH_OPS_NN_FALLBACK", raising=False)
    a, b = torch.randint(0, 7, (3, 4), dtype=dtype), torch.randint(0, 7, (4, 5), dtype=dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for fn in (torch.mm, torch.matmul, lambda x, y: x @ y[:, 0], lambda x, y: torch.bmm(x[None], y[None])):
            got = fn(a.npu(), b.npu())
            assert got.device.type == "npu" and got.dtype == dtype
            assert torch.equal(got.cpu(), fn(a, b))


@pytest.mark.parametrize("dtype", DTYPES)
def test_mv_addmv_dot(fallback_error, dtype):
    m, v, w = rand(17, 33, dtype=dtype), rand(33, dtype=dtype), rand(17, dtype=dtype)
    assert_close(torch.mv(m.npu(), v.npu()), torch.mv(m, v), dtype)
    assert_close(torch.matmul(m.npu(), v.npu()), torch.matmul(m, v), dtype)
    assert_close(torch.addmv(w.npu(), m.npu(), v.npu(), beta=0.5, alpha=2), torch.addmv(w, m, v, beta=0.5, alpha=2), dtype)
    assert_close(torch.mv(m.t().contiguous().npu().t(), v.npu()), torch.mv(m, v), dtype)   # transposed matrix
    big = rand(66, dtype=dtype)
    assert_close(torch.mv(m.npu(), big.npu()[::2]), torch.mv(m, big[::2]), dtype)          # strided vector
    wn = w.npu()
    wn.addmv_(m.npu(), v.npu())
    assert_close(wn, torch.addmv(w, m, v), dtype)
    assert_close(torch.dot(v.npu(), v.npu()), torch.dot(v.float(), v.float()).to(dtype), dtype)
    assert_close(torch.matmul(v.npu(), v.npu()), torch.dot(v.float(), v.float()).to(dtype), dtype)


def test_mv_dot_bad_inputs(fallback_error):
    with pytest.raises(RuntimeError, match=r"addmv: size mismatch, got mat 4x5 and vec 6"):
        torch.mv(rand(4, 5).npu(), rand(6).npu())
    with pytest.raises(RuntimeError, match=r"dot: expected both vectors to have the same number of elements, but got 5 and 6"):
        torch.dot(rand(5).npu(), rand(6).npu())


# ---- float32 matmul precision "high": the cube runs in HF32 mode (bf16x3 on AMX hosts) ----------
@pytest.mark.parametrize("shape", [(37, 300, 45), (128, 64, 256), (1, 77, 33)])
def test_mm_float32_precision_high(fallback_error, shape):
    m, k, n = shape
    a, b = torch.randn(m, k), torch.randn(k, n)
    ref = a.double() @ b.double()
    old = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("high")
    try:
        got = (a.npu() @ b.npu()).cpu().double()
    finally:
        torch.set_float32_matmul_precision(old)
    mag = a.double().abs() @ b.double().abs()
    assert ((got - ref).abs() / mag).max().item() <= 3e-5


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("k", [64, 37])
def test_linear_weight_packed_copy_follows_updates(fallback_error, dtype, k):
    """Inference Linear weights are packed once (on their second use) into the cube's panel order
    and reused: an in-place update, a freed weight whose memory is reused, and empty_cache all give
    fresh results; K that is no multiple of C0 is zero-padded in the packed copy."""
    g = torch.Generator().manual_seed(k)
    tol = dict(rtol=1e-5, atol=1e-4) if dtype == torch.float32 else dict(rtol=2e-3, atol=2e-2)
    w = torch.randn(40, k, generator=g).to(dtype)
    x = torch.randn(5, k, generator=g).to(dtype)
    wd, xd = w.npu(), x.npu()
    want = (x.float() @ w.float().t())
    with torch.no_grad():
        for _ in range(3):  # first sighting, packing, cached
            torch.testing.assert_close(F.linear(xd, wd).float().cpu(), want, **tol)
        wd.mul_(2)  # in place: the version counter moves
        torch.testing.assert_close(F.linear(xd, wd).float().cpu(), 2 * want, **tol)
        torch.testing.assert_close(F.linear(xd, wd).float().cpu(), 2 * want, **tol)
        del wd  # a new weight in the freed memory
        w2 = torch.randn(40, k, generator=g).to(dtype)
        w2d = w2.npu()
        for _ in range(3):
            torch.testing.assert_close(F.linear(xd, w2d).float().cpu(), x.float() @ w2.float().t(), **tol)
        torch.npu.empty_cache()
        torch.testing.assert_close(F.linear(xd, w2d).float().cpu(), x.float() @ w2.float().t(), **tol)
    # Training (autograd tracks the weight): never packed, and the results follow every step.
    lin = torch.nn.Linear(k, 40).to(dtype).npu()
    opt = torch.optim.SGD(lin.parameters(), lr=0.1)
    for _ in range(3):
        out = lin(xd)
        want = (x.float() @ lin.weight.detach().float().cpu().t() + lin.bias.detach().float().cpu())
        torch.testing.assert_close(out.detach().float().cpu(), want, **tol)
        out.float().square().sum().backward()
        opt.step()
        opt.zero_grad()


# ---- small-M products on the vector cores (ascendc_kernels/gemv.cpp) ---------------------------------
# One or two float32 rows of A (one 16-bit row) against a B of >= 1.5 MB run as a GEMV on the vector
# cores (otherwise the cube: the dispatch is checked too): B streams by rows
# (the operand itself when row-major, else the row-major copy cached for an inference weight), K is
# split across cores when the columns alone leave them idle, and a reduce phase adds the partial sums
# and applies addmm's epilogue.

def _gemv_launches():
    torch.npu.synchronize()
    return torch.npu.kernel_counters().get("gemv_kernel", {}).get("launches", 0)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("m,k,n", [(1, 1024, 1024), (2, 3000, 300), (1, 80, 10000), (2, 1000, 4500)])
def test_small_m_linear_runs_on_the_vector_gemv(fallback_error, dtype, m, k, n):
    g = torch.Generator().manual_seed(m * k + n)
    w = (torch.randn(n, k, generator=g) / k ** 0.5).to(dtype)
    b = torch.randn(n, generator=g).to(dtype)
    x = torch.randn(m, k, generator=g).to(dtype)
    r = torch.randn(m, n, generator=g).to(dtype)
    wd, bd, xd, rd = w.npu(), b.npu(), x.npu(), r.npu()
    before = _gemv_launches()
    with torch.no_grad():
        for _ in range(3):  # first sighting (cube), then the cached row-major weight (gemv)
            assert_close(F.linear(xd, wd, bd), F.linear(x.float(), w.float(), b.float()).to(dtype), dtype)
        assert_close(F.linear(xd, wd), F.linear(x.float(), w.float()).to(dtype), dtype)
        assert_close(torch.addmm(rd, xd, wd.t(), beta=0.5, alpha=-2.0),
                     torch.addmm(r.float(), x.float(), w.float().t(), beta=0.5, alpha=-2.0).to(dtype), dtype)
        # B row-major as given: no cached copy needed; A read through a transposed view.
        wt = w.t().contiguous()
        assert_close(torch.mm(xd.t().contiguous().t(), wt.npu()), (x.float() @ wt.float()).to(dtype), dtype)
    gemv = m == 1 or dtype == torch.float32
    assert (_gemv_launches() > before) == gemv


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_small_m_bmm_and_baddbmm_gemv(fallback_error, dtype):
    """Batched (a decoder step's attention-weights x values): each batch matrix's B by rows, a
    broadcast A, and baddbmm's residual through the reduce phase's epilogue."""
    g = torch.Generator().manual_seed(1)
    a = torch.randn(6, 1, 700, generator=g).to(dtype)
    b = torch.randn(6, 700, 1200, generator=g).to(dtype)
    s = torch.randn(6, 1, 1200, generator=g).to(dtype)
    before = _gemv_launches()
    assert_close(torch.bmm(a.npu(), b.npu()), torch.bmm(a.float(), b.float()).to(dtype), dtype)
    assert_close(torch.baddbmm(s.npu(), a.npu(), b.npu(), beta=2.0, alpha=0.5),
                 torch.baddbmm(s.float(), a.float(), b.float(), beta=2.0, alpha=0.5).to(dtype), dtype)
    a1 = a[:1]  # broadcast over the batch through matmul
    assert_close(torch.matmul(a1.npu(), b.npu()), torch.matmul(a1.float(), b.float()).to(dtype), dtype)
    assert _gemv_launches() > before


def test_small_m_gemv_nan_inf_and_weight_updates(fallback_error):
    """NaN / inf in A propagate as on the CPU; the cached row-major weight follows in-place updates."""
    k, n = 600, 800
    w = torch.randn(n, k)
    x = torch.randn(1, k)
    x[0, 3] = float("nan")
    x2 = torch.randn(2, k)
    x2[1, 5] = float("inf")
    wd = w.npu()
    with torch.no_grad():
        for _ in range(3):
            got = F.linear(x.npu(), wd).cpu()
            assert torch.isnan(got).all()
        want = F.linear(x2, w)
        torch.testing.assert_close(F.linear(x2.npu(), wd).cpu(), want, rtol=1e-4, atol=1e-3, equal_nan=True)
        wd.mul_(-1)
        torch.testing.assert_close(F.linear(x2.npu(), wd).cpu(), F.linear(x2, -w), rtol=1e-4, atol=1e-3,
                                   equal_nan=True)


def test_small_m_gemv_follows_the_env_switch():
    """TORCH_OPS_NN_GEMV=0 keeps small-M products on the cube, with the same results."""
    import os
    import subprocess
    import sys
    code = ("import torch, torch_ops_nn, torch.nn.functional as F\n"
            "w = torch.randn(1000, 800); x = torch.randn(1, 800)\n"
            "with torch.no_grad():\n"
            "    for _ in range(3): y = F.linear(x.npu(), w.npu())\n"
            "torch.npu.synchronize()\n"
            "assert (y.cpu() - F.linear(x, w)).abs().max() < 1e-3\n"
            "print(torch.npu.kernel_counters().get('gemv_kernel', {}).get('launches', 0))\n")
    env = dict(os.environ, TORCH_OPS_NN_GEMV="0", TORCH_OPS_NN_FALLBACK="error")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "0"


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_mv_of_a_repeated_matrix_runs_as_one_row(fallback_error, dtype):
    """mv / addmv compute out[1, n] = vec @ mat^T: one row, so a repeated matrix's row-major copy of
    mat^T feeds the vector GEMV (and even the cube beats n rows against one column)."""
    g = torch.Generator().manual_seed(3)
    m = (torch.randn(1200, 1000, generator=g) / 30).to(dtype)
    v, w = torch.randn(1000, generator=g).to(dtype), torch.randn(1200, generator=g).to(dtype)
    mn, vn, wn = m.npu(), v.npu(), w.npu()
    before = _gemv_launches()
    for _ in range(3):
        assert_close(torch.mv(mn, vn), (m.float() @ v.float()).to(dtype), dtype)
    assert_close(torch.addmv(wn, mn, vn, beta=-1.5, alpha=0.5),
                 torch.addmv(w.float(), m.float(), v.float(), beta=-1.5, alpha=0.5).to(dtype), dtype)
    assert_close(torch.addmv(torch.tensor(2.0, dtype=dtype).npu(), mn, vn),
                 torch.addmv(torch.tensor(2.0), m.float(), v.float()).to(dtype), dtype)
    assert _gemv_launches() > before
