"""x[index] = values (aten::_index_put_impl_ behind Tensor.__setitem__ and index_put_) on npu against
PyTorch's CPU results: one integer index (int64/int32, negatives wrapped, any index shape, at any dim),
values broadcast, a boolean mask with one value (masked_fill_) or with values (the nonzero kernel's set
positions), non-contiguous destinations, several dtypes; bad input raises a clear error and the device
keeps working. Several integer indices are native (their joint linear index over the indexed dims
collapsed into one); accumulate=True with one index is native too: test_gather_scatter.py."""
import pytest
import torch

DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.int32, torch.uint8]


def _data(shape, dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(shape, generator=g) * 10).to(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("idx", [[0, 2, -1, 3], [[1, 0], [-2, 3]], [4], []], ids=str)
@pytest.mark.parametrize("where", ["first", "second", "last", "after_slice"])
@pytest.mark.parametrize("idx_dtype", [torch.int64, torch.int32])
def test_put_with_one_integer_index(dtype, idx, where, idx_dtype, fallback_error):
    x = _data((6, 5, 7), dtype)
    i = torch.tensor(idx, dtype=idx_dtype)
    sel = {"first": lambda j: (j,), "second": lambda j: (slice(None), j), "last": lambda j: (Ellipsis, j),
           "after_slice": lambda j: (slice(1, None), j)}[where]
    want_shape = x[sel(i)].shape
    v = _data(want_shape, dtype, seed=3)
    got, want = x.to("npu"), x.clone()
    got[sel(i.to("npu"))] = v.to("npu")
    want[sel(i)] = v
    assert torch.equal(got.cpu(), want)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64])
def test_values_broadcast_and_scalars(dtype, fallback_error):
    x = _data((8, 4, 3), dtype)
    i = torch.tensor([7, 0, 3])
    for v in [torch.tensor(5, dtype=dtype), _data((3,), dtype, 1), _data((4, 1), dtype, 2), _data((1, 4, 3), dtype, 4)]:
        got, want = x.to("npu"), x.clone()
        got[i.to("npu")] = v.to("npu")
        want[i] = v
        assert torch.equal(got.cpu(), want)
    got, want = x.to("npu"), x.clone()
    got[:, i[1:].to("npu")] = 9  # a Python scalar
    want[:, i[1:]] = 9
    assert torch.equal(got.cpu(), want)
    got = x.to("npu")
    got.index_put_((i.to("npu"),), _data((3, 4, 3), dtype, 5).to("npu"))
    want = x.clone().index_put_((i,), _data((3, 4, 3), dtype, 5))
    assert torch.equal(got.cpu(), want)


def test_noncontiguous_destination_and_values(fallback_error):
    base = _data((7, 9), torch.float32)
    i = torch.tensor([5, 1, -3])
    for f in [lambda t: t.t(), lambda t: t[:, ::2], lambda t: t[1:]]:
        got_base, want_base = base.to("npu"), base.clone()
        vv = torch.randn(3, f(base).shape[1])
        f(got_base)[i.to("npu")] = vv.to("npu")
        f(want_base)[i] = vv
        assert torch.equal(got_base.cpu(), want_base)  # the writes land in the base through the view
        vt = torch.randn(f(base).shape[1], 3).t()  # non-contiguous values
        f(got_base)[i.to("npu")] = vt.to("npu")
        f(want_base)[i] = vt
        assert torch.equal(got_base.cpu(), want_base)


@pytest.mark.parametrize("shape,mask_dims,at", [((50,), 1, 0), ((6, 5, 4), 1, 0), ((6, 5, 4), 2, 0),
                                                 ((6, 5, 4), 1, 1), ((6, 5, 4), 3, 0), ((3, 70001), 1, 1)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int32, torch.bool])
def test_put_with_a_boolean_mask(shape, mask_dims, at, dtype, fallback_error):
    x = _data(shape, dtype)
    g = torch.Generator().manual_seed(11)
    m = torch.rand(shape[at:at + mask_dims], generator=g) < 0.4
    sel = (slice(None),) * at + (m,)
    got, want = x.to("npu"), x.clone()
    got[tuple(s.to("npu") if torch.is_tensor(s) else s for s in sel)] = torch.tensor(1).to(dtype).to("npu")
    want[sel] = torch.tensor(1).to(dtype)
    assert torch.equal(got.cpu(), want)  # one value: masked_fill_
    v = _data(x[sel].shape, dtype, 5)
    got[tuple(s.to("npu") if torch.is_tensor(s) else s for s in sel)] = v.to("npu")
    want[sel] = v
    assert torch.equal(got.cpu(), want)  # values at the set positions, in order


def test_relu_by_mask_and_all_false_mask(fallback_error):
    x = torch.randn(1000)
    d = x.to("npu")
    d[d < 0] = 0
    assert torch.equal(d.cpu(), x.clamp_min(0))
    d[torch.zeros(1000, dtype=torch.bool, device="npu")] = torch.empty(0, device="npu")
    assert torch.equal(d.cpu(), x.clamp_min(0))


def test_bad_input_is_a_clear_error_and_the_device_keeps_working(fallback_error):
    d = torch.zeros(6, 5, device="npu")
    with pytest.raises(RuntimeError, match=r"index_put_kernel: .*index 7 is out of range for dimension size 6"):
        d[torch.tensor([1, 7], device="npu")] = 1.0
        torch.npu.synchronize()
    with pytest.raises(RuntimeError, match=r"index -7 is out of range for dimension size 6"):
        d[torch.tensor([-7], device="npu")] = torch.ones(1, 5, device="npu")
        torch.npu.synchronize()
    with pytest.raises(RuntimeError, match=r"index_put_: shape mismatch: value tensor of shape \[4\] cannot be "
                                           r"broadcast to indexing result of shape \[2, 5\]"):
        d[torch.tensor([0, 1], device="npu")] = torch.ones(4, device="npu")
    with pytest.raises(TypeError, match=r"index_put_: values dtype Long must match the destination's Float"):
        d.index_put_((torch.tensor([0], device="npu"),), torch.ones(1, 5, dtype=torch.long, device="npu"))
    with pytest.raises(IndexError, match=r"shape of the mask \[3\] at index 0 does not match the shape of the "
                                         r"indexed tensor \[6, 5\] at index 0"):
        d[torch.ones(3, dtype=torch.bool, device="npu")] = torch.ones(3, 5, device="npu")
    d[torch.tensor([2], device="npu")] = 4.0  # still usable
    want = torch.zeros(6, 5)
    want[1] = 1.0  # the in-range index of the failed put was written (as on CUDA: no rollback)
    want[2] = 4.0
    assert torch.equal(d.cpu(), want)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64])
def test_several_indices_over_adjacent_dims(dtype, fallback_error):
    """x[i, j] = v and index_put_(accumulate=True) over adjacent dims: the joint linear index, native."""
    x, v = _data((6, 5, 3), dtype), _data((4, 3), dtype, 5)
    i, j = torch.tensor([0, 2, 2, 5]), torch.tensor([1, 1, 1, -1])  # a repeated position: accumulated twice
    got = x.to("npu").index_put_((i.to("npu"), j.to("npu")), v.to("npu"), accumulate=True)
    torch.testing.assert_close(got.cpu(), x.clone().index_put_((i, j), v, accumulate=True))
    j = torch.tensor([1, 3, 0, 4], dtype=torch.int32)
    got, want = x.to("npu"), x.clone()
    got[i.to("npu"), j.to("npu")] = v.to("npu")
    want[i, j] = v
    assert torch.equal(got.cpu(), want)
    # at dims 1, 2 with broadcast indices and a scalar value
    got, want = x.to("npu"), x.clone()
    k, m = torch.tensor([[0], [4]]), torch.tensor([2, 0, 1])
    got[:, k.to("npu"), m.to("npu")] = 7
    want[:, k, m] = 7
    assert torch.equal(got.cpu(), want)


def test_several_indices_bad_input_and_backward(fallback_error):
    d = torch.zeros(6, 5, device="npu")
    with pytest.raises(RuntimeError, match=r"index 5 is out of range for dimension 1 with size 5"):
        d[torch.tensor([0], device="npu"), torch.tensor([5], device="npu")] = 1.0
        torch.npu.synchronize()
    d[torch.tensor([1], device="npu"), torch.tensor([2], device="npu")] = 3.0  # still usable
    want = torch.zeros(6, 5)
    want[1, 2] = 3.0
    assert torch.equal(d.cpu(), want)
    # the backward of x[i, j] (index_put_ with accumulate into zeros)
    x = torch.randn(6, 5, generator=torch.Generator().manual_seed(4))
    i, j = torch.tensor([0, 2, 2, 5]), torch.tensor([1, 1, 1, 4])
    xn = x.to("npu").requires_grad_()
    (xn[i.to("npu"), j.to("npu")] * torch.arange(4.0, device="npu")).sum().backward()
    xc = x.clone().requires_grad_()
    (xc[i, j] * torch.arange(4.0)).sum().backward()
    torch.testing.assert_close(xn.grad.cpu(), xc.grad)


@pytest.mark.parametrize("accumulate", [False, True])
def test_several_indices_over_separated_dims_and_noncontiguous_self(accumulate, fallback_error):
    """Separated dims (x[i, :, j] = v: the values' shape puts B first) and a non-contiguous destination
    go through a contiguous copy written back."""
    x, v = torch.randn(6, 5, 4), torch.randn(3, 5)
    i, j = torch.tensor([0, 2, 0]), torch.tensor([1, 3, 1])  # a repeated position
    got = x.to("npu")
    torch.ops.aten.index_put_(got, [i.to("npu"), None, j.to("npu")], v.to("npu"), accumulate)
    want = torch.ops.aten.index_put_(x.clone(), [i, None, j], v, accumulate)
    if accumulate:
        torch.testing.assert_close(got.cpu(), want)
    else:  # (the repeated position: the last write wins on both sides)
        assert torch.equal(got.cpu(), want)
    base = torch.randn(5, 6, 4)
    got, want = base.to("npu").transpose(0, 1), base.clone().transpose(0, 1)  # [6, 5, 4], not contiguous
    k = torch.tensor([4, 1])
    got[i[:2].to("npu"), k.to("npu")] = 9.0
    want[i[:2], k] = 9.0
    assert torch.equal(got.cpu(), want)
    got[:, k.to("npu"), j[:2].to("npu")] += 1.5
    want[:, k, j[:2]] += 1.5
    assert torch.equal(got.cpu(), want)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64])
@pytest.mark.parametrize("accumulate", [False, True])
@pytest.mark.parametrize("transposed", [False, True])
def test_tensor_put_matches_cpu(dtype, accumulate, transposed, fallback_error):
    """Tensor.put_: self as its flat row-major sequence (a transposed self too), negative indices from
    the end; natively (it took the CPU fallback, which missed the aliasing checks)."""
    x = _data((4, 5), dtype, 1)
    x = x.t() if transposed else x
    idx = torch.tensor([0, 7, -1, 12, 3, -20]) if not accumulate else torch.tensor([0, 7, 7, -1, 3, 3])
    src = _data((2, 3), dtype, 2)
    want = x.clone().put_(idx, src, accumulate=accumulate)
    got = x.to("npu").put_(idx.to("npu"), src.to("npu"), accumulate=accumulate)
    if not accumulate or dtype == torch.int64:
        torch.testing.assert_close(got.cpu(), want, rtol=0, atol=0)
    else:
        torch.testing.assert_close(got.cpu(), want)
    torch.testing.assert_close(torch.put(x.to("npu"), idx.to("npu"), src.to("npu"), accumulate).cpu(),
                               torch.put(x, idx, src, accumulate), rtol=1e-2, atol=1e-2)


def test_tensor_put_bad_input(fallback_error):
    x = torch.zeros(2, 3, device="npu")
    with pytest.raises(IndexError, match=r"put_\(\): out of range: tried to access index 7 on a tensor of 6"):
        x.put_(torch.tensor([1, 7], device="npu"), torch.ones(2, device="npu"))
    with pytest.raises(IndexError, match=r"index -7 on a tensor of 6"):
        x.put_(torch.tensor([-7], device="npu"), torch.ones(1, device="npu"))
    with pytest.raises(IndexError, match=r"source.numel\(\) = 1, index.numel\(\) = 2"):
        x.put_(torch.tensor([1, 2], device="npu"), torch.ones(1, device="npu"))
    with pytest.raises(RuntimeError, match="same dtype, but got self.dtype = Float and source.dtype = Long"):
        x.put_(torch.tensor([1], device="npu"), torch.ones(1, dtype=torch.long, device="npu"))
    with pytest.raises(RuntimeError, match="Expected a long tensor for index, but got Float"):
        x.put_(torch.tensor([1.0], device="npu"), torch.ones(1, device="npu"))
    with pytest.raises(RuntimeError, match="unsupported operation"):  # source aliases self
        x.view(-1).put_(torch.tensor([0, 1], device="npu"), x.view(-1)[1:3])
    with pytest.raises(RuntimeError, match="unsupported operation"):  # self overlaps itself
        torch.zeros(1, device="npu").expand(4).put_(torch.tensor([0], device="npu"), torch.ones(1, device="npu"))
    assert x.sum().item() == 0.0  # nothing was written, and the device works on


@pytest.mark.parametrize("accumulate", [False, True])
def test_mask_beside_other_indices(accumulate, fallback_error):
    """x[mask, idx] (RetinaNet's loss targets: gt[foreground, labels[matched]] = 1.0) took the CPU
    fallback: a mask now becomes its nonzero coordinates, then the joint index of all the indices."""
    g = torch.Generator().manual_seed(6)
    x = torch.randn(6, 5, 4, generator=g)
    m1 = torch.tensor([True, False, True, True, False, True])
    m2 = torch.rand(6, 5, generator=g) > 0.5
    cases = [(m1, torch.randint(0, 5, (4,), generator=g)),
             (m2, torch.randint(0, 4, (int(m2.sum()),), generator=g)),
             (torch.tensor([0, 3]), torch.tensor([True, False, False, True, False]))]
    for idx in cases:
        dev_idx = tuple(i.to("npu") for i in idx)
        want = x[idx]
        torch.testing.assert_close(x.to("npu")[dev_idx].cpu(), want, rtol=0, atol=0)
        v = torch.randn(want.shape, generator=g)
        got = x.to("npu").index_put_(dev_idx, v.to("npu"), accumulate=accumulate)
        torch.testing.assert_close(got.cpu(), x.clone().index_put_(idx, v, accumulate=accumulate))
    xg, xd = x.clone().requires_grad_(), x.to("npu").requires_grad_()
    (xg[cases[0]] * 2).sum().backward()
    (xd[tuple(i.to("npu") for i in cases[0])] * 2).sum().backward()
    torch.testing.assert_close(xd.grad.cpu(), xg.grad)
    with pytest.raises(IndexError, match=r"the shape of the mask \[5\] at index 0 does not match"):
        x.to("npu")[torch.ones(5, dtype=torch.bool, device="npu"), torch.tensor([0], device="npu")]
    with pytest.raises(IndexError, match="shape mismatch"):
        x.to("npu")[m1.to("npu"), torch.tensor([0, 1], device="npu")]
