"""Batch norm, layer norm and group norm on npu vs PyTorch's CPU results.

Tolerances (max abs error against a float32 CPU reference computed from the same rounded inputs):
float32 1e-4 (outputs) / 1e-3 (gradients summed over many values); float16 2e-2; bfloat16 6e-2 -- the
kernels compute in float32 and round once at the store.
"""
import pytest
import torch
import torch.nn.functional as F

DTYPES = [torch.float32, torch.float16, torch.bfloat16]
TOL = {torch.float32: 1e-4, torch.float16: 2e-2, torch.bfloat16: 6e-2}
GTOL = {torch.float32: 1e-3, torch.float16: 3e-2, torch.bfloat16: 1e-1}


def close(npu, ref, tol):
    npu = npu.cpu().float()
    ref = ref.float()
    assert npu.shape == ref.shape
    err = (npu - ref).abs().max().item() if ref.numel() else 0.0
    scale = max(1.0, ref.abs().max().item()) if ref.numel() else 1.0
    assert err <= tol * scale, f"max abs error {err} > {tol * scale}"


def layout(x, kind):
    if kind == "channels_last":
        return x.contiguous(memory_format=torch.channels_last)
    if kind == "strided":  # a non-contiguous view with the same values
        return x.transpose(-1, -2).contiguous().transpose(-1, -2)
    return x


# (6, 200, 7, 7): channel blocks of 80 small planes whose images straddle the cores (replicated
# coefficients for a block with several images on a core, per-plane scalars for one).
BN_SHAPES = [(2, 3, 5, 7), (1, 5, 33, 1), (8, 64, 7, 7), (4, 300, 3, 3), (6, 200, 7, 7), (2, 16, 56, 56), (3, 7)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", BN_SHAPES)
@pytest.mark.parametrize("kind", ["contiguous", "channels_last", "strided"])
def test_batch_norm_forward_backward(fallback_error, dtype, shape, kind):
    if len(shape) != 4 and kind != "contiguous":
        pytest.skip("layouts apply to 4-D inputs")
    torch.manual_seed(0)
    c = shape[1]
    x = (torch.randn(shape) * 2 + 3).to(dtype)
    w, b = torch.randn(c), torch.randn(c)
    rm, rv = torch.randn(c), torch.rand(c) + 0.5
    xn = layout(x.to("npu"), kind)
    # eval (running stats)
    ref = F.batch_norm(x.float(), rm, rv, w, b, False, 0.1, 1e-5)
    out = F.batch_norm(xn, rm.npu(), rv.npu(), w.npu(), b.npu(), False, 0.1, 1e-5)
    assert out.dtype == dtype
    close(out, ref, TOL[dtype])
    # train (batch stats) with autograd
    xr = x.float().clone().requires_grad_()
    wr, br = w.clone().requires_grad_(), b.clone().requires_grad_()
    xnr = xn.detach().requires_grad_()
    wn, bn = w.npu().requires_grad_(), b.npu().requires_grad_()
    rm_c, rv_c, rm_n, rv_n = rm.clone(), rv.clone(), rm.npu(), rv.npu()
    ref = F.batch_norm(xr, rm_c, rv_c, wr, br, True, 0.1, 1e-5)
    out = F.batch_norm(xnr, rm_n, rv_n, wn, bn, True, 0.1, 1e-5)
    close(out, ref, TOL[dtype])
    close(rm_n, rm_c, TOL[dtype])
    close(rv_n, rv_c, TOL[dtype])
    g = torch.randn(shape).to(dtype)
    ref.backward(g.float())
    out.backward(layout(g.to("npu"), kind))
    close(xnr.grad, xr.grad, GTOL[dtype])
    close(wn.grad, wr.grad, GTOL[dtype] * 10)
    close(bn.grad, br.grad, GTOL[dtype] * 10)


@pytest.mark.parametrize("kind", ["contiguous", "channels_last"])
def test_batchnorm2d_module_running_stats(monkeypatch, kind):
    # The module also bumps num_batches_tracked (aten::add, another family's op): allow that one to fall
    # back, and check that no batch norm op did.
    import torch_ops_nn

    monkeypatch.setenv("TORCH_OPS_NN_FALLBACK", "silent")
    torch.manual_seed(1)
    cpu = torch.nn.BatchNorm2d(13, momentum=0.2)
    npu = torch.nn.BatchNorm2d(13, momentum=0.2)
    npu.load_state_dict(cpu.state_dict())
    npu = npu.to("npu")
    if kind == "channels_last":
        npu = npu.to(memory_format=torch.channels_last)
    for step in range(4):
        x = torch.randn(3, 13, 9, 11) * (step + 1) + step
        yc = cpu(x)
        yn = npu(layout(x.to("npu"), kind))
        close(yn, yc, 1e-4)
    close(npu.running_mean, cpu.running_mean, 1e-5)
    close(npu.running_var, cpu.running_var, 1e-4)
    assert npu.num_batches_tracked.item() == 4
    cpu.eval()
    npu.eval()
    x = torch.randn(2, 13, 5, 5)
    close(npu(layout(x.to("npu"), kind)), cpu(x), 1e-4)
    assert not [op for op in torch_ops_nn.fallback_ops() if "batch_norm" in op]


def test_batch_norm_mixed_precision_params(fallback_error):
    """Half input with float32 weight and running stats (AMP): stats stay float32, as on CPU."""
    x = torch.randn(4, 6, 5, 5).half()
    rm, rv = torch.zeros(6), torch.ones(6)
    w, b = torch.randn(6), torch.randn(6)
    out, mean, invstd = torch.native_batch_norm(x.npu(), w.npu(), b.npu(), rm.npu(), rv.npu(), True, 0.1, 1e-5)
    ref, rmean, rinvstd = torch.native_batch_norm(x, w, b, rm.clone(), rv.clone(), True, 0.1, 1e-5)
    assert (out.dtype, mean.dtype, invstd.dtype) == (ref.dtype, rmean.dtype, rinvstd.dtype)
    close(out, ref, 2e-2)
    close(mean, rmean, 1e-4)
    close(invstd, rinvstd, 1e-3)


def test_batch_norm_legit_variants(fallback_error):
    x = torch.randn(3, 4, 6, 6)
    rm, rv = torch.randn(4), torch.rand(4) + 0.5
    a = torch.ops.aten
    ref = a._native_batch_norm_legit_no_training(x, None, None, rm, rv, 0.1, 1e-5)
    out = a._native_batch_norm_legit_no_training(x.npu(), None, None, rm.npu(), rv.npu(), 0.1, 1e-5)
    close(out[0], ref[0], 1e-4)
    ref = a._native_batch_norm_legit.no_stats(x, None, None, True, 0.1, 1e-5)
    out = a._native_batch_norm_legit.no_stats(x.npu(), None, None, True, 0.1, 1e-5)
    for o, r in zip(out, ref):
        close(o, r, 1e-4)
    rmc, rvc, rmn, rvn = rm.clone(), rv.clone(), rm.npu(), rv.npu()
    ref = a._native_batch_norm_legit(x, None, None, rmc, rvc, True, 0.3, 1e-5)
    out = a._native_batch_norm_legit(x.npu(), None, None, rmn, rvn, True, 0.3, 1e-5)
    close(out[0], ref[0], 1e-4)
    close(rmn, rmc, 1e-5)
    close(rvn, rvc, 1e-5)


def test_batch_norm_errors(fallback_error):
    x = torch.randn(2, 3, 4, 4).npu()
    with pytest.raises(RuntimeError, match=r"'weight' must be a 1-D tensor of 3 elements .*got shape \[4\]"):
        torch.native_batch_norm(x, torch.ones(4).npu(), None, None, None, True, 0.1, 1e-5)
    with pytest.raises(RuntimeError, match=r"'running_mean' must be a 1-D tensor of 3 elements"):
        torch.native_batch_norm(x, None, None, torch.zeros(5).npu(), torch.ones(5).npu(), False, 0.1, 1e-5)
    with pytest.raises(RuntimeError, match="running_mean and running_var are required in evaluation mode"):
        torch.native_batch_norm(x, None, None, None, None, False, 0.1, 1e-5)
    with pytest.raises(RuntimeError, match=r"'weight' is on cpu, but npu tensors are expected"):
        torch.native_batch_norm(x, torch.ones(3), None, None, None, True, 0.1, 1e-5)
    with pytest.raises(NotImplementedError, match="has dtype Int"):
        torch.native_batch_norm(x.int(), None, None, None, None, True, 0.1, 1e-5)


LN_CASES = [((4, 7), (7,)), ((64, 1000), (1000,)), ((2, 3, 5, 6), (5, 6)), ((3, 100), (100,)), ((1, 65), (65,)),
            ((300, 768), (768,)), ((5, 37, 33), (33,)), ((130, 4096), (4096,)), ((777, 100), (100,))]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,ns", LN_CASES)
@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm(fallback_error, dtype, shape, ns, affine):
    torch.manual_seed(2)
    x = (torch.randn(shape) * 2 + 1).to(dtype)
    w = torch.randn(ns) if affine else None
    b = torch.randn(ns) if affine else None
    xr = x.float().clone().requires_grad_()
    wr = w.clone().requires_grad_() if affine else None
    br = b.clone().requires_grad_() if affine else None
    xn = x.to("npu").detach().requires_grad_()
    wn = w.npu().requires_grad_() if affine else None
    bn = b.npu().requires_grad_() if affine else None
    ref = F.layer_norm(xr, ns, wr, br)
    out = F.layer_norm(xn, ns, wn, bn)
    assert out.dtype == dtype
    close(out, ref, TOL[dtype])
    g = torch.randn(shape).to(dtype)
    ref.backward(g.float())
    out.backward(g.to("npu"))
    close(xn.grad, xr.grad, GTOL[dtype])
    if affine:
        close(wn.grad, wr.grad, GTOL[dtype] * 10)
        close(bn.grad, br.grad, GTOL[dtype] * 10)


def test_layer_norm_errors(fallback_error):
    x = torch.randn(2, 3, 4).npu()
    with pytest.raises(RuntimeError, match=r"normalized_shape \[5\] does not match the last 1 dimension\(s\) of input "
                                           r"shape \[2, 3, 4\]"):
        F.layer_norm(x, (5,))
    with pytest.raises(RuntimeError, match=r"weight shape \[3\] must equal normalized_shape \[4\]"):
        F.layer_norm(x, (4,), torch.ones(3).npu())


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_rows_larger_than_the_unified_buffer(fallback_error, dtype):
    """A layer-norm row or a group-norm group the kernels' tiling cannot hold (GroupNorm(32, 256) over
    FCOS's 120x128 maps is 8 x 15360 floats; this raised 'too large for the npu kernel'): the same
    math by the npu reductions and element-wise ops, forward and backward."""
    g = torch.Generator().manual_seed(5)
    cases = [(lambda x, w, b: F.layer_norm(x, (120000,), w, b), (2, 120000), (120000,)),
             (lambda x, w, b: F.group_norm(x, 2, w, b), (2, 16, 100, 100), (16,)),
             (lambda x, w, b: F.group_norm(x, 1, None, None), (1, 4, 150, 200), (4,))]
    tol = 1e-4 if dtype == torch.float32 else 3e-2
    for fn, shape, wshape in cases:
        xs = [torch.randn(shape, generator=g) * 2 + 1, torch.randn(wshape, generator=g), torch.randn(wshape, generator=g)]
        ref = [t.to(dtype).float().detach().clone().requires_grad_() for t in xs]
        dev = [t.to(dtype).detach().npu().requires_grad_() for t in xs]
        want, got = fn(*ref), fn(*dev)
        assert got.dtype == dtype
        go = torch.randn(want.shape, generator=g)
        want.backward(go)
        got.backward(go.to(dtype).npu())
        close(got.float(), want, tol)
        for a, b in zip(dev, ref):
            if b.grad is not None:
                close(a.grad.float(), b.grad, tol * 10)


GN_CASES = [((2, 4, 3, 3), 2), ((2, 6, 5, 7), 3), ((1, 6, 56, 56), 2), ((3, 8, 10, 10), 1), ((2, 64, 9, 9), 32)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,groups", GN_CASES)
@pytest.mark.parametrize("affine", [True, False])
def test_group_norm(fallback_error, dtype, shape, groups, affine):
    torch.manual_seed(3)
    c = shape[1]
    x = (torch.randn(shape) * 2 + 1).to(dtype)
    w = torch.randn(c) if affine else None
    b = torch.randn(c) if affine else None
    xr = x.float().clone().requires_grad_()
    wr = w.clone().requires_grad_() if affine else None
    br = b.clone().requires_grad_() if affine else None
    xn = x.to("npu").detach().requires_grad_()
    wn = w.npu().requires_grad_() if affine else None
    bn = b.npu().requires_grad_() if affine else None
    ref = F.group_norm(xr, groups, wr, br)
    out = F.group_norm(xn, groups, wn, bn)
    close(out, ref, TOL[dtype])
    g = torch.randn(shape).to(dtype)
    ref.backward(g.float())
    out.backward(g.to("npu"))
    close(xn.grad, xr.grad, GTOL[dtype])
    if affine:
        close(wn.grad, wr.grad, GTOL[dtype] * 10)
        close(bn.grad, br.grad, GTOL[dtype] * 10)


def test_group_norm_errors(fallback_error):
    x = torch.randn(2, 6, 4, 4).npu()
    with pytest.raises(RuntimeError, match=r"channels \(6\) must be divisible by the number of groups \(4\)"):
        torch.native_group_norm(x, None, None, 2, 6, 16, 4, 1e-5)
    with pytest.raises(RuntimeError, match=r"'weight' must be a 1-D tensor of 6 elements"):
        torch.native_group_norm(x, torch.ones(3).npu(), None, 2, 6, 16, 3, 1e-5)


def test_zero_size(fallback_error):
    x = torch.randn(0, 3, 4, 4)
    out = torch.native_batch_norm(x.npu(), None, None, torch.zeros(3).npu(), torch.ones(3).npu(), False, 0.1, 1e-5)
    assert [t.shape for t in out] == [x.shape, torch.Size([0]), torch.Size([0])]
    with pytest.raises(RuntimeError, match=r"training needs at least one value per channel, got input shape \[0, 3, 4, 4\]"):
        torch.native_batch_norm(x.npu(), None, None, None, None, True, 0.1, 1e-5)
    assert F.layer_norm(x.npu(), (4,)).shape == x.shape
    assert F.group_norm(x.npu(), 3).shape == x.shape


@pytest.mark.parametrize("shape,kind", [((2, 3, 112, 112), "contiguous"), ((2, 2048, 3, 3), "channels_last"),
                                        ((1, 5000, 2, 2), "channels_last")])
def test_batch_norm_large_planes_and_channels(fallback_error, shape, kind):
    """Planes longer than a UB tile (chunked rows) and channels_last with many channels (few rows per tile,
    or more channels than a tile holds: the NCHW kernels after a layout change)."""
    torch.manual_seed(6)
    c = shape[1]
    x = torch.randn(shape) * 3 + 1
    w, b = torch.randn(c), torch.randn(c)
    xr = x.clone().requires_grad_()
    xn = layout(x.npu(), kind).detach().requires_grad_()
    ref = F.batch_norm(xr, None, None, w, b, True)
    out = F.batch_norm(xn, None, None, w.npu(), b.npu(), True)
    close(out, ref, 1e-4)
    g = torch.randn(shape)
    ref.backward(g)
    out.backward(layout(g.npu(), kind))
    close(xn.grad, xr.grad, 1e-3)


@pytest.mark.parametrize("shape,groups", [((1, 8, 1), 4), ((4, 64, 3), 32), ((2, 32, 7, 7), 8), ((2, 16, 100), 4)])
def test_group_norm_statistics_accurate_with_padded_segments(shape, groups):
    # Segments whose length is not a multiple of 8 are padded in UB; the pads must not enter the
    # variance (they once did, as pads * mean^2 subtracted afterwards: a catastrophic cancellation for
    # a small variance beside the mean, 1e-4 relative error in rstd here). Checked against float64.
    torch.manual_seed(0)
    x = torch.randn(shape) * 0.1 + 3.0
    hw = x[0, 0].numel()
    ref = torch.ops.aten.native_group_norm(x.double(), None, None, shape[0], shape[1], hw, groups, 1e-5)
    got = torch.ops.aten.native_group_norm(x.npu(), None, None, shape[0], shape[1], hw, groups, 1e-5)
    rel = (got[2].cpu().double() - ref[2]).abs().div(ref[2]).max().item()
    assert rel < 1e-6, f"rstd relative error {rel}"
    torch.testing.assert_close(got[0].cpu().double(), ref[0], atol=2e-5, rtol=0)
    # and the input gradient of a tiny group (pure cancellation) stays near float64's
    xc = x.npu().requires_grad_()
    g = torch.randn(shape)
    torch.nn.functional.group_norm(xc, groups).backward(g.npu())
    xd = x.double().requires_grad_()
    torch.nn.functional.group_norm(xd, groups).backward(g.double())
    torch.testing.assert_close(xc.grad.cpu().double(), xd.grad, atol=5e-4, rtol=1e-4)


def test_empty_rows_and_groups(fallback_error):
    """Empty inputs: no kernel and no tiling (which divides by the row and group sizes: it raised SIGFPE
    when called for them), forward and backward."""
    for x, fn in [(torch.randn(0, 3), lambda t: F.layer_norm(t, (3,))), (torch.randn(2, 0), lambda t: F.layer_norm(t, (0,))),
                  (torch.randn(0, 4, 3), lambda t: F.group_norm(t, 2, torch.ones(4, device=t.device),
                                                               torch.zeros(4, device=t.device)))]:
        xd = x.npu().requires_grad_()
        y = fn(xd)
        assert y.shape == fn(x).shape
        y.sum().backward()
        assert xd.grad.shape == x.shape
