"""nll_loss / nll_loss2d on npu (reductions, class weights, ignore_index; forward and backward) vs CPU.

The log-probabilities are computed on the CPU and moved to npu (log_softmax is another family's op).
Tolerances: float32 1e-5 relative, float16 1e-2, bfloat16 5e-2 (losses are sums over the batch).
"""
import pytest
import torch
import torch.nn.functional as F

DTYPES = [torch.float32, torch.float16, torch.bfloat16]
TOL = {torch.float32: 1e-5, torch.float16: 1e-2, torch.bfloat16: 5e-2}


def close(npu, ref, tol):
    npu = npu.cpu().float()
    ref = ref.float()
    assert npu.shape == ref.shape
    if ref.numel() == 0:
        return
    assert torch.equal(torch.isnan(npu), torch.isnan(ref))
    npu, ref = torch.nan_to_num(npu), torch.nan_to_num(ref)
    scale = max(1.0, ref.abs().max().item())
    err = (npu - ref).abs().max().item()
    assert err <= tol * scale, f"max abs error {err} > {tol * scale}"


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n,c", [(4, 5), (37, 10), (1, 3), (300, 1000), (5, 20000)])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("weighted,ignore_index", [(False, -100), (True, 1)])
def test_nll_loss(fallback_error, dtype, n, c, reduction, weighted, ignore_index):
    torch.manual_seed(n * 31 + c)
    lp = torch.randn(n, c).log_softmax(1).to(dtype)
    t = torch.randint(0, c, (n,))
    t[0] = min(1, c - 1)  # at least one ignored sample when ignore_index is 1
    w = torch.rand(c) + 0.5 if weighted else None
    lr = lp.float().clone().requires_grad_()
    ln = lp.to("npu").detach().requires_grad_()
    ref = F.nll_loss(lr, t, w, ignore_index=ignore_index, reduction=reduction)
    out = F.nll_loss(ln, t.npu(), None if w is None else w.npu(), ignore_index=ignore_index, reduction=reduction)
    assert out.dtype == dtype
    close(out, ref, TOL[dtype])
    g = torch.randn(ref.shape).to(dtype)
    ref.backward(g.float())
    out.backward(g.to("npu"))
    close(ln.grad, lr.grad, TOL[dtype])


def test_nll_loss_all_ignored_mean_is_nan(fallback_error):
    lp = torch.randn(3, 4).log_softmax(1)
    t = torch.full((3,), 2)
    ref = F.nll_loss(lp, t, ignore_index=2)
    out = F.nll_loss(lp.npu(), t.npu(), ignore_index=2)
    close(out, ref, 1e-6)


def test_nll_loss_single_sample(fallback_error):
    lp = torch.randn(7).log_softmax(0)
    t = torch.tensor(3)
    for reduction in ["none", "mean", "sum"]:
        close(F.nll_loss(lp.npu(), t.npu(), reduction=reduction), F.nll_loss(lp, t, reduction=reduction), 1e-6)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("shape", [(2, 4, 5, 3), (1, 21, 16, 16), (3, 3, 1, 70)])
def test_nll_loss2d(fallback_error, dtype, reduction, shape):
    torch.manual_seed(4)
    n, c, h, w = shape
    lp = torch.randn(shape).log_softmax(1).to(dtype)
    t = torch.randint(0, c, (n, h, w))
    t[0, 0, 0] = 255
    wt = torch.rand(c) + 0.5
    lr = lp.float().clone().requires_grad_()
    ln = lp.to("npu").detach().requires_grad_()
    ref = F.nll_loss(lr, t, wt, ignore_index=255, reduction=reduction)
    out = F.nll_loss(ln, t.npu(), wt.npu(), ignore_index=255, reduction=reduction)
    close(out, ref, TOL[dtype])
    g = torch.randn(ref.shape).to(dtype)
    ref.backward(g.float())
    out.backward(g.to("npu"))
    close(ln.grad, lr.grad, TOL[dtype])


def test_cross_entropy_end_to_end(fallback_error):
    """F.cross_entropy = log_softmax (another family) + nll_loss: skipped until log_softmax is native."""
    logits = torch.randn(6, 9)
    t = torch.randint(0, 9, (6,))
    try:
        torch.log_softmax(logits.npu(), 1)
    except NotImplementedError:
        pytest.skip("log_softmax has no native npu kernel yet")
    ln = logits.npu().requires_grad_()
    lr = logits.clone().requires_grad_()
    out = F.cross_entropy(ln, t.npu())
    ref = F.cross_entropy(lr, t)
    close(out, ref, 1e-5)
    out.backward()
    ref.backward()
    close(ln.grad, lr.grad, 1e-5)


def test_nll_loss_target_out_of_range(fallback_error):
    lp = torch.randn(3, 5).npu()
    with pytest.raises(RuntimeError, match=r"nll_loss: target 7 is out of bounds for 5 classes \[0, 5\) at sample 1"):
        F.nll_loss(lp, torch.tensor([0, 7, 1]).npu())
        torch.npu.synchronize()
    with pytest.raises(RuntimeError, match=r"target -3 is out of bounds for 5 classes"):
        F.nll_loss(lp, torch.tensor([0, 1, -3]).npu(), reduction="none")
        torch.npu.synchronize()
    # the device stays usable
    close(F.nll_loss(lp, torch.tensor([0, 4, 1]).npu()), F.nll_loss(lp.cpu(), torch.tensor([0, 4, 1])), 1e-6)
    # >= 32 classes: the forward reads x[i, target] alone (scalar reads); out-of-range targets, also past
    # int32, are reported the same way and never read
    wide = torch.randn(4, 40)
    for bad, at in [(40, 2), (-1, 0), (10**10, 3)]:
        t = torch.tensor([5, 39, 0, 7])
        t[at] = bad
        with pytest.raises(RuntimeError, match=rf"target {bad} is out of bounds for 40 classes \[0, 40\) at sample {at}"):
            F.nll_loss(wide.npu(), t.npu())
            torch.npu.synchronize()
    # a NaN in a class no target names does not reach the loss
    wide[1, 3] = float("nan")
    t = torch.tensor([5, 39, 0, 7])
    close(F.nll_loss(wide.npu(), t.npu()), F.nll_loss(wide, t), 1e-6)


def test_nll_loss_argument_errors(fallback_error):
    lp = torch.randn(3, 5).npu()
    with pytest.raises(RuntimeError, match=r"input has shape \[3, 5\] but target has shape \[4\]"):
        torch.ops.aten.nll_loss_forward(lp, torch.zeros(4, dtype=torch.long).npu(), None, 1, -100)
    with pytest.raises(RuntimeError, match="target must be int64"):
        torch.ops.aten.nll_loss_forward(lp, torch.zeros(3, dtype=torch.int32).npu(), None, 1, -100)
    with pytest.raises(RuntimeError, match=r"weight must be a 1-D tensor of 5 elements .*got shape \[4\]"):
        torch.ops.aten.nll_loss_forward(lp, torch.zeros(3, dtype=torch.long).npu(), torch.ones(4).npu(), 1, -100)
    with pytest.raises(RuntimeError, match=r"'target' is on cpu, but npu tensors are expected"):
        torch.ops.aten.nll_loss_forward(lp, torch.zeros(3, dtype=torch.long), None, 1, -100)
    with pytest.raises(RuntimeError, match=r"target must be \(N, H, W\) = \(2, 4, 4\)"):
        torch.ops.aten.nll_loss2d_forward(torch.randn(2, 3, 4, 4).npu(), torch.zeros(2, 4, 5, dtype=torch.long).npu(),
                                          None, 1, -100)


def test_nll_loss_empty_batch(fallback_error):
    lp = torch.randn(0, 5)
    t = torch.zeros(0, dtype=torch.long)
    for reduction in ["none", "mean", "sum"]:
        close(F.nll_loss(lp.npu(), t.npu(), reduction=reduction), F.nll_loss(lp, t, reduction=reduction), 1e-6)


REGRESSION = {
    "mse": lambda a, b, r: F.mse_loss(a, b, reduction=r),
    "smooth_l1": lambda a, b, r: F.smooth_l1_loss(a, b, reduction=r),
    "smooth_l1_beta": lambda a, b, r: F.smooth_l1_loss(a, b, reduction=r, beta=0.3),
    "smooth_l1_beta0": lambda a, b, r: F.smooth_l1_loss(a, b, reduction=r, beta=0.0),
    "huber": lambda a, b, r: F.huber_loss(a, b, reduction=r),
    "huber_delta": lambda a, b, r: F.huber_loss(a, b, reduction=r, delta=2.0),
}


@pytest.mark.parametrize("loss", sorted(REGRESSION))
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_regression_losses_forward_and_backward(fallback_error, loss, reduction, dtype):
    """mse / smooth_l1 / huber (npu elementwise + reduction kernels) and their backward ops through
    autograd, against the CPU."""
    f = REGRESSION[loss]
    g = torch.Generator().manual_seed(4)
    a = (torch.randn(37, 11, generator=g) * 2).to(dtype).requires_grad_()
    b = (torch.randn(37, 11, generator=g) * 2).to(dtype)
    an = a.detach().to("npu").requires_grad_()
    la, ln = f(a, b, reduction), f(an, b.to("npu"), reduction)
    go = torch.randn(la.shape, generator=g).to(dtype)
    la.backward(go)
    ln.backward(go.to("npu"))
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == torch.float32 else dict(rtol=2e-2, atol=2e-2)
    assert ln.dtype == la.dtype and ln.shape == la.shape
    torch.testing.assert_close(ln.detach().cpu().float(), la.detach().float(), **tol)
    torch.testing.assert_close(an.grad.cpu().float(), a.grad.float(), **tol)


def test_regression_loss_broadcast_and_bad_args(fallback_error):
    x, y = torch.randn(3, 4), torch.randn(4)
    with pytest.warns(UserWarning, match="different to the input size"):
        got, want = F.mse_loss(x.to("npu"), y.to("npu")), F.mse_loss(x, y)
    torch.testing.assert_close(got.cpu(), want, rtol=1e-6, atol=1e-7)
    with pytest.raises(RuntimeError, match=r"huber_loss: delta must be positive, got -1"):
        F.huber_loss(x.to("npu"), x.to("npu"), delta=-1.0)
    with pytest.raises(NotImplementedError, match=r"mse_loss: argument 'self' has dtype Long"):
        torch.ops.aten.mse_loss(torch.ones(3, dtype=torch.long, device="npu"), torch.ones(3, dtype=torch.long, device="npu"))


# ---------------------------------------------------------------- margin losses (autograd compositions)
def same_loss_and_grad(x, loss):
    """loss(x, device) on npu equals the CPU's, and so does its gradient w.r.t. x."""
    xr, xn = x.clone().requires_grad_(), x.npu().requires_grad_()
    want, got = loss(xr, "cpu"), loss(xn, "npu")
    assert got.shape == want.shape
    torch.testing.assert_close(got.detach().cpu(), want.detach(), rtol=1e-6, atol=1e-6)
    g = torch.randn(want.shape)
    want.backward(g)
    got.backward(g.npu())
    torch.testing.assert_close(xn.grad.cpu(), xr.grad, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("p,margin,weighted", [(1, 1.0, False), (2, 0.3, True), (1, 2.0, True)])
def test_multi_margin_loss(fallback_error, reduction, p, margin, weighted):
    torch.manual_seed(8)
    x, y, w = torch.randn(6, 5), torch.tensor([0, 4, 2, 1, 3, 2]), torch.rand(5) + 0.5
    same_loss_and_grad(x, lambda a, dev: F.multi_margin_loss(a, y.to(dev), p, margin,
                                                             w.to(dev) if weighted else None, reduction=reduction))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_multilabel_margin_loss(fallback_error, reduction):
    torch.manual_seed(9)
    x = torch.randn(6, 5)
    # lists end at the first -1; repeated classes count twice; class 0 listed and unlisted slots
    t = torch.tensor([[3, 0, -1, 1, 1], [1, 2, 3, 4, 0], [-1, 1, 2, 3, 4], [4, 4, -1, 0, 0], [0, 1, 2, 3, -1],
                      [2, -1, -1, -1, -1]])
    same_loss_and_grad(x, lambda a, dev: F.multilabel_margin_loss(a, t.to(dev), reduction=reduction))
    one = F.multilabel_margin_loss(x[0].npu(), t[0].npu(), reduction=reduction)
    torch.testing.assert_close(one.cpu(), F.multilabel_margin_loss(x[0], t[0], reduction=reduction))


def test_margin_losses_bad_target(fallback_error):
    x = torch.randn(3, 4).npu()
    with pytest.raises(RuntimeError, match=r"multi_margin_loss: target out of range: every target must lie in \[0, 4\)"):
        F.multi_margin_loss(x, torch.tensor([0, 4, 1]).npu())
    with pytest.raises(RuntimeError, match=r"multilabel_margin_loss: target out of range"):
        F.multilabel_margin_loss(x, torch.tensor([[0, 7, -1, 0]] * 3).npu())
    with pytest.raises(RuntimeError, match=r"multi_margin_loss: only p == 1 and p == 2 supported, got 3"):
        torch.ops.aten.multi_margin_loss(x, torch.tensor([0, 1, 1]).npu(), 3, 1.0, None, 1)
    assert F.multi_margin_loss(x, torch.tensor([0, 1, 1]).npu()).item() >= 0  # still working
