"""max_pool2d_with_indices and max_pool2d (values only) forward on channels_last (NHWC) npu inputs:
the native NHWC kernel (pool_nhwc_fwd_kernel, float32, C a multiple of 8) vs PyTorch CPU.

Values and indices must match exactly (NaN where CPU has NaN, same sign of zero); results stay channels_last.
Other channels_last inputs (C not a multiple of 8, float16/bfloat16) take the NCHW kernel, also checked.
Gradients through the indices: float32 1e-5 relative to the largest value.
"""
import pytest
import torch
import torch.nn.functional as F

NHWC = "pool_nhwc_fwd_kernel"
NCHW = "pool_fwd_kernel"


def cl(x):
    return x.contiguous(memory_format=torch.channels_last)


def pool_both(x, k, s, p, d, ceil):
    """CPU and npu results of max_pool2d with indices on a channels_last copy of x, and the npu kernels used."""
    y, idx = F.max_pool2d(cl(x), k, s, p, d, ceil, return_indices=True)
    xn = cl(x).to("npu")
    torch.npu.synchronize()
    torch.npu.reset_kernel_counters()
    yn, idxn = F.max_pool2d(xn, k, s, p, d, ceil, return_indices=True)
    torch.npu.synchronize()
    used = {name: c["launches"] for name, c in torch.npu.kernel_counters().items()}
    return y, idx, yn, idxn, used


def check_same(y, idx, yn, idxn, signed_zeros=True):
    assert yn.dtype == y.dtype and idxn.dtype == torch.int64
    assert yn.shape == y.shape and idxn.shape == idx.shape
    assert yn.is_contiguous(memory_format=torch.channels_last)
    assert idxn.is_contiguous(memory_format=torch.channels_last)
    yc, ic = yn.cpu(), idxn.cpu()
    torch.testing.assert_close(yc, y, rtol=0, atol=0, equal_nan=True)
    if signed_zeros:
        assert torch.equal(yc.signbit(), y.signbit())
    assert torch.equal(ic, idx), f"{(ic != idx).sum().item()} indices differ"


def make_input(shape, kind, seed):
    g = torch.Generator().manual_seed(seed)
    if kind == "randn":
        return torch.randn(shape, generator=g)
    if kind == "ties":  # few distinct integers (and signed zeros): many equal maxima
        x = torch.randint(-2, 2, shape, generator=g).float()
        x[x == -2] = -0.0
        return x
    if kind == "nan":
        x = torch.randint(-3, 4, shape, generator=g).float()
        x[torch.rand(shape, generator=g) < 0.08] = float("nan")
        return x
    if kind == "inf":  # -inf blocks (windows whose valid values are all -inf) and some +inf
        x = torch.randn(shape, generator=g)
        x[..., : shape[-2] // 2, :] = float("-inf")
        x[torch.rand(shape, generator=g) < 0.02] = float("inf")
        return x
    raise AssertionError(kind)


# (N, C, H, W), kernel, stride, padding, dilation, ceil_mode
CASES = [
    ((1, 64, 13, 11), 3, 2, 1, 1, False),
    ((3, 64, 13, 11), 3, 2, 1, 1, True),
    ((1, 8, 9, 10), 3, 2, 1, 2, True),
    ((3, 8, 7, 7), 2, 1, 0, 1, False),
    ((1, 72, 7, 9), 2, 1, 0, 1, True),
    ((3, 72, 11, 9), 3, 3, 1, 1, True),
    ((1, 200, 11, 11), 5, 3, 2, 1, False),
    ((1, 200, 9, 13), 5, 2, 2, 2, True),
    ((3, 8, 15, 13), 5, 1, 2, 2, False),
    ((1, 64, 9, 9), 2, 3, 1, 2, True),
    ((3, 16, 10, 7), (3, 2), (2, 1), (1, 0), (1, 2), False),
    ((1, 24, 5, 5), 5, 1, 2, 1, True),      # one window as large as the input
    ((1, 8, 2, 3), 2, 1, 1, 2, False),      # dilated taps around a tiny input
    ((1, 8, 3, 3), 3, 3, 1, 1, True),       # ceil_mode: last window starts in the input
    ((3, 64, 1, 8), (1, 3), (1, 2), 0, 1, True),
]


def case_id(c):
    return f"{'x'.join(map(str, c[0]))}k{c[1]}s{c[2]}p{c[3]}d{c[4]}c{int(c[5])}".replace(" ", "")


@pytest.mark.parametrize("case", CASES, ids=case_id)
@pytest.mark.parametrize("kind", ["randn", "ties", "nan", "inf"])
def test_nhwc_max_pool2d_matches_cpu(fallback_error, case, kind):
    shape, k, s, p, d, ceil = case
    x = make_input(shape, kind, seed=len(shape) + sum(shape))
    y, idx, yn, idxn, used = pool_both(x, k, s, p, d, ceil)
    check_same(y, idx, yn, idxn)
    assert used == {NHWC: 1}, used  # the native kernel and nothing else: no layout copies


@pytest.mark.parametrize("case", CASES, ids=case_id)
@pytest.mark.parametrize("kind", ["ties", "nan", "inf"])
def test_values_only_max_pool2d_matches_cpu(fallback_error, case, kind):
    """aten::max_pool2d (no return_indices) runs the same kernel without index tracking: values
    (NaN taken and kept, signed zeros, -inf windows) must still be CPU's."""
    shape, k, s, p, d, ceil = case
    x = make_input(shape, kind, seed=3 * len(shape) + sum(shape))
    y = F.max_pool2d(cl(x), k, s, p, d, ceil)
    torch.npu.synchronize()
    torch.npu.reset_kernel_counters()
    yn = F.max_pool2d(cl(x).to("npu"), k, s, p, d, ceil)
    torch.npu.synchronize()
    used = {name: c["launches"] for name, c in torch.npu.kernel_counters().items()}
    assert used == {NHWC: 1}, used
    assert yn.shape == y.shape and yn.is_contiguous(memory_format=torch.channels_last)
    torch.testing.assert_close(yn.cpu(), y, rtol=0, atol=0, equal_nan=True)
    assert torch.equal(yn.cpu().signbit(), y.signbit())


@pytest.mark.parametrize("c,kernel", [(64, NHWC), (12, NCHW)])
def test_values_only_contiguous_inputs(fallback_error, c, kernel):
    x = make_input((2, c, 9, 9), "nan", seed=c)
    torch.npu.reset_kernel_counters()
    yn = F.max_pool2d(x.npu(), 3, 2, 1)
    torch.npu.synchronize()
    assert {k for k in (NHWC, NCHW) if k in torch.npu.kernel_counters()} == {kernel}
    y = F.max_pool2d(x, 3, 2, 1)
    assert yn.stride() == y.stride()
    torch.testing.assert_close(yn.cpu(), y, rtol=0, atol=0, equal_nan=True)


@pytest.mark.parametrize("c", [200, 1024])
def test_nhwc_channel_chunks(fallback_error, c):
    # wide rows: the tiling splits C into chunks (1024 channels x 40 columns do not fit the UB at once)
    x = make_input((2, c, 7, 40), "ties", seed=c)
    y, idx, yn, idxn, used = pool_both(x, 3, 2, 1, 1, False)
    check_same(y, idx, yn, idxn)
    assert used == {NHWC: 1}


@pytest.mark.parametrize("dtype,c", [(torch.float32, 12), (torch.float32, 3), (torch.float16, 16),
                                     (torch.bfloat16, 64)])
def test_other_channels_last_inputs_take_nchw_path(fallback_error, dtype, c):
    x = make_input((2, c, 9, 8), "ties", seed=c).to(dtype)
    y, idx, yn, idxn, used = pool_both(x, 3, 2, 1, 1, True)
    check_same(y, idx, yn, idxn, signed_zeros=False)  # the NCHW kernel's Max may return +0.0 for a -0.0 maximum
    assert used.get(NCHW) == 1 and NHWC not in used


@pytest.mark.parametrize("c,kernel", [(64, NHWC), (12, NCHW)])
def test_contiguous_input_layout_and_kernel(fallback_error, c, kernel):
    """NCHW float inputs with C % 8 == 0 run the NHWC kernel through layout copies, others the NCHW
    kernel; either way values, indices and strides are CPU's (contiguous)."""
    x = torch.randn(2, c, 9, 9)
    torch.npu.reset_kernel_counters()
    yn, idxn = F.max_pool2d(x.npu(), 3, 2, 1, return_indices=True)
    torch.npu.synchronize()
    used = {k for k in (NHWC, NCHW) if k in torch.npu.kernel_counters()}
    assert used == {kernel}
    y, idx = F.max_pool2d(x, 3, 2, 1, return_indices=True)
    assert yn.stride() == y.stride() and idxn.stride() == idx.stride()
    assert torch.equal(yn.cpu(), y) and torch.equal(idxn.cpu(), idx)


def test_resnet_stem_geometry(fallback_error):
    x = torch.randn(2, 64, 112, 112)
    y, idx, yn, idxn, used = pool_both(x, 3, 2, 1, 1, False)
    check_same(y, idx, yn, idxn)
    assert used == {NHWC: 1}


@pytest.mark.parametrize("case", [((3, 64, 13, 11), 3, 2, 1, 1, False), ((2, 8, 9, 10), 3, 2, 1, 2, True),
                                  ((2, 72, 7, 9), 2, 1, 0, 1, True)], ids=case_id)
def test_nhwc_backward_through_indices(fallback_error, case):
    shape, k, s, p, d, ceil = case
    torch.manual_seed(3)
    x = make_input(shape, "ties", seed=5)
    xr = cl(x).requires_grad_()
    xn = cl(x).to("npu").requires_grad_()
    y = F.max_pool2d(xr, k, s, p, d, ceil)
    yn = F.max_pool2d(xn, k, s, p, d, ceil)
    g = torch.randn(y.shape)
    y.backward(g)
    yn.backward(cl(g).to("npu"))
    gn = xn.grad.cpu()
    assert gn.shape == xr.grad.shape
    scale = max(1.0, xr.grad.abs().max().item())
    assert (gn - xr.grad).abs().max().item() <= 1e-5 * scale


def test_nhwc_out_variant(fallback_error):
    x = cl(torch.randn(2, 16, 9, 9))
    y, idx = F.max_pool2d(x, 3, 2, 1, return_indices=True)
    out, ind = torch.empty(0, device="npu"), torch.empty(0, dtype=torch.long, device="npu")
    torch.ops.aten.max_pool2d_with_indices.out(x.npu(), [3, 3], [2, 2], [1, 1], [1, 1], False, out=out, indices=ind)
    assert torch.equal(out.cpu(), y) and torch.equal(ind.cpu(), idx)


def test_nhwc_bad_arguments_are_checked_first(fallback_error):
    x = cl(torch.randn(1, 8, 6, 6)).npu()
    with pytest.raises(RuntimeError, match=r"max_pool2d: padding \(2, 2\) must be at most half of the effective "
                                           r"kernel size \(3, 3\)"):
        F.max_pool2d(x, 3, 2, 2, return_indices=True)
    with pytest.raises(RuntimeError, match=r"max_pool2d: output height .* is not positive"):
        F.max_pool2d(x, 7, 1, 0, return_indices=True)
